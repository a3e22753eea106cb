"""Sums into fixed segments without atomic adds, for `--deterministic` runs on a GPU.

`out.index_add_(1, index, values)` on CUDA adds with atomics in whatever order the threads run,
so a sum's last bit differs from run to run; torch's deterministic kernels
(`devices.deterministic`) instead sort the index on every call, which made `--deterministic`
3 to 11 times the default time on an H100 (2026-11-23). The indices of a treeplex's sums and
of the payoff's rows are fixed when the game is compiled, so the sorting is done once here (a
layout per index tensor, kept on it), and each call is a gather and a
`torch.segment_reduce`, which sums each segment in order in one thread: no atomics. Empty
segments sum to 0. Two kinds of index take one kernel: one whose targets take a value each
(`index_add_` with torch's sort off: an atomic add to a target of its own has no order to fix),
and a sorted one whose targets take k values each (a sum over a [B, n, k] view). H100,
2026-11-27, before the shortcuts and the offsets made once: `--deterministic` 1.16 to 2.74 times
the default time.

`add(out, index, values)` takes that path where `SEGMENT_SUMS` says (by default: a CUDA tensor
with torch's deterministic kernels on) and is `index_add_` elsewhere; `sum(index, values, n)`
is the same into a new tensor. On the CPU both add each segment's values in index order.
Writes to distinct positions need no order at all: `distinct_writes` turns torch's
deterministic kernels off around them.

Example:
    >>> import torch
    >>> out = torch.zeros(1, 3)
    >>> add(out, torch.tensor([2, 0, 2]), torch.tensor([[1.0, 2.0, 3.0]]), always=True).tolist()
    [[2.0, 0.0, 4.0]]
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

# "auto": segment sums on CUDA while torch's deterministic kernels are on, else index_add_;
# "always" and "never" (tests, benchmarks) force one or the other
SEGMENT_SUMS = "auto"
_ATTRIBUTE = "_tensorcfr_segments"  # where an index tensor keeps its layout (it lives as long)


def wanted(values: torch.Tensor, always: bool = False) -> bool:
    """Whether `add` takes segment sums for `values` (see `SEGMENT_SUMS`; `always` as if it
    said "always"), never while torch.compile traces."""
    if torch.compiler.is_compiling():  # (torch.compile traces the sum as it is: a layout is made on the host)
        return False
    if always or SEGMENT_SUMS != "auto":
        return always or SEGMENT_SUMS == "always"
    return values.is_cuda and torch.are_deterministic_algorithms_enabled()


def layout(index: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor, int, int]:
    """(the order that sorts `index` [m] stably, or None where it is sorted; the count of each
    value from lo to hi - 1 [hi - lo]; lo; hi) for the targets index [m], made once per index
    tensor on the host (a copy to the CPU: before a CUDA graph is recorded, as its warm-up
    iterations run eagerly).

    Example:
        >>> perm, lengths, lo, hi = layout(torch.tensor([3, 1, 3]))
        >>> perm.tolist(), lengths.tolist(), lo, hi
        ([1, 0, 2], [1, 0, 2], 1, 4)
    """
    got = getattr(index, _ATTRIBUTE, None)
    if got is None:
        idx = index.cpu().numpy().astype(np.int64)
        lo, hi = (int(idx.min()), int(idx.max()) + 1) if len(idx) else (0, 0)
        in_order = bool((idx[1:] >= idx[:-1]).all())
        perm = None if in_order else torch.as_tensor(np.argsort(idx, kind="stable"), device=index.device)
        counts = np.bincount(idx - lo, minlength=hi - lo)
        lengths = torch.as_tensor(counts, device=index.device)
        got = (perm, lengths, lo, hi)
        setattr(index, _ATTRIBUTE, got)
        # a shortcut for the sums (`_kind`): no two values share a target, or every target
        # takes the same number of values in order
        if len(idx) and counts.max() <= 1:
            kind = "distinct"
        elif len(idx) and in_order and counts.min() == counts.max():
            kind = int(counts[0])
        else:
            kind = None
        setattr(index, _ATTRIBUTE + "_kind", kind)
    return got


def _kind(index: torch.Tensor) -> str | int | None:
    """"distinct" where no two entries of `index` are equal, k where it is sorted and each of its
    values lo..hi - 1 occurs k times, else None (made with the layout)."""
    layout(index)
    return getattr(index, _ATTRIBUTE + "_kind")


def _offsets(index: torch.Tensor, lengths: torch.Tensor, batch: int) -> torch.Tensor:
    """The segments' offsets [batch, hi - lo + 1] in the sorted values, made once per index
    tensor and batch size: `torch.segment_reduce` given lengths would sum them into offsets and
    copy a broadcast of them on every call, two more kernels a sum."""
    got = getattr(index, _ATTRIBUTE + "_offsets", None)
    if got is None:
        got = {}
        setattr(index, _ATTRIBUTE + "_offsets", got)
    if batch not in got:
        row = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)])
        got[batch] = row.expand(batch, -1).contiguous()
    return got[batch]


def _segment_sums(index: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor | None, int, int]:
    """(the sums of `values` [B, m, ...] over the segments lo..hi - 1 of `index` [m] [B, hi - lo,
    ...], or None where the index is empty; lo; hi): where every segment has k values in order,
    a sum over a [B, hi - lo, k, ...] view (one kernel, a treeplex level whose infosets have
    equal numbers of actions); else a gather into sorted order where the index is not sorted,
    and one `torch.segment_reduce`."""
    perm, lengths, lo, hi = layout(index)
    if hi == lo:
        return None, lo, hi
    k = _kind(index)
    if isinstance(k, int):
        return values.reshape(values.shape[0], hi - lo, k, *values.shape[2:]).sum(2), lo, hi
    v = values if perm is None else values.index_select(1, perm)
    sums = torch.segment_reduce(v.contiguous(), "sum", offsets=_offsets(index, lengths, v.shape[0]), axis=1,
                                unsafe=True)
    return sums, lo, hi


def add(out: torch.Tensor, index: torch.Tensor, values: torch.Tensor, always: bool = False) -> torch.Tensor:
    """`out.index_add_(1, index, values)` for out [B, n, ...], index [m], values [B, m, ...]
    (the public form's rows of types too); as segment sums without atomics where `wanted` (or
    `always`). Returns out."""
    if not wanted(values, always):
        return out.index_add_(1, index, values)
    if _kind(index) == "distinct":  # one value a target: its atomic add has no order to fix
        with _unsorted():
            return out.index_add_(1, index, values)
    sums, lo, hi = _segment_sums(index, values)
    if sums is not None:
        out[:, lo:hi] += sums
    return out


def sum(index: torch.Tensor, values: torch.Tensor, n: int, always: bool = False) -> torch.Tensor:  # noqa: A001
    """A new [B, n, ...] holding the sums of `values` [B, m, ...] by target `index` [m] (values
    in 0..n - 1): `add` into zeros, where the segment sums, when they span 0..n - 1, are the
    result itself (no zeros written, no add: two kernels fewer a sum).

    Example:
        >>> sum(torch.tensor([1, 1, 0]), torch.tensor([[1.0, 2.0, 4.0]]), 3, always=True).tolist()
        [[4.0, 3.0, 0.0]]
    """
    out = lambda: values.new_zeros(values.shape[0], n, *values.shape[2:])  # noqa: E731
    if not wanted(values, always):
        return out().index_add_(1, index, values)
    if _kind(index) == "distinct":
        return add(out(), index, values, always)
    sums, lo, hi = _segment_sums(index, values)
    if sums is not None and lo == 0 and hi == n:
        return sums
    o = out()
    if sums is not None:
        o[:, lo:hi] += sums
    return o


@contextlib.contextmanager
def distinct_writes(values: torch.Tensor, always: bool = False):
    """Within, torch's deterministic kernels off for writes of `values` to distinct positions
    (the public form's `put_rows`: rows no two terminals share), which land alike in any order;
    torch's deterministic `scatter_` would sort the index on every call. Only where `wanted`
    (or `always`); the setting is restored afterwards.

    Example:
        >>> from tensorcfr.devices import deterministic
        >>> with deterministic():
        ...     with distinct_writes(torch.zeros(1), always=True):
        ...         inside = torch.are_deterministic_algorithms_enabled()
        ...     inside, torch.are_deterministic_algorithms_enabled()
        (False, True)
    """
    if not wanted(values, always):
        yield
        return
    with _unsorted():
        yield


@contextlib.contextmanager
def _unsorted():
    """Torch's deterministic kernels off within, where they are on (restored afterwards)."""
    if not torch.are_deterministic_algorithms_enabled():
        yield
        return
    warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(False)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(True, warn_only=warn)
