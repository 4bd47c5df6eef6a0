"""Which walk the logs support: the default walk against the walk whose moves depend on
the click (``walk-click``) or the other walk specs named, by PSIS-LOO and by held-out
click prediction.

    python3 benchmarks/bench_walk_choice.py [--logs trec clara2 wscd]
        [--specs walk walk-click walk-once ...]

On each log, ``bayeschain.inference.choose.choose_walks`` (what ``bayeschain
choose`` prints): both specs with their default settings fitted to the sessions outside
``log.split(0.25, seed=0)`` (the split of ``bench_click_models.py``), PSIS-LOO on the
training pages (paired differences), PyClick's held-out metrics on the other sessions'
pages whose query occurs in training (every held-out page on TREC Session, whose queries
are free text that rarely repeats), ``E[H]`` on a 10-result page, fit seconds and the
sampler's diagnostics.  TREC Session 2013 is bundled; CLARA2 and WSCD are read from the
click-log samples outside the project and skipped with a reason when they are absent.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from click_model_peers import LOGS, load_log  # noqa: E402

import bayeschain as bc  # noqa: E402
from bayeschain.inference.choose import choose_walks  # noqa: E402

TREC = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"
COLUMNS = ["elpd_loo", "se", "elpd_diff", "se_diff", "pareto_k_high", "heldout_ll",
           "perplexity", "cond_perplexity", "E[H]", "fit_seconds", "max_rhat", "min_ess",
           "divergences"]


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def prior_sensitivity() -> None:
    """E[H] of the default walk on the whole TREC Session log with the trend's prior scale
    (``[examination] prior_sd``, 2 by default) halved and doubled."""
    import numpy as np

    from bayeschain.posterior.walk import expected_visits

    log = bc.read_clicks(TREC)
    base = bc.load_spec("walk")
    rows = []
    for scale in (1.0, 2.0, 4.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bc.fit(log, base.with_keys("examination", prior_sd=scale))
        h = expected_visits(post, 10).sum(axis=1)
        lo, hi = np.quantile(h, [0.025, 0.975])
        rows.append((scale, f"{h.mean():.2f} [{lo:.2f}, {hi:.2f}]"))
    print("## E[H] of the default walk on TREC Session 2013 by the trend's prior scale\n")
    print(table(rows, ("prior_sd", "E[H] on a 10-result page [95%]")))


def examination_profile(paths: list[str]) -> None:
    """For fitted walk posteriors: E[H] (examinations, revisits counted), the expected
    number of distinct ranks examined ``sum_j N_1j / N_jj`` (``N`` the walk's fundamental
    matrix on a 10-result page: ``N_1j / N_jj`` is the probability that rank ``j`` is ever
    examined), and that probability per rank, each with its 95% interval: what eye-tracking
    studies report as abstracts viewed."""
    import numpy as np

    from bayeschain.posterior.walk import walk_parameters

    for path in paths:
        post = bc.Posterior.load(path)
        p, q = walk_parameters(post).arrays()
        n = 10
        seen, total = [], []
        for pp, qq in zip(p[:, :n], q[:, :n], strict=True):
            P = np.diag(pp[:-1], 1) + np.diag(qq[1:], -1)
            N = np.linalg.inv(np.eye(n) - P)
            seen.append(N[0] / np.diag(N))
            total.append(N[0].sum())
        seen, total = np.array(seen), np.array(total)

        def cell(x):
            lo, hi = np.quantile(x, [0.025, 0.975])
            return f"{x.mean():.2f} [{lo:.2f}, {hi:.2f}]"

        print(f"### {path} ({post.attrs.get('spec_name')}, {post.attrs.get('pages')} pages)\n")
        print(f"E[H] {cell(total)}; distinct ranks examined {cell(seen.sum(axis=1))}\n")
        print(table([(r + 1, cell(seen[:, r])) for r in range(n)],
                    ("rank", "P(examined at least once) [95%]")))
        print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=["trec", "clara2", "wscd"],
                    choices=["trec", "clara2", "wscd"])
    ap.add_argument("--specs", nargs="+", default=["walk", "walk-click"],
                    help="the walk specs compared (default: walk and walk-click)")
    ap.add_argument("--prior-scales", action="store_true",
                    help="only E[H] of the default walk on TREC Session by prior scale")
    ap.add_argument("--profile", nargs="+", metavar="POSTERIOR.nc",
                    help="only the examination profile of fitted walk posteriors")
    args = ap.parse_args()
    print(f"machine: {machine()}\n")
    if args.prior_scales:
        prior_sensitivity()
        return
    if args.profile:
        examination_profile(args.profile)
        return
    specs = [bc.load_spec(name) for name in args.specs]
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
            result = choose_walks(log, specs, known_queries=name != "trec")
        print(f"## {name}: {result['pages'].iloc[0]:,} training pages, "
              f"{result['heldout_pages'].iloc[0]:,} held-out pages (ranks 1-"
              f"{result['heldout_ranks'].iloc[0]})\n")
        rows = [(model, *(_cell(result.loc[model, c]) for c in COLUMNS))
                for model in result.index]
        print(table(rows, ("model", *COLUMNS)))
        for w in seen:
            print(f"\nwarning: {w.message}")
        print()


if __name__ == "__main__":
    main()
