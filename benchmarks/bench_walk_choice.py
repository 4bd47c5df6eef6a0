"""Which walk the logs support: the default walk against the walk whose moves depend on
the click (``walk-click``), by PSIS-LOO and by held-out click prediction.

    python3 benchmarks/bench_walk_choice.py [--logs trec clara2 wscd]

On each log, ``bayeschain.inference.walk.choice.choose_walks`` (what ``bayeschain
choose`` prints): both specs with their default settings fitted to the sessions outside
``log.split(0.25, seed=0)`` (the split of ``bench_click_models.py``), PSIS-LOO on the
training pages (paired differences), PyClick's held-out metrics on the other sessions'
pages whose query occurs in training, ``E[H]`` on a 10-result page, fit seconds and the
sampler's diagnostics.  TREC Session 2013 is bundled; CLARA2 and WSCD are read from the
click-log samples outside the project and skipped with a reason when they are absent.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402
from click_model_peers import LOGS, load_log  # noqa: E402

import bayeschain as bc  # noqa: E402
from bayeschain.inference.walk.choice import choose_walks  # noqa: E402

TREC = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"
COLUMNS = ["elpd_loo", "se", "elpd_diff", "se_diff", "pareto_k_high", "heldout_ll",
           "perplexity", "cond_perplexity", "E[H]", "fit_seconds", "max_rhat", "min_ess",
           "divergences"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=["trec", "clara2", "wscd"],
                    choices=["trec", "clara2", "wscd"])
    args = ap.parse_args()
    print(f"machine: {machine()}\n")
    specs = [bc.load_spec("walk"), bc.load_spec("walk-click")]
    for name in args.logs:
        if name == "trec":
            log = bc.read_clicks(TREC)
        else:
            missing = [p for p in LOGS[name] if not p.exists()]
            if missing:
                print(f"{name}: skipped, the click-log sample is not here ({missing[0]})\n")
                continue
            log = load_log(name)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            table = choose_walks(log, specs)
        print(f"## {name}: {table['pages'].iloc[0]:,} training pages, "
              f"{table['heldout_pages'].iloc[0]:,} held-out pages\n")
        print(table[COLUMNS].to_markdown(floatfmt=".4f"))
        for w in seen:
            print(f"\nwarning: {w.message}")
        print()


if __name__ == "__main__":
    main()
