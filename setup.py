"""The package's layout for setuptools (the rest of the metadata is in pyproject.toml): the
built-in model specs live in the repository's top-level ``models/`` folder, their one home,
and install as the package ``bayeschain.models``."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["bayeschain", "bayeschain.*"]) + ["bayeschain.models"],
      package_dir={"bayeschain.models": "models"})
