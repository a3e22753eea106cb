"""Compile-time work spread over processes: a batch's members, each walked on its own.

A batch of a thousand hold'em spots spends its compile walking each member's deal and tree, one
member after another, each in numpy on one core. `ordered_map` hands the members to forked
worker processes instead. They inherit the compiler's state (the games, member 0's walk) from
the parent at the fork, so nothing large is pickled on the way there, and they send back only
numpy arrays and plain values. A worker computes in numpy only (torch merely wraps its arrays):
no torch operation that could enter an OpenMP region the fork left behind, and nothing on a
GPU. Python 3.12 and later warn (a DeprecationWarning) when a process with threads forks, as
this one has (OpenBLAS's and torch's); the workers hold their BLAS to one thread and leave
torch's alone.

The pool is used where it pays: on Linux (fork), with more than one core, and where the
members' serial work is estimated at `POOL_MIN_SECONDS` or more. `TENSORCFR_COMPILE_WORKERS`
sets the number of processes (1: none).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from typing import Callable

from tensorcfr.devices import available_cores
from tensorcfr.errors import TensorCFRError
from tensorcfr.memory import keep_heap

POOL_MIN_SECONDS = 2.0  # estimated serial seconds from which a batch's members go to a pool
MAX_WORKERS = 16  # processes at most (each holds a member's walk, 15 MB a river spot, at a time)
ENV = "TENSORCFR_COMPILE_WORKERS"

_work: Callable | None = None  # what the forked workers call; set just before the fork


def workers(items: int, seconds_each: float, light: bool = True) -> int:
    """Processes for `items` tasks of about `seconds_each` seconds each: 1 (do them here) unless
    they add up to `POOL_MIN_SECONDS` on a Linux machine with cores to spare, and what each
    sends back is `light` (cheap to send beside the work); `ENV` overrides.

    Example:
        >>> workers(1, 10.0)
        1
    """
    if items < 2 or not sys.platform.startswith("linux"):
        return 1
    wanted = os.environ.get(ENV)
    if wanted is not None:
        try:
            return max(1, min(int(wanted), items))
        except ValueError:
            raise TensorCFRError(f"{ENV} must be a whole number of processes, got {wanted!r}") from None
    if not light or items * seconds_each < POOL_MIN_SECONDS:
        return 1
    return max(1, min(available_cores(), MAX_WORKERS, items))


def _guarded(fn: Callable, i):
    """fn(i), or the exception it raised (returned: the caller raises the first in order)."""
    try:
        return fn(i)
    except Exception as e:  # noqa: BLE001  (every error comes back to be raised in order)
        return e


def _call(i):
    return _guarded(_work, i)


def _start() -> None:
    """A worker's set-up: freed memory kept for its next member (`memory.keep_heap`), and one
    BLAS thread (numpy's OpenBLAS starts a pool of threads a process, and with one a worker
    they spin against each other: 200 river spots on two workers took 10.1 s, 3.8 s on one
    thread each, 2026-11-27). Ctrl-C is left to the parent, which stops the pool: a terminal
    sends it to every process of the group, and each worker would print its own traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    keep_heap()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency; without it the workers run as they are
        return
    threadpool_limits(1, user_api="blas")


def ordered_map(fn: Callable, items, processes: int):
    """Yield fn(i) for each i of `items`, in order: here where `processes` is 1, else on that
    many forked processes (fn and everything it reads inherited, not pickled; what it returns
    pickled back). An exception fn raises is yielded in its place, for the caller to raise.

    Example:
        >>> list(ordered_map(lambda i: i * i, range(4), 1))
        [0, 1, 4, 9]
    """
    global _work
    if processes <= 1:
        for i in items:
            yield _guarded(fn, i)
        return
    items = list(items)
    _work = fn
    try:
        try:
            pool = multiprocessing.get_context("fork").Pool(processes, initializer=_start)
        except (AssertionError, OSError):  # a daemonic process (a pool's worker) has no children
            yield from ordered_map(fn, items, 1)
            return
        with pool:
            # chunks of a few tasks: in order, few messages, and no worker idle long at the end
            yield from pool.imap(_call, items, chunksize=max(1, len(items) // (8 * processes)))
    finally:
        _work = None
