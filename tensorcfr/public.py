"""The public-tree form of a game dealt once: [public sequence × private type] tensors
(../shared/PUBLIC_TREE.md).

In Kuhn, OCP, Leduc, Dudo and Liar's Dice chance deals each player a private type t_p once;
everything afterwards is public (Leduc's board card included). A player's infosets are then
the pairs (public node u where p acts, t_p), and the payoff of a terminal public node is a
small T0 × T1 matrix W_z[t0, t1] = P(t0, t1) · P(public chance on the path | t0, t1) · u0(z,
t0, t1), shared by every terminal of one payoff class (Dudo: the last bid and who made it).

Layout. Per-sequence tensors keep the generic shape [B, S] with column 0 the empty sequence,
so the update rules, the iteration skeleton, checkpoints and evaluation are those of the
generic form; columns 1: are [B, M, T] row-major (M public sequences, T types), column
1 + (e - 1) T + t the sequence (public edge e >= 1, type t). Infoset j = u T + t ([B, U, T]).
Index tensors are O(public edges), never O(edges × types): `PublicTreeplex` runs each
treeplex pass as the generic one with the type as a trailing dimension, and
`PublicPayoffOperator` computes counterfactual values per payoff class: gather the other
player's rows, one dense product with W_k, scatter-add.

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("ocp(12)", form="public")
    >>> cg.sizes()["public_nodes"], cg.sizes()["types"], cg.sizes()["infosets"]
    (9, [12, 12], [24, 24])
"""

from __future__ import annotations

import dataclasses
import warnings
import weakref
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np
import torch

import games as games_pkg
from games import CHANCE, TERMINAL, Game, GameError
from games.checks import actions_problem, chance_rows, utility_rows
from games.vector import vector_form

from . import fused
from .errors import TensorCFRError
from .sizes import MAX_LEVELS, too_deep
from .treeplex import WEIGHTS


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


WIDE_TYPES = 1024  # from this many types a row, `add_rows` adds row by row on the CPU
# from this many entries `add_rows` sums by a sparse product on the CPU; below, the product's
# set-up (12 us, and about 20 us more where it follows torch's own threaded kernels) costs
# more than the scatter saves (9 us for 512 x 6 entries, 37 for 4096 x 6: measured)
MATRIX_ENTRIES = 1 << 15
GATHER_ENTRIES = 1 << 15  # from this many entries `pick_rows` gathers whole rows (below, 2.5 us more a call)


def add_rows(out: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """out[:, index[i]] += values[:, i] for out [B, n, T], index [m], values [B, m, T].

    On the CPU with one member the sum is a sparse 0/1 matrix [n, m] (CSR, made once per
    index, `_summing`) times values [m, T], added into out by `torch.addmm`: on Dudo(5,2,2)'s
    1M x 15 rows 4.5 ms at float32 (7.5 at float64), against 27 ms for the broadcast
    `scatter_add_` below (measured). Elsewhere a scatter-add with the index
    broadcast over B and T (not materialised); `index_add_` along that middle dimension loops
    over rows on the CPU: 6x slower on Liar's Dice, 1.4x on Dudo(5,2,2) (measured, 4000 x 6
    and 1e6 x 15 rows)."""
    if _single(out) and _single(values):  # one member, one type (a sampled column): a flat add is 1.6x faster
        out.view(-1).index_add_(0, index, values.reshape(-1))
        return out
    if _by_matrix(out, values):
        lo, hi, m = _summing(index, out.dtype)
        if m is not None:
            o = out[0, lo:hi]  # the rows the index reaches (a level's parents: the level above)
            torch.addmm(o, m, values[0].contiguous(), out=o)
            return out
    if out.device.type == "cpu" and values.shape[-1] >= WIDE_TYPES:
        return out.index_add_(1, index, values)  # a few rows of many types: one vectorised add a row
    return out.scatter_add_(1, index.view(1, -1, 1).expand(values.shape), values)


def put_rows(out: torch.Tensor, index: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """out[:, index[i]] = values[:, i] for out [B, n, T], index [m] of distinct rows, values
    [B, m, T]. With one member a copy of whole rows along the first dimension of [n, T]: 8x
    faster than a scatter-add on 262K of 1M rows x 15, where rows far apart make each add a
    cache miss (measured)."""
    if out.shape[0] == 1 and values.shape[0] == 1 and out[0].is_contiguous():
        out[0].index_copy_(0, index, values[0])
        return out
    return out.scatter_(1, index.view(1, -1, 1).expand(values.shape), values)


def pick_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x[:, index] [B, m, T] for x [B, n, T]. With one member and `GATHER_ENTRIES` or more, a
    gather of whole rows along the first dimension of the [n, T] matrix: `index_select` along
    the middle dimension of [1, n, T] is 2.1x slower on a 65K x 15 gather and 3.5x on the flat
    65K rows of a sampled column (`public_sampling.py`), measured.

    Example:
        >>> pick_rows(torch.arange(6.0).view(1, 3, 2), torch.tensor([2, 0])).tolist()
        [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if _single(x):
        return x.reshape(-1).index_select(0, index).view(1, -1, 1)
    if x.shape[0] == 1 and len(index) * x.shape[2] >= GATHER_ENTRIES:
        return x[0].index_select(0, index).unsqueeze(0)
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
    """Whether `add_rows` sums by a sparse product: one member on the CPU, float32 or float64,
    out's rows contiguous (addmm writes into them), at least `MATRIX_ENTRIES` values."""
    return (values.numel() >= MATRIX_ENTRIES and out.shape[0] == 1 and values.shape[0] == 1
            and out.device.type == "cpu" and out.dtype in (torch.float32, torch.float64)
            and values.dtype == out.dtype and values.shape[-1] < WIDE_TYPES and out[0].is_contiguous())


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

    def __init__(self, tp: "PublicTreeplex"):
        self.tp = tp

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
        return self.tp.namer(self.tp.player, *np.divmod(np.asarray(js, dtype=np.int64), self.tp.types))

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
    # [U, T] bool: the pairs (u, t) chance can reach (Leduc: not your card on the board); None: all
    live: torch.Tensor | None = None
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
            levels.append(PublicLevel(u0, u1, m0, m1, segment, parent, parent[segment], first))
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

    def infosets(self):
        """(index, key, action names) of every infoset chance can reach, in storage order (the
        infosets of the generic form; the others hold numbers that never matter)."""
        js = (np.arange(self.num_infosets) if self.live is None
              else np.flatnonzero(self.live.reshape(-1).cpu().numpy()))
        names = self.action_names
        for j, key in self.infoset_keys.chunked(js):
            yield j, key, names[j]

    def infoset_index(self) -> dict[str, int]:
        """{infoset key: storage index} of the reachable infosets, built once on first use."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {k: j for j, k, _ in self.infosets()}
            object.__setattr__(self, "_index", index)
        return index

    def _host(self, name: str) -> np.ndarray:
        """A numpy copy of an index tensor, made once (per-infoset lookups read it, not the device)."""
        cache = self.__dict__.setdefault("_host_copies", {})
        if name not in cache:
            cache[name] = getattr(self, name).cpu().numpy()
        return cache[name]

    def public_actions(self, u: int) -> tuple[int, int]:
        """The public sequences e0:e1 (numbered from 1) of public infoset u."""
        off = self._host("infoset_offsets_pub")
        return int(off[u]), int(off[u + 1])

    def columns(self, j: int) -> list[int]:
        """The columns of infoset j's sequences in a per-sequence tensor [B, S]."""
        u, t = divmod(int(j), self.types)
        a, b = self.public_actions(u)
        return [1 + (e - 1) * self.types + t for e in range(a, b)]

    def per_infoset(self, row: list) -> dict[str, dict[str, object]]:
        """`{infoset key: {action name: row[sequence]}}` for a per-sequence list `row` [S]."""
        return {key: dict(zip(acts, (row[c] for c in self.columns(j)))) for j, key, acts in self.infosets()}

    def uniform(self, dtype: torch.dtype) -> torch.Tensor:
        """[M, 1]: 1 / actions of each public sequence's infoset."""
        if dtype not in self._uniform:
            self._uniform[dtype] = (1.0 / self.infoset_offsets_pub.diff().to(dtype))[self.slot_pub].unsqueeze(1)
        return self._uniform[dtype]

    def with_types(self, k: int, live: torch.Tensor | None = None) -> "PublicTreeplex":
        """The same public tree with k types (the columns a sample touches, `public_sampling.py`),
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
        """[U, T] 1 where chance can reach (u, t), else 0, in `dtype` (None: everywhere)."""
        if self.live is None:
            return None
        if dtype not in self._live_masks:
            self._live_masks[dtype] = self.live.to(dtype)
        return self._live_masks[dtype]

    def _to_parent(self, lv: PublicLevel, q: torch.Tensor, values: torch.Tensor) -> None:
        """Add infoset values [B, n, T] of level `lv` into their parent sequences of q [B, S]."""
        if lv.first:
            q[:, 0] += values.sum((1, 2))
        else:
            add_rows(self.rows(q), lv.parent, values)

    # -- the operations of treeplex.Treeplex ----------------------------------------------------
    def segment_sum(self, values: torch.Tensor) -> torch.Tensor:
        """Sum `values` [B, S] over each infoset's sequences -> [B, I]."""
        out = values.new_zeros(values.shape[0], self.num_public_infosets, self.types)
        return add_rows(out, self.slot_pub, self.rows(values)).view(values.shape[0], -1)

    def normalize(self, weights: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Behavioural strategy [B, S] proportional to weights >= 0; uniform where they sum to 0.
        `out` (weights itself allowed) receives the result. One block of levels at a time
        (`blocks`), so its temporaries are those of a block, not of the whole treeplex."""
        b = weights.shape[0]
        w = self.rows(weights)
        out = torch.empty_like(weights) if out is None else out
        o, uniform = self.rows(out), self.uniform(weights.dtype)
        for u0, u1, m0, m1, segment in self.blocks:
            total = add_rows(weights.new_zeros(b, u1 - u0, self.types), segment, w[:, m0:m1])  # [B, u, T]
            if fused.wanted(total, (m1 - m0) * self.types) and (out is weights or fused.disjoint(weights, out)):
                # one pass, the totals gathered as it goes
                fused.normalize_rows(w[0, m0:m1], total[0], segment, uniform[m0:m1],
                                     None if out is weights else o[0, m0:m1])
                continue
            zero = _is_zero(total)  # [B, u, T] 1 where the weights sum to 0
            o_ = o[:, m0:m1]
            torch.div(w[:, m0:m1], pick_rows(total.add_(zero), segment), out=o_)  # 0 / 1 where they do
            o_.addcmul_(pick_rows(zero, segment), uniform[m0:m1])  # and then 1 / actions
        out[:, 0] = 1.0
        return out

    def sequence_form(self, sigma: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Realisation plan x [B, S] of a behavioural strategy sigma [B, S]: top-down per level.
        `out` (sigma itself allowed: a level reads only levels above it) receives the result."""
        x = torch.empty_like(sigma) if out is None else out
        x[:, 0] = 1.0
        xr, sr = self.rows(x), self.rows(sigma)
        for lv in self.levels:
            if lv.first:
                xr[:, lv.m0:lv.m1] = sr[:, lv.m0:lv.m1]
            else:
                torch.mul(pick_rows(xr, lv.seq_parent), sr[:, lv.m0:lv.m1], out=xr[:, lv.m0:lv.m1])
        return x

    def parent_reach(self, x: torch.Tensor) -> torch.Tensor:
        """[B, I]: the realisation weight x of each infoset's parent sequence."""
        b = x.shape[0]
        ext = torch.cat([x[:, :1, None].expand(b, 1, self.types), self.rows(x)], 1)  # [B, 1 + M, T]
        return ext.index_select(1, self.infoset_parent_pub).reshape(b, -1)

    def bottom_up(self, g: torch.Tensor, sigma: torch.Tensor | None = None, inplace: bool = False):
        """`treeplex.bottom_up`: (q [B, S], v [B, I]), expected values under sigma or, without
        it, the best response's; with `inplace`, q is g itself where their shapes allow."""
        batch = max(g.shape[0], 1 if sigma is None else sigma.shape[0])
        q = g if inplace and g.shape[0] == batch else g.expand(batch, -1).clone()
        qr = self.rows(q)
        shape = (batch, self.num_public_infosets, self.types)
        v = q.new_full(shape, -torch.inf) if sigma is None else q.new_zeros(shape)
        for lv in reversed(self.levels):
            ql, vl = qr[:, lv.m0:lv.m1], v[:, lv.u0:lv.u1]
            if sigma is None:
                idx = lv.segment.view(1, -1, 1).expand(batch, -1, self.types)
                vl.scatter_reduce_(1, idx, ql, "amax")
            else:
                add_rows(vl, lv.segment, self.rows(sigma)[:, lv.m0:lv.m1] * ql)
            self._to_parent(lv, q, vl)
        return q, v.view(batch, -1)

    def instantaneous_regret(self, g: torch.Tensor, sigma: torch.Tensor, inplace: bool = False) -> torch.Tensor:
        """r(j,a) = q(j,a) - v(j) [B, S-1] (see `Treeplex.instantaneous_regret`); with
        `inplace`, g's memory holds the result (a block of levels at a time: no [B, S] temporary)."""
        q, v = self.bottom_up(g, sigma, inplace)
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
            total = add_rows(e.new_zeros(batch, n, self.types), lv.segment, e)
            torch.div(e, total.index_select(1, lv.segment), out=sr[:, lv.m0:lv.m1])
            value = tau * (top + torch.log(total))  # [B, n, T]
            live = self.live_mask(value.dtype)
            # an infoset chance never reaches is not in the game: its entropy must not reach its parent
            self._to_parent(lv, q, value if live is None else value * live[lv.u0:lv.u1])
        return sigma, q[:, 0]

    def softmax(self, u: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
        return self.softmax_bottom_up(u, temperature)[0]

    def entropy_weights(self, scheme: str = "unit") -> torch.Tensor:
        """Dilated-entropy weights [I] (float64): the public infoset's, for every type."""
        if scheme not in WEIGHTS:
            raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {scheme!r}")
        dev, T = self.infoset_parent_pub.device, self.types
        beta = torch.ones(self.num_public_infosets, T, dtype=torch.float64, device=dev)  # [U, T]
        live = self.live_mask(torch.float64)
        if scheme != "unit":
            below = torch.zeros(1 + self.num_public_sequences, T, dtype=torch.float64, device=dev)  # [1 + M, T]
            for lv in reversed(self.levels):
                most = torch.zeros(lv.u1 - lv.u0, T, dtype=torch.float64, device=dev)
                idx = lv.segment.view(-1, 1).expand(-1, T)
                most.scatter_reduce_(0, idx, below[1 + lv.m0:1 + lv.m1], "amax")
                beta[lv.u0:lv.u1] = 2 + 2 * most if scheme == "kroer17" else 1 + most
                b = beta[lv.u0:lv.u1] if live is None else beta[lv.u0:lv.u1] * live[lv.u0:lv.u1]
                below.index_add_(0, self.infoset_parent_pub[lv.u0:lv.u1], b)
        return beta.reshape(-1)


class _ActionNames(Sequence):
    """action_names[j]: the action names of infoset j (those of its public infoset)."""

    def __init__(self, tp: PublicTreeplex):
        self.tp = tp

    def __len__(self):
        return self.tp.num_infosets

    def __getitem__(self, j):
        a, b = self.tp.public_actions(int(j) // self.tp.types)
        return tuple(self.tp.alphabet[k] for k in self.tp._host("action_pub")[a - 1:b - 1].tolist())

    def __iter__(self):
        for j in range(len(self)):
            yield self[j]


@dataclass(frozen=True, eq=False)
class PublicCompiledGame:
    """A game compiled in the public-tree form (see the module docstring).

    Terminal public nodes z are grouped by payoff class k: `payoff_weights[b, k]` is the
    matrix W_k [T0, T1] (deal and public-chance probabilities times player 0's utility, of
    batch member b), and `terminal_seq[:, z]` holds each terminal's last public sequences
    (e0, e1), 0 for the empty one, sorted by class, `class_offsets` [K+1] slicing them.
    A `ranked` game (`VectorGame.ranked_deal`) keeps (a, b) [2] instead of each W_k:
    W_k[t0, t1] = a + b sign(t0 - t1) for t0 != t1 and 0 on the diagonal, probabilities included.
    """

    name: str
    batch_names: tuple[str, ...]
    treeplexes: tuple[PublicTreeplex, PublicTreeplex]
    terminal_seq: torch.Tensor  # [2, Z] int64
    class_offsets: torch.Tensor  # [K+1] int64
    payoff_weights: torch.Tensor  # [B, K, T0, T1] float64, or [B, K, 2] when ranked
    counts: dict  # sizes counted at compile time (histories, terminals, ... as the generic form counts them)
    ranked: bool = False
    # [T0, T1] float64: the deal's probability of each pair of types (what chance sampling draws
    # from, `public_sampling.py`); None for a ranked deal (every distinct pair, 1 / (n (n - 1)))
    deal: torch.Tensor | None = None

    form = "public"

    @property
    def batch_size(self) -> int:
        return int(self.payoff_weights.shape[0])

    @property
    def device(self) -> torch.device:
        return self.payoff_weights.device

    @property
    def num_histories(self) -> int:
        return int(self.counts["histories"])

    @property
    def num_terminals(self) -> int:
        return int(self.counts["terminals"])

    @property
    def payoff(self) -> torch.Tensor:
        """[B, K·T0·T1]: the payoff matrices, flat (what the capture code sizes its choices by)."""
        return self.payoff_weights.reshape(self.batch_size, -1)

    def infoset_players(self) -> dict[str, int]:
        return {k: tp.player for tp in self.treeplexes for _, k, _ in tp.infosets()}

    def sizes(self) -> dict:
        """Sizes as `CompiledGame.sizes` reports them (counted as the generic form counts them),
        plus `form`, `public_nodes`, `public_sequences`, `types` and `payoff_classes`.

        Example:
            >>> import tensorcfr
            >>> s = tensorcfr.compile("kuhn", form="public").sizes()
            >>> s["histories"], s["infosets"], s["sequences"], s["types"]
            (58, [6, 6], [12, 12], [3, 3])
        """
        t0, t1 = self.treeplexes
        c = self.counts
        return {"form": "public", "histories": c["histories"], "terminals": c["terminals"],
                "chance_nodes": c["chance_nodes"], "decision_nodes": c["decision_nodes"],
                "infosets": c["infosets"], "infosets_with_choice": c["infosets_with_choice"],
                "sequences": c["sequences"], "levels": c["levels"], "treeplex_levels": [len(t0.levels), len(t1.levels)],
                "payoff_nonzeros": self._payoff_nonzeros(),
                "batch": self.batch_size, "public_nodes": c["public_nodes"],
                "public_sequences": [t0.num_public_sequences, t1.num_public_sequences],
                "types": [t0.types, t1.types], "payoff_classes": int(self.class_offsets.numel() - 1),
                "public_terminals": int(self.terminal_seq.shape[1])}

    def _payoff_nonzeros(self) -> int:
        """Nonzero entries of the payoff matrices of batch member 0 (a ranked class: the pairs
        above and below the diagonal where a + b and a - b are not 0)."""
        if not self.ranked:
            return int(self.payoff_weights[0].count_nonzero())
        n = self.treeplexes[0].types
        a, b = self.payoff_weights[0, :, 0], self.payoff_weights[0, :, 1]
        return int(((a + b != 0).sum() + (a - b != 0).sum()) * (n * (n - 1) // 2))

    def operator(self, dtype: torch.dtype, gather: bool = False) -> "PublicPayoffOperator":
        """The payoff operator (`forms.CompiledForm`): per payoff class, one dense product
        (gathers and scatter-adds already, so `gather` changes nothing)."""
        return PublicPayoffOperator.of(self, dtype)

    def estimator(self, scheme: str, samples: int, dtype: torch.dtype, epsilon: float):
        """Monte-Carlo counterfactual values where a sample is a deal of private types
        (`public_sampling.PublicEstimator`)."""
        from .public_sampling import PublicEstimator
        return PublicEstimator(self, scheme, samples, dtype, epsilon)

    def block(self, rank: int, world: int) -> "PublicCompiledGame":
        """Rank's block of the terminal public nodes [lo, hi) of `world` ranks, each payoff class
        keeping its matrix and its share of the terminals (`distributed.shard`)."""
        from .distributed import bounds
        lo, hi = bounds(int(self.terminal_seq.shape[1]), rank, world)
        offsets = self.class_offsets.clamp(lo, hi) - lo  # [K+1]: each class's terminals within the block
        return dataclasses.replace(self, terminal_seq=self.terminal_seq[:, lo:hi].clone(), class_offsets=offsets)

    def payoff_bytes(self, dtype: torch.dtype) -> int:
        """The class matrices and the small classes' per-terminal ones, in `dtype`."""
        e = torch.finfo(dtype).bits // 8
        t0, t1 = self.treeplexes[0].types, self.treeplexes[1].types
        off = self.class_offsets.tolist()
        small = sum(off[k + 1] - off[k] for k in range(len(off) - 1) if off[k + 1] - off[k] < SMALL_CLASS)
        return e * self.payoff_weights.shape[0] * t0 * t1 * (len(off) - 1 + small)

    def to(self, device) -> "PublicCompiledGame":
        return dataclasses.replace(self, treeplexes=tuple(t.to(device) for t in self.treeplexes),
                                   terminal_seq=self.terminal_seq.to(device),
                                   class_offsets=self.class_offsets.to(device),
                                   payoff_weights=self.payoff_weights.to(device),
                                   deal=None if self.deal is None else self.deal.to(device))


# From this many pairs of types (T0 T1: OCP from 256 cards) a ranked game keeps no payoff matrix.
# Below it the dense product is as cheap, and its sums round as the generic form's do, so that
# CFR+ meets its ties (regrets 0 in exact arithmetic, +-1e-17 after rounding) the same way in
# both forms (Kuhn, CFR+, iteration 20: 0.9974530 against 0.9964360 ranked).
RANKED_MIN_PAIRS = 1 << 16

SMALL_CLASS = 64  # payoff classes of fewer terminals share one batched product (per-terminal matrices)


@dataclass(frozen=True, eq=False)
class PublicPayoffOperator:
    """Counterfactual values in the public-tree form, per payoff class k: gather the other
    player's rows x[σ(z)] [B, n_k, T], one product with W_k, scatter-add into the own rows.
    Player 0: g0[e0(z)] += W_k x1[e1(z)]; player 1: g1[e1(z)] -= W_kᵀ x0[e0(z)].

    Classes of at least `SMALL_CLASS` terminals (Dudo: a few dozen classes of thousands of
    terminals) get one dense product each; the terminals of the smaller ones (Leduc: 274
    classes of one terminal) share one batched product with their matrices gathered per
    terminal, so a game of many small classes does not pay a kernel launch per class.

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("kuhn", form="public")
        >>> op = PublicPayoffOperator.of(cg, torch.float64)
        >>> y = torch.ones(1, cg.treeplexes[1].num_sequences, dtype=torch.float64)
        >>> round(op.cfv(0, y)[0, 0].item(), 6)  # no terminal ends before player 0's first move
        0.0
    """

    spaces: tuple[PublicTreeplex, PublicTreeplex]
    # per player, per large class: ([n_k] row of each terminal's public sequence in the [B, M, T]
    # view (the empty sequence's as row 0), [n_e] the terminals whose sequence is the empty one)
    seq: tuple[tuple[tuple[torch.Tensor, torch.Tensor], ...], tuple[tuple[torch.Tensor, torch.Tensor], ...]]
    weights: tuple[torch.Tensor, ...]  # per large class: [B, T0, T1] in the dtype
    small_seq: tuple[tuple[torch.Tensor, torch.Tensor], ...]  # per player: as `seq`, the small classes' terminals
    small_weights: torch.Tensor  # [B, Zs, T0, T1]: each such terminal's matrix
    # a ranked game: every terminal, as `seq` per player, and its (a, b) [B, Z, 2] (see PublicCompiledGame)
    ranked_seq: tuple[tuple[torch.Tensor, torch.Tensor], ...] | None = None
    ranked: torch.Tensor | None = None
    # per player: whether no two terminals share a row and none is on the empty sequence (Dudo,
    # Liar's Dice: the call after each bid), so values are written, not added (`put_rows`)
    distinct: tuple[bool, bool] = (False, False)

    @staticmethod
    def of(cg: PublicCompiledGame, dtype: torch.dtype) -> "PublicPayoffOperator":
        if cg.ranked:
            counts = cg.class_offsets.diff()
            cls = torch.repeat_interleave(torch.arange(len(counts), device=cg.device), counts)  # [Z]
            none = (), ()
            return PublicPayoffOperator(cg.treeplexes, none, (), small_seq=none,
                                        small_weights=cg.payoff_weights.new_zeros(0, dtype=dtype),
                                        ranked_seq=tuple(_rows_of(cg.terminal_seq[p]) for p in (0, 1)),
                                        ranked=cg.payoff_weights.index_select(1, cls), distinct=_distinct(cg))
        off = cg.class_offsets.tolist()
        w = cg.payoff_weights.to(dtype)  # [B, K, T0, T1]
        big = [k for k in range(len(off) - 1) if off[k + 1] - off[k] >= SMALL_CLASS]
        small = [k for k in range(len(off) - 1) if off[k + 1] - off[k] < SMALL_CLASS]
        seq = tuple(tuple(_rows_of(cg.terminal_seq[p, off[k]:off[k + 1]]) for k in big) for p in (0, 1))
        counts = torch.tensor([off[k + 1] - off[k] for k in small], dtype=torch.int64)
        starts = torch.tensor([off[k] for k in small], dtype=torch.int64)
        # [Zs] the terminals of the small classes, and the class of each
        which = torch.repeat_interleave(torch.arange(len(small)), counts)
        terms = (starts[which] + torch.arange(int(counts.sum())) - torch.repeat_interleave(counts.cumsum(0) - counts,
                                                                                          counts)).to(cg.device)
        cls = torch.tensor(small, dtype=torch.int64)[which].to(cg.device)
        return PublicPayoffOperator(cg.treeplexes, seq, tuple(w[:, k] for k in big),
                                    small_seq=(_rows_of(cg.terminal_seq[0, terms]), _rows_of(cg.terminal_seq[1, terms])),
                                    small_weights=w.index_select(1, cls), distinct=_distinct(cg))

    def cfv(self, player: int, x_other: torch.Tensor) -> torch.Tensor:
        """Player `player`'s counterfactual values [B, S_p] against x_other [B, S_other].

        Writes straight into the result: no copy of x_other with the empty sequence prepended
        and no second [B, S_p] buffer (each is 1.4 GB a player on Dudo(6,2,2) at float32).
        Rows of the empty sequence (public sequence 0, at most a few terminals) go through
        `_rows` and `_add` by hand."""
        other = 1 - player
        sp, so = self.spaces[player], self.spaces[other]
        src = so.rows(x_other)  # [B, M_o, T_o]
        if self.ranked is not None:
            flat = x_other.new_zeros(max(x_other.shape[0], self.ranked.shape[0]), sp.num_sequences)  # [B, S_p]
            rows = self._rows(x_other, src, self.ranked_seq[other])  # [B, Z, T]
            vals = _ranked_values(rows, self.ranked, player).to(flat.dtype)
            self._add(flat, sp.rows(flat), self.ranked_seq[player], vals if player == 0 else vals.neg_(),
                      self.distinct[player])
            return flat
        b = max(x_other.shape[0], self.small_weights.shape[0])
        flat = x_other.new_zeros(b, sp.num_sequences)  # [B, S_p]
        out = sp.rows(flat)  # [B, M_p, T_p] view
        for k, w in enumerate(self.weights):
            rows = self._rows(x_other, src, self.seq[other][k])  # [B, n_k, T_o]
            # player 0: rows @ W^T ([n, T1] x [T1, T0]); player 1: -(rows @ W) ([n, T0] x [T0, T1])
            vals = torch.matmul(rows, w.transpose(1, 2) if player == 0 else w)
            self._add(flat, out, self.seq[player][k], vals if player == 0 else vals.neg_(), self.distinct[player])
        if self.small_seq[0][0].numel():
            rows = self._rows(x_other, src, self.small_seq[other]).unsqueeze(-1)  # [B, Zs, T_o, 1]
            w = self.small_weights if player == 0 else self.small_weights.transpose(2, 3)  # [B, Zs, T_p, T_o]
            vals = torch.matmul(w, rows).squeeze(-1)  # [B, Zs, T_p]
            self._add(flat, out, self.small_seq[player], vals if player == 0 else vals.neg_(), self.distinct[player])
        return flat

    @staticmethod
    def _rows(x: torch.Tensor, src: torch.Tensor, seq: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """[B, n, T]: the rows `seq` (see the field) of src [B, M, T], a view of x [B, S]; the
        empty sequence's weight x[:, 0] stands for every type."""
        if not src.shape[1]:  # a player who never moves: every terminal is on the empty sequence
            return x[:, :1, None].expand(x.shape[0], len(seq[0]), src.shape[2]).clone()
        rows = pick_rows(src, seq[0])
        if seq[1].numel():
            rows[:, seq[1]] = x[:, :1, None]
        return rows

    @staticmethod
    def _add(flat: torch.Tensor, out: torch.Tensor, seq: tuple[torch.Tensor, torch.Tensor], vals: torch.Tensor,
             distinct: bool = False) -> None:
        """Add vals [B, n, T] into the rows `seq` of out [B, M, T], a view of flat [B, S]; a
        terminal of the empty sequence adds its sum over types into flat[:, 0]. `distinct`:
        rows no other terminal writes, still 0, so written, not added."""
        if not out.shape[1]:  # a player who never moves: every terminal is on the empty sequence
            flat[:, 0] += vals.sum((1, 2))
            return
        if seq[1].numel():
            flat[:, 0] += vals[:, seq[1]].sum((1, 2))
            vals[:, seq[1]] = 0
        (put_rows if distinct else add_rows)(out, seq[0], vals)

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x^T A y [B]: player 0's expected payoff."""
        return (x * self.cfv(0, y)).sum(1)


def _ranked_values(rows: torch.Tensor, ab: torch.Tensor, player: int) -> torch.Tensor:
    """[B, Z, T]: each terminal's W x (player 0) or W^T x (player 1) for the other player's
    rows x [B, Z, T] and W[t0, t1] = a + b sign(t0 - t1) off the diagonal (ab [B, Z, 2]), in
    O(T) a row by prefix sums over the ranks, in float64 (a float32 prefix sum over 10^6 ranks
    would drift)."""
    x = rows.double()
    a, b = ab[..., :1].double(), ab[..., 1:].double()  # [B, Z, 1]
    sb = b if player == 0 else -b  # player 0 holds t0 and wins b below it; player 1 holds t1
    # a (total - x) + sb ((cum - x) - (total - cum)), with cum the inclusive prefix sum over ranks:
    # (a - sb) total + 2 sb cum - (a + sb) x
    out = x.cumsum(-1).mul_(2 * sb)
    out.addcmul_(x, -(a + sb))
    return out.add_((a - sb) * x.sum(-1, keepdim=True))


def _distinct(cg: "PublicCompiledGame") -> tuple[bool, bool]:
    """Per player, whether its terminals' last public sequences are distinct and none is the
    empty sequence (`PublicPayoffOperator.distinct`)."""
    seq = cg.terminal_seq  # [2, Z]
    return tuple(bool(seq.shape[1] == 0 or (bool((seq[p] > 0).all()) and len(torch.unique(seq[p])) == seq.shape[1]))
                 for p in (0, 1))


def _rows_of(seq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(row [n], positions of the empty sequence [n_e]) for public sequences `seq` [n] numbered
    from 1 (0: the empty sequence, given row 0 and fixed by hand)."""
    return (seq - 1).clamp_(min=0).contiguous(), (seq == 0).nonzero().view(-1)


# -- compiling ----------------------------------------------------------------------------------

def has_public_form(game: Game) -> bool:
    """Whether `game` describes a public tree (`Game.public_form`, and a vectorised form with
    `public_hands` that describes this very game: a subclass that overrides a per-node method
    has none, as in the generic walk, `games.vector.vector_form`)."""
    if not getattr(game, "public_form", False):
        return False
    vg = vector_form(game)
    return vg is not None and getattr(vg, "public_hands", None) is not None


# The checks that involve the private types (the mover, legal actions and infoset key of every
# history, not just of a public node's first deal) evaluate up to this many rows a level: every
# history of a level of up to ~10^6 of them, a prefix of the level's public nodes past that.
CHECKED_ROWS = 1 << 20
CHECKED_TYPES = 64  # of a player with more types, this many, evenly spaced, are checked


def _set_hands(states: np.ndarray, hands: tuple[int, int], t0, t1) -> np.ndarray:
    out = states.copy()
    out[:, hands[0]] = t0
    out[:, hands[1]] = t1
    return out


class _PublicWalk:
    """Breadth-first expansion of the public tree, a whole level of public nodes per step."""

    def __init__(self, game: Game, ranked: bool | None = None):
        self.game = game
        self.vg = vg = vector_form(game)
        self.hands = vg.public_hands
        problem = actions_problem(vg.actions)
        if problem:
            raise TensorCFRError(f"{game.name}: {problem}")
        deal = vg.ranked_deal() if ranked is not False else None
        if deal is not None and ranked is None and deal[0] ** 2 < RANKED_MIN_PAIRS:
            deal = None  # small: the dense matrices, whose sums round as the generic form's do
        self.ranked = deal is not None  # see `VectorGame.ranked_deal`: no [T0, T1] table is made
        self.checked_keys: list[list[np.ndarray]] = [[], []]  # infoset keys met by `_check_level`
        if self.ranked:
            n, root, self.deal_nodes, self.deal_levels = deal
            if n * n <= CHECKED_ROWS:  # the claim checked against the deal itself
                self._deal()
                self._check_ranked(n, root)
            self.type_values = [np.arange(n), np.arange(n)]
            self.root = _set_hands(root, self.hands, 0, 0)
        else:
            self._deal()

    def _deal(self):
        """Walk the deal (every chance level before the first decision): the types, their joint
        probability P [T0, T1] and the public state every deal leads to."""
        vg, name = self.vg, self.game.name
        states, probs, self.deal_nodes, self.deal_levels = vg.initial(), np.ones(1), 0, 0
        for _ in range(MAX_LEVELS):
            pl = vg.player(states)
            if not (pl == CHANCE).any():
                break
            if not (pl == CHANCE).all():
                raise TensorCFRError(f"{name}: a player moves before the deal is over; no public-tree form")
            self.deal_nodes += len(states)
            self.deal_levels += 1
            pr = np.asarray(vg.chance(states), dtype=np.float64)  # [n, C]
            self._check_chance(pr, states)
            i, c = np.nonzero(pr > 0)
            states, probs = vg.next(states[i], c), probs[i] * pr[i, c]
        else:
            raise too_deep(name)
        h = states[:, list(self.hands)]  # [D, 2]
        self.type_values = [np.unique(h[:, p]) for p in (0, 1)]  # [T_p]: type index -> hand value
        t = [np.searchsorted(self.type_values[p], h[:, p]) for p in (0, 1)]
        self.P = np.zeros((len(self.type_values[0]), len(self.type_values[1])))
        np.add.at(self.P, (t[0], t[1]), probs)
        # [T0, T1] deals (outcome sequences) that lead to each pair of types: Liar's Dice with two
        # dice each deals (1, 2) and (2, 1), one type, two histories below every public node
        self.deals = np.zeros(self.P.shape, np.int64)
        np.add.at(self.deals, (t[0], t[1]), 1)
        public = _set_hands(states, self.hands, self.type_values[0][0], self.type_values[1][0])
        if not (public == public[:1]).all():
            raise TensorCFRError(f"{name}: the state after the deal depends on more than the dealt types; "
                                 "no public-tree form")
        self.root = public[:1]
        self.pairs = self._pair_grid()

    def _check_ranked(self, n: int, root: np.ndarray) -> None:
        """`VectorGame.ranked_deal` promises ranks 0..n-1 to each player, every ordered pair of
        distinct ranks with probability 1/(n(n-1)), and one public state after the deal."""
        want = np.full((n, n), 1.0 / (n * (n - 1)))
        np.fill_diagonal(want, 0.0)
        ranks = all(np.array_equal(v, np.arange(n)) for v in self.type_values)
        cols = [c for c in range(root.shape[1]) if c not in self.hands]
        if not (ranks and np.allclose(self.P, want, rtol=0, atol=1e-12)
                and np.array_equal(self.root[:, cols], np.asarray(root)[:, cols])):
            raise TensorCFRError(f"{self.game.name}: its ranked_deal() does not describe its deal (every ordered "
                                 f"pair of distinct ranks 0..{n - 1} equally likely, then one public state)")

    def _fail(self, what: str, state: np.ndarray) -> TensorCFRError:
        return TensorCFRError(f"{self.game.name}: state {np.asarray(state).tolist()}: {what}")

    def _check_chance(self, pr: np.ndarray, states: np.ndarray) -> None:
        """Chance probabilities of chance states `states` [n, width]: pr [n, C] (`games.checks`)."""
        bad = chance_rows(pr)
        if bad.any():
            i = int(np.argmax(bad))
            raise self._fail(f"chance probabilities {pr[i][pr[i] != 0].tolist()} do not sum to 1", states[i])

    def _sampled_types(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the types `_check_level` evaluates, per player: all, or `CHECKED_TYPES`
        evenly spaced ones (the first and last included)."""
        return tuple(np.unique(np.linspace(0, len(v) - 1, min(len(v), CHECKED_TYPES)).round().astype(np.int64))
                     for v in self.type_values)

    def _check_level(self, states: np.ndarray, pl: np.ndarray, legal: dict, path: np.ndarray,
                     paths: list) -> None:
        """What the walk reads from one deal of types (the mover, the legal actions) must hold for
        every pair of types the level's chance paths allow, and the mover's infoset key must be
        the same for every type of the other player (else the game is not dealt once: a player
        would see the other's type) — the checks the generic walk makes history by history, on
        up to `CHECKED_ROWS` rows a level. The keys met are kept for `check_keys`."""
        k0, k1 = self._sampled_types()
        pairs = len(k0) * len(k1)
        m = min(len(states), max(1, CHECKED_ROWS // pairs))
        if not m:
            return
        s, pl, path = states[:m], pl[:m], path[:m]
        t0, t1 = np.meshgrid(k0, k1, indexing="ij")
        t0, t1 = t0.reshape(-1), t1.reshape(-1)
        if self.ranked:
            live = np.broadcast_to(t0 != t1, (m, pairs))
        else:
            live = ((self.P[t0, t1] > 0)[None] & (np.stack(paths)[path][:, t0, t1] > 0))  # [m, pairs]
        full = _set_hands(np.repeat(s, pairs, axis=0), self.hands, np.tile(self.type_values[0][t0], m),
                          np.tile(self.type_values[1][t1], m))  # [m pairs, width]
        row, pair = np.nonzero(live)
        flat = row * pairs + pair
        got = np.asarray(self.vg.player(full[flat]), dtype=np.int64)
        bad = got != pl[row]
        if bad.any():
            i = int(np.argmax(bad))
            raise self._fail(f"player {got[i]} moves here but {pl[row[i]]} at the same public state with other "
                             "private types; no public-tree form", full[flat[i]])
        for p in (0, 1):
            mine = pl[row] == p
            if not mine.any():
                continue
            r, f = row[mine], flat[mine]
            g = np.asarray(self.vg.legal(full[f]), dtype=bool)
            differ = (g != legal[p][r]).any(axis=1)
            if differ.any():
                i = int(np.argmax(differ))
                acts = lambda x: [self.vg.actions[a] for a in np.flatnonzero(x)]  # noqa: E731
                raise self._fail(f"legal actions {acts(g[i])} here but {acts(legal[p][r[i]])} at the same public "
                                 "state with other private types; no public-tree form", full[f[i]])
            keys = np.asarray(self.vg.infoset(full[f]), dtype=np.int64)
            own = (t0 if p == 0 else t1)[pair[mine]]
            # one key per (public node, own type): sort by that pair, compare neighbours
            order = np.lexsort((own, r))
            same = (r[order][1:] == r[order][:-1]) & (own[order][1:] == own[order][:-1])
            clash = same & (keys[order][1:] != keys[order][:-1])
            if clash.any():
                i = order[1:][int(np.argmax(clash))]
                raise self._fail(f"player {p}'s infoset key here depends on the other player's private type "
                                 f"({self.vg.infoset_names(keys[i:i + 1])[0]!r} for one of them); no public-tree form",
                                 full[f[i]])
            first = np.concatenate([[True], ~same])
            self.checked_keys[p].append(keys[order][first])

    def check_keys(self) -> None:
        """Every public infoset (public node, own type) met by `_check_level` has a key of its
        own: two with one key would be one infoset to the game (perfect recall fails, or both
        players move at it), two to the public-tree form."""
        keys = [np.concatenate(k) if k else np.zeros(0, np.int64) for k in self.checked_keys]
        self.checked_keys = [[], []]
        names = self.vg.infoset_names
        both = np.intersect1d(*keys)
        if len(both):
            raise TensorCFRError(f"{self.game.name}: infoset {names(both[:1])[0]!r} holds histories of both players")
        for p in (0, 1):
            u, count = np.unique(keys[p], return_counts=True)
            if (count > 1).any():
                raise TensorCFRError(f"{self.game.name}: perfect recall fails at infoset "
                                     f"{names(u[count > 1][:1])[0]!r}: it spans two public states of player {p}")

    def _pair_grid(self):
        t0, t1 = np.meshgrid(self.type_values[0], self.type_values[1], indexing="ij")
        return t0.reshape(-1), t1.reshape(-1)  # [T0 T1] hand values, player 0's major

    def full(self, states: np.ndarray) -> np.ndarray:
        """[n T0 T1, width]: every public state with every pair of types."""
        rep = np.repeat(states, len(self.pairs[0]), axis=0)
        k = len(states)
        return _set_hands(rep, self.hands, np.tile(self.pairs[0], k), np.tile(self.pairs[1], k))

    def run(self) -> dict:
        vg, name = self.vg, self.game.name
        T = (len(self.type_values[0]), len(self.type_values[1]))
        # chance-path matrices P(public chance outcomes | t0, t1); a ranked deal has no public chance
        paths = [np.ones((1, 1) if self.ranked else T)]
        states = self.root
        e = np.zeros((1, 2), np.int64)  # last public sequence of each player (0: the empty one)
        d = np.zeros((1, 2), np.int64)  # own depth (treeplex level) of each player
        path = np.zeros(1, np.int64)
        info = [{"parent": [], "level": [], "count": [], "path": [], "state": [], "action": []} for _ in (0, 1)]
        nseq = [1, 1]
        terms = {"e": [], "path": [], "state": []}
        node_paths = {"decision": [], "chance": [], "terminal": []}
        levels = 0
        for _ in range(MAX_LEVELS):
            if not len(states):
                break
            levels += 1
            pl = np.asarray(vg.player(states), dtype=np.int64)
            bad = ~np.isin(pl, (0, 1, CHANCE, TERMINAL))
            if bad.any():
                i = int(np.argmax(bad))
                raise self._fail(f"player {pl[i]} is not 0, 1, chance or terminal", states[i])
            legal_of: dict[int, np.ndarray] = {p: np.zeros((len(states), len(vg.actions)), bool) for p in (0, 1)}
            children = []
            term = pl == TERMINAL
            terms["e"].append(e[term])
            terms["path"].append(path[term])
            terms["state"].append(_compact(states[term]))  # kept for the payoff classes
            node_paths["terminal"].append(path[term])
            for p in (0, 1):
                mine = np.flatnonzero(pl == p)
                if not len(mine):
                    continue
                s = states[mine]
                legal = np.asarray(vg.legal(s), dtype=bool)  # [m, A]
                if not legal.any(axis=1).all():
                    raise self._fail("no legal actions", s[int(np.argmin(legal.any(axis=1)))])
                legal_of[p][mine] = legal
                row, a = np.nonzero(legal)  # grouped by node, actions in alphabet order
                ids = nseq[p] + np.arange(len(row))
                nseq[p] += len(row)
                I = info[p]
                I["parent"].append(e[mine, p])
                I["level"].append(d[mine, p])
                I["count"].append(legal.sum(1))
                I["path"].append(path[mine])
                I["state"].append(_compact(s))  # kept for naming
                I["action"].append(a)
                node_paths["decision"].append(path[mine])
                ce, cd = e[mine][row], d[mine][row]
                ce[:, p] = ids
                cd[:, p] += 1
                children.append((vg.next(s[row], a), ce, cd, path[mine][row]))
            self._check_level(states, pl, legal_of, path, paths)
            ch = np.flatnonzero(pl == CHANCE)
            if len(ch):
                children.append(self._chance(states[ch], e[ch], d[ch], path[ch], paths))
                node_paths["chance"].append(path[ch])
            if children:
                states = np.concatenate([c[0] for c in children])
                e = np.concatenate([c[1] for c in children])
                d = np.concatenate([c[2] for c in children])
                path = np.concatenate([c[3] for c in children])
            else:
                states = states[:0]
        else:
            raise too_deep(name)
        self.check_keys()
        cat = lambda xs, dt=np.int64: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)  # noqa: E731
        return {"info": [{k: (np.concatenate(v) if v else np.zeros((0, states.shape[1]) if k == "state" else 0, np.int64))
                          for k, v in I.items()} for I in info],
                "terms": {"e": np.concatenate(terms["e"]), "path": cat(terms["path"]),
                          "state": np.concatenate(terms["state"])},
                "paths": np.stack(paths), "node_paths": {k: cat(v) for k, v in node_paths.items()},
                "levels": self.deal_levels + levels}

    def _chance(self, s, e, d, path, paths):
        """Children of public chance nodes: an outcome is a child where it has positive
        probability for some pair of types the path still allows; the child's path matrix is
        the parent's times P(outcome | t0, t1)."""
        vg = self.vg
        if self.ranked:
            raise TensorCFRError(f"{self.game.name}: a ranked deal (VectorGame.ranked_deal) with public chance "
                                 "after it")
        T0, T1 = len(self.type_values[0]), len(self.type_values[1])
        full = self.full(s)
        pr = np.asarray(vg.chance(full), dtype=np.float64).reshape(len(s), T0, T1, -1)  # [n, T0, T1, C]
        live = (self.P > 0)[None] & (np.stack(paths)[path] > 0)  # [n, T0, T1]
        self._check_chance(pr[live], full[live.reshape(-1)])
        pr = pr * live[..., None]
        i, c = np.nonzero(pr.any(axis=(1, 2)))
        first = len(paths)
        paths.extend(paths[path[k]] * pr[k, :, :, o] for k, o in zip(i.tolist(), c.tolist()))
        return vg.next(s[i], c), e[i], d[i], first + np.arange(len(i))


def compile_public(game: str | Game | Sequence[str | Game], ranked: bool | None = None) -> PublicCompiledGame:
    """Compile a game dealt once (or a batch of them over one tree) into the public-tree form.
    Where the game's deal is ranked (`VectorGame.ranked_deal`: OCP, Kuhn), `ranked=True` keeps
    (a, b) per payoff class instead of [T0, T1] matrices (O(T) products), `False` the dense
    matrices, and None (the default) the ranked form from `RANKED_MIN_PAIRS` pairs of types.

    Example:
        >>> cg = compile_public("dudo(4,1,1)")
        >>> cg.sizes()["histories"] == compile_public("dudo(4,1,1)").num_histories
        True
    """
    members = list(game) if isinstance(game, (list, tuple)) else [game]
    try:
        members = [games_pkg.make(g) for g in members]
    except GameError as e:
        raise TensorCFRError(str(e)) from None
    for g in members:
        if not has_public_form(g):
            raise TensorCFRError(f"{g.name} has no public-tree form (its private information is not dealt once "
                                 "at the start); use form='generic'")
    walk = _PublicWalk(members[0], ranked)
    raw = walk.run()
    T = tuple(len(v) for v in walk.type_values)
    # [paths, T0, T1] the pairs of types each chance path allows (a ranked deal: every distinct pair)
    reach = None if walk.ranked else (walk.P[None] > 0) & (raw["paths"] > 0)
    tps, states, remap, orders = [], [], [], []
    for p in (0, 1):
        tp, st, rm, order_p = _public_treeplex(p, raw["info"][p], T[p], walk.vg.actions)
        tps.append(tp)
        states.append(st)
        remap.append(rm)
        orders.append(order_p)
    # terminals: last public sequences renumbered, grouped by (chance path, payoff key)
    te = raw["terms"]["e"]
    e = np.stack([remap[0][te[:, 0]], remap[1][te[:, 1]]])  # [2, Z]
    cls, weights = _payoff_classes(walk, raw)
    weights = [weights]
    for g in members[1:]:  # a batch differs in payoffs only: the same tree, deal and payoff classes
        other = _PublicWalk(g, ranked)
        raw_g = other.run()
        c, w = _payoff_classes(other, raw_g) if _same_tree(walk, raw, other, raw_g) else (None, None)
        if c is None or not np.array_equal(c, cls):
            raise TensorCFRError(f"compile: {g.name} does not have the public tree of {members[0].name}; "
                                 "a batch must differ in payoffs only")
        weights.append(w)
    order = np.argsort(cls, kind="stable")
    offsets = np.searchsorted(cls[order], np.arange(len(weights[0]) + 1))
    namer = _Namer(walk, states)
    tps = [dataclasses.replace(tp, namer=namer,
                               live=None if reach is None else _live(reach, raw["info"][p]["path"][order_p], p))
           for p, (tp, order_p) in enumerate(zip(tps, orders))]
    return PublicCompiledGame(
        name=members[0].name, batch_names=tuple(g.name for g in members), treeplexes=tuple(tps),
        terminal_seq=torch.from_numpy(e[:, order].copy()), class_offsets=torch.from_numpy(offsets.astype(np.int64)),
        payoff_weights=torch.from_numpy(np.stack(weights)), counts=_counts(walk, raw, reach), ranked=walk.ranked,
        deal=None if walk.ranked else torch.from_numpy(walk.P))


def _same_tree(a: _PublicWalk, raw_a: dict, b: _PublicWalk, raw_b: dict) -> bool:
    """Whether two walks found the same public tree: deal, actions, infosets and terminals."""
    if type(a.vg) is not type(b.vg) or a.vg.actions != b.vg.actions or a.ranked != b.ranked:
        return False
    if not all(np.array_equal(x, y) for x, y in zip(a.type_values, b.type_values)):
        return False
    if not a.ranked and not np.array_equal(a.P, b.P):
        return False
    if not (np.array_equal(a.root, b.root) and np.array_equal(raw_a["paths"], raw_b["paths"])):
        return False
    return np.array_equal(raw_a["terms"]["e"], raw_b["terms"]["e"]) and all(
        np.array_equal(ia[k], ib[k]) for ia, ib in zip(raw_a["info"], raw_b["info"]) for k in ("parent", "count", "action"))


def _public_treeplex(p: int, I: dict, T: int, alphabet):
    """Number one player's public infosets by (level, discovery) and their sequences after them;
    returns the treeplex, the infosets' public states in that order, and old -> new sequence ids."""
    level, count = I["level"], I["count"]
    U = len(level)
    order = np.lexsort((np.arange(U), level))  # new position -> old infoset
    # (exclusive prefix sums: a player who never moves has U = 0 infosets)
    first_old = 1 + (np.cumsum(count) - count).astype(np.int64)  # [U] old first sequence
    new_first = 1 + (np.cumsum(count[order]) - count[order]).astype(np.int64)  # [U] by new position
    remap = np.zeros(1 + int(count.sum()), np.int64)  # old sequence -> new (0 -> 0)
    # sequences of old infoset order[k] move to new_first[k] + their rank within the infoset
    src = np.repeat(first_old[order], count[order]) + _ranks(count[order])
    remap[src] = np.repeat(new_first, count[order]) + _ranks(count[order])
    actions = np.zeros(int(count.sum()), np.int64)
    actions[remap[1:] - 1] = I["action"]
    parent = remap[I["parent"][order]]
    levels = level[order]
    lo = np.searchsorted(levels, np.arange((levels.max() + 2) if U else 1))
    tp = PublicTreeplex(p, T, tuple(alphabet),
                        infoset_parent_pub=torch.from_numpy(parent),
                        infoset_offsets_pub=torch.from_numpy(np.concatenate([new_first, [1 + int(count.sum())]])
                                                             .astype(np.int64)),
                        action_pub=torch.from_numpy(actions), level_offsets_pub=torch.from_numpy(lo.astype(np.int64)))
    return tp, I["state"][order], remap, order


def _live(reach: np.ndarray, paths: np.ndarray, p: int) -> torch.Tensor | None:
    """[U, T_p] bool: the types of player p that chance can still deal at each public infoset,
    whose chance paths are `paths` [U]; None where every one can."""
    own = reach.any(2) if p == 0 else reach.any(1)  # [paths, T_p]
    mask = own[paths]
    return None if mask.all() else torch.from_numpy(mask)


def _ranks(count: np.ndarray) -> np.ndarray:
    """[sum count]: 0..count[k]-1 for each k in turn."""
    starts = np.repeat(np.cumsum(count) - count, count)
    return np.arange(int(count.sum())) - starts


def _payoff_classes(walk: _PublicWalk, raw: dict):
    """Per terminal its class (chance path, payoff key) [Z], and per class W [K, T0, T1]."""
    vg, st, path = walk.vg, raw["terms"]["state"].astype(np.int64), raw["terms"]["path"]
    key = vg.payoff_key(st)
    if key is None:
        _, key = np.unique(st, axis=0, return_inverse=True)
    key = np.asarray(key).reshape(-1)
    cls, first = _unique_pairs(path, key)
    if walk.ranked:  # (a, b) of each class, times the probability 1 / (n (n - 1)) of each pair
        n = len(walk.type_values[0])
        a, b = walk.vg.ranked_payoff(st[first])
        ab = np.stack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)], 1)  # [K, 2]
        bad = utility_rows(ab).any(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise walk._fail(f"payoff (fold {ab[i, 0]}, showdown {ab[i, 1]}) is not finite", st[first[i]])
        return cls, ab / (n * (n - 1))
    T0, T1 = walk.P.shape
    full = walk.full(st[first])
    u = np.asarray(vg.utility(full), dtype=np.float64).reshape(len(first), T0, T1)  # [K, T0, T1]
    reach = walk.P[None] * raw["paths"][path[first]]  # [K, T0, T1]
    bad = utility_rows(u) & (reach > 0)  # a pair of types chance never deals there may pay anything
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise walk._fail(f"utility {u.reshape(-1)[i]} is not finite", full[i])
    return cls, np.where(reach > 0, reach * u, 0.0)


def _unique_pairs(a: np.ndarray, b: np.ndarray):
    """(class id of each element [n], first element of each class [K]) for the pairs (a, b)."""
    _, first, cls = np.unique(np.stack([a, b], 1), axis=0, return_index=True, return_inverse=True)
    return cls.reshape(-1), first


def _counts(walk: _PublicWalk, raw: dict, reach: np.ndarray) -> dict:
    """Sizes as the generic form counts them: each public node stands for the deals of the pairs
    of types its chance path allows (`reach` [paths, T0, T1]); an infoset (u, t) exists where
    some pair with t is possible."""
    if reach is None:  # a ranked deal: every ordered pair of distinct ranks, one history each
        n = len(walk.type_values[0])
        pairs, rows = np.array([n * (n - 1)]), [np.array([n]), np.array([n])]
    else:
        pairs = (reach * walk.deals[None]).sum((1, 2))  # [paths] histories per public node
        rows = [reach.any(2).sum(1), reach.any(1).sum(1)]  # [paths] types of each player still possible
    np_ = raw["node_paths"]
    decision, chance, terminal = (int(pairs[np_[k]].sum()) for k in ("decision", "chance", "terminal"))
    chance += walk.deal_nodes
    infosets, sequences, with_choice = [], [], 0
    for p in (0, 1):
        I = raw["info"][p]
        n = rows[p][I["path"]]
        infosets.append(int(n.sum()))
        sequences.append(int((n * I["count"]).sum()))
        with_choice += int(n[I["count"] >= 2].sum())
    public_nodes = sum(len(v) for v in np_.values())
    return {"histories": decision + chance + terminal, "terminals": terminal, "chance_nodes": chance,
            "decision_nodes": decision, "infosets": infosets, "sequences": sequences,
            "infosets_with_choice": with_choice, "public_nodes": public_nodes, "levels": raw["levels"]}


class _Namer:
    """Infoset key strings from (public infoset, type), through the game's own naming."""

    def __init__(self, walk: _PublicWalk, states):
        self.vg, self.hands, self.values = walk.vg, walk.hands, walk.type_values
        # [U_p, width] per player in the narrowest integer type that holds them (Dudo(6,2,2):
        # 8.4M public infosets a player, 336 MB each as int64)
        self.states = [_compact(s) for s in states]

    def __call__(self, player: int, u: np.ndarray, t: np.ndarray) -> list[str]:
        s = self.states[player][u].astype(np.int64)
        s[:, self.hands[player]] = self.values[player][t]
        return self.vg.infoset_names(self.vg.infoset(s))


def _compact(a: np.ndarray) -> np.ndarray:
    """`a` in the narrowest integer type that holds it: the walk keeps a state per public
    infoset and terminal (Dudo(6,2,2): 34M of them, 40 bytes each as int64, 5 as int8)."""
    return a.astype(_narrow(a), copy=False)


def _narrow(a: np.ndarray) -> np.dtype:
    """The narrowest signed integer type that holds every entry of `a`."""
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
