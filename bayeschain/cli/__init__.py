"""The ``bayeschain`` command.

Subcommands register themselves in :data:`COMMANDS`; each module is imported only when its
command runs, so ``bayeschain --help`` stays fast.  User mistakes (a
:class:`~bayeschain.errors.BayeschainError`, a missing file) are printed on one line and
exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .. import __version__


@dataclass(frozen=True)
class Command:
    """A subcommand: its help line and the module that implements it.

    The module defines ``add_arguments(parser)`` and ``run(args)``; its top level imports
    nothing heavy (NumPy, pandas and the rest load inside ``run``), so building the parser
    for ``--help`` stays fast.
    """

    help: str
    module: str


COMMANDS: dict[str, Command] = {
    "demo": Command("fit a user model to the bundled TREC Session log, score and compare "
                    "systems with credible intervals (--toy: the paper's toy example)",
                    "bayeschain.cli.demo"),
    "stats": Command("summarise a click log: sessions, clicks per rank, backward moves, dwell",
                     "bayeschain.cli.stats"),
    "fit": Command("fit a browsing model's parameters to a click log (posterior to .nc)",
                   "bayeschain.cli.fit"),
    "score": Command("score runs under every posterior draw of a fitted user model",
                     "bayeschain.cli.score"),
    "compare": Command("compare runs under a fitted user model: P(A>B), HDI, ROPE, P(best)",
                       "bayeschain.cli.compare"),
    "simulate": Command("write a synthetic click log from a known user model",
                        "bayeschain.cli.simulate"),
    "eval": Command("evaluate TREC runs against qrels (trec_eval-like, every measure)",
                    "bayeschain.cli.eval"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayeschain",
        description="Evaluate search systems with Markov-chain user models.")
    parser.add_argument("--version", action="version", version=f"bayeschain {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        module = importlib.import_module(cmd.module)
        module.add_arguments(sub.add_parser(name, help=cmd.help, description=cmd.help))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    from ..errors import BayeschainError

    try:
        module = importlib.import_module(COMMANDS[args.command].module)
        return int(module.run(args) or 0)
    except BayeschainError as exc:
        print(f"bayeschain {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"bayeschain {args.command}: error: {exc.strerror}: {exc.filename}",
              file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
