"""Print pip constraints that pin every direct dependency of bayeschain (the core and the
extras named on the command line) to the lower bound pyproject.toml allows: the
minimum-versions environment of CI's compatibility stage.

    python3 .ci/min_constraints.py all dev > constraints.txt
    pip install -e ".[all,dev]" -c constraints.txt
"""

import re
import sys
import tomllib
from pathlib import Path


def requirements(project: dict, extras: list[str]) -> list[str]:
    """The requirement strings of the core and ``extras`` (self-references expanded)."""
    name = project["name"]
    optional = project.get("optional-dependencies", {})
    out, todo, seen = list(project["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for req in optional[extra]:
            m = re.fullmatch(rf"{re.escape(name)}\[([^\]]+)\]", req.strip())
            if m:
                todo += [e.strip() for e in m.group(1).split(",")]
            else:
                out.append(req)
    return out


def pins(reqs: list[str]) -> dict[str, str]:
    """``name -> lower bound`` of every requirement with a ``>=`` bound (the largest when
    a package is named twice)."""
    out: dict[str, str] = {}
    for req in reqs:
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)", req)
        name, spec = m.group(1).lower().replace("_", "-"), m.group(3)
        low = re.search(r">=\s*([0-9][^,;\s]*)", spec)
        if low:
            old = out.get(name)
            new = low.group(1)
            if old is None or tuple(map(int, re.findall(r"\d+", new))) > tuple(
                    map(int, re.findall(r"\d+", old))):
                out[name] = new
    return out


def main(extras: list[str]) -> None:
    project = tomllib.loads(Path(__file__).resolve().parent.parent.joinpath(
        "pyproject.toml").read_text())["project"]
    for name, version in sorted(pins(requirements(project, extras)).items()):
        print(f"{name}=={version}")


if __name__ == "__main__":
    main(sys.argv[1:])
