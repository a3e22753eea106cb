"""Keep freed memory in the process on Linux (glibc), so large CPU tensors are not page-faulted
in afresh on every allocation.

glibc serves each allocation over 32 MiB with its own `mmap` and gives it back to the kernel
on `free`; a solver iteration allocates and frees the same few [B, S] temporaries every time,
and on a game of millions of sequences the kernel's page faults and zeroing then cost more
than the arithmetic (Dudo(6,1,2): 855 ms an iteration against 337 ms with memory kept).
`keep_freed_memory()` asks glibc to serve every allocation from its heap and to keep up to 1
GiB of free heap, so freed temporaries are reused. It changes the whole process's allocator
once, so it is the caller's choice, not a side effect of building a solver: the CLI and the
experiments call it; a program that imports tensorcfr calls `tensorcfr.keep_freed_memory()`
itself. Set TENSORCFR_KEEP_HEAP=0 to leave glibc as it is. A kept heap fragments under arrays
of gigabytes: for the largest games `TENSORCFR_KEEP_HEAP=0 GLIBC_TUNABLES=glibc.malloc.hugetlb=1`
(glibc's defaults with huge pages, 512 times fewer page faults) peaks lower (Dudo(6,2,2) at
float32: 17.7 GB against 21.8 GB) for a little more time (20.6 s an iteration against 16.7 s).

Example (on Linux with glibc):
    >>> import os, sys
    >>> from tensorcfr.memory import keep_freed_memory
    >>> keep_freed_memory() or not sys.platform.startswith("linux") or os.environ.get("TENSORCFR_KEEP_HEAP") == "0"
    True
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4  # mallopt parameters, from glibc's malloc.h
_DEFAULT_MMAP_MAX, _DEFAULT_TRIM = 65536, 128 * 1024  # glibc's defaults
_done: bool | None = None
_depth = 0  # returning_freed_memory blocks entered


def keep_freed_memory() -> bool:
    """Ask glibc to reuse freed memory instead of returning it (idempotent); True when it did."""
    global _done
    if _done is None:
        _done = False
        if sys.platform.startswith("linux") and os.environ.get("TENSORCFR_KEEP_HEAP", "1") != "0":
            try:
                libc = ctypes.CDLL("libc.so.6")
                _done = bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30))
            except (OSError, AttributeError):  # not glibc (musl, ...): nothing to tune
                _done = False
    return _done


@contextlib.contextmanager
def returning_freed_memory():
    """Inside, glibc's defaults (large arrays mapped, and unmapped when freed); afterwards
    `keep_freed_memory`'s settings again, where they were on. The compiler's walk frees arrays
    of many sizes: kept in the heap they fragment it, and the solver's larger arrays, allocated
    next, cannot reuse the holes (Dudo(6,2,2) at float32 peaked at 23.6 GB so). `compile` runs
    inside it.

    Example:
        >>> with returning_freed_memory():
        ...     pass
    """
    global _depth
    if not _done or _depth:  # off, or inside another (a compile that solves continuation values)
        yield
        return
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
    libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        libc.malloc_trim(0)  # the heap's free top goes back too
        libc.mallopt(_M_MMAP_MAX, 0)
        libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)
