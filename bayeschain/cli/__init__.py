"""The ``bayeschain`` command.

Subcommands register themselves in :data:`COMMANDS`; each module is imported only when its
command runs, so ``bayeschain --help`` stays fast.  User mistakes (a
:class:`~bayeschain.errors.BayeschainError`, a missing file) are printed on one line and
exit with status 2; so do faults of the system (a full disk, a closed output pipe); an
interrupted (SIGINT) or terminated (SIGTERM) command exits 130 / 143 and leaves no output.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from .. import __version__
from ..interrupts import RECEIVED, Terminated, raise_if_received


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
    "choose": Command("compare walk specs on a click log: PSIS-LOO, held-out click "
                      "prediction, E[H]", "bayeschain.cli.choose"),
    "score": Command("score runs under every posterior draw of a fitted user model",
                     "bayeschain.cli.score"),
    "compare": Command("compare runs under a fitted user model: P(A>B), HDI, ROPE, P(best)",
                       "bayeschain.cli.compare"),
    "simulate": Command("write a synthetic click log from a known user model",
                        "bayeschain.cli.simulate"),
    "eval": Command("evaluate TREC runs against qrels (trec_eval-like, every measure)",
                    "bayeschain.cli.eval"),
}


class UsageError(Exception):
    """A command line argparse refused (printed on one line by :func:`main`)."""

    def __init__(self, prog: str, message: str):
        self.prog = prog
        self.message = message
        super().__init__(f"{prog}: error: {message}")


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors :func:`main` prints on one line (no usage block)."""

    def error(self, message):
        raise UsageError(self.prog, message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayeschain",
        description="Evaluate search systems with Markov-chain user models.")
    parser.add_argument("--version", action="version", version=f"bayeschain {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        module = importlib.import_module(cmd.module)
        module.add_arguments(sub.add_parser(name, help=cmd.help, description=cmd.help))
    return parser


#: exit status of an interrupted command: 128 + the signal's number (the shell's convention)
INTERRUPTED, TERMINATED = 130, 143


#: the signals that stopped the command, if one did (:mod:`bayeschain.interrupts`): an
#: exception raised while unwinding from one (e.g. inside a library's import machinery,
#: which it can leave half-initialised), or one Python swallowed in a finaliser, is still
#: reported as the interruption it is
_RECEIVED = RECEIVED


def _on_sigterm(signum, frame):
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)      # one exception; cleanup runs in peace
    _RECEIVED.append(signum)
    raise Terminated(signum)


def _on_sigint(signum, frame):
    _RECEIVED.append(signum)
    raise KeyboardInterrupt


def _install_sigterm():
    """Make SIGTERM raise :class:`Terminated` (main thread only); returns the previous
    handler, or ``None`` when none was installed."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    _RECEIVED.clear()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_IGN:
        return None
    signal.signal(signal.SIGTERM, _on_sigterm)
    return previous


class _Stdout:
    """Standard output as the commands see it: the stream itself, noting whether writing
    to it failed (a closed pipe, a full device), so that the error can say so."""

    def __init__(self, stream):
        self._stream = stream
        self.failed = False

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError:
            self.failed = True
            raise

    def flush(self):
        try:
            return self._stream.flush()
        except OSError:
            self.failed = True
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Closed:
    """Standard output when the process has none (``>&-``: ``sys.stdout`` is None): a
    write fails as writing to a closed descriptor does."""

    encoding = "utf-8"

    def write(self, text):
        import errno

        raise OSError(errno.EBADF, "closed")

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        raise OSError("standard output is closed")


def _tolerant(stream):
    """A text stream that escapes what its encoding cannot show (``\\u00e9`` under
    ``PYTHONIOENCODING=ascii``) instead of failing; returns the previous error mode."""
    errors = getattr(stream, "errors", None)
    try:
        stream.reconfigure(errors="backslashreplace")
    except (AttributeError, ValueError, OSError):
        return None
    return errors


def _silence_stdout(stream) -> None:
    """Point a broken standard output at /dev/null, so that Python's flush at exit does
    not fail a second time (with "Exception ignored ... BrokenPipeError")."""
    import os

    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _quiet_signals(hook):
    """``sys.unraisablehook`` that stays silent about a signal's exception swallowed in a
    finaliser ("Exception ignored in ... Terminated"): the signal is recorded
    (:mod:`bayeschain.interrupts`) and reported once, by :func:`main`."""
    def quiet(unraisable):
        if isinstance(unraisable.exc_value, Terminated | KeyboardInterrupt):
            return
        hook(unraisable)

    return quiet


def _quiet_printed_signals(hook):
    """``sys.excepthook`` that stays silent about a received signal's exception printed by
    C code that caught it: ``PyErr_Print`` calls this hook, and NumPy's ``import_array``
    calls ``PyErr_Print`` when its import fails, so a C extension imported as the signal
    came prints the signal's exception and raises an ImportError of its own.  The signal
    is recorded and reported once, by :func:`main`.  (Once in a CI run, a SIGTERM during
    sampling printed a two-frame traceback above the error line: the handler, inside an
    import started from C code.)"""
    def quiet(kind, value, tb):
        if _RECEIVED and isinstance(value, Terminated | KeyboardInterrupt):
            return
        hook(kind, value, tb)

    return quiet


def _memory_limit() -> str:
    """`` (address space limited to N MiB: ulimit -v)`` when a limit is set, else ``""``."""
    from ..chains.checks import address_space_limit

    limit = address_space_limit()
    return "" if limit is None else f" (address space limited to {limit >> 20:,} MiB: ulimit -v)"


def _os_error_message(exc: OSError) -> str:
    what = exc.strerror or str(exc).splitlines()[0] or type(exc).__name__
    if exc.filename is not None:
        return f"{what}: {exc.filename}"
    return what


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command.  Exit status: 0 on success; 2 for a user mistake or a fault of the
    system (a missing or malformed file, an impossible parameter, a full disk, a closed
    output pipe), reported on one line ``bayeschain CMD: error: ...``; 130 when
    interrupted (Ctrl-C, SIGINT) and 143 when terminated (SIGTERM), with nothing written."""
    import warnings

    parser = build_parser()
    try:
        if argv is not None and any("\0" in str(a) for a in argv):
            raise UsageError("bayeschain", "an argument contains a NUL byte")
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"{exc.prog}: error: {' '.join(exc.message.split())} (see {exc.prog} --help)",
              file=sys.stderr)
        return 2
    if args.command is None:
        parser.print_help()
        return 0
    from ..errors import BayeschainError

    name = args.command

    def error(text: str) -> None:
        if sys.stderr is None:
            return
        try:
            print(f"bayeschain {name}: error: {' '.join(text.split())}", file=sys.stderr,
                  flush=True)
        except (OSError, ValueError):
            pass

    def note(text: str) -> None:
        if sys.stderr is not None:
            try:
                print(f"bayeschain {name}: note: {' '.join(text.split())}", file=sys.stderr,
                      flush=True)
            except (OSError, ValueError):
                pass

    def one_line_warning(message, category, filename, lineno, line=None) -> str:
        return f"bayeschain {name}: warning: {' '.join(str(message).split())}\n"

    from ..caches import prepare_caches

    prepare_caches(lambda text: note(text))
    previous = _install_sigterm()
    unraisable, excepthook = sys.unraisablehook, sys.excepthook
    sys.unraisablehook = _quiet_signals(unraisable)
    sys.excepthook = _quiet_printed_signals(excepthook)
    formatwarning = warnings.formatwarning
    warnings.formatwarning = one_line_warning
    stdout = sys.stdout
    modes = {s: _tolerant(s) for s in (sys.stdout, sys.stderr) if s is not None}
    sys.stdout = out = _Stdout(_Closed() if stdout is None else stdout)
    try:
        module = importlib.import_module(COMMANDS[name].module)
        status = int(module.run(args) or 0)
        raise_if_received()          # a signal whose exception a finaliser swallowed
        out.flush()
        return status
    except BayeschainError as exc:
        error(str(exc))
        return 2
    except KeyboardInterrupt as exc:
        error("interrupted" + (f" ({exc})" if str(exc) else "") + "; no output written")
        return INTERRUPTED
    except Terminated:
        error("terminated (SIGTERM); no output written")
        return TERMINATED
    except OSError as exc:             # a missing file, a full disk, a closed pipe...
        if out.failed:
            _silence_stdout(stdout)
            error(f"{exc.strerror or exc}: standard output")
        else:
            error(_os_error_message(exc))
        return 2
    except MemoryError:
        error(f"out of memory{_memory_limit()}: the input needs more memory than this "
              "process may use; no output written")
        return 2
    except RuntimeError as exc:
        if _RECEIVED or "can't start new thread" not in str(exc):
            if not _RECEIVED:
                raise
        else:
            error(f"cannot start a thread{_memory_limit()} (can't start new thread); no "
                  "output written")
            return 2
        import signal

        if _RECEIVED[0] == signal.SIGTERM:
            error("terminated (SIGTERM); no output written")
            return TERMINATED
        error("interrupted; no output written")
        return INTERRUPTED
    except Exception:
        if not _RECEIVED:
            raise
        import signal

        if _RECEIVED[0] == signal.SIGTERM:
            error("terminated (SIGTERM); no output written")
            return TERMINATED
        error("interrupted; no output written")
        return INTERRUPTED
    finally:
        sys.stdout = stdout
        sys.unraisablehook, sys.excepthook = unraisable, excepthook
        _RECEIVED.clear()            # reported: a caller in the same process goes on clean
        for stream, mode in modes.items():
            if mode is not None:
                try:
                    stream.reconfigure(errors=mode)
                except (ValueError, OSError):
                    pass
        warnings.formatwarning = formatwarning
        import signal

        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def program() -> int:
    """``bayeschain`` as a program (its console script, ``python -m bayeschain``):
    :func:`main`, then :func:`gc.freeze` before the interpreter's teardown.

    A command that has imported the scientific stack (about 2,000 modules: ArviZ, xarray,
    PyTensor, nutpie, Numba) spends about a second after its last output in Python's
    finalisation, whose garbage-collector passes visit every object of every module; the
    objects frozen are skipped by those passes and freed by reference count as before.
    Measured from the last ``atexit`` handler to the process's end: 0.95-1.08 s for a
    ``bayeschain fit`` through :func:`main`, 0.10-0.12 s through this function
    (``python3 benchmarks/bench_exit.py``); 0.71-0.80 s for a process that only imports
    those modules, 0.06-0.07 s frozen (ad hoc, ``benchmarks/RESULTS.md``).  Every
    output is written and closed before :func:`main` returns, ``atexit`` handlers still
    run, and the standard streams are flushed by the interpreter as before; what the
    freeze gives up is the collection of reference cycles at exit, whose memory the
    operating system takes back.  Not done by :func:`main`, which callers also run in
    their own process (tests, notebooks): their collector is left alone."""
    status = main()
    import gc

    gc.freeze()
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(program())
