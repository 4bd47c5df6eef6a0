"""``bayeschain score QRELS RUN... --posterior post.nc -m MEASURE``: scores with intervals.

Prints each run's mean score over topics with its 95% credible interval under the user
model's posterior, and writes every (chain, draw, run, topic) score to ``-o`` (``.nc``
netCDF or ``.csv`` long table), atomically: two runs writing the same file cannot overwrite
each other (the second one fails), an error or an interrupt leaves no file.
"""

from __future__ import annotations

import argparse


def add_scoring_arguments(p: argparse.ArgumentParser, *, runs_help: str) -> None:
    """The inputs of ``score`` and ``compare``: qrels, runs, posterior, measure."""
    p.add_argument("qrels", help="TREC qrels file")
    p.add_argument("runs", nargs="+", metavar="run", help=runs_help)
    p.add_argument("--posterior", required=True, help="posterior file from `bayeschain fit`")
    p.add_argument("-m", "--measure", default="PatH(model='rwbm', order=2)",
                   help="measure whose parameters come from the posterior (default "
                        "\"PatH(model='rwbm', order=2)\", the fitted walk): "
                        "PatH(model='rwbm'|'drwbm', order=1|2) (drwbm needs a posterior "
                        "fitted with --spec walk-relevance), MPcont (holding rates), MP / "
                        "MPcont (jump kernel of --spec jumps-id or jumps-free); SFBM "
                        "and RBP only for walks fitted without backward moves")
    p.add_argument("--fixed-reference", action="store_true",
                   help="allow a measure with nothing learned from clicks (AP, P@k, MP "
                        "without jumps...): "
                        "the same score under every draw, reported as such")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_scoring_arguments(p, runs_help="TREC run files")
    p.add_argument("-o", "--output", default=None, help="write all scores: .nc or .csv")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")


def named_runs(paths) -> dict:
    """The run files read and named (:func:`~bayeschain.io.trec.run_names`); a file with
    no ranking is an error naming it (it would give a blank report)."""
    from ..errors import FormatError
    from ..io.trec import read_runs, run_names

    frames = read_runs(paths)
    for path, frame in zip(paths, frames, strict=True):
        if len(frame) == 0:
            raise FormatError("the run has no rankings (an empty run file)", file=path)
    return dict(zip(run_names(paths, frames), frames, strict=True))


def load_scoring_inputs(args: argparse.Namespace):
    """The posterior, the qrels and the named runs of a score / compare command."""
    from ..io.trec import read_qrels
    from ..posterior import Posterior

    posterior = Posterior.load(args.posterior)
    qrels = read_qrels(args.qrels)
    return posterior, qrels, named_runs(args.runs)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import ParameterError
    from ..io.write import atomic_output, check_output_path, netcdf_bytes
    from ..posterior.draws import stacked_draws
    from ..scoring import score

    if args.output:
        if Path(args.output).suffix not in (".nc", ".csv"):
            raise ParameterError("--output must end in .nc or .csv")
        check_output_path(args.output, force=args.force,
                          protected=[args.qrels, args.posterior, *args.runs])
    posterior, qrels, runs = load_scoring_inputs(args)
    scores = score(runs, qrels, args.measure, posterior,
                   fixed_reference=args.fixed_reference)
    mean = stacked_draws(scores.mean("topic", skipna=True))
    print(f"{args.measure} under {posterior.n_draws:,} draws of "
          f"{posterior.metadata.spec_name}: mean over topics (95% interval of the "
          f"{scores.attrs.get('uncertainty', 'user-model posterior')}, topics as given)")
    for run in mean["run"].values:
        d = mean.sel(run=run)
        lo, hi = d.quantile([0.025, 0.975]).values
        print(f"  {run}: {float(d.mean()):.4f} [{lo:.4f}, {hi:.4f}]")
    if "documents_without_own_rate" in scores.attrs:
        print(f"  note: {scores.attrs['documents_without_own_rate']}")
    if args.output:
        target = Path(args.output)
        with atomic_output(target, force=args.force,
                           protected=[args.qrels, args.posterior, *args.runs]) as tmp:
            if target.suffix == ".nc":    # in memory first: HDF5 never meets a full disk
                tmp.write_bytes(netcdf_bytes(scores))
            else:
                scores.to_dataframe().reset_index().to_csv(tmp, index=False)
        print(f"wrote {target}")
    return 0
