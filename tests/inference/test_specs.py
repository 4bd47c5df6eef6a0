"""Model specs: the built-ins are models/, bad specs name what is wrong."""

from pathlib import Path

import pytest

from bayeschain.errors import FormatError
from bayeschain.inference import builtin_specs, load_spec, parse_spec

MODELS = Path(__file__).resolve().parents[2] / "models"


def test_builtin_specs_are_the_models_folder_and_nothing_else():
    import bayeschain

    names = builtin_specs()
    assert names == sorted(p.stem for p in MODELS.glob("*.toml"))
    assert not list(Path(bayeschain.__file__).parent.rglob("*.toml")), "a second copy"
    assert {"walk", "walk-click", "walk-shared", "walk-relevance", "walk-session",
            "clicks-conjugate",
            "clicks-nuts", "clicks-pooled", "dwell-lognormal"} <= set(names)
    for name in names:
        spec = load_spec(name)
        assert spec.name == name
        on_disk = MODELS / f"{name}.toml"
        assert on_disk.read_text() == spec.text
        assert load_spec(on_disk).digest() == spec.digest()
    assert load_spec("walk").parametrises == "walk"
    assert load_spec("clicks-conjugate").parametrises == "click-to-click"
    assert load_spec("dwell-lognormal").parametrises == "dwell"


def test_every_builtin_walk_samples_until_its_diagnostics_pass():
    """Reliable by default: each walk spec draws until rank R-hat <= 1.01 and bulk ESS >=
    400 (``min_ess``), bounded by its ``draws``, rather than a fixed number of draws that
    may end short of them (``walk-relevance``, ``walk-session`` and ``walk-shared`` drew a
    fixed 1,000)."""
    walks = [name for name in builtin_specs() if load_spec(name).parametrises == "walk"]
    assert len(walks) >= 8
    for name in walks:
        sampler = load_spec(name).sampler
        assert sampler["min_ess"] >= 400 and sampler["draws"] >= 4000, name


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
    (GOOD.replace('method = "conjugate"', 'method = "nuts"\ntune = "auto"'),
     "'auto' is for the walk specs"),
    (GOOD.replace("[transitions]\nprior = [1, 1, 1, 1]\n", "[examination]\n")
     .replace('method = "conjugate"', 'method = "nuts"\ntune = "fast"'),
     "tune must be a number of steps, or 'auto'"),
    (GOOD.replace('method = "conjugate"', "tune = 2.5"), "must be an int or a str"),
    (GOOD.replace("[transitions]\nprior = [1, 1, 1, 1]\n", "[examination]\n")
     .replace('method = "conjugate"', 'method = "nuts"\ntune = 0'),
     "tune must be >= 1 for the walk specs"),
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


SECTION_ONLY = '[model]\nname = "t"\n{body}\n[sampler]\nmethod = "{method}"\n'


def _spec(body, method="conjugate"):
    return SECTION_ONLY.format(body=body, method=method)


@pytest.mark.parametrize(("body", "method", "message"), [
    # each section's own checks, now in its module's validate
    ("[transitions]\nprior = [1, 1]\ncategories = ['forward', 'forward']", "conjugate",
     "categories must be at least two distinct names"),
    ("[transitions]\nprior = [1, 1]\ncategories = ['forward', 'up']", "conjugate",
     r"\[transitions\] categories: \['up'\] not allowed"),
    ("[transitions]\nprior = [1, 1, 1, 1]\nparametrisation = 'x'", "conjugate",
     r"\[transitions\] parametrisation: \['x'\] not allowed"),
    ("[transitions]\nprior = [1, 1, 1, -1]", "conjugate", "one positive Dirichlet"),
    ("[transitions]\nprior = [1, 1, 1, true]", "conjugate", "one positive Dirichlet"),
    ("[transitions]\n", "conjugate", r"\[transitions\] needs prior"),
    ("[jumps]\nfamily = 'XD'", "conjugate", r"\[jumps\] family: \['XD'\] not allowed"),
    ("[jumps]\nfamily = 'ID'", "nuts", "Gamma\\(shape, rate\\) of the decay exponent"),
    ("[jumps]\nprior = [0]", "conjugate", "one positive Dirichlet concentration"),
    ("[jumps]\nprior = [1]\nscale = 2", "conjugate", r"\[jumps\] has unknown key"),
    ("[holding]\nprior = [1, 20]\nlikelihood = 'pareto'", "conjugate",
     r"\[holding\] likelihood: \['pareto'\] not allowed"),
    ("[holding]\nprior = [3, 2]\nlikelihood = 'weibull'", "nuts",
     r"\[holding\] 'weibull' dwell times .* censoring = \"examination\""),
    ("[holding]\nprior = [3, 0]\nlikelihood = 'gamma'\ncensoring = 'examination'", "nuts",
     r"\[holding\] Normal prior on the log mean dwell needs sd > 0"),
    ("[holding]\nprior = [3, 1]\nlikelihood = 'gamma'\ncensoring = 'examination'\n"
     "parametrisation = 'pooled'", "nuts", r"per-rank, shared or per-document"),
    ("[examination]\n[holding]\nprior = [3, 1]\nlikelihood = 'lognormal'\n"
     "censoring = 'examination'", "nuts", r"is its own spec: fit it separately"),
    ("[holding]\nprior = [1, 20]\nparametrisation = 'global'", "conjugate",
     r"\[holding\] parametrisation: \['global'\] not allowed"),
    ("[holding]\nprior = [1, 2, 3]", "conjugate", r"\[holding\] prior must be two numbers"),
    ("[holding]\nprior = ['a', 20]", "conjugate", r"\[holding\] prior must be two numbers"),
    ("[holding]\nlikelihood = 'lognormal'\nprior = [3, 0]", "nuts", "Normal prior needs sd > 0"),
    ("[holding]\nlikelihood = 'none'", "conjugate", r"\[holding\] needs prior"),
    # non-finite priors: refused, naming the section and the key
    ("[holding]\nprior = [inf, 1.0]", "conjugate", r"\[holding\] prior: \[inf\] not finite"),
    ("[holding]\nprior = [1.0, inf]", "conjugate", r"\[holding\] prior: \[inf\] not finite"),
    ("[holding]\nlikelihood = 'lognormal'\nprior = [nan, 1]", "nuts",
     r"\[holding\] prior: \[nan\] not finite"),
    ("[holding]\nlikelihood = 'lognormal'\nprior = [-inf, 1]", "nuts",
     r"\[holding\] prior: \[-inf\] not finite"),
    ("[transitions]\nprior = [1, 1, 1, inf]", "conjugate",
     r"\[transitions\] prior: \[inf\] not finite"),
    ("[jumps]\nprior = [inf]", "conjugate", r"\[jumps\] prior: \[inf\] not finite"),
    ("[jumps]\nfamily = 'LID'\nprior = [2, inf]", "nuts", r"\[jumps\] prior: \[inf\] not finite"),
])
def test_bad_sections_name_the_file_and_key(body, method, message):
    with pytest.raises(FormatError, match=message) as err:
        parse_spec(_spec(body, method), "bad.toml")
    assert err.value.file == "bad.toml"


def test_each_section_is_validated_by_its_family():
    from bayeschain.inference import specs
    from bayeschain.inference.sections import SECTIONS

    for name, section in SECTIONS.items():
        assert specs.SCHEMA[name] is section.keys
    spec = parse_spec(_spec("[transitions]\nprior = [1, 1, 1, 1]\n[jumps]\n"
                            "[holding]\nprior = [1, 20]"))
    tables = {"transitions": {"prior": [1, 1, 1, 1]}, "jumps": {}, "holding": {"prior": [1, 20]}}
    for name, section in SECTIONS.items():
        assert spec.section(name) == section.validate(tables[name])
    # defaults come from the families' spec modules
    assert spec.section("transitions")["categories"] == ["forward", "backward", "stop",
                                                          "reformulate"]
    assert spec.section("jumps") == {"family": "free", "prior": [1.0]}
    assert spec.section("holding")["likelihood"] == "exponential"
    assert spec.section("holding")["parametrisation"] == "per-rank"


def test_section_validate_names_the_source_and_is_idempotent():
    from bayeschain.inference.clicks.spec import validate_jumps, validate_transitions
    from bayeschain.inference.dwell.spec import validate as validate_holding

    with pytest.raises(FormatError, match=r"^mine\.toml: \[holding\] prior: \[inf\] not finite"):
        validate_holding({"prior": [float("inf"), 1.0]}, "mine.toml")
    with pytest.raises(FormatError, match=r"^mine\.toml: \[jumps\] has unknown key"):
        validate_jumps({"prior": [1.0], "rows": 3}, "mine.toml")
    clean = validate_transitions({"prior": [1, 2], "categories": ["forward", "stop"]})
    assert validate_transitions(clean) == clean
    # likelihood "none" learns nothing: its prior is required but not interpreted
    assert validate_holding({"likelihood": "none", "prior": [1]})["prior"] == [1]


def test_with_sampler_revalidates_the_sections():
    spec = load_spec("clicks-conjugate")
    assert spec.with_sampler(method="nuts").digest() == spec.digest()


def test_setting_a_key_edits_the_text_the_posterior_stores():
    """``with_keys``: the section's keys are set in the spec's text (a key's line replaced,
    its continued comment with it, or a new line under the header), so that the text, read
    again, is the spec; the digest changes with the model; the other sections and keys are
    untouched; a spec without the section and a value it refuses are errors."""
    import tomllib

    from bayeschain.errors import ParameterError

    walk = load_spec("walk")
    spec = walk.with_keys("examination", clicks="pooled", min_impressions=3,
                          rank_offsets=True, moves=None, note="set here")
    read = tomllib.loads(spec.text)
    assert read == {k: v for k, v in tomllib.loads(walk.text).items() if k != "examination"} \
        | {"examination": tomllib.loads(walk.text)["examination"]
           | {"clicks": "pooled", "min_impressions": 3, "rank_offsets": True}}
    assert parse_spec(spec.text).data == spec.data
    assert [line for line in spec.text.splitlines() if line.startswith("clicks")] == \
        ['clicks = "pooled"  # set here']
    # a replaced line's comment goes with its continuation lines; an uncommented line's
    # next comment (another key's) stays
    text = ('[model]\nname = "t"\n[examination]\nclicks = "auto"   # per document, where\n'
            '                  # the pairs recur\nmoves = "pooled"\n    # the next one\n'
            'prior_sd = 2.0\n[sampler]\nmethod = "nuts"\n')
    edited = parse_spec(text).with_keys("examination", clicks="shared", moves="shared")
    assert "recur" not in edited.text and "# the next one" in edited.text
    assert edited.data["examination"]["prior_sd"] == 2.0
    # a section written as an inline table has no header line to edit under
    inline = parse_spec('examination = {clicks = "auto"}\n[model]\nname = "t"\n'
                        '[sampler]\nmethod = "nuts"\n')
    with pytest.raises(ParameterError, match="header"):
        inline.with_keys("examination", clicks="pooled")
    assert spec.digest() != walk.digest()
    assert walk.with_keys("examination", clicks=None) is walk
    with pytest.raises(ParameterError, match=r"no \[examination\]"):
        load_spec("clicks-conjugate").with_keys("examination", clicks="pooled")
    with pytest.raises(FormatError, match="clicks"):
        walk.with_keys("examination", clicks="documents")


def test_tune_auto_gives_the_whitened_laplace_route_fewer_steps():
    """``tune = "auto"``: 250 tuning steps where NUTS moves in the documents' Laplace
    route's whitened coordinates, 500 elsewhere; a number is kept as it is."""
    from bayeschain.inference.walk.fit import tuning_steps

    assert load_spec("walk").sampler["tune"] == "auto"
    assert (tuning_steps("auto", True), tuning_steps("auto", False)) == (250, 500)
    assert tuning_steps(700, True) == tuning_steps(700, False) == 700
