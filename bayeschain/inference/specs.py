"""Declarative user-model specs (TOML): what to fit, with which priors and sampler.

A spec names no Python code; it is validated against :data:`SCHEMA` and errors name the
file, the key and what was expected.  This module checks which sections a spec has and the
tables ``[model]`` and ``[sampler]``; ``[examination]`` is validated by
:mod:`~bayeschain.inference.walk.spec`, each of ``[transitions]``, ``[jumps]`` and
``[holding]`` by its family's ``spec`` module
(:data:`~bayeschain.inference.sections.SECTIONS`), the one place that interprets it.
Built-in specs live in the repository's ``models/`` folder, their one home, installed with
the package as ``bayeschain.models``, and are loaded by name:
``load_spec("clicks-conjugate")``.

Layout::

    [model]
    name = "rwbm-conjugate"          # free text
    description = "..."
    ranks = 10                       # ranks modelled (deeper clicks are pooled into the last)

    [transitions]                    # what follows a click on rank i
    categories = ["forward", "backward", "stop", "reformulate"]
    parametrisation = "per-rank"     # per-rank | shared | pooled
    prior = [1.0, 1.0, 1.0, 1.0]     # Dirichlet concentration, one per category
    by_relevance = false             # true: separate rows after clicks on relevant and
                                     # non-relevant documents (fit needs qrels; conjugate)

    [examination]                    # alternative to [transitions]: the walk P@H scores,
                                     # fitted with its examinations hidden (the default)
    moves = "pooled"                 # pooled (trend in log rank + shrunk deviations) | shared
    clicks = "auto"                  # auto | pooled | shared | document (attractiveness of
                                     # each (query, document) pair)
    backward = true                  # false: forward-only walks (SFBM, RBP)
    boundary = "leave"               # forward mass at a page's last rank: leave (P@H) or
                                     # rescale (MsM's Algorithm 1)
    by_relevance = false             # true: moves after relevant / other documents (qrels)
    prior_sd = 2.0                   # sd of the Normal priors on the trend intercepts
    deviation_sd = 0.5               # median of the (log-normal) deviation scale

    [jumps]                          # MP-style chains: where the next click lands
    family = "free"                  # free Dirichlet rows | "ID" | "LID" distance decay
    prior = [1.0]                    # free: concentration; ID/LID: Gamma(shape, rate) on
                                     # the exponent g of (|i-j|+1)^-g or log10(|i-j|+2)^-g

    [holding]                        # dwell time after a click on rank i
    likelihood = "exponential"       # exponential | lognormal | none
    parametrisation = "per-rank"     # per-rank | shared | pooled
    prior = [1.0, 20.0]              # exponential: Gamma(shape, rate) on the rate mu (1/s);
                                     # lognormal: Normal(mean, sd) on the log-scale mean

    [sampler]
    method = "conjugate"             # conjugate | nuts
    draws = 1000
    chains = 4
    tune = 1000                      # "auto" (walk specs): 250 where the documents are
                                     # integrated out (NUTS in whitened coordinates), 500
                                     # elsewhere
    seed = 2026
    target_accept = 0.9
    min_ess = 0                      # > 0 (walk specs): draws is the most per chain; stop
                                     # once R-hat <= 1.01 and bulk ESS >= min_ess

Which chain a posterior parametrises (its ``parametrises`` attr, :func:`parametrises`):
``[examination]`` the walk that P@H, RBP, drwbm and MsM score; ``[transitions]`` and
``[jumps]`` the click-to-click chain (where the next click lands: Markov Precision's
jumps), which is *not* the walk's per-step moves; ``[holding]`` alone, dwell times.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import FormatError
from .dwell.spec import needs_observations
from .keys import check_table
from .sections import SECTIONS
from .walk import spec as walk_spec

# key -> (type, allowed values or None, default); the tables of SECTIONS ([transitions],
# [jumps], [holding]) are declared and validated by their own modules
MODEL_KEYS = {"name": (str, None, None), "description": (str, None, ""),
              "ranks": (int, None, 10)}
SAMPLER_KEYS = {"method": (str, ("conjugate", "nuts"), "conjugate"),
                "draws": (int, None, 1000), "chains": (int, None, 4),
                "tune": ((int, str), None, 1000), "seed": (int, None, 2026),
                "target_accept": (float, None, 0.9), "min_ess": (int, None, 0)}

#: every section a spec may have, with its keys (in the order error messages list them)
SCHEMA: dict[str, dict[str, tuple]] = {
    "model": MODEL_KEYS,
    "transitions": SECTIONS["transitions"].keys,
    "examination": walk_spec.KEYS,
    "jumps": SECTIONS["jumps"].keys,
    "holding": SECTIONS["holding"].keys,
    "sampler": SAMPLER_KEYS,
}
REQUIRED_SECTIONS = ("model", "sampler")


@dataclass(frozen=True)
class ModelSpec:
    """A validated spec: the parsed tables and the exact TOML text they came from."""

    data: dict[str, dict[str, Any]]
    text: str
    source: str = ""

    @property
    def name(self) -> str:
        return self.data["model"]["name"]

    @property
    def ranks(self) -> int:
        return self.data["model"]["ranks"]

    def section(self, name: str) -> dict[str, Any] | None:
        return self.data.get(name)

    @property
    def sampler(self) -> dict[str, Any]:
        return self.data["sampler"]

    def digest(self) -> str:
        """SHA-256 of the normalised model (what must match when a posterior is loaded).

        The sampler section is left out: draws, chains, seed or method do not change the
        model whose posterior is stored.
        """
        model = sorted((k, sorted(v.items())) for k, v in self.data.items() if k != "sampler")
        return hashlib.sha256(repr(model).encode()).hexdigest()[:16]

    @property
    def parametrises(self) -> str:
        """``"walk"``, ``"click-to-click"`` or ``"dwell"`` (see the module docstring)."""
        if "examination" in self.data:
            return "walk"
        if "transitions" in self.data or "jumps" in self.data:
            return "click-to-click"
        return "dwell"

    def with_sampler(self, **overrides) -> ModelSpec:
        """A copy with sampler settings replaced (e.g. ``method="nuts"``)."""
        data = {k: dict(v) for k, v in self.data.items()}
        data["sampler"].update({k: v for k, v in overrides.items() if v is not None})
        return ModelSpec(_validate(data, self.source), self.text, self.source)

    def with_keys(self, section: str, *, note: str = "", **values) -> ModelSpec:
        """A copy with keys of ``section`` set (``None`` values are left as they are),
        e.g. ``with_keys("examination", clicks="pooled")``.  The spec's text is edited, the
        key's line replaced (or added under the section's header) with ``note`` as its
        comment, and parsed again: the text a posterior stores is the model fitted, and
        its digest changes with the model.  Raises ``ParameterError`` when the spec has no
        such section (or writes it other than under a ``[section]`` header), ``FormatError``
        for a value the section refuses."""
        import json
        import re

        from ..errors import ParameterError

        values = {k: v for k, v in values.items() if v is not None}
        if not values:
            return self
        if section not in self.data:
            raise ParameterError(f"spec {self.name!r} has no [{section}] section to set "
                                 f"{', '.join(values)} in")
        lines = self.text.splitlines()
        header = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?$")
        start = next((i for i, line in enumerate(lines)
                      if (m := header.match(line)) and m.group(1) == section), None)
        if start is None:
            raise ParameterError(f"spec {self.name!r} writes [{section}] other than under a "
                                 f"[{section}] header line: its keys cannot be set here")
        end = next((i for i in range(start + 1, len(lines)) if header.match(lines[i])),
                   len(lines))
        comment = f"  # {note}" if note else ""
        for key, value in values.items():
            value = value.item() if hasattr(value, "item") else value     # NumPy scalars
            literal = (("true" if value else "false") if isinstance(value, bool)
                       else json.dumps(value))
            line = f"{key} = {literal}{comment}"
            at = next((i for i in range(start + 1, end)
                       if re.match(rf"^\s*{re.escape(key)}\s*=", lines[i])), None)
            if at is None:
                lines.insert(start + 1, line)
                end += 1
            else:
                # a comment after the value (past a string's closing quote, which may
                # hold a '#'): its continuation lines go with it
                commented = "#" in lines[at].split("=", 1)[1].rsplit('"', 1)[-1]
                lines[at] = line
                while commented and at + 1 < end and re.match(r"^\s+#", lines[at + 1]):
                    del lines[at + 1]      # the replaced line's comment, continued
                    end -= 1
        return parse_spec("\n".join(lines) + "\n", self.source)


def builtin_specs() -> list[str]:
    """Names of the specs shipped with the package."""
    folder = resources.files("bayeschain.models")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


#: specs of earlier releases: what they learned and what replaces them
RENAMED = {
    "rwbm-conjugate": "it learned click-to-click transitions, now the spec "
                      "'clicks-conjugate'; the walk that P@H scores is fitted by 'walk'",
    "rwbm-nuts": "it learned click-to-click transitions, now 'clicks-nuts'; the walk that "
                 "P@H scores is fitted by 'walk'",
    "rwbm-pooled": "it learned click-to-click transitions, now 'clicks-pooled'; the walk "
                   "that P@H scores is fitted by 'walk'",
    "rwbm-hidden": "the hidden-examination walk is now 'walk' (per-rank moves) or "
                   "'walk-shared' (moves shared by all ranks)",
    "rwbm-relevance": "moves by relevance of the examined document are now fitted by "
                      "'walk-relevance'",
    "msm-session": "MsM's p, q, r, s are now fitted by 'walk-session'",
}


def load_spec(path_or_name) -> ModelSpec:
    """Load a spec from a TOML file, or a built-in one by name."""
    path = Path(str(path_or_name))
    if path.suffix == ".toml" or path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(2, "No such file or directory", str(path)) from None
        source = str(path)
    else:
        name = str(path_or_name)
        if name in RENAMED:
            raise FormatError(f"spec {name!r} was renamed: {RENAMED[name]}")
        if name not in builtin_specs():
            raise FormatError(f"unknown model spec {name!r}; built-in specs: "
                              f"{', '.join(builtin_specs())}, or give a .toml path")
        text = (resources.files("bayeschain.models") / f"{name}.toml").read_text(
            encoding="utf-8")
        source = f"<built-in {name}>"
    return parse_spec(text, source)


def parse_spec(text: str, source: str = "<string>") -> ModelSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise FormatError(f"invalid TOML: {exc}".split(" (at line")[0], file=source,
                          line=line) from None
    return ModelSpec(_validate(data, source), text, source)


def _validate(data: dict, source: str) -> dict[str, dict[str, Any]]:
    unknown = sorted(set(data) - set(SCHEMA))
    if unknown:
        raise FormatError(f"unknown section(s) {unknown}; expected {', '.join(SCHEMA)}",
                          file=source)
    for sec in REQUIRED_SECTIONS:
        if sec not in data:
            raise FormatError(f"missing section [{sec}]", file=source)
    if not {"transitions", "holding", "examination", "jumps"} & set(data):
        raise FormatError("a spec needs [transitions], [examination], [jumps] or [holding]",
                          file=source)
    if "transitions" in data and "examination" in data:
        raise FormatError("[transitions] (observed click-to-click moves) and [examination] "
                          "(the hidden walk) are alternative models; keep one", file=source)
    for sec, table in data.items():
        if not isinstance(table, dict):
            raise FormatError(f"[{sec}] must be a table", file=source)
    # the spec's own tables ([model], [sampler], [examination]) first, then each of
    # SECTIONS by its validate, in file order
    out: dict[str, dict[str, Any]] = {
        sec: walk_spec.validate(table, source) if sec == "examination"
        else check_table(sec, table, SCHEMA[sec], source)
        for sec, table in data.items() if sec not in SECTIONS}
    _check_numbers(out, source)
    for sec, table in data.items():
        if sec in SECTIONS:
            out[sec] = SECTIONS[sec].validate(table, source)
    if "examination" in out and "holding" in out and \
            needs_observations(out["holding"]):
        raise FormatError("[holding] with censoring = 'examination' (the dwell model on each "
                          "click's observation) is its own spec: fit it separately from the "
                          "walk (e.g. spec 'dwell' or 'dwell-document')", file=source)
    return {sec: out[sec] for sec in data}


def _check_numbers(spec: dict, source: str) -> None:
    """The numbers of [model] and [sampler], and what [sampler] allows [examination] (each
    section checks its own numbers in its ``validate``)."""
    from ..io.clicklog import MAX_RANK

    if not 1 <= spec["model"]["ranks"] <= MAX_RANK:
        raise FormatError(f"[model] ranks must be from 1 to {MAX_RANK:,} (results on a page), "
                          f"found {spec['model']['ranks']:,}", file=source)
    s = spec["sampler"]
    if isinstance(s["tune"], str) and (s["tune"] != "auto" or "examination" not in spec):
        raise FormatError("[sampler] tune must be a number of steps" + (
            ", or 'auto' (walk specs)" if "examination" in spec else
            " ('auto' is for the walk specs, [examination])") + f", got {s['tune']!r}",
            file=source)
    if s["draws"] < 1 or s["chains"] < 1 or (isinstance(s["tune"], int) and s["tune"] < 0):
        raise FormatError("[sampler] draws and chains must be >= 1, tune >= 0", file=source)
    if "examination" in spec and s["tune"] == 0:     # nutpie 0.16.8 panics on 0 tuning steps
        raise FormatError("[sampler] tune must be >= 1 for the walk specs (NUTS by nutpie "
                          "tunes at least one step)", file=source)
    if not 0 < s["target_accept"] < 1:
        raise FormatError("[sampler] target_accept must lie in (0, 1)", file=source)
    if s["min_ess"] < 0:
        raise FormatError("[sampler] min_ess must be >= 0", file=source)
    if s["min_ess"] > 0 and "examination" not in spec:
        raise FormatError("[sampler] min_ess (stop on the diagnostics) is for the walk specs "
                          "([examination]); set draws instead", file=source)
    if spec.get("examination") is not None:
        if spec["sampler"]["method"] == "conjugate":
            raise FormatError("[examination] has no conjugate posterior: [sampler] method "
                              "must be 'nuts'", file=source)
