"""Numba compilation with an on-disk cache that never fails a command.

``numba.njit(cache=True)`` writes each compiled overload to a cache folder (``__pycache__``
next to the module, or ``NUMBA_CACHE_DIR``).  On a full disk or a read-only installation
that write raises ``OSError`` from inside the first call of the function (Numba guards it
only on Windows), so a fit would fail with "File too large" for a file the user never
asked for.  :func:`jit` compiles the same way and lets a failed cache write pass: the
function runs, uncompiled-from-cache next time.  A cache entry another Numba wrote (two
environments of one Python sharing an editable source tree: Numba 0.60's LLVM 14 cannot
read LLVM 20's bitcode, "LLVM bitcode parsing error") is read as a miss.  Numba removes
its own temporary file when a write fails, and a cache index that names a missing data
file is read as a miss.

**A cache entry is keyed by its callees' sources too.**  Numba keeps a compiled function
while its own source file is unchanged (the file's time and size): the compiled
functions it calls in other files are linked into the entry, and an edit of those files
left the old callee in it.  When a kernel's work layout changed in one file (the lanes
of the walk's likelihood blocks), the cached density of another file ran the old kernel
on the new layout and the process aborted.  :func:`jit` and :func:`cached_cfunc` key
each entry also by :func:`callee_stamp`: the source files of the compiled functions it
calls (its globals bound to Numba functions, directly or as attributes of a module it
names), with their own callees, read when Numba first looks in the cache (as it
compiles: the globals it compiles against).  Numba has no public hook for this; where
its cache object lacks the attribute used (another Numba release), or the callees cannot
be read, a function with callees in other files is compiled without the disk cache
rather than risk a stale callee.

**A callee called by its address is not compiled again into its caller.**  Numba links
the code of every compiled function a kernel calls into the kernel's own and makes
machine code of the whole again, at every level of a chain of calls: the walk's block
kernels were translated once on their own, once more in their driver, in the density
and in its C callback.  :func:`function_pointers` gives a kernel's address as an integer
and, inside compiled code, the function at an address, as a value of Numba's public
first-class function type: a caller taking the address as an argument links nothing of
the callee, and runs whichever kernel it is handed.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def disk_cache_enabled() -> bool:
    """Whether compiled functions go to Numba's on-disk cache: not when
    :mod:`bayeschain.caches` found no writable folder for it (``BAYESCHAIN_NUMBA_NO_CACHE``)."""
    return os.environ.get("BAYESCHAIN_NUMBA_NO_CACHE") != "1"


def jit(func: Callable, **options) -> Callable:
    """``func`` compiled by ``numba.njit(cache=True, **options)``, or ``func`` itself when
    Numba is not installed.  A cache that cannot be written is skipped, and an entry is
    keyed by its callees' sources too (see the module)."""
    try:
        import numba
    except ImportError:
        return func
    if not disk_cache_enabled():                               # no writable folder at all
        return numba.njit(cache=False, **options)(func)
    dispatcher = numba.njit(cache=True, **options)(func)
    _guard_cache(getattr(dispatcher, "_cache", None), func)
    return dispatcher


def jit_globals(namespace: dict, names, **options) -> dict:
    """The functions ``names`` of a module's globals ``namespace`` compiled by :func:`jit`
    and bound in it (so that kernels calling one another compile against the compiled
    callees: Numba binds a callee when its caller first compiles, at the first call);
    returns name -> compiled function.  All or none: when one fails, ``namespace`` is left
    as it was, so the next call starts again from the Python functions (a table filled
    part way would answer it with a KeyError, and a callee bound twice would be wrapped
    again).  That covers building them; Numba compiles each at its first call.  A name
    already compiled (another thread's first call bound it) is compiled from its Python
    function again, not wrapped twice."""
    done = {name: jit(getattr(namespace[name], "py_func", namespace[name]), **options)
            for name in names}
    namespace.update(done)
    return done


def _guard_cache(cache, func) -> None:
    """Wrap a Numba cache object's ``load_overload`` / ``save_overload``: an entry another
    Numba wrote is a miss, a write that fails is skipped, and at the first of either (when
    Numba compiles, so the callees are the globals it compiles against) the index is keyed
    by :func:`callee_stamp` (:func:`keyed_by_callees`); where it cannot be keyed, every load
    is a miss and nothing is written: the function compiles without the disk cache."""
    load = getattr(cache, "load_overload", None)
    save = getattr(cache, "save_overload", None)
    if load is None or save is None:
        return
    keyed: list[bool] = []

    def usable() -> bool:
        if not keyed:
            keyed.append(keyed_by_callees(cache, func))
        return keyed[0]

    def load_or_miss(sig, target_context, _load=load):
        if not usable():
            return None
        try:
            return _load(sig, target_context)
        except Exception:   # written by another Numba / LLVM (a shared source tree)
            return None     # a miss: compiled afresh, and the entry rewritten

    def save_or_skip(sig, data, _save=save):
        if not usable():
            return
        try:
            _save(sig, data)
        except OSError:        # full disk, read-only folder: run without the cache
            pass

    cache.load_overload = load_or_miss
    cache.save_overload = save_or_skip


def _is_compiled(obj) -> bool:
    """A Numba dispatcher or C callback (it has the Python function it compiles)."""
    return callable(obj) and hasattr(obj, "_cache") and (hasattr(obj, "py_func")
                                                         or hasattr(obj, "_pyfunc"))


def _python_function(obj):
    return getattr(obj, "py_func", None) or getattr(obj, "_pyfunc", None)


def _source_file(func) -> str | None:
    try:
        path = inspect.getsourcefile(func)
    except TypeError:
        return None
    return os.path.realpath(path) if path else None


def callee_stamp(func, _seen=None) -> tuple:
    """``((file, mtime, size), ...)``, sorted: the source files of the compiled functions
    ``func`` calls from another file (globals of ``func`` bound to Numba functions, or
    attributes, named in its code, of modules it names), and of their callees in turn.
    Empty when it calls none outside its own file."""
    import warnings

    seen = set() if _seen is None else _seen
    own = _source_file(func)
    names = set(func.__code__.co_names)
    found = []
    with warnings.catch_warnings():      # NumPy's deprecated aliases warn when looked up
        warnings.simplefilter("ignore")
        for name in names:
            obj = func.__globals__.get(name)
            if inspect.ismodule(obj):
                found += [getattr(obj, attr) for attr in names
                          if _is_compiled(getattr(obj, attr, None))]
            elif _is_compiled(obj):
                found.append(obj)
    stamps = set()
    for callee in found:
        py = _python_function(callee)
        if py is None or id(py) in seen:
            continue
        seen.add(id(py))
        path = _source_file(py)
        if path is not None and path != own:
            st = os.stat(path)
            stamps.add((path, st.st_mtime, st.st_size))
        stamps.update(callee_stamp(py, seen))
    return tuple(sorted(s for s in stamps if s[0] != own))


def keyed_by_callees(cache, func) -> bool:
    """Key the Numba cache object ``cache`` also by :func:`callee_stamp` of ``func``: an
    entry written before one of those files changed is then read as a miss.  False when the
    cache cannot be keyed so (no such attribute in this Numba, or the callees cannot be
    read); True when nothing needs keying."""
    try:
        stamp = callee_stamp(func)
    except Exception:       # noqa: BLE001 - a global that cannot be inspected, a file gone
        return False
    if not stamp:
        return True
    index = getattr(cache, "_cache_file", None)
    if index is None or not hasattr(index, "_source_stamp"):
        return False
    index._source_stamp = (index._source_stamp, stamp)
    return True


def cached_cfunc(signature, func):
    """``numba.cfunc(signature, cache=True)(func)`` with its cache guarded as :func:`jit`'s
    (keyed by its callees' sources, an unreadable entry a miss, a failed write skipped);
    without the disk cache when :func:`disk_cache_enabled` says so.  ``numba.cfunc``
    compiles at once, so the callback is built from its class the way ``numba.cfunc``
    builds it, with the guard set before it compiles."""
    import numba

    if not disk_cache_enabled():
        return numba.cfunc(signature, cache=False)(func)
    try:
        from numba.core import sigutils
        from numba.core.ccallback import CFunc

        compiled = CFunc(func, sigutils.normalize_signature(signature), locals={},
                         options={})
        compiled.enable_caching()
    except Exception:       # noqa: BLE001 - another Numba's class: no disk cache
        return numba.cfunc(signature, cache=False)(func)
    _guard_cache(getattr(compiled, "_cache", None), func)
    compiled.compile()
    return compiled


@functools.cache
def function_pointers(signature):
    """``(address, function_at)`` for compiled functions of the Numba ``signature``:
    ``address(dispatcher)`` (a compiled call from Python) is the integer address of the
    dispatcher's code for that signature, compiling it if need be; ``function_at(a)``,
    called inside compiled code, is the function at address ``a`` as a value of
    ``numba.types.FunctionType(signature)``, which the caller calls like any function.
    The address stays valid while the dispatcher lives.

    The address is that of the C-callable wrapper Numba makes of every compiled function
    (what its first-class function values hold first: the member ``addr`` in Numba 0.60,
    ``c_addr`` in 0.65; ``tests/chains/test_jit.py`` checks it, in every environment of
    the compatibility stage); the dispatcher is converted to a function value by Numba's own
    unboxing, and ``function_at`` builds that value with its other members null, so the
    call goes through the wrapper.  The wrapper does not pass exceptions on: a callee
    must not raise (the walk's block kernels do not)."""
    from numba import njit, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    kind = types.FunctionType(signature)

    @intrinsic
    def _held_address(typingctx, fn):
        def codegen(context, builder, sig, args):
            return builder.ptrtoint(builder.extract_value(args[0], 0), cgutils.intp_t)
        return types.intp(kind), codegen

    @intrinsic
    def function_at(typingctx, address):
        def codegen(context, builder, sig, args):
            value = cgutils.get_null_value(context.get_value_type(kind))
            pointer = builder.inttoptr(args[0], cgutils.voidptr_t)
            return builder.insert_value(value, pointer, 0)
        return kind(types.intp), codegen

    def held_address(fn):
        return _held_address(fn)

    taker: list = []

    def address(dispatcher) -> int:
        if not taker:          # compiled at the first address taken, not here: a process
            # that only calls by address (the prewarm children) compiled it for nothing,
            # 0.7-1.1 s each (Numba's set-up for a process's first compile)
            taker.append(njit(types.intp(kind))(held_address))
        dispatcher.compile(signature.args)
        found = int(taker[0](dispatcher))
        if found <= 0:
            raise RuntimeError(f"Numba gave no address for {dispatcher} at {signature}")
        return found

    return address, function_at


def usable_cores() -> int:
    """The CPUs this process may run on: its affinity where the OS says (a container or
    ``taskset`` limits it below the machine's count), else all of them."""
    if hasattr(os, "process_cpu_count"):                # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_in_threads(kernel: Callable, jobs: int, *args) -> None:
    """``kernel(*args, first, last)`` over the jobs ``0 .. jobs - 1`` in contiguous chunks,
    in threads (one per usable core, :func:`usable_cores`; the kernel compiled ``nogil``,
    each job writing only its own outputs), or in one call where one thread suffices or
    Numba is absent.

    Threads rather than Numba's ``prange``: the same speed for these kernels and a second
    less compilation on a cold cache (``parallel=True`` compiles the loop's gufunc and
    scheduling besides the kernel: the relevance walk's scoring took 2.2 s for its first
    call from an empty cache in parallel form, 1.0 s as a loop over a range of jobs;
    ``benchmarks/RESULTS.md``).
    Chunks are small and taken in turn, since the jobs' costs differ."""
    from concurrent.futures import ThreadPoolExecutor

    workers = max(1, min(usable_cores(), jobs))
    if workers == 1 or not numba_available():
        kernel(*args, 0, jobs)
        return
    chunk = max(1, jobs // (8 * workers))
    with ThreadPoolExecutor(workers) as pool:
        for f in [pool.submit(kernel, *args, a, min(a + chunk, jobs))
                  for a in range(0, jobs, chunk)]:
            f.result()
