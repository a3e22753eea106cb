"""Keep freed memory in the process on Linux (glibc), so large CPU tensors are not page-faulted
in afresh on every allocation.

glibc serves each allocation over 32 MiB with its own `mmap` and gives it back to the kernel
on `free`; a solver iteration allocates and frees the same few [B, S] temporaries every time,
and on a game of millions of sequences the kernel's page faults and zeroing then cost more
than the arithmetic (Dudo(6,1,2): 855 ms an iteration against 337 ms with memory kept).
`keep_freed_memory()` asks glibc to serve every allocation from its heap and to keep up to 2
GiB of free heap, so freed temporaries are reused. It changes the whole process's allocator
once (numpy's huge pages too, `_numpy_huge_pages`): the CLI calls it, and a CPU solver of a
large game (`devices.LARGE_WORK`) does; a program
can call `tensorcfr.keep_freed_memory()` itself. Set TENSORCFR_KEEP_HEAP=0 (or
TENSORCFR_KEEP_FREED=0, the same switch) to leave glibc as it is. A kept heap fragments under arrays
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

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4  # mallopt parameters, from glibc's malloc.h
_DEFAULT_MMAP_MAX = 65536  # glibc's default
# a compile's mapping threshold: arrays from this size mapped, smaller ones from the heap. glibc's
# own threshold starts at 128 KiB and rises to 32 MiB as mapped arrays are freed, but a mallopt
# call fixes it where it is: at 128 KiB every [T0, T1] table of a river spot's compile (9 MB at
# float64) was mapped and faulted in anew, and `tensorcfr solve` of that spot took 7.0 s against
# 5.0 s with the heap left alone (2 cores, 2026-11-28)
_COMPILE_MMAP_THRESHOLD = 32 << 20
# free heap kept at the top (mallopt's int: at most 2 GiB). A full-range hold'em turn spot:
# 639-797 -> 372-377 ms an iteration with it, peak 1.6 -> 1.9-2.0 GB; Dudo(5,2,2) in the public
# form 306-309 -> 171-193 ms (2 cores, float32, 2026-11-26, off and on run alternately)
_KEEP_TRIM = 2**31 - 1
_SWITCHES = ("TENSORCFR_KEEP_HEAP", "TENSORCFR_KEEP_FREED")  # either set to 0 turns it off
_done: bool | None = None
_depth = 0  # returning_freed_memory blocks entered


def keep_freed_memory() -> bool:
    """Ask glibc to reuse freed memory instead of returning it (idempotent); True when it did."""
    global _done
    if _done is None:
        _done = keep_heap()
    return _done


def keep_heap() -> bool:
    """`keep_freed_memory`'s settings applied now, whatever was set before (a compile's worker
    process, forked inside `returning_freed_memory`: each fresh [T0, T1] table it made was
    otherwise mapped and faulted in anew, and 200 river spots' walks on two workers spent 6.0 s
    in the kernel against 0.6 s, 2026-11-27); True where they were applied."""
    if not (sys.platform.startswith("linux") and all(os.environ.get(k, "1") != "0" for k in _SWITCHES)):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        kept = bool(libc.mallopt(_M_MMAP_MAX, 0)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, _KEEP_TRIM))
    except (OSError, AttributeError):  # not glibc (musl, ...): nothing to tune
        return False
    if kept:
        _numpy_huge_pages(False)
    return kept


def _numpy_huge_pages(on: bool) -> bool | None:
    """Whether numpy asks for transparent huge pages for its arrays from 4 MiB
    (`madvise(MADV_HUGEPAGE)`), set to `on`; the setting before, or None where numpy has no
    such switch. Off in a kept heap and in a compile (`returning_freed_memory`, `small_pages`):
    an array that glibc places in the heap (all of them in a kept heap; up to 32 MiB otherwise,
    its threshold for mapping rising as it goes) leaves its range marked when freed, and the
    kernel's khugepaged later fills the heap's free holes with huge pages, which count as
    resident. The same compile and solve of the full-range hold'em turn spot at float64 peaked
    at 5.6 to 11.1 times its state's three arrays a player with numpy's huge pages on, from one
    run to the next (18 runs, some on one thread or with a fixed hash seed), and at 5.7 to 6.3
    with them off (8 runs; 2 cores, 2026-11-27)."""
    import numpy as np

    core = getattr(np, "_core", None) or getattr(np, "core", None)
    switch = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    return None if switch is None else switch(on)


@contextlib.contextmanager
def returning_freed_memory():
    """Inside, large arrays mapped and unmapped when freed, as glibc does by default (from
    `_COMPILE_MMAP_THRESHOLD`, the ceiling its own threshold rises to; smaller ones reused from
    the heap); afterwards
    `keep_freed_memory`'s settings again, where they were on. The compiler's walk frees arrays
    of many sizes: kept in the heap they fragment it, and the solver's larger arrays, allocated
    next, cannot reuse the holes (Dudo(6,2,2) at float32 peaked at 23.6 GB so). At the end the
    heap's free pages go back to the kernel (`_trim`), also in a process that keeps no freed
    memory (a library user's before its first solver): Dudo(5,2,2)'s compile left that process
    at 612 MB resident, 371 MB trimmed (226 MB before it; 2026-11-29). `compile` runs inside it.

    Example:
        >>> with returning_freed_memory():
        ...     pass
    """
    global _depth
    with small_pages():  # (`_numpy_huge_pages`: why, whether or not the heap is kept)
        if _depth:  # inside another (a compile that solves continuation values)
            yield
            return
        if not _done:  # glibc's own settings: only the free heap handed back at the end
            _depth += 1
            try:
                yield
            finally:
                _depth -= 1
                _trim()
            return
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
        libc.mallopt(_M_MMAP_THRESHOLD, _COMPILE_MMAP_THRESHOLD)
        libc.mallopt(_M_TRIM_THRESHOLD, 2 * _COMPILE_MMAP_THRESHOLD)  # (glibc's own rule: twice the threshold)
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
            _trim()  # the heap's free top goes back too
            libc.mallopt(_M_MMAP_MAX, 0)
            libc.mallopt(_M_TRIM_THRESHOLD, _KEEP_TRIM)


def _trim() -> None:
    """Hand the heap's free pages back to the kernel (glibc's `malloc_trim(0)`: the free top, and
    the whole pages of free chunks inside it); nothing where there is no glibc."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


_MADV_PAGEOUT = 21  # Linux 5.4+: reclaim these pages (a clean file page is dropped, its contents stay in the file)
RELEASE_CHUNK = 1 << 26  # bytes copied between two releases


def _in_mapped_file(addr: int) -> bool:
    """Whether `addr` lies in a mapping of a file (a line of /proc/self/maps with an inode)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                span, _, _, _, inode, *_ = line.split()
                lo, hi = (int(x, 16) for x in span.split("-"))
                if lo <= addr < hi:
                    return inode != "0"
    except (OSError, ValueError):
        pass
    return False


def _mapped(t) -> bool:
    """Whether `t` is a contiguous CPU tensor, larger than a chunk, in a mapping of a file."""
    return (t.device.type == "cpu" and t.is_contiguous() and sys.platform.startswith("linux")
            and t.numel() * t.element_size() > RELEASE_CHUNK and _in_mapped_file(t.data_ptr()))


def _chunks(t):
    """Flat views of `t` (contiguous) of RELEASE_CHUNK bytes or fewer, in order."""
    flat, step = t.view(-1), max(1, RELEASE_CHUNK // t.element_size())
    return [flat[i:i + step] for i in range(0, flat.numel(), step)]


def _release(part) -> bool:
    """Hand the whole pages of the contiguous tensor `part` back to the kernel (a page it shares
    with its neighbours is left); False where the kernel refuses (before Linux 5.4)."""
    import mmap

    page = mmap.PAGESIZE
    lo = -(-part.data_ptr() // page) * page
    hi = (part.data_ptr() + part.numel() * part.element_size()) // page * page
    if hi <= lo:
        return True
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), _MADV_PAGEOUT) == 0


def copy_releasing(dst, src) -> None:
    """`dst.copy_(src)`, and where `src` is a CPU tensor mapped from a file (a checkpoint loaded
    with `torch.load(..., mmap=True)`), its pages handed back to the kernel a chunk at a time
    as they are copied: read through in one go, the file's pages stay resident until the
    mapping goes, and count in the process's peak (Dudo(6,2,2)'s resume: 21.2 GB against the
    iterations' 17.7). Nothing is lost: a page handed back is read from the file again if
    touched. Elsewhere (another device, memory that is not a file's, another OS) a plain copy.

    Example:
        >>> import torch
        >>> dst = torch.zeros(3)
        >>> copy_releasing(dst, torch.arange(3.0)); dst.tolist()
        [0.0, 1.0, 2.0]
    """
    if not (dst.is_contiguous() and dst.shape == src.shape and _mapped(src)):
        dst.copy_(src)
        return
    release = True
    for d, s in zip(_chunks(dst), _chunks(src)):
        d.copy_(s)
        release = release and _release(s)


def all_finite(t) -> bool:
    """`bool(torch.isfinite(t).all())` for a floating tensor, in one pass and no copy: its least
    and largest entries, which are NaN where any entry is (`torch.aminmax` propagates NaN) and
    infinite where an entry is. `isfinite` writes a bool per entry first: on a flop spot's 1.5 GB
    of float32 state the check took 1.1 s in 16-M-entry slices against 0.12 s (2 threads).

    Example:
        >>> import torch
        >>> all_finite(torch.tensor([1.0, float("nan")])), all_finite(torch.zeros(0))
        (False, True)
    """
    import torch

    if t.numel() == 0:  # aminmax has no identity
        return True
    lo, hi = torch.aminmax(t.reshape(-1))
    return bool(torch.isfinite(lo) & torch.isfinite(hi))


def all_finite_releasing(t) -> bool:
    """`all_finite(t)` a chunk at a time, handing a file-mapped tensor's pages back as it goes
    (as `copy_releasing`).

    Example:
        >>> import torch
        >>> all_finite_releasing(torch.tensor([1.0, float("nan")]))
        False
    """
    if not _mapped(t):
        return all_finite(t)
    release = True
    for part in _chunks(t):
        if not all_finite(part):
            return False
        release = release and _release(part)
    return True


@contextlib.contextmanager
def small_pages():
    """Inside, numpy leaves its large arrays on ordinary pages: on Linux it asks for transparent
    huge pages for every array from 4 MiB (`madvise(MADV_HUGEPAGE)`). A compile runs so
    (`returning_freed_memory`): huge pages left in the heap make a process's peak differ by up
    to 2x from one run to the next (`_numpy_huge_pages`), and a batch of hold'em spots, which
    keeps a [T0, T1] deal table or two of each of its members as it walks them, page-faults
    every table in afresh: 200 river spots on boards of their own compiled in 10.5-10.8 s with
    ordinary pages against 12.8-13.0 s with huge ones (2 cores, taking turns, 2026-11-27). A
    single game's walk loses a little: royal Rhode Island compiled in 5.8-6.0 s against 5.4-5.5
    s (7.8-9.6 s against 8.6-10.3 s with another process busy). Where numpy has no such switch,
    nothing changes.

    Example:
        >>> with small_pages():
        ...     pass
    """
    before = _numpy_huge_pages(False)
    try:
        yield
    finally:
        if before is not None:
            _numpy_huge_pages(before)
