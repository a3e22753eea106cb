"""One player's decision space in the public-tree form (`tensorcfr.forms.public` has the layout):
`PublicTreeplex` runs each pass of the generic `Treeplex` with the private type as a trailing
dimension, over [B, M, T] views of the [B, S] per-sequence tensors, with index tensors of
O(public edges), never O(edges × types); and the row helpers the public form's operator and
estimator share (`add_rows`, `put_rows`, `pick_rows`).

Example:
    >>> import tensorcfr
    >>> tp = tensorcfr.compile("ocp(12)", form="public").treeplexes[0]
    >>> tp.num_public_sequences, tp.types, tp.num_sequences
    (4, 12, 49)
"""

from __future__ import annotations

import dataclasses
import os
import warnings
import weakref
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np
import torch

from tensorcfr.errors import TensorCFRError
from tensorcfr.spaces import fused, public_loop, segments, treeplex
from tensorcfr.spaces.treeplex import WEIGHTS, chunked_dot



# The passes that need no level order (normalising, subtracting infoset values) run over blocks
# of consecutive levels of at least this many sequence entries (M T): one block for a small
# game, and temporaries of a block's size, not the whole treeplex's, for a large one.
BLOCK_ENTRIES = 1 << 22


class PublicLevel(NamedTuple):
    """One treeplex level in public units: public infosets `u0:u1`, public sequences `m0:m1`
    (rows of the [M, T] view, i.e. public sequence e is row e - 1)."""

    u0: int
    u1: int
    m0: int
    m1: int
    segment: torch.Tensor  # [m1-m0] int64: public infoset of each sequence, minus u0
    parent: torch.Tensor  # [u1-u0] int64: row of each infoset's parent sequence (first level: unused)
    seq_parent: torch.Tensor  # [m1-m0] int64: row of the parent sequence of each sequence's infoset
    first: bool  # the level whose parent is the empty sequence
    # (infosets [k] minus u0, rows of their parent sequences [k], permutations of the types [k, T])
    # whose values also reach their parents permuted (`PublicTreeplex.mirror_u`); None: none
    mirror: tuple | None = None


WIDE_TYPES = 1024  # from this many types a row, `add_rows` adds row by row on the CPU
# from this many entries `add_rows` sums by a sparse product on the CPU; below, the product's
# set-up (12 us, and about 20 us more where it follows torch's own threaded kernels) costs
# more than the scatter saves (9 us for 512 x 6 entries, 37 for 4096 x 6: measured)
MATRIX_ENTRIES = 1 << 15
# a best response's level of several counts of actions takes its maxima by count (`action_rows`:
# 3 calls a count) from this many entries (m T) a count, and a scatter_reduce_ below (an entry at
# a time, 1 call). `Solver.evaluate`, float32, 2 cores, one process, the two ways taking turns
# (medians of 6): isomorphic flop spot 1,376 -> 1,206 ms, full-range turn spot 401 -> 333 ms;
# public Dudo(4,2,2), with up to 8 counts a level, 14 ms either way (20 ms with every level by
# count, hence the bound)
BEST_ENTRIES = 1 << 16
# ... and gathers at most this many entries at a time (a block of infosets: the whole count's rows
# were a temporary of up to 84 MB on the isomorphic flop spot's evaluation at float32)
BEST_BLOCK = 1 << 22
GAP_ENTRIES = 1 << 22  # entries of a stretch of `infoset_gaps` (16 MB at float32)
GATHER_ENTRIES = 1 << 15  # from this many entries `pick_rows` gathers whole rows (below, 2.5 us more a call)
# device types on which `add_rows` adds one member's rows by `index_add_` along the first dimension
# of [n, T] (ROWS_DEVICES) or by the sparse product (MATRIX_DEVICES), both measured on the CPU;
# elsewhere the broadcast scatter-add, which the public form of Dudo(4,2,2) ran at about 0.5 TB/s on
# an H100 (2026-11-27). `experiments/gpu_profile.py --rows all` times the three on a GPU.
ROWS_DEVICES = ("cpu",)
MATRIX_DEVICES = ("cpu",)
# device types on which `normalize` picks the uniform strategy by a mask (a gather, a division,
# a comparison and a select: 6 kernels a block with the totals' sum, against 10 by the arithmetic
# of `_is_zero`, with the same numbers). The CPU keeps the arithmetic: there a mask and
# `torch.where` cost 5x a division (measured; see `_is_zero`). Not yet timed on a GPU.
MASK_DEVICES = ("cuda",)


def add_rows(out: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """out[:, index[i]] += values[:, i] for out [B, n, T], index [m], values [B, m, T].

    On the CPU (`MATRIX_DEVICES`) with one member the sum is a sparse 0/1 matrix [n, m] (CSR,
    made once per index, `_summing`) times values [m, T], added into out by `torch.addmm`: on
    Dudo(5,2,2)'s 1M x 15 rows 4.5 ms at float32 (7.5 at float64), against 27 ms for the
    broadcast `scatter_add_` below (measured). Elsewhere a scatter-add with the index
    broadcast over B and T (not materialised); `index_add_` along that middle dimension loops
    over rows on the CPU: 6x slower on Liar's Dice, 1.4x on Dudo(5,2,2) (measured, 4000 x 6
    and 1e6 x 15 rows)."""
    if segments.wanted(values):  # a deterministic GPU run: no atomics (`segments`)
        return segments.add(out, index, values)
    if _single(out) and _single(values):  # one member, one type (a sampled column): a flat add is 1.6x faster
        out.view(-1).index_add_(0, index, values.reshape(-1))
        return out
    if _by_matrix(out, values):
        lo, hi, m = _summing(index, out.dtype)
        if m is not None:
            o = out[0, lo:hi]  # the rows the index reaches (a level's parents: the level above)
            torch.addmm(o, m, values[0].contiguous(), out=o)
            return out
    if out.device.type in ROWS_DEVICES and out.shape[0] == 1 and values.shape[0] == 1 and out[0].is_contiguous():
        # one member: a row at a time into the [n, T] matrix, each row one vectorised add, in the
        # index's order as the scatter adds them (the same sums, bit for bit). 3.5-4.7x faster
        # than the broadcast scatter on 254 rows of 284-452 types (a flop spot's card groups,
        # 10,000 calls an iteration), 2.6-3.8x on 4,000 rows of 32-64, even on 6-15 (measured)
        out[0].index_add_(0, index, values[0])
        return out
    if out.device.type == "cpu" and values.shape[-1] >= WIDE_TYPES:
        return out.index_add_(1, index, values)  # a few rows of many types: one vectorised add a row
    return out.scatter_add_(1, index.view(1, -1, 1).expand(values.shape), values)


def sum_rows(index: torch.Tensor, values: torch.Tensor, n: int) -> torch.Tensor:
    """A new [B, n, T] holding out[:, index[i]] += values[:, i] for values [B, m, T]: `add_rows`
    into zeros, or in a deterministic GPU run the segment sums themselves (`segments.sum`: no
    zeros written and no add where they span the n rows).

    Example:
        >>> sum_rows(torch.tensor([1, 1]), torch.ones(1, 2, 3), 2)[0].tolist()
        [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]]
    """
    if segments.wanted(values):
        return segments.sum(index, values, n)
    return add_rows(values.new_zeros(values.shape[0], n, *values.shape[2:]), index, values)


def put_rows(out: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """out[:, index[i]] = values[:, i] for out [B, n, T], index [m] of distinct rows, values
    [B, m, T]. With one member a copy of whole rows along the first dimension of [n, T]: 8x
    faster than a scatter-add on 262K of 1M rows x 15, where rows far apart make each add a
    cache miss (measured)."""
    with segments.distinct_writes(values):  # (a deterministic GPU run: no order to fix, so no sort a call)
        if out.shape[0] == 1 and values.shape[0] == 1 and out[0].is_contiguous():
            out[0].index_copy_(0, index, values[0])
            return out
        return out.scatter_(1, index.view(1, -1, 1).expand(values.shape), values)


def pick_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x[:, index] [B, m, T] for x [B, n, T]. With one member and `GATHER_ENTRIES` or more, a
    gather of whole rows along the first dimension of the [n, T] matrix: `index_select` along
    the middle dimension of [1, n, T] is 2.1x slower on a 65K x 15 gather and 3.5x on the flat
    65K rows of a sampled column (`sampling/public.py`), measured.

    Example:
        >>> pick_rows(torch.arange(6.0).view(1, 3, 2), torch.tensor([2, 0])).tolist()
        [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if _single(x):
        return x.reshape(-1).index_select(0, index).view(1, -1, 1)
    if x.shape[0] == 1 and len(index) * x.shape[2] >= GATHER_ENTRIES:
        return x[0].index_select(0, index).unsqueeze(0)
    if x.device.type == "cpu" and not x.is_contiguous():
        # a batch's rows view of [B, S] (the empty sequence's column left out): `index_select`
        # along the middle dimension copies all of x first on the CPU (a full-range turn spot
        # with two settings: 7.5 s of payoff work an iteration, against 0.3 s with one), so
        # each member's [n, T], contiguous, is gathered along its first dimension instead
        out = x.new_empty(x.shape[0], len(index), x.shape[2])
        for b in range(x.shape[0]):  # batch members, not nodes
            torch.index_select(x[b], 0, index, out=out[b])
        return out
    return x.index_select(1, index)


def _is_zero(total: torch.Tensor) -> torch.Tensor:
    """1 where total (>= 0) is 0, else 0, in total's dtype: arithmetic, not a comparison (a
    boolean mask and `torch.where` cost 5x a division on the CPU: 675 against 134 us on 655K
    floats, measured).

    Example:
        >>> _is_zero(torch.tensor([0.0, 2.0, 0.5])).tolist()
        [1.0, 0.0, 0.0]
    """
    return torch.sign(total).neg_().add_(1)


def _single(x: torch.Tensor) -> bool:
    """Whether x [B, n, T] is one member of one type, laid out flat."""
    return x.shape[0] == 1 and x.shape[2] == 1 and x.is_contiguous()


def _by_matrix(out: torch.Tensor, values: torch.Tensor) -> bool:
    """Whether `add_rows` sums by a sparse product: one member on `MATRIX_DEVICES`, float32 or
    float64, out's rows contiguous (addmm writes into them), at least `MATRIX_ENTRIES` values; not
    inside torch.compile, which fuses the scatter-add itself (the product's set-up reads the index
    on the host: a graph break a level, and a recompile for each level's shape)."""
    return (values.shape[0] == 1 and values.dtype == out.dtype and not torch.compiler.is_compiling()
            and _matrix_shape(out, values.shape[1], values.shape[-1]))


def _matrix_shape(out: torch.Tensor, n: int, width: int) -> bool:
    return (n * width >= MATRIX_ENTRIES and out.shape[0] == 1 and out.device.type in MATRIX_DEVICES
            and out.dtype in (torch.float32, torch.float64) and width < WIDE_TYPES and out[0].is_contiguous())


def adds_in_order(out: torch.Tensor, index: torch.Tensor) -> bool:
    """Whether `add_rows(out, index, values)` (out [B, M, T], values [B, n, T] of out's dtype)
    adds the values row by row in the index's order, as a loop that adds them so gets its
    numbers to the last bit (`operators.card_loop`); not where it sums by a sparse product.

    Example:
        >>> adds_in_order(torch.zeros(1, 4, 2), torch.tensor([0, 1, 1]))
        True
    """
    if out.shape[0] != 1:  # a batch: row by row along the middle dimension where the rows are wide
        return out.device.type == "cpu" and out.shape[-1] >= WIDE_TYPES
    return not _matrix_shape(out, len(index), out.shape[-1]) or _summing(index, out.dtype)[2] is None


_SUMMING: dict = {}  # (id of the index, dtype) -> (weak reference to the index, lo, hi, CSR [hi - lo, m])


def _summing(index: torch.Tensor, dtype: torch.dtype) -> tuple[int, int, torch.Tensor]:
    """(lo, hi, the 0/1 CSR matrix [hi - lo, m] with a one at (index[i] - lo, i)) for the rows
    lo:hi that the index [m] reaches: row r sums the values whose index is lo + r, in
    increasing i (the order of a sequential scatter-add); None instead of the matrix where
    those rows are more than 4 m (the product costs a pass over them). Made once per index
    tensor and kept while the index lives."""
    key = (id(index), dtype)
    hit = _SUMMING.get(key)
    if hit is not None and hit[0]() is index:
        return hit[1:]
    lo, hi = (int(index.min()), int(index.max()) + 1) if len(index) else (0, 0)
    if hi - lo > 4 * len(index):  # rows spread far apart (a payoff class's terminals): the product would walk them all
        _SUMMING[key] = (weakref.ref(index, lambda _, k=key: _SUMMING.pop(k, None)), lo, hi, None)
        return lo, hi, None
    # 32-bit indices where they fit: half the memory, and MKL's product is faster with them
    # (1M x 15 rows: about 2x, measured beside another job; 187 against 155 us on 65K x 10)
    kind = torch.int32 if len(index) < 2**31 - 1 else torch.int64
    order = torch.argsort(index, stable=True).to(kind)
    crow = torch.zeros(hi - lo + 1, dtype=kind)
    torch.cumsum(torch.bincount(index - lo, minlength=hi - lo), 0, out=crow[1:])
    with warnings.catch_warnings():  # "sparse CSR support is in beta": the product used here is long-standing
        warnings.simplefilter("ignore")
        m = torch.sparse_csr_tensor(crow, order, torch.ones(len(index), dtype=dtype), size=(hi - lo, len(index)))
    _SUMMING[key] = (weakref.ref(index, lambda _, k=key: _SUMMING.pop(k, None)), lo, hi, m)
    return lo, hi, m


class PublicKeys(Sequence):
    """The infoset keys of one player, made on demand from (public node, type): Dudo(6,2,2)
    has 3.5e8 of them, which do not fit in memory as strings."""

    def __init__(self, tp: "PublicTreeplex", member: int = 0):
        self.tp, self.member = tp, member

    def __len__(self):
        return self.tp.num_infosets

    def __getitem__(self, j):
        if isinstance(j, slice):
            return self.names(np.arange(len(self))[j])
        if not -len(self) <= j < len(self):
            raise IndexError(j)
        return self.names(np.array([j % len(self)]))[0]

    def names(self, js: np.ndarray) -> list[str]:
        """The key strings of the infosets `js` [k]."""
        u, t = np.divmod(np.asarray(js, dtype=np.int64), self.tp.types)
        return self.tp.namer(self.tp.player, u, t, self.member) if self.member else self.tp.namer(self.tp.player, u, t)

    def __iter__(self):
        for _, key in self.chunked(np.arange(len(self))):
            yield key

    def chunked(self, js: np.ndarray, chunk: int = 1 << 16):
        """(j, key) for the infosets `js` [k], their names made a chunk at a time."""
        for k in range(0, len(js), chunk):
            part = js[k:k + chunk]
            yield from zip(part.tolist(), self.names(part))


@dataclass(frozen=True, eq=False)
class PublicTreeplex:
    """One player's treeplex in the public-tree form: U public infosets, M public sequences
    (plus the empty one), T private types; I = U T infosets and S = 1 + M T sequences.

    Offers what the update rules and the evaluation call on a `treeplex.Treeplex`, with the
    same shapes ([B, S], [B, I]), computed over [B, M, T] / [B, U, T] views.
    """

    player: int
    types: int  # T
    alphabet: tuple[str, ...]  # the game's action names
    infoset_parent_pub: torch.Tensor  # [U] int64: parent public sequence (0 = empty)
    infoset_offsets_pub: torch.Tensor  # [U+1] int64: public sequences (numbered from 1) of each infoset
    action_pub: torch.Tensor  # [M] int64: alphabet index of each public sequence's action
    level_offsets_pub: torch.Tensor  # [L+1] int64: level l holds public infosets [l]:[l+1]
    # [U, T] bool: the pairs (u, t) chance can reach (Leduc: not your card on the board); [B, U, T]
    # where a batch's members reach other pairs (turn spots on other boards: each its own river
    # cards); None: all
    live: torch.Tensor | None = None
    # where the game deals one card of a class of symmetric ones (hold'em's suit isomorphism,
    # `VectorGame.card_symmetries`): public infoset mirror_u[i] [E] stands for its twins below the
    # other cards too, each its own types permuted: its values reach its parent sequence also as
    # values[:, mirror_perm[i]] ([E, T] int64 positions among the types); None: no classes
    mirror_u: torch.Tensor | None = None
    mirror_perm: torch.Tensor | None = None
    namer: object = field(default=None, repr=False)  # (player, u [k], t [k]) -> key strings
    levels: tuple[PublicLevel, ...] = field(init=False, repr=False)
    blocks: tuple = field(init=False, repr=False)  # levels grouped for the passes that need no level order
    slot_pub: torch.Tensor = field(init=False, repr=False)  # [M] public infoset of each public sequence
    _uniform: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        off = self.infoset_offsets_pub
        counts = off.diff()
        slot = torch.repeat_interleave(torch.arange(len(counts), device=off.device), counts)  # [M]
        object.__setattr__(self, "slot_pub", slot)
        lo, io = self.level_offsets_pub.tolist(), off.tolist()
        levels = []
        for u0, u1 in zip(lo[:-1], lo[1:]):
            m0, m1 = io[u0] - 1, io[u1] - 1
            segment = slot[m0:m1] - u0
            parent = self.infoset_parent_pub[u0:u1] - 1
            first = bool(u1 > u0 and int(self.infoset_parent_pub[u0]) == 0)
            mirror = None
            if self.mirror_u is not None:
                i0, i1 = torch.searchsorted(self.mirror_u, torch.tensor([u0, u1], device=off.device)).tolist()
                if i1 > i0:
                    rows = self.mirror_u[i0:i1] - u0
                    mirror = (rows, parent[rows], self.mirror_perm[i0:i1])
            levels.append(PublicLevel(u0, u1, m0, m1, segment, parent, parent[segment], first, mirror))
        object.__setattr__(self, "levels", tuple(levels))
        # consecutive levels merged into blocks of at least BLOCK_ENTRIES sequence entries:
        # (u0, u1, m0, m1, public infoset of each sequence minus u0 [m1-m0])
        blocks, start = [], 0
        for k, u1 in enumerate(lo[1:]):
            m0, m1 = io[lo[start]] - 1, io[u1] - 1
            if (m1 - m0) * self.types >= BLOCK_ENTRIES or k == len(lo) - 2:
                # a block of one level shares that level's index
                blocks.append((lo[start], u1, m0, m1, levels[k].segment if start == k else slot[m0:m1] - lo[start]))
                start = k + 1
        object.__setattr__(self, "blocks", tuple(blocks))
        object.__setattr__(self, "_live_masks", {})
        object.__setattr__(self, "_uniform", {})
        object.__setattr__(self, "_weights", {})  # `row_weights` by dtype
        object.__setattr__(self, "_action_rows", {})  # `action_rows` by level

    # -- sizes and names ------------------------------------------------------------------------
    @property
    def num_public_infosets(self) -> int:
        return int(self.infoset_parent_pub.numel())

    @property
    def num_public_sequences(self) -> int:
        """M: public sequences without the empty one."""
        return int(self.action_pub.numel())

    @property
    def num_infosets(self) -> int:
        return self.num_public_infosets * self.types

    @property
    def num_sequences(self) -> int:
        """Sequences including the empty one (the length of every per-sequence tensor)."""
        return 1 + self.num_public_sequences * self.types

    @property
    def infoset_keys(self) -> PublicKeys:
        return PublicKeys(self)

    @property
    def action_names(self) -> "_ActionNames":
        return _ActionNames(self)

    def infosets(self, member: int = 0):
        """(index, key, action names) of every infoset chance can reach, in storage order (the
        infosets of the generic form; the others hold numbers that never matter). `member`: the
        keys as batch member `member` names them (they differ where the members' games name
        their infosets apart: hold'em spots on boards of their own)."""
        live = self.live if self.live is None or self.live.dim() == 2 else self.live[member]
        js = np.arange(self.num_infosets) if live is None else np.flatnonzero(live.reshape(-1).cpu().numpy())
        names = self.action_names
        for j, key in PublicKeys(self, member).chunked(js):
            yield j, key, names[j]

    def infoset_index(self) -> dict[str, int]:
        """{infoset key: storage index} of the reachable infosets, built once on first use."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {k: j for j, k, _ in self.infosets()}
            object.__setattr__(self, "_index", index)
        return index

    def layout(self, member: int = 0) -> dict[str, np.ndarray]:
        """The policy file's layout of this player (`io.policies`): {"infoset": [M] the public
        infoset of each public sequence, "action": [M] its action, "live": [U, T] the (public
        infoset, type) pairs chance reaches, batch member `member`'s}.

        Example:
            >>> import tensorcfr
            >>> lay = tensorcfr.compile("kuhn", form="public").treeplexes[0].layout()
            >>> lay["infoset"].tolist(), lay["action"].tolist(), lay["live"].shape
            ([0, 0, 1, 1], ['pass', 'bet', 'pass', 'bet'], (2, 3))
        """
        U, T = self.num_public_infosets, self.types
        if self.live is None:
            live = np.ones((U, T), dtype=bool)
        else:
            per = self.live.reshape(-1, U, T)
            live = per[min(member, per.shape[0] - 1)].cpu().numpy()
        return {"infoset": self.slot_pub.cpu().numpy(),
                "action": np.array(self.alphabet, dtype=str)[self._host("action_pub")], "live": live}

    def split_names(self, samples: int = 4096, seed: int = 0) -> tuple[list[str], list[str]] | None:
        """(type names [T], public names [U]) such that infoset (u, t)'s key is `types[t] +
        public[u]`, or None where the game's keys are not of that form. A name per type and per
        public infoset instead of one per infoset: the flop spot of the hold'em tutorial has 9.6e7
        infosets and 1.3e5 public ones. The types' names are what the keys of the first public
        infoset do not share at their end; the split is checked on `samples` random reachable
        infosets (every one where there are fewer).

        Example:
            >>> import tensorcfr
            >>> tp = tensorcfr.compile("leduc", form="public").treeplexes[0]
            >>> types, public = tp.split_names()
            >>> types[0], public[0], tp.infoset_keys[0]
            ('Js', '|-|', 'Js|-|')
        """
        T, U = self.types, self.num_public_infosets
        if U == 0:  # a player who never moves: no key to split
            return [str(t) for t in range(T)], []
        first = self.namer(self.player, np.zeros(T, dtype=np.int64), np.arange(T))
        end = len(os.path.commonprefix([k[::-1] for k in first])) if T > 1 else len(first[0])
        types = [k[:len(k) - end] for k in first]
        live = None if self.live is None else self.live.reshape(-1, U, T)[0].cpu().numpy()
        own = np.zeros(U, dtype=np.int64) if live is None else live.argmax(axis=1)  # a reachable type of each u
        keys = self.namer(self.player, np.arange(U), own)
        if not all(k.startswith(types[t]) for k, t in zip(keys, own.tolist())):
            return None
        public = [k[len(types[t]):] for k, t in zip(keys, own.tolist())]
        js = np.arange(U * T) if live is None else np.flatnonzero(live.reshape(-1))
        if len(js) > samples:
            js = np.random.default_rng(seed).choice(js, samples, replace=False)
        u, t = np.divmod(js, T)
        if any(k != types[b] + public[a] for k, a, b in zip(self.namer(self.player, u, t), u.tolist(), t.tolist())):
            return None
        return types, public

    def _host(self, name: str) -> np.ndarray:
        """A numpy copy of an index tensor, made once (per-infoset lookups read it, not the device)."""
        cache = self.__dict__.setdefault("_host_copies", {})
        if name not in cache:
            cache[name] = getattr(self, name).cpu().numpy()
        return cache[name]

    def public_actions(self, u: int) -> tuple[int, int]:
        """The public sequences e0:e1 (numbered from 1) of public infoset u."""
        off = self._offsets()
        return off[u], off[u + 1]

    def _offsets(self) -> list[int]:
        """`infoset_offsets_pub` as a list of ints, made once: per-infoset lookups (a policy's
        keys, 45,402 on a river spot) read a list far faster than numpy scalars."""
        off = self.__dict__.get("_offset_list")
        if off is None:
            off = self._host("infoset_offsets_pub").tolist()
            object.__setattr__(self, "_offset_list", off)
        return off

    def columns(self, j: int) -> list[int]:
        """The columns of infoset j's sequences in a per-sequence tensor [B, S]."""
        u, t = divmod(int(j), self.types)
        off, T = self._offsets(), self.types
        return list(range(1 + (off[u] - 1) * T + t, 1 + (off[u + 1] - 1) * T + t, T))

    def per_infoset(self, row: list, member: int = 0) -> dict[str, dict[str, object]]:
        """`{infoset key: {action name: row[sequence]}}` for a per-sequence list `row` [S], keyed
        as batch member `member` names its infosets."""
        return {key: dict(zip(acts, (row[c] for c in self.columns(j)))) for j, key, acts in self.infosets(member)}

    def uniform(self, dtype: torch.dtype) -> torch.Tensor:
        """[M, 1]: 1 / actions of each public sequence's infoset."""
        if dtype not in self._uniform:
            self._uniform[dtype] = (1.0 / self.infoset_offsets_pub.diff().to(dtype))[self.slot_pub].unsqueeze(1)
        return self._uniform[dtype]

    def with_types(self, k: int, live: torch.Tensor | None = None) -> "PublicTreeplex":
        """The same public tree with k types (the columns a sample touches, `sampling/public.py`),
        `live` [U, k] the pairs chance can reach; the index tensors are shared, not copied.

        Example:
            >>> import tensorcfr
            >>> tp = tensorcfr.compile("kuhn", form="public").treeplexes[0]
            >>> tp.num_sequences, tp.with_types(1).num_sequences
            (13, 5)
        """
        return PublicTreeplex(self.player, int(k), self.alphabet, self.infoset_parent_pub, self.infoset_offsets_pub,
                              self.action_pub, self.level_offsets_pub, live=live)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.init and isinstance(getattr(self, f.name), torch.Tensor)}

    def to(self, device) -> "PublicTreeplex":
        return PublicTreeplex(self.player, self.types, self.alphabet,
                              **{k: v.to(device) for k, v in self.tensors().items()}, namer=self.namer)

    # -- views ----------------------------------------------------------------------------------
    def rows(self, t: torch.Tensor) -> torch.Tensor:
        """[B, M, T] view of the non-empty sequences of a per-sequence tensor [B, S]."""
        return t[:, 1:].view(t.shape[0], self.num_public_sequences, self.types)

    def live_mask(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[U, T] (or per member [B, U, T]) 1 where chance can reach (u, t), else 0, in `dtype`
        (None: everywhere)."""
        if self.live is None:
            return None
        if dtype not in self._live_masks:
            self._live_masks[dtype] = self.live.to(dtype)
        return self._live_masks[dtype]

    def reachable(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1, S] (or per member [B, S]): `live_mask` at each sequence (0 at the empty one), or
        None where all are live.

        Example:
            >>> import torch, tensorcfr
            >>> tp = tensorcfr.compile("leduc", form="public").treeplexes[0]
            >>> r = tp.reachable(torch.float64)
            >>> (r.shape[1] == tp.num_sequences, 0 < float(r.mean()) < 1)
            (True, True)
        """
        live = self.live_mask(dtype)
        return None if live is None else self.at_sequences(live.reshape(-1 if live.dim() == 3 else 1,
                                                                          self.num_infosets))

    def _to_parent(self, lv: PublicLevel, q: torch.Tensor, values: torch.Tensor) -> None:
        """Add infoset values [B, n, T] of level `lv` into their parent sequences of q [B, S]
        (and those of their twins, `mirror_u`: the values permuted)."""
        parts = [(lv.parent, values)] + ([] if lv.mirror is None else [_mirrored(lv, values)])
        for parent, v in parts:
            if lv.first:
                q[:, 0] += v.sum((1, 2))
            else:
                add_rows(self.rows(q), parent, v)

    def sequence_weights(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1, S]: how many sequences of the whole game each sequence stands for (a product of
        1 + its twins over the card classes above it, `mirror_u`), to weigh a sum over sequences
        of strategies that treat twins alike (a game value); None: one each (no classes).

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn", form="public").treeplexes[0].sequence_weights(torch.float64) is None
            True
        """
        seq = self.row_weights(dtype)
        if seq is None:
            return None
        out = seq.new_empty(1, self.num_sequences)  # (made at each call, not kept: 305 MB on a flop spot)
        out[0, 0] = seq[0]
        self.rows(out)[0] = seq[1:, None]
        return out

    def path_table_bytes(self, batch: int, dtype_bytes: int) -> int:
        """0: the public form has no path table (`DecisionSpace.path_table_bytes`)."""
        return 0

    def infoset_weights(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1, I]: `sequence_weights` by infoset, each infoset's row weight given to its types (an
        infoset's rows share it, `row_weights`); None: one each.

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn", form="public").treeplexes[0].infoset_weights(torch.float64) is None
            True
        """
        seq = self.row_weights(dtype)
        if seq is None:
            return None
        first = seq[self.infoset_offsets_pub[:-1]]  # [U]: row offsets[u] - 1 is infoset u's first, at 1 + row
        return first[:, None].expand(-1, self.types).reshape(1, -1)

    def row_weights(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1 + M]: `sequence_weights` a public sequence (every type of a row has its row's),
        kept; None: one each.

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn", form="public").treeplexes[0].row_weights(torch.float64) is None
            True
        """
        if self.mirror_u is None:
            return None
        if dtype in self._weights:
            return self._weights[dtype]
        per = torch.ones(self.num_public_infosets, dtype=dtype, device=self.mirror_u.device)  # [U]
        per.index_add_(0, self.mirror_u, torch.ones_like(self.mirror_u, dtype=dtype))
        seq = torch.ones(1 + self.num_public_sequences, dtype=dtype, device=per.device)  # [1 + M]
        for lv in self.levels:  # top down: an infoset's weight is its parent's times its own
            w = per[lv.u0:lv.u1] * (1 if lv.first else seq[1 + lv.parent])
            seq[1 + lv.m0:1 + lv.m1] = w[lv.segment]
        self._weights[dtype] = seq
        return seq

    def weighted_dot(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """sum_s w_s x[b, s] g[b, s] [B] with w the `sequence_weights`, a block of rows at a time
        (no [B, S] product or weights in memory: on a flop spot each is 305 MB at float32).

        Example:
            >>> import torch, tensorcfr
            >>> tp = tensorcfr.compile("kuhn", form="public").treeplexes[0]
            >>> x = torch.ones(1, tp.num_sequences, dtype=torch.float64)
            >>> tp.weighted_dot(x, 2 * x).item() == 2 * tp.num_sequences
            True
        """
        seq = self.row_weights(x.dtype)
        if seq is None:
            return chunked_dot(x, g)
        xr, gr = self.rows(x), self.rows(g)  # [B_x, M, T], [B_g, M, T]
        step = max(1, treeplex.DOT_CHUNK // max(1, self.types))  # (the chunk of `chunked_dot`, in rows)
        total = (x[:, :1] * g[:, :1]).sum(1) * seq[0]
        for m in range(0, self.num_public_sequences, step):  # blocks of rows, not nodes: a few a game
            total = total + ((xr[:, m:m + step] * gr[:, m:m + step]).sum(2) * seq[1 + m:1 + m + step]).sum(1)
        return total.expand(max(x.shape[0], g.shape[0])).clone()

    # -- the operations of treeplex.Treeplex ----------------------------------------------------
    def segment_sum(self, values: torch.Tensor) -> torch.Tensor:
        """Sum `values` [B, S] over each infoset's sequences -> [B, I]."""
        return sum_rows(self.slot_pub, self.rows(values), self.num_public_infosets).view(values.shape[0], -1)

    def normalize(self, weights: torch.Tensor, out: torch.Tensor | None = None, head: bool = True) -> torch.Tensor:
        """Behavioural strategy [B, S] proportional to weights >= 0; uniform where they sum to 0.
        `out` (weights itself allowed) receives the result; its column 0 (1) is left as it is
        where `head` is False (a strategy's own memory). One block of levels at a time
        (`blocks`), so its temporaries are those of a block, not of the whole treeplex."""
        out = torch.empty_like(weights) if out is None else out
        if public_loop.normalize(self, weights, out):  # one walk, each infoset's total in the caches
            if head:
                out[:, 0] = 1.0
            return out
        w = self.rows(weights)
        o, uniform = self.rows(out), self.uniform(weights.dtype)
        for u0, u1, m0, m1, segment in self.blocks:
            total = sum_rows(segment, w[:, m0:m1], u1 - u0)  # [B, u, T]
            if fused.wanted(total, (m1 - m0) * self.types) and (out is weights or fused.disjoint(weights, out)):
                # one pass, the totals gathered as it goes
                fused.normalize_rows(w[0, m0:m1], total[0], segment, uniform[m0:m1],
                                     None if out is weights else o[0, m0:m1])
                continue
            o_ = o[:, m0:m1]
            if total.device.type in MASK_DEVICES:
                t = pick_rows(total, segment)  # [B, m, T]
                torch.div(w[:, m0:m1], t, out=o_)  # 0 / 0 where the weights sum to 0, which the select drops
                torch.where(t > 0, o_, uniform[m0:m1], out=o_)
                continue
            zero = _is_zero(total)  # [B, u, T] 1 where the weights sum to 0
            torch.div(w[:, m0:m1], pick_rows(total.add_(zero), segment), out=o_)  # 0 / 1 where they do
            o_.addcmul_(pick_rows(zero, segment), uniform[m0:m1])  # and then 1 / actions
        if head:
            out[:, 0] = 1.0
        return out

    def sequence_form(self, sigma: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Realisation plan x [B, S] of a behavioural strategy sigma [B, S]: top-down per level.
        `out` (sigma itself allowed: a level reads only levels above it) receives the result."""
        x = torch.empty_like(sigma) if out is None else out
        if public_loop.plan(self, sigma, x):  # one walk down the rows, each level's rows split between threads
            return x
        x[:, 0] = 1.0
        xr, sr = self.rows(x), self.rows(sigma)
        for lv in self.levels:
            if lv.first:
                xr[:, lv.m0:lv.m1] = sr[:, lv.m0:lv.m1]
            else:
                torch.mul(pick_rows(xr, lv.seq_parent), sr[:, lv.m0:lv.m1], out=xr[:, lv.m0:lv.m1])
        return x

    def parent_reach(self, x: torch.Tensor) -> torch.Tensor:
        """[B, I]: the realisation weight x of each infoset's parent sequence: a gather of x's
        rows, the top infosets' x[:, 0] written after (no [B, 1 + M, T] copy of x with the
        empty sequence in front: 305 MB and 0.3 s on a flop spot).

        Example:
            >>> import torch, tensorcfr
            >>> tp = tensorcfr.compile("kuhn", form="public").treeplexes[0]
            >>> x = tp.sequence_form(tp.normalize(torch.zeros(1, tp.num_sequences, dtype=torch.float64)))
            >>> tp.parent_reach(x)[0, :3].tolist()  # the first bet's infoset, card by card: the root
            [1.0, 1.0, 1.0]
        """
        return self._parent_rows(x, 0, self.num_public_infosets).reshape(x.shape[0], -1)

    def _parent_rows(self, x: torch.Tensor, u0: int, u1: int) -> torch.Tensor:
        """[B, u1 - u0, T]: `parent_reach` of the public infosets u0:u1."""
        parent = self.infoset_parent_pub[u0:u1]
        out = self.rows(x).index_select(1, (parent - 1).clamp(min=0))
        out[:, parent == 0] = x[:, :1, None]  # (the empty sequence: no row of its own)
        return out

    def bottom_up(self, g: torch.Tensor, sigma: torch.Tensor | None = None, inplace: bool = False,
                  root: bool = True, infosets: bool = True):
        """`treeplex.bottom_up`: (q [B, S], v [B, I]), expected values under sigma or, without
        it, the best response's; with `inplace`, q is g itself where their shapes allow; with
        `root` False, q[:, 0] is g's (the top level's values not summed into it: two kernels
        fewer for a caller that reads only the sequences below). With `infosets` False, v may
        be None: the best response's walk then keeps no infoset's value (on the isomorphic flop
        spot a [B, I] array of 143 MB at float32 for player 0, made at each evaluation)."""
        batch = max(g.shape[0], 1 if sigma is None else sigma.shape[0])
        q = g if inplace and g.shape[0] == batch else g.expand(batch, -1).clone()
        qr = self.rows(q)
        shape = (batch, self.num_public_infosets, self.types)
        if sigma is None:
            v = q.new_empty(shape) if infosets else None
            if public_loop.best_response(self, q, None if v is None else v.view(batch, -1)):
                # one walk up: on the isomorphic flop spot 36 and 30 ms a player against 118
                # and 76 for the level passes, an evaluation 1.27 s against 1.68 (2 threads,
                # float32, one process, taking turns, 2026-11-29); the top level's values go
                # into the root as below (taken again from their rows where v is not kept)
                for k, lv in reversed(list(enumerate(self.levels))):
                    if root and lv.first:
                        if v is None:
                            vl = q.new_full((batch, lv.u1 - lv.u0, self.types), -torch.inf)
                            self._best_rows(k, qr[:, lv.m0:lv.m1], vl)
                        else:
                            vl = v[:, lv.u0:lv.u1]
                        self._to_parent(lv, q, vl)
                return q, None if v is None else v.view(batch, -1)
            if v is None:
                v = q.new_empty(shape)
            v.fill_(-torch.inf)
        else:
            v = q.new_zeros(shape)
        for k, lv in reversed(list(enumerate(self.levels))):
            ql, vl = qr[:, lv.m0:lv.m1], v[:, lv.u0:lv.u1]
            if sigma is None:
                self._best_rows(k, ql, vl)
            else:
                add_rows(vl, lv.segment, self.rows(sigma)[:, lv.m0:lv.m1] * ql)
            if root or not lv.first:
                self._to_parent(lv, q, vl)
        return q, v.view(batch, -1)

    def infoset_gaps(self, q: torch.Tensor, v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """`treeplex.Treeplex.infoset_gaps` ([B, I] in v's memory where the shapes allow; q
        overwritten in part), times `infoset_weights`, a stretch of public infosets at a time:
        each stretch's parent reach gathered, its rows' products summed and its weights applied
        on their own, so the temporaries are a stretch's, where the whole arrays' were four of
        [B, I] beside q, v and x (on the isomorphic flop spot 143 MB each for player 0 at float32:
        the parent reach, its product with v, the played values and the weights made whole).

        Example:
            >>> import torch, tensorcfr
            >>> cg = tensorcfr.compile("leduc", form="public")
            >>> x, y = tensorcfr.Policy.uniform(cg).sequence_form()
            >>> tp = cg.treeplexes[1]  # player 1 against player 0's uniform play
            >>> gaps = tp.infoset_gaps(*tp.bottom_up(cg.operator(torch.float64).cfv(1, x)), y)
            >>> tuple(gaps.shape), round(float(gaps.sum()), 6)  # BR_1 - u_1 over 558 infosets
            ((1, 558), 2.581597)
        """
        if v.shape[0] < x.shape[0]:
            v = v.expand(x.shape[0], -1).clone()
        b, T, U = v.shape[0], self.types, self.num_public_infosets
        vr, qr, xr = v.view(b, U, T), self.rows(q), self.rows(x)
        cuts = [*range(0, U, max(1, GAP_ENTRIES // T)), U]
        # each stretch's first row (only these offsets read, not a list of all U + 1)
        off = self.infoset_offsets_pub[torch.tensor(cuts, device=self.infoset_offsets_pub.device)].tolist()
        seq = self.row_weights(v.dtype)  # [1 + M] or None: an infoset's weight is its first row's
        weights = None if seq is None else seq[self.infoset_offsets_pub[:-1]]  # [U]
        for k in range(len(cuts) - 1):  # stretches of rows, not nodes: a few a game
            u0, u1, m0, m1 = cuts[k], cuts[k + 1], off[k] - 1, off[k + 1] - 1
            vr[:, u0:u1].mul_(self._parent_rows(x, u0, u1))  # [B, u, T]
            played = qr[:, m0:m1].mul_(xr[:, m0:m1]) if qr.shape[0] >= xr.shape[0] else qr[:, m0:m1] * xr[:, m0:m1]
            vr[:, u0:u1].sub_(sum_rows(self.slot_pub[m0:m1] - u0, played, u1 - u0))
            if weights is not None:
                vr[:, u0:u1].mul_(weights[u0:u1, None])
        return v

    def _best_rows(self, k: int, ql: torch.Tensor, vl: torch.Tensor) -> None:
        """vl [B, u, T] (-inf where it is not written) = each infoset's largest row of level k's
        rows ql [B, m, T]: max is exact, so every way gives the same numbers."""
        kinds = self.action_rows(k)
        if kinds[0][2] is None:  # every infoset of the level has c actions: its rows as they lie
            torch.amax(ql.view(ql.shape[0], -1, kinds[0][0], self.types), 2, out=vl)
        elif ql.shape[1] * self.types >= BEST_ENTRIES * len(kinds):
            self._max_by_count(ql, vl, kinds)
        else:
            idx = self.levels[k].segment.view(1, -1, 1).expand(ql.shape[0], -1, self.types)
            vl.scatter_reduce_(1, idx, ql, "amax")

    def _max_by_count(self, ql: torch.Tensor, vl: torch.Tensor, kinds: list) -> None:
        """vl [B, u, T] = each infoset's maximum over its rows of ql [B, m, T], the infosets of c
        actions at a time (`action_rows`' kinds): [B, n, c, T] gathered, max over c, put back,
        `BEST_BLOCK` entries at a time (a few blocks a count on a flop spot's levels)."""
        batch = ql.shape[0]
        for c, rows, us in kinds:
            step = max(1, BEST_BLOCK // (batch * c * self.types))  # infosets a block
            for i in range(0, len(us), step):
                block = pick_rows(ql, rows[i * c:(i + step) * c])
                put_rows(vl, us[i:i + step], block.view(batch, -1, c, self.types).amax(2))

    def action_rows(self, k: int) -> list[tuple[int, torch.Tensor | None, torch.Tensor | None]]:
        """Level k's public infosets by their number of actions, kept: (c, rows [n c], infosets
        [n]) for the n infosets of c actions, their rows in order (both counted from the level's
        first, `PublicLevel.m0` and `u0`); (c, None, None) where every infoset of the level has c.

        Example:
            >>> import tensorcfr
            >>> tp = tensorcfr.compile("leduc", form="public").treeplexes[0]
            >>> [(c, len(us)) for c, _, us in tp.action_rows(1)]  # 13 infosets of 2 actions, 1 of 3
            [(2, 13), (3, 1)]
            >>> tp.action_rows(0)  # the first bet: check or raise, for every card
            [(2, None, None)]
        """
        if k not in self._action_rows:
            lv = self.levels[k]
            counts = torch.bincount(lv.segment, minlength=lv.u1 - lv.u0)  # [u] rows of each infoset
            first = counts.cumsum(0) - counts
            kinds = torch.unique(counts).tolist()
            if len(kinds) <= 1:
                self._action_rows[k] = [(kinds[0] if kinds else 1, None, None)]
            else:
                self._action_rows[k] = []
                for c in kinds:  # (counts of actions: a few a level)
                    us = torch.nonzero(counts == c).flatten()
                    rows = (first[us, None] + torch.arange(c, device=us.device)).flatten()
                    self._action_rows[k].append((c, rows, us))
        return self._action_rows[k]

    def instantaneous_regret(self, g: torch.Tensor, sigma: torch.Tensor, inplace: bool = False) -> torch.Tensor:
        """r(j,a) = q(j,a) - v(j) [B, S-1] (see `Treeplex.instantaneous_regret`); with
        `inplace`, g's memory holds the result (a block of levels at a time: no [B, S] temporary)."""
        q, v = self.bottom_up(g, sigma, inplace, root=False)  # [B, S] (but column 0), [B, I]
        b = q.shape[0]
        v = v.view(b, self.num_public_infosets, self.types)
        if not inplace:
            return (self.rows(q) - pick_rows(v, self.slot_pub)).view(b, -1)
        qr = self.rows(q)
        for u0, u1, m0, m1, segment in self.blocks:
            if fused.wanted(q, (m1 - m0) * self.types) and fused.disjoint(q, v):
                fused.subtract_gathered(qr[0, m0:m1], v[0, u0:u1], segment)
            else:
                qr[:, m0:m1].sub_(pick_rows(v[:, u0:u1], segment))
        return q[:, 1:]

    def walk_layout(self) -> public_loop.WalkLayout:
        """The public sequences as the compiled walks read them (`public_loop.WalkLayout`).

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn", form="public").treeplexes[0].walk_layout()[:2]  # 4 rows of 3 cards
            (4, 3)
        """
        return public_loop.WalkLayout(self.num_public_sequences, self.types, self.infoset_offsets_pub,
                                      self.infoset_parent_pub, self.level_offsets_pub, self.slot_pub)

    def regret_step(self, g: torch.Tensor, sigma: torch.Tensor, regret: torch.Tensor, positive, negative,
                    plus: bool, predictive: bool, out: torch.Tensor | None = None) -> torch.Tensor | None:
        """The next strategy [B, S] of the regret-matching family's update (regrets [B, S] updated
        in place from the values g [B, S], which it overwrites, against sigma [B, S]; `positive`,
        `negative`: the discounts or None) in one compiled walk of the tree, written into `out`
        (sigma allowed; None: a new array), or None where that loop does not serve
        (`public_loop.serves`) and the rule's passes run."""
        return public_loop.regret_step(self, g, sigma, regret, positive, negative, plus, predictive, out=out)

    def averaged_plan(self, sigma: torch.Tensor, average: torch.Tensor, weight, discount=None,
                      out: torch.Tensor | None = None) -> torch.Tensor | None:
        """The realisation plan x [B, S] of sigma [B, S] (in `out` where given), with `average`
        [B, S] multiplied by `discount` (where not None) and x times `weight` added into it, all in
        one compiled walk down the tree; or None where that loop does not serve (nothing changed)."""
        return public_loop.averaged_plan(self, sigma, average, weight, discount, out=out)

    def softmax_bottom_up(self, u: torch.Tensor, temperature: torch.Tensor):
        """`treeplex.softmax_bottom_up` over the public tree, temperatures [B or 1, I]."""
        batch = max(u.shape[0], temperature.shape[0])
        tau_all = temperature.view(temperature.shape[0], self.num_public_infosets, self.types)
        q = u.expand(batch, -1).clone()
        qr = self.rows(q)
        sigma = torch.empty_like(q)
        sigma[:, 0] = 1.0
        sr = self.rows(sigma)
        for lv in reversed(self.levels):
            n = lv.u1 - lv.u0
            tau = tau_all[:, lv.u0:lv.u1]  # [B, n, T]
            z = qr[:, lv.m0:lv.m1] / tau.index_select(1, lv.segment)  # [B, m, T]
            idx = lv.segment.view(1, -1, 1).expand(batch, -1, self.types)
            top = z.new_full((batch, n, self.types), -torch.inf).scatter_reduce_(1, idx, z, "amax")
            e = torch.exp(z - top.index_select(1, lv.segment))
            total = sum_rows(lv.segment, e, n)
            torch.div(e, total.index_select(1, lv.segment), out=sr[:, lv.m0:lv.m1])
            value = tau * (top + torch.log(total))  # [B, n, T]
            live = self.live_mask(value.dtype)
            # an infoset chance never reaches is not in the game: its entropy must not reach its parent
            self._to_parent(lv, q, value if live is None else value * live[..., lv.u0:lv.u1, :])
        return sigma, q[:, 0]

    def softmax(self, u: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
        return self.softmax_bottom_up(u, temperature)[0]

    def at_sequences(self, values: torch.Tensor) -> torch.Tensor:
        """`treeplex.Treeplex.at_sequences` over the public tree: [B, I] -> [B, S]."""
        b = values.shape[0]
        per = values.view(b, self.num_public_infosets, self.types).index_select(1, self.slot_pub)  # [B, M, T]
        return torch.cat([values.new_zeros(b, 1), per.reshape(b, -1)], 1)

    def entropy_weights(self, scheme: str = "unit") -> torch.Tensor:
        """Dilated-entropy weights [I] (float64): the public infoset's, for every type; [B, I] per
        member where the members reach other pairs (`live` [B, U, T]) and the scheme reads them."""
        if scheme not in WEIGHTS:
            raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {scheme!r}")
        live = self.live_mask(torch.float64)
        if scheme != "unit" and live is not None and live.dim() == 3:  # once per run, not per iteration
            return torch.stack([self._entropy_weights(scheme, m) for m in live])
        return self._entropy_weights(scheme, live)

    def _entropy_weights(self, scheme: str, live: torch.Tensor | None) -> torch.Tensor:
        """`entropy_weights` [I] for the live pairs `live` [U, T] (None: all)."""
        dev, T = self.infoset_parent_pub.device, self.types
        beta = torch.ones(self.num_public_infosets, T, dtype=torch.float64, device=dev)  # [U, T]
        if scheme != "unit":
            below = torch.zeros(1 + self.num_public_sequences, T, dtype=torch.float64, device=dev)  # [1 + M, T]
            for lv in reversed(self.levels):
                most = torch.zeros(lv.u1 - lv.u0, T, dtype=torch.float64, device=dev)
                idx = lv.segment.view(-1, 1).expand(-1, T)
                most.scatter_reduce_(0, idx, below[1 + lv.m0:1 + lv.m1], "amax")
                beta[lv.u0:lv.u1] = 2 + 2 * most if scheme == "kroer17" else 1 + most
                b = beta[lv.u0:lv.u1] if live is None else beta[lv.u0:lv.u1] * live[lv.u0:lv.u1]
                below.index_add_(0, self.infoset_parent_pub[lv.u0:lv.u1], b)
                if lv.mirror is not None:
                    parent, twins = _mirrored(lv, b[None])
                    below.index_add_(0, 1 + parent, twins[0])
        return beta.reshape(-1)


def _mirrored(lv: PublicLevel, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(parent rows [k], values [B, k, T]) of the twins of level `lv`'s infosets
    (`PublicTreeplex.mirror_u`): twin i holds values[:, rows[i], perm[i]]."""
    rows, parent, perm = lv.mirror
    picked = values.index_select(1, rows)  # [B, k, T]
    return parent, picked.gather(2, perm.expand(values.shape[0], -1, -1))


class _ActionNames(Sequence):
    """action_names[j]: the action names of infoset j (those of its public infoset)."""

    def __init__(self, tp: PublicTreeplex):
        self.tp = tp

    def __len__(self):
        return self.tp.num_infosets

    def __getitem__(self, j):
        u = int(j) // self.tp.types
        names = self.tp.__dict__.setdefault("_action_names", {})  # a public infoset's, for all its types
        if u not in names:
            a, b = self.tp.public_actions(u)
            names[u] = tuple(self.tp.alphabet[k] for k in self.tp._host("action_pub")[a - 1:b - 1].tolist())
        return names[u]

    def __iter__(self):
        for j in range(len(self)):
            yield self[j]
