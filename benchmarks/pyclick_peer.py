"""PyClick's own EM fit and metrics on the benchmark's split (the speed peer of
``click_model_peers.py``).

    python3 benchmarks/pyclick_peer.py --pyclick PATH [--log clara2|wscd] [--models UBM PBM]

``PATH`` is a checkout of PyClick (``markovi/PyClick``, GPL-3.0; not part of this project,
imported from ``PATH`` at run time only; commit 98e7e46 runs unchanged under Python 3).
The script builds the split of ``click_model_peers`` (``log.split(0.25, seed=0)``, pages
with 10 results, test pages of queries seen in train; WSCD = trainSample + testSample),
turns the train pages into PyClick ``SearchSession`` objects, times ``model.train`` (50
EM iterations in pure Python) with ``time.perf_counter`` and scores the test pages with
PyClick's ``LogLikelihood``, ``Perplexity`` and ``PerplexityCond``.  For comparison it
also fits the NumPy model of ``click_model_peers`` on the same pages and scores it with
``bayeschain.inference.click_metrics``.  Prints one JSON object: ``log``, ``machine``,
``pyclick_path``, ``train_pages``, ``test_pages``, ``pyclick`` and ``numpy_peer`` (each
``{model: {fit_seconds, log_likelihood, perplexity, conditional_perplexity, pages}}``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402
from click_model_peers import LOGS, MODELS, evaluate, load_log, split_pages  # noqa: E402

PYCLICK_CLASSES = {"PBM": ("PBM", "PBM"), "UBM": ("UBM", "UBM"), "DBN": ("DBN", "DBN"),
                   "SDBN": ("SDBN", "SDBN"), "CM": ("CM", "CM"), "RCTR": ("CTR", "RCTR")}


def pyclick_sessions(queries, docs, clicks) -> list:
    """PyClick ``SearchSession`` objects of pages ``(queries, docs, clicks)``."""
    from pyclick.search_session.SearchResult import SearchResult
    from pyclick.search_session.SearchSession import SearchSession

    out = []
    for q, row, cl in zip(queries, docs, clicks, strict=True):
        session = SearchSession(str(q))
        session.web_results = [SearchResult(str(d), int(c)) for d, c in zip(row, cl,
                                                                               strict=True)]
        out.append(session)
    return out


def pyclick_model(name: str):
    import importlib

    module, cls = PYCLICK_CLASSES[name]
    return getattr(importlib.import_module(f"pyclick.click_models.{module}"), cls)()


def pyclick_metrics(model, sessions) -> dict:
    from pyclick.click_models.Evaluation import LogLikelihood, Perplexity, PerplexityCond

    return {"log_likelihood": LogLikelihood().evaluate(model, sessions),
            "perplexity": Perplexity().evaluate(model, sessions)[0],
            "conditional_perplexity": PerplexityCond().evaluate(model, sessions)[0],
            "pages": len(sessions)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pyclick", required=True, type=Path, help="PyClick checkout")
    ap.add_argument("--log", default="wscd", choices=list(LOGS))
    ap.add_argument("--all-test-pages", action="store_true",
                    help="every held-out page of 10 results (bench_click_models.py's option)")
    ap.add_argument("--models", nargs="+", default=["UBM"], choices=list(PYCLICK_CLASSES))
    ap.add_argument("--train-pages", type=int, default=None,
                    help="use only the first N train pages (a quick check)")
    args = ap.parse_args()
    sys.path.insert(0, str(args.pyclick.resolve()))

    train, test = split_pages(load_log(args.log), known=not args.all_test_pages)
    if args.train_pages is not None:
        train = tuple(x[:args.train_pages] for x in train)
        keep = np.isin(test[0], np.unique(train[0]))
        test = tuple(x[keep] for x in test)
    train_sessions = pyclick_sessions(*train)
    test_sessions = pyclick_sessions(*test)
    out = {"log": args.log, "machine": machine(), "pyclick_path": str(args.pyclick),
           "train_pages": len(train_sessions), "test_pages": len(test_sessions),
           "pyclick": {}, "numpy_peer": {}}
    for name in args.models:
        model = pyclick_model(name)
        t = time.perf_counter()
        model.train(train_sessions)
        fit_s = time.perf_counter() - t
        t = time.perf_counter()
        metrics = pyclick_metrics(model, test_sessions)
        eval_s = time.perf_counter() - t
        ours = MODELS[name]()
        t = time.perf_counter()
        ours.fit(*train)
        ours_s = time.perf_counter() - t
        out["pyclick"][name] = {"fit_seconds": fit_s, "eval_seconds": eval_s, **metrics}
        out["numpy_peer"][name] = {"fit_seconds": ours_s, **evaluate(ours, test)}
        print(f"{name}: PyClick fit {fit_s:.1f} s", file=sys.stderr, flush=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
