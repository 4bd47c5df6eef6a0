"""The built-in model specs (TOML), installed with the package as ``bayeschain.models``
(see README.md here); :func:`bayeschain.inference.load_spec` reads them by name."""
