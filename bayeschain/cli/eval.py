"""``bayeschain eval``: a trec_eval-like command for every registered measure.

    bayeschain eval QRELS RUN [RUN ...] -m AP -m P@10 -m "RBP(p=0.8)" [-q] [--format tsv]

Runs are named by their run id (the 6th column), made unique with the file name when two
files share one.  Rows are named by the canonical measure string (``-m map`` prints ``AP``);
with ``--trec-names`` every measure that trec_eval computes is named as trec_eval names it
(``map``, ``P_10``, ``recip_rank``, ``Rprec``, ``bpref``, ``recall_100``, ``rbp_resid``...),
so that the text output lines up with trec_eval's.  Output goes to standard output, or
atomically to ``-o FILE`` (never overwriting an existing file without ``--force``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ParameterError

if TYPE_CHECKING:  # pandas is imported for --format tsv / json only, not for text
    import pandas as pd

    from ..evaluation import Evaluation

DEFAULT_MEASURES = ["AP", "P@10", "nDCG@10", "RBP(p=0.8)", "ERR@20"]
SWITCH_INTERVAL = 0.0005


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("qrels", help="TREC qrels file (query iter doc relevance)")
    p.add_argument("runs", nargs="+", metavar="run", help="TREC run file(s)")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure string, repeatable (e.g. AP, P@10, 'RBP(p=0.8)', nDCG@10, "
                        "'PatH(model=\"rwbm\", p=0.5, q=0.25)'); trec_eval names such as map "
                        f"or P_10 work too (default: {' '.join(DEFAULT_MEASURES)})")
    p.add_argument("-q", "--per-topic", action="store_true",
                   help="print each topic's value as well as the mean")
    p.add_argument("--trec-names", action="store_true",
                   help="name each measure that trec_eval computes as trec_eval does (map, "
                        "P_10, ndcg_cut_10, recip_rank, Rprec, bpref, recall_100, success_10, "
                        "rbp, rbp_resid); the others keep their measure strings")
    p.add_argument("--format", choices=["text", "tsv", "json"], default="text",
                   help="output format (default text, trec_eval style)")
    p.add_argument("-c", "--complete", action="store_true",
                   help="average over every qrels topic; a topic missing from a run scores 0 "
                        "(trec_eval -c)")
    p.add_argument("-l", "--level", type=int, default=1,
                   help="minimum grade counted as relevant for binary measures (default 1)")
    p.add_argument("-M", "--depth", type=int, default=None,
                   help="evaluate only the top DEPTH documents of each ranking (trec_eval -M)")
    p.add_argument("--holding-rates", default=None, metavar="RATES",
                   help="holding-time rates mu per rank for MPcont: comma-separated numbers "
                        "or a file of whitespace-separated numbers")
    p.add_argument("-o", "--output", default=None, help="write to this file instead of stdout")
    p.add_argument("--force", action="store_true", help="overwrite an existing --output file")


def format_text(per_topic: pd.DataFrame, per_topic_lines: bool) -> str:
    """trec_eval's layout: ``measure<pad>\ttopic\tvalue`` with 4 decimals."""
    import pandas as pd

    from ..evaluation import aggregate

    lines = []
    means = aggregate(per_topic)
    for run in pd.unique(per_topic["run"]):
        lines.append(f"{'runid':<22}\tall\t{run}")
        rows = per_topic[per_topic["run"] == run]
        if per_topic_lines:
            for topic in pd.unique(rows["topic"]):
                for rec in rows[rows["topic"] == topic].itertuples():
                    lines.append(f"{rec.measure:<22}\t{topic}\t{rec.value:.4f}")
        lines.append(f"{'num_q':<22}\tall\t{rows['topic'].nunique()}")
        for rec in means[means["run"] == run].itertuples():
            lines.append(f"{rec.measure:<22}\tall\t{rec.value:.4f}")
    return "\n".join(lines) + "\n"


def format_table(per_topic: pd.DataFrame, per_topic_lines: bool, fmt: str) -> str:
    """TSV or JSON records with columns run, topic, measure, value (topic 'all' = mean)."""
    import pandas as pd

    from ..evaluation import aggregate

    means = aggregate(per_topic).assign(topic="all")[["run", "topic", "measure", "value"]]
    table = pd.concat([per_topic, means], ignore_index=True) if per_topic_lines else means
    if fmt == "tsv":
        return table.to_csv(sep="\t", index=False, float_format="%.6f")
    return json.dumps(table.to_dict(orient="records"), indent=1) + "\n"


def parse_rates(text: str):
    """Holding rates from ``0.2,0.03,...`` or from a file of numbers."""
    import numpy as np

    looks_numeric = set(text) <= set("0123456789.,eE+- ")
    if not looks_numeric and "," in text and not Path(text).exists():
        looks_numeric = True               # a list with a word in it: its numbers are checked
    source = text if looks_numeric else Path(text).read_text(encoding="utf-8")
    try:
        rates = np.array([float(x) for x in source.replace(",", " ").split()])
    except ValueError:
        raise ParameterError(f"--holding-rates: expected numbers, got {text[:60]!r}") from None
    bad = [str(r) for r in rates if not (np.isfinite(r) and r > 0)]
    if rates.size == 0 or bad:
        raise ParameterError("--holding-rates must be positive finite numbers (rates per "
                             "rank, comma-separated, or a file of them)" +
                             (f"; found {', '.join(bad[:3])}" if bad else ""))
    return rates


def format_evaluation(evaluation: Evaluation, per_topic_lines: bool,
                      names: dict[str, str] | None = None) -> str:
    """:func:`format_text` of ``evaluation.to_frame()`` (measures renamed by ``names``),
    character for character, from the arrays (no pandas)."""
    shown = [(names or {}).get(m, m) for m in evaluation.measures]
    if len(set(shown)) < len(shown):   # two measures under one name: let pandas group them
        frame = evaluation.to_frame()
        frame["measure"] = frame["measure"].map(dict(zip(evaluation.measures, shown,
                                                         strict=True)))
        return format_text(frame, per_topic_lines)
    labels = [f"{m:<22}" for m in shown]
    means = evaluation.means()
    lines = []
    for i, (run, rows) in enumerate(evaluation.run_rows()):
        lines.append(f"{'runid':<22}\tall\t{evaluation.runs[run]}")
        if per_topic_lines:
            values = evaluation.values[:, rows].T.tolist()
            for topic, row in zip(evaluation.topic[rows].tolist(), values, strict=True):
                lines.extend(f"{label}\t{topic}\t{value:.4f}"
                             for label, value in zip(labels, row, strict=True))
        lines.append(f"{'num_q':<22}\tall\t{rows.stop - rows.start}")
        lines.extend(f"{label}\tall\t{value:.4f}"
                     for label, value in zip(labels, means[:, i].tolist(), strict=True))
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    import os

    # eval runs on its own two threads and does no linear algebra worth more: OpenBLAS's
    # thread pool (started when NumPy loads) would only spin on the second core meanwhile
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Arrow's tables from the C library's allocator: mimalloc, Arrow's default, hands the
    # pages of each file's table back and faults them in again for the next (1 M lines:
    # 8% more time, 50% more peak memory)
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # threads coming back from Arrow get the GIL sooner than after the default 5 ms
    sys.setswitchinterval(SWITCH_INTERVAL)
    from ..evaluation import evaluate_files
    from ..io.write import atomic_write_text, check_output_path

    if args.depth is not None and args.depth < 1:
        raise ParameterError(f"--depth must be a positive integer, got {args.depth}")
    if args.depth is not None:         # deeper than any ranking is no cut (and fits in C)
        args.depth = min(args.depth, 2**31 - 1)
    if args.output:
        check_output_path(args.output, force=args.force, protected=[args.qrels, *args.runs])
    measures = args.measures or DEFAULT_MEASURES
    context = {}
    if args.holding_rates:
        context["holding_rates"] = parse_rates(args.holding_rates)
    evaluation = evaluate_files(args.qrels, args.runs, measures, level=args.level,
                                depth=args.depth, complete=args.complete, **context)
    names = None
    if args.trec_names:
        from ..measures.registry import trec_name

        names = {m: trec_name(m) or m for m in evaluation.measures}
    if args.format == "text":
        text = format_evaluation(evaluation, args.per_topic, names)
    else:
        per_topic = evaluation.to_frame()
        if names:
            per_topic["measure"] = per_topic["measure"].map(names)
        text = format_table(per_topic, args.per_topic, args.format)
    if args.output:
        atomic_write_text(args.output, text, force=args.force,
                          protected=[args.qrels, *args.runs])
    else:
        sys.stdout.write(text)
    return 0
