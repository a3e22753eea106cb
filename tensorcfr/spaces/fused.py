"""Fused CPU kernels for the elementwise passes of the largest games.

On the CPU each eager torch operation reads and writes whole arrays, and on a game of millions
of sequences the iteration's time is the memory traffic of those passes, not arithmetic: DCFR's
regret update (add the instantaneous regrets, discount by sign, keep the positive part) is six
passes over [S] arrays, and regret matching's normalisation gathers each infoset's total to its
sequences before dividing. `torch.compile` (Inductor's C++ backend) turns each chain into one
loop that reads its inputs once and writes its outputs once. The numbers are the eager
operations' to the last bit (the same IEEE operations on the same operands; tested), so a run
is the same with or without them.

They serve the CPU, one batch member, from `FUSE_ENTRIES` entries, and are compiled once per
process for any shape (`dynamic=True`; measured on the 2-core CPU: 17.8 s for the first kernel
with torch's disk cache cold, 0.8 s for each further one, and 3.7 s and 0.1 s with it warm).
No two arguments of a kernel share memory: Inductor (torch 2.13) miscompiles a kernel
whose arguments are overlapping views at varying offsets, and its on-disk cache can hand a
kernel compiled for aliased arguments to unaliased ones (both seen, then avoided here), so a
kernel that updates an array in place takes it once, and the callers fall back to the eager
passes where arguments would share memory. `TENSORCFR_FUSE=0` turns the kernels off; a
compile that fails warns once and the eager passes go on.

Example:
    >>> import torch
    >>> w = torch.tensor([[1.0, 0.0], [3.0, 0.0]]); total = torch.tensor([[4.0, 0.0]])
    >>> normalize_rows(w, total, torch.tensor([0, 0]), torch.tensor([[0.5], [0.5]])).tolist()
    [[0.25, 0.5], [0.75, 0.5]]
"""

from __future__ import annotations

import os
import types
import warnings

import torch

# from here a run's savings repay the compile: Dudo(5,2,2)'s 15.7M-entry arrays save about 60 ms an
# iteration; Dudo(5,1,2)'s 164K and 491K save 2.4 ms, under a cold compile over its 1,900 iterations
FUSE_ENTRIES = 1 << 20
_compiled: dict[str, object] = {}
_failed: set[str] = set()


def wanted(x: torch.Tensor, entries: int | None = None) -> bool:
    """Whether the fused kernels serve an array like x [B, ...]: on the CPU, one member, from
    `FUSE_ENTRIES` entries (`entries`, else x's), and not turned off by TENSORCFR_FUSE=0.

    Example:
        >>> wanted(torch.zeros(1, 10))
        False
    """
    n = x.numel() if entries is None else entries
    return x.device.type == "cpu" and x.shape[0] == 1 and n >= FUSE_ENTRIES and enabled()


def enabled() -> bool:
    """Whether the fused kernels may run at all: not turned off by TENSORCFR_FUSE=0, and not
    inside a compile (a kernel's body is not compiled again).

    Example:
        >>> import os
        >>> enabled() == (os.environ.get("TENSORCFR_FUSE", "1") != "0")
        True
    """
    return os.environ.get("TENSORCFR_FUSE", "1") != "0" and not torch.compiler.is_compiling()


def disjoint(*xs: torch.Tensor | None) -> bool:
    """Whether no two of the tensors share storage (what every kernel here needs).

    Example:
        >>> x = torch.zeros(4)
        >>> disjoint(x[:2], torch.zeros(2)), disjoint(x[:2], x[2:])
        (True, False)
    """
    ptrs = [x.untyped_storage().data_ptr() for x in xs if x is not None]
    return len(set(ptrs)) == len(ptrs)


def call(name: str, fn, *args):
    """fn(*args) compiled (once per process and name), or eagerly where compiling failed.

    Example:
        >>> x = torch.ones(3)
        >>> _ = call("doctest_double", lambda v: v.mul_(2), x)
        >>> x.tolist()
        [2.0, 2.0, 2.0]
    """
    if name not in _failed:
        try:
            if name not in _compiled:  # a code object of its own: Dynamo limits recompiles per code object
                own = types.FunctionType(fn.__code__.replace(), fn.__globals__, name, fn.__defaults__, fn.__closure__)
                _compiled[name] = torch.compile(own, dynamic=True, fullgraph=True)
            return _compiled[name](*args)
        except Exception as e:  # noqa: BLE001  (no compiler, or one that fails: the eager passes are correct)
            _failed.add(name)
            warnings.warn(f"tensorcfr: compiling the fused kernel {name} failed ({type(e).__name__}: {e}); "
                          "running it eagerly", stacklevel=3)
    return fn(*args)


def _normalized(w, total, segment, uniform):
    tg = total[segment]  # gathered as the loop goes, never materialised
    return torch.where(tg > 0, w / tg, uniform)


def _normalize_into(w, total, segment, uniform, out):
    out.copy_(_normalized(w, total, segment, uniform))


def _normalize_in_place(w, total, segment, uniform):
    w.copy_(_normalized(w, total, segment, uniform))


def normalize_rows(w: torch.Tensor, total: torch.Tensor, segment: torch.Tensor, uniform: torch.Tensor,
                   out: torch.Tensor | None = None) -> torch.Tensor:
    """out = w / total[segment], or `uniform` where that total is 0: w, out [m, T], total [u, T]
    (>= 0), segment [m] (the row of total of each row of w), uniform [m, 1]; `out` None: into
    w itself. Eager regret matching computes w / (total + z) + z * uniform with z = 1 where
    the total is 0: the same numbers.

    Example:
        >>> w = torch.tensor([[1.0], [3.0], [0.0]])
        >>> normalize_rows(w, torch.tensor([[4.0], [0.0]]), torch.tensor([0, 0, 1]), torch.full((3, 1), 0.5)).tolist()
        [[0.25], [0.75], [0.5]]
    """
    if out is None:
        call("normalize_in_place", _normalize_in_place, w, total, segment, uniform)
        return w
    call("normalize_into", _normalize_into, w, total, segment, uniform, out)
    return out


def _subtract_gathered(a, b, index):
    a.sub_(b[index])


def subtract_gathered(a: torch.Tensor, b: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """a -= b[index] in place: a [m, T], b [n, T], index [m]. Instantaneous regrets: each
    sequence's value less its infoset's.

    Example:
        >>> subtract_gathered(torch.tensor([[3.0], [1.0]]), torch.tensor([[2.0]]), torch.tensor([0, 0])).tolist()
        [[1.0], [-1.0]]
    """
    call("subtract_gathered", _subtract_gathered, a, b, index)
    return a


def _regret_step(regret, inst, positive, pos, neg, plus: bool, discount: bool):
    r = regret + inst
    if plus:
        r = r.clamp(min=0)
    if discount:
        r = torch.where(r > 0, r * pos, r * neg)
    regret.copy_(r)
    if positive is not None:
        positive.copy_(r.clamp(min=0))


_steps: dict[tuple[bool, bool, bool], object] = {}


def regret_step(regret: torch.Tensor, inst: torch.Tensor, positive: torch.Tensor | None, pos, neg,
                plus: bool) -> None:
    """The regret-matching family's update of the cumulative regrets `regret` [n] in place by the
    instantaneous regrets `inst` [n]: added; clipped at 0 (`plus`); the positive ones times
    `pos` and the negative ones times `neg` (DCFR's discounting, where `pos` is not None); and
    their positive part written to `positive` [n] (None: not wanted). `pos`, `neg`: numbers or
    one-element tensors. Eager discounting computes max(r, 0) pos + min(r, 0) neg: the same.

    Example:
        >>> regret, positive = torch.tensor([1.0, -1.0]), torch.empty(2)
        >>> regret_step(regret, torch.tensor([1.0, -1.0]), positive, 0.5, 0.25, plus=False)
        >>> regret.tolist(), positive.tolist()
        ([1.0, -0.5], [1.0, 0.0])
    """
    discount = pos is not None
    if discount:
        pos, neg = (torch.as_tensor(v, dtype=regret.dtype).reshape(()) for v in (pos, neg))
    key = (plus, discount, positive is not None)
    if key not in _steps:  # a function per variant: Dynamo would specialise on the flags anyway
        def step(regret, inst, positive, pos, neg):
            _regret_step(regret, inst, positive, pos, neg, plus, discount)
        _steps[key] = step
    call("regret_step_%d%d%d" % key, _steps[key], regret, inst, positive, pos, neg)
