"""``bayeschain score QRELS RUN... --posterior post.nc -m MEASURE``: scores with intervals.

Prints each run's mean score over topics with its 95% credible interval under the user
model's posterior, and writes every (chain, draw, run, topic) score to ``-o`` (``.nc``
netCDF or ``.csv`` long table), atomically: two runs writing the same file cannot overwrite
each other (the second one fails), an error or an interrupt leaves no file.

Many runs (``--stream``, or when runs x topics x draws would not fit in half the memory
budget) are scored a block of run files at a time: each block's scores are appended to
the netCDF file as they come (a ``run`` dimension that grows; the topics are the qrels',
a topic a run lacks has no score, NaN, as when scoring at once), and each run's line is
printed when its block is done, so memory holds one block.  Every run file is read once
before scoring to name the runs as scoring at once names them (an empty or malformed file
is refused before any scoring), then again in its block.
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
    from .arguments import positive_int

    add_scoring_arguments(p, runs_help="TREC run files")
    p.add_argument("-o", "--output", default=None, help="write all scores: .nc or .csv")
    p.add_argument("--stream", action="store_true",
                   help="score the runs a block at a time, appending to the .nc output "
                        "(the default when all the scores would not fit in memory)")
    p.add_argument("--block", type=positive_int, default=None, metavar="N",
                   help="with --stream: runs per block (default: as many as a quarter of "
                        "the memory budget holds)")
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


def load_scoring_inputs(args: argparse.Namespace, posterior=None, qrels=None):
    """The posterior and the qrels (each unless given) and the named runs of a score /
    compare command."""
    from ..io.trec import read_qrels
    from ..posterior import Posterior

    posterior = Posterior.load(args.posterior) if posterior is None else posterior
    qrels = read_qrels(args.qrels) if qrels is None else qrels
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
    from ..io.trec import read_qrels
    from ..posterior import Posterior

    posterior = Posterior.load(args.posterior)
    qrels = read_qrels(args.qrels)
    if _streamed(args, posterior, qrels):
        return _run_streamed(args, posterior, qrels)
    posterior, qrels, runs = load_scoring_inputs(args, posterior, qrels)
    scores = score(runs, qrels, args.measure, posterior,
                   fixed_reference=args.fixed_reference)
    mean = stacked_draws(scores.mean("topic", skipna=True))
    print(_header(args.measure, posterior, scores))
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


#: bytes per (chain, draw, run, topic) score that scoring a block holds at once (the scores,
#: their grid and the block's mean): measured about 25 (bench_scale_scoring: blocks of 37
#: runs x 1,000 topics x 1,000 draws peaked at 1.24 GB, about 0.9 GB above the process
#: without scores); 40 leaves a margin
STREAM_BYTES = 40


def _streamed(args, posterior, qrels) -> bool:
    """Whether ``score`` streams: asked, or too many scores for half the memory budget."""
    from pathlib import Path

    from ..chains.checks import memory_budget
    from ..errors import ParameterError

    if args.block is not None and not args.stream:
        raise ParameterError("--block sets the blocks of --stream: add --stream")
    if args.stream:
        if args.output and Path(args.output).suffix != ".nc":
            raise ParameterError("--stream writes netCDF: give an -o ending in .nc")
        return True
    if args.output and Path(args.output).suffix != ".nc":
        return False
    topics = qrels["query_id"].nunique()
    need = STREAM_BYTES * len(args.runs) * topics * posterior.n_draws
    return need > memory_budget() / 2


def _run_streamed(args, posterior, qrels) -> int:
    """Score the runs a block of files at a time (see the module docstring)."""
    from pathlib import Path

    import numpy as np

    from ..chains.checks import memory_budget
    from ..io.trec import read_runs
    from ..io.write import atomic_output
    from ..posterior.draws import stacked_draws
    from ..scoring import score

    names = _stream_run_names(args.runs)
    topics = list(dict.fromkeys(qrels["query_id"].astype(str)))
    post = posterior.posterior
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    per_run = STREAM_BYTES * len(topics) * chains * draws
    block = args.block or max(1, int(memory_budget() / 4 // per_run))
    block = min(block, len(args.runs))
    notes: set[str] = set()
    attrs: dict = {}
    target = Path(args.output) if args.output else None
    with atomic_output(target, force=args.force,
                       protected=[args.qrels, args.posterior, *args.runs]) \
            if target else _no_output() as tmp:
        writer = _ScoreFile(tmp, post, topics) if tmp is not None else None
        try:
            for start in range(0, len(args.runs), block):
                paths = args.runs[start:start + block]
                runs = dict(zip(names[start:start + block], read_runs(paths), strict=True))
                scores = score(runs, qrels, args.measure, posterior,
                               fixed_reference=args.fixed_reference)
                notes.update(v for k, v in scores.attrs.items()
                             if k == "documents_without_own_rate")
                if not attrs:
                    print(_header(args.measure, posterior, scores) + f"; {len(args.runs):,} "
                          f"runs scored {block:,} at a time", flush=True)
                attrs.update({k: v for k, v in scores.attrs.items() if k == "uncertainty"})
                grid = scores.reindex(topic=topics)
                if writer is not None:
                    writer.append(list(grid["run"].values), grid.transpose(
                        "run", "chain", "draw", "topic").values)
                mean = stacked_draws(scores.mean("topic", skipna=True))
                for run in mean["run"].values:
                    d = mean.sel(run=run)
                    lo, hi = np.quantile(d.values, [0.025, 0.975])
                    print(f"  {run}: {float(d.mean()):.4f} [{lo:.4f}, {hi:.4f}]", flush=True)
                del scores, grid, mean
            if writer is not None:
                writer.set_attrs(attrs)
        finally:
            if writer is not None:
                writer.close()
    for note in notes:
        print(f"  note: {note}")
    if target:
        print(f"wrote {target}")
    return 0


def _stream_run_names(paths) -> list[str]:
    """Every run file's name before any is scored, one file in memory at a time: the names
    :func:`named_runs` gives when scoring at once (whatever the blocks), and an empty or
    malformed run file refused before hours of scoring."""
    from ..errors import FormatError
    from ..io.trec import first_run_id, read_run_table, unique_run_names

    ids = []
    for path in paths:
        rid = first_run_id(read_run_table(path))
        if rid is None:
            raise FormatError("the run has no rankings (an empty run file)", file=path)
        ids.append(rid)
    return unique_run_names(paths, ids)


def _header(measure: str, posterior, scores) -> str:
    """The line above the runs' mean scores (what the intervals are of)."""
    return (f"{measure} under {posterior.n_draws:,} draws of {posterior.metadata.spec_name}: "
            f"mean over topics (95% interval of the "
            f"{scores.attrs.get('uncertainty', 'user-model posterior')}, topics as given)")


class _ScoreFile:
    """A netCDF file of scores that grows by blocks of runs: ``score (run, chain, draw,
    topic)``, one chunk per run, uncompressed: gzip saved a quarter of the bytes of scores
    (random-looking floats) and made writing 25 times slower (``bench_scale_scoring``)."""

    def __init__(self, path, post, topics):
        import h5netcdf
        import h5py
        import numpy as np

        self.file = h5netcdf.File(path, "w")
        chains, draws = post.sizes["chain"], post.sizes["draw"]
        self.file.dimensions = {"run": None, "chain": chains, "draw": draws,
                                "topic": len(topics)}
        self.file.create_variable("chain", ("chain",), "i8", data=post["chain"].values)
        self.file.create_variable("draw", ("draw",), "i8", data=post["draw"].values)
        self.file.create_variable("topic", ("topic",), h5py.string_dtype(),
                                  data=np.array(topics, dtype=object))
        self.runs = self.file.create_variable("run", ("run",), h5py.string_dtype())
        self.score = self.file.create_variable(
            "score", ("run", "chain", "draw", "topic"), "f8",
            chunks=(1, chains, draws, len(topics)), fillvalue=np.nan)

    def append(self, names, values) -> None:
        import numpy as np

        n = self.file.dimensions["run"].size
        self.file.resize_dimension("run", n + len(names))
        self.score[n:n + len(names)] = values
        self.runs[n:n + len(names)] = np.array(names, dtype=object)
        self.file.flush()

    def set_attrs(self, attrs: dict) -> None:
        """The scores' attrs that hold for every block (what their uncertainty is; a
        block's own notes are printed, not stored)."""
        for key, value in attrs.items():
            self.score.attrs[key] = value if isinstance(value, str | int | float) else str(value)

    def close(self) -> None:
        self.file.close()


def _no_output():
    from contextlib import nullcontext

    return nullcontext(None)
