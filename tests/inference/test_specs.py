"""Model specs: built-ins load, models/ mirrors them, bad specs name what is wrong."""

from pathlib import Path

import pytest

from bayeschain.errors import FormatError
from bayeschain.inference import builtin_specs, load_spec, parse_spec

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_builtin_specs_load_and_match_models_folder():
    names = builtin_specs()
    assert {"walk", "walk-shared", "walk-relevance", "walk-session", "clicks-conjugate",
            "clicks-nuts", "clicks-pooled", "dwell-lognormal"} <= set(names)
    for name in names:
        spec = load_spec(name)
        assert spec.name == name
        on_disk = MODELS / f"{name}.toml"
        assert on_disk.read_text() == spec.text, f"models/{name}.toml differs from the package"
        assert load_spec(on_disk).digest() == spec.digest()
    assert load_spec("walk").parametrises == "walk"
    assert load_spec("clicks-conjugate").parametrises == "click-to-click"
    assert load_spec("dwell-lognormal").parametrises == "dwell"


GOOD = """
[model]
name = "t"
[transitions]
prior = [1, 1, 1, 1]
[sampler]
method = "conjugate"
"""


@pytest.mark.parametrize(("text", "message"), [
    (GOOD.replace("[model]", "[modle]"), "unknown section"),
    (GOOD.replace('name = "t"', 'name = "t"\nrank = 3'), "unknown key"),
    (GOOD.replace("prior = [1, 1, 1, 1]", "prior = [1, 1]"), "one positive Dirichlet"),
    (GOOD.replace('method = "conjugate"', 'method = "gibbs"'), "not allowed"),
    (GOOD.replace('method = "conjugate"', "draws = -3"), "draws"),
    (GOOD.replace("[transitions]\nprior = [1, 1, 1, 1]\n", ""), "needs \\[transitions\\]"),
    (GOOD + "\n[holding]\nprior = [0, 1]\n", "shape > 0"),
    (GOOD.replace('name = "t"', "name = 3"), "must be a str"),
    ("[model\nname = 't'", "invalid TOML"),
    (GOOD.replace("[transitions]\nprior = [1, 1, 1, 1]\n", "[examination]\n"),
     "no conjugate posterior"),
    (GOOD.replace("[transitions]\nprior = [1, 1, 1, 1]\n", "[examination]\nclicks = 'docs'\n")
     .replace('"conjugate"', '"nuts"'), "not allowed"),
    (GOOD.replace("[transitions]\nprior = [1, 1, 1, 1]\n", "[examination]\nprior_sd = -1\n")
     .replace('"conjugate"', '"nuts"'), "prior_sd must be a positive"),
])
def test_bad_specs(text, message):
    with pytest.raises(FormatError, match=message):
        parse_spec(text, "bad.toml")


def test_unknown_builtin_lists_the_valid_ones():
    with pytest.raises(FormatError, match="built-in specs: .*clicks-conjugate.*walk"):
        load_spec("nope")
    # a spec of an earlier release says what it learned and what replaces it
    with pytest.raises(FormatError, match="click-to-click.*'walk'"):
        load_spec("rwbm-conjugate")
    with pytest.raises(FileNotFoundError):
        load_spec("missing.toml")
