"""The package's layout: imports run one way, every public name resolves, light imports
stay light."""

import ast
import importlib
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest

import bayeschain

PACKAGE = Path(bayeschain.__file__).resolve().parent

#: layers, lowest first: a module may import from its own layer or a lower one only
LAYERS = [
    {"errors", "registry", "caches", "interrupts", "lazy"},
    {"chains", "io"},
    {"browsing"},
    {"measures"},
    {"evaluation", "integrations"},
    {"posterior"},
    {"inference"},
    {"simulate", "scoring"},
    {"comparison", "recipes", "plots", "report"},
    {"cli", "__main__"},
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _from_target(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` of module ``name`` (file ``path``) reads."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports() -> dict[str, set[str]]:
    """Module -> the bayeschain modules it imports (top level and inside functions)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = _from_target(name, path, node)
                if not target.startswith("bayeschain"):
                    continue
                assert target in modules, f"{name} imports {target}, which does not exist"
                subs = [f"{target}.{a.name}" for a in node.names]
                found.update([s for s in subs if s in modules] or [target])
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("bayeschain"))
        graph[name] = {t for t in found if t != name}
    return graph


def _layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else "<root>"
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    return -1                                     # the package root (__version__)


def test_no_module_imports_a_higher_layer():
    bad = [(m, t) for m, targets in _imports().items() for t in targets
           if _layer(t) > _layer(m) >= 0]
    assert not bad, f"imports against the layering: {bad}"


def test_no_import_cycle():
    graph = _imports()
    state: dict[str, int] = {}
    cycles = []

    def visit(node, stack):
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])
    assert not cycles, f"import cycles: {cycles}"


def _private_imports() -> list[tuple[str, str]]:
    """(module, what) for every private name one bayeschain module takes from another:
    ``from .x import _name`` or ``x._name`` on an imported bayeschain module."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _from_target(name, path, node)
            if not target.startswith("bayeschain"):
                continue
            for a in node.names:
                if f"{target}.{a.name}" in modules:
                    aliases.add(a.asname or a.name)
                elif a.name.startswith("_") and not a.name.startswith("__"):
                    found.append((name, f"{target}.{a.name}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") \
                    and not node.attr.startswith("__"):
                found.append((name, f"{node.value.id}.{node.attr}"))
    return found


def test_no_private_name_is_used_across_modules():
    assert not _private_imports()


@pytest.mark.parametrize("reader", ["scoring", "comparison", "simulate"])
def test_scoring_comparison_and_simulation_read_posteriors_never_fits(reader):
    """They read what a fit wrote through :mod:`bayeschain.posterior`, never
    :mod:`bayeschain.inference` (directly or through another module of theirs)."""
    graph = _imports()
    bad = [(m, t) for m, targets in graph.items() if m.split(".")[1:2] == [reader]
           for t in targets if t.split(".")[1:2] == ["inference"]]
    assert not bad


#: the parts every model family of inference/ has, one module each
FAMILY_PARTS = {"spec.py", "data.py", "model.py", "fit.py", "checks.py"}


@pytest.mark.parametrize("family", ["walk", "clicks", "dwell"])
def test_every_model_family_has_the_same_parts(family):
    folder = PACKAGE / "inference" / family
    assert FAMILY_PARTS <= {p.name for p in folder.glob("*.py")}


def test_the_posterior_contract_imports_no_sampler():
    for path in (PACKAGE / "posterior").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] in ("pymc", "pytensor", "nutpie") for n in names)
            assert not any("inference" in n.split(".") for n in names), path


def test_every_top_level_package_has_a_layer():
    tops = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
            if (p.suffix == ".py" or (p / "__init__.py").exists()) and p.name != "__init__.py"}
    assert tops <= set().union(*LAYERS), tops - set().union(*LAYERS)


#: the documented public names and what they are
PUBLIC_KINDS = {
    "chains": "module", "browsing": "module", "measures": "module", "io": "module",
    "inference": "module", "scoring": "module", "comparison": "module",
    "simulate": "module", "errors": "module",
    "evaluate": "function", "parse_measure": "function", "path_distribution": "function",
    "stochastic_dominance": "function", "read_qrels": "function", "read_run": "function",
    "read_clicks": "function", "click_statistics": "function", "fit": "function",
    "load_spec": "function", "score": "function", "score_sessions": "function",
    "path_cdf_bands": "function", "compare": "function", "dominance_probability": "function",
    "walk_parameters": "function", "predict_clicks": "function",
    "heldout_click_metrics": "function", "heldout_click_arrays": "function",
    "perplexity_difference": "function",
    "posterior_from_parameters": "function",
    "evaluate_runs": "function", "simulate_click_log": "function",
    "simulate_users": "function",
    "ClickLog": "class", "Posterior": "class", "Comparison": "class", "Tridiagonal": "class",
    "BayeschainError": "class", "ChainError": "class", "FormatError": "class",
    "ParameterError": "class",
}


@pytest.mark.parametrize("name", sorted(bayeschain.__all__))
def test_public_name_resolves_to_its_kind(name):
    if name == "__version__":
        assert isinstance(bayeschain.__version__, str)
        return
    value = getattr(bayeschain, name)
    kind = PUBLIC_KINDS[name]
    if kind == "module":
        assert isinstance(value, types.ModuleType)
    elif kind == "function":
        assert inspect.isfunction(value), f"bayeschain.{name} is {type(value)}"
    else:
        assert inspect.isclass(value)


def test_every_documented_name_is_public():
    assert set(PUBLIC_KINDS) <= set(bayeschain.__all__)


def test_bc_compare_is_the_function_the_readme_calls():
    assert bayeschain.compare is importlib.import_module("bayeschain.comparison").compare


@pytest.mark.parametrize(("module", "heavy"), [
    ("bayeschain", ("numpy", "pandas", "scipy", "xarray")),
    ("bayeschain.measures", ("pandas", "pyarrow", "pymc", "matplotlib")),
    ("bayeschain.chains", ("pandas", "scipy", "xarray")),
    ("bayeschain.cli", ("numpy", "pandas")),
])
def test_light_imports_stay_light(module, heavy):
    code = (f"import sys, {module}; print(','.join(m for m in {heavy!r} "
            f"if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "", f"import {module} loaded {out}"


def test_no_project_file_points_outside_the_repository():
    """Docs, notebooks and modules never send a reader to ../shared (tests and benchmarks
    on the extra log samples may, and skip without them)."""
    root = PACKAGE.parent
    files = [p for pattern in ("*.md", "bayeschain/**/*.py", "notebooks/**/*.py",
                               "notebooks/*.ipynb", "models/*", "docs/**/*.md", "data/**/*.md")
             for p in root.glob(pattern) if p.is_file()]
    bad = [str(p.relative_to(root)) for p in files
           if "../shared" in p.read_text(encoding="utf-8", errors="replace")]
    assert not bad, bad
