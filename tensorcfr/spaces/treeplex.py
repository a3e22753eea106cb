"""One player's decision space (the treeplex) and the tensor operations over it.

A player's infosets are stored by treeplex level, the infosets of one level contiguous, and
the actions of one infoset are contiguous sequences, so "all actions of an infoset" is a
segment and "all infosets of a level" is a slice (docs/concepts.md). The operations every
update rule and the evaluation share (docs/concepts.md) are functions here, and methods of
`Treeplex` for the update rules: a per-infoset normalisation (regret matching), the top-down
pass to the sequence form, and the bottom-up passes (expected value under a strategy, best
response, entropy-regularised best response). Python loops run over treeplex levels only; on
the CPU compiled walks (`public_loop`, the sequences as rows of one type) take the plan and the
regret-matching update in one call each, with the same numbers.

Per-sequence tensors are [B, S] with column 0 the empty sequence; per-infoset ones [B, I].
Reductions over an infoset's actions are ragged segment sums (`index_add_`), which on the CPU
add in a fixed order, so batch members are bit-identical to solo runs; on a GPU with
deterministic kernels, segment reductions over a layout sorted once (`segments`).

Example:
    >>> import torch, tensorcfr
    >>> from tensorcfr import treeplex
    >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
    >>> sigma = tp.normalize(torch.zeros(1, tp.num_sequences, dtype=torch.float64))
    >>> treeplex.sequence_form(tp, sigma)[0, :3].tolist()
    [1.0, 0.5, 0.5]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from tensorcfr.spaces import fused, public_loop, segments
from tensorcfr.errors import TensorCFRError

WEIGHTS = ("unit", "kroer17", "farina21")  # the dilated-entropy weight schemes
# sequences from which the compiled walks (`public_loop`) take the treeplex's plan and the
# regret-matching update on the CPU: every treeplex, since a walk's one call costs less than the
# torch passes' level loop even on Kuhn's 13 sequences
WALK_SEQUENCES = 0
# where an iteration is launch-bound (a GPU, a small game) the plan comes from a table of each
# sequence's path (`Treeplex.paths`): a gather and a running product, 2 kernels where the level
# loop takes 2L + 1, in the loop's order (the same numbers). Up to PATH_ENTRIES entries B L S of
# the gathered [B, L, S] a call, on the device types of PATH_DEVICES (the CPU has its compiled
# walks); past that the level loop, which reads each sequence once, not L times. Where the table
# serves (`_launch_bound`), the values bottom-up and the average's add take fewer kernels too.
# Timed on an H200 (2026-11-28, CFR+, float64, a CUDA graph, ms an iteration, table against level
# loop): Kuhn (B L S 26) 0.067 against 0.083, Leduc (4,372) 0.110 against 0.134, but Liar's Dice
# (171,997) 0.395 against 0.210 and Dudo(4,1,2) (245,706) 0.428 against 0.210, and with
# --deterministic 6.7-7.4 ms against 0.27. The bound sits between: where from 4,372 to 114,667
# the two cross was not measured
PATH_DEVICES = ("cuda",)
PATH_ENTRIES = 1 << 15


# columns a chunk of `chunked_dot`: its product's temporary, not the whole [B, S] one
DOT_CHUNK = 1 << 22
# infosets a stretch of `Treeplex.infoset_gaps` (its temporaries a stretch's, not [B, I])
GAP_ENTRIES = 1 << 22


def chunked_dot(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """sum_s x[b, s] g[b, s] [B], a chunk of columns at a time (no [B, S] product in memory;
    within a chunk torch's own summation, accurate at float32 too).

    Example:
        >>> chunked_dot(torch.ones(1, 3), torch.full((2, 3), 2.0)).tolist()
        [6.0, 6.0]
    """
    total = sum((x[:, k:k + DOT_CHUNK] * g[:, k:k + DOT_CHUNK]).sum(1) for k in range(0, g.shape[1], DOT_CHUNK))
    return total.expand(max(x.shape[0], g.shape[0])).clone()


class Level(NamedTuple):
    """One treeplex level: infosets `i0:i1`, sequences `s0:s1`, and their index tensors."""

    i0: int
    i1: int
    s0: int
    s1: int
    segment: torch.Tensor  # [s1-s0] int64: infoset of each sequence, minus i0
    parent: torch.Tensor  # [i1-i0] int64: parent sequence of each infoset
    seq_parent: torch.Tensor  # [s1-s0] int64: parent sequence of each sequence's infoset


@dataclass(frozen=True, eq=False)
class Treeplex:
    """One player's sequence-form decision space (S sequences incl. the empty one, I infosets).

    Sequence 0 is the empty sequence; infoset j owns sequences
    `infoset_offsets[j] : infoset_offsets[j+1]`, one per action in `action_names[j]` order.
    """

    player: int
    infoset_keys: tuple[str, ...]  # [I]
    action_names: tuple[tuple[str, ...], ...]  # [I][A_j]
    infoset_parent: torch.Tensor  # [I] int64: parent sequence of each infoset
    infoset_offsets: torch.Tensor  # [I+1] int64: CSR offsets of each infoset's sequences
    seq_infoset: torch.Tensor  # [S] int64: infoset owning each sequence, -1 for the empty one
    level_offsets: torch.Tensor  # [L+1] int64: level l holds infosets level_offsets[l]:[l+1]
    # a part made for one iteration (`touched`): its plan takes the level loop, since a path
    # table built for it would serve once (not stored in files)
    short_lived: bool = field(default=False, repr=False, compare=False)
    # derived on construction, not stored in files:
    levels: tuple[Level, ...] = field(init=False, repr=False)
    slot_infoset: torch.Tensor = field(init=False, repr=False)  # [S-1] seq_infoset[1:]
    num_actions: torch.Tensor = field(init=False, repr=False)  # [I] int64
    _uniform: dict = field(init=False, repr=False, compare=False)  # dtype -> [S-1] 1 / actions

    def __post_init__(self):
        lo = self.level_offsets.tolist()
        io = self.infoset_offsets[self.level_offsets.long()].tolist()  # first sequence of each level
        levels = []
        for (i0, i1), (s0, s1) in zip(zip(lo[:-1], lo[1:]), zip(io[:-1], io[1:])):
            segment = self.seq_infoset[s0:s1] - i0
            parent = self.infoset_parent[i0:i1]
            levels.append(Level(i0, i1, s0, s1, segment, parent, parent[segment]))
        object.__setattr__(self, "levels", tuple(levels))
        object.__setattr__(self, "slot_infoset", self.seq_infoset[1:])
        object.__setattr__(self, "num_actions", self.infoset_offsets.diff())
        object.__setattr__(self, "_uniform", {})

    def uniform(self, dtype: torch.dtype) -> torch.Tensor:
        """[S-1] the uniform strategy's probability of each sequence (1 / its infoset's actions),
        made once per dtype: regret matching falls back to it at every iteration."""
        if dtype not in self._uniform:
            self._uniform[dtype] = (1.0 / self.num_actions.to(dtype))[self.slot_infoset]
        return self._uniform[dtype]

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

    @property
    def num_sequences(self) -> int:
        """Sequences including the empty one (the length of every per-sequence tensor)."""
        return int(self.seq_infoset.numel())

    def infoset_index(self) -> dict[str, int]:
        """{infoset key: storage index}, built once (lookups by key happen at every evaluation)."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {k: i for i, k in enumerate(self.infoset_keys)}
            object.__setattr__(self, "_index", index)
        return index

    def sequence_names(self) -> list[str]:
        """Readable name of every sequence: `""` for the empty one, else `"key/action"`."""
        return [""] + [f"{k}/{a}" for k, acts in zip(self.infoset_keys, self.action_names) for a in acts]

    def per_infoset(self, row: list, member: int = 0) -> dict[str, dict[str, object]]:
        """`{infoset key: {action name: row[sequence]}}` for a per-sequence list `row` [S] (every
        batch member of the generic form names its infosets alike: `member` changes nothing).

        Example:
            >>> import tensorcfr
            >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
            >>> tp.per_infoset(list(range(tp.num_sequences)))["J:"]
            {'pass': 1, 'bet': 2}
        """
        offsets = self.infoset_offsets.tolist()
        return {key: dict(zip(acts, row[offsets[j]:offsets[j + 1]])) for j, key, acts in self.infosets()}

    # -- the policy file's layout by type (`io.policies`; the public-tree form's space offers the
    # same): here every infoset is a public infoset of one type, and the sequences its rows
    def layout(self, member: int = 0) -> dict[str, np.ndarray]:
        """{"infoset": [M] the infoset of each sequence, "action": [M] its action, "live": [I, 1]
        True}: M = S - 1 sequences, one type (`member` changes nothing: every batch member names
        its infosets alike).

        Example:
            >>> import tensorcfr
            >>> lay = tensorcfr.compile("kuhn").treeplexes[0].layout()
            >>> lay["infoset"][:4].tolist(), lay["action"][:2].tolist(), lay["live"].shape
            ([0, 0, 1, 1], ['pass', 'bet'], (6, 1))
        """
        return {"infoset": self.slot_infoset.cpu().numpy(),
                "action": np.array([a for acts in self.action_names for a in acts], dtype=str),
                "live": np.ones((self.num_infosets, 1), dtype=bool)}

    def rows(self, t: torch.Tensor) -> torch.Tensor:
        """[B, S - 1, 1] view of the non-empty sequences of a per-sequence tensor [B, S] (the
        layout's [sequences x types]).

        Example:
            >>> import torch, tensorcfr
            >>> tensorcfr.compile("kuhn").treeplexes[0].rows(torch.zeros(1, 13)).shape
            torch.Size([1, 12, 1])
        """
        return t[:, 1:].view(t.shape[0], -1, 1)

    def split_names(self) -> tuple[list[str], list[str]]:
        """(type names [1], infoset names [I]): the one type has no name, so an infoset's key is
        its name (`PublicTreeplex.split_names`' contract).

        Example:
            >>> import tensorcfr
            >>> types, public = tensorcfr.compile("kuhn").treeplexes[0].split_names()
            >>> types, public[0]
            ([''], 'J:')
        """
        return [""], list(self.infoset_keys)

    def infosets(self):
        """(index, key, action names) of every infoset, in storage order."""
        return ((j, k, a) for j, (k, a) in enumerate(zip(self.infoset_keys, self.action_names)))

    def columns(self, j: int) -> list[int]:
        """The columns of infoset j's sequences in a per-sequence tensor [B, S]."""
        return list(range(int(self.infoset_offsets[j]), int(self.infoset_offsets[j + 1])))

    # -- the operations the update rules and the evaluation call (`public.PublicTreeplex`, the
    # public-tree form's space, offers the same) -------------------------------------------------
    def segment_sum(self, values: torch.Tensor) -> torch.Tensor:
        """`segment_sum(self, values)`: [B, S] summed over each infoset's sequences -> [B, I]."""
        return segment_sum(self, values)

    def bottom_up(self, g: torch.Tensor, sigma: torch.Tensor | None = None, inplace: bool = False,
                  root: bool = True, infosets: bool = True):
        """`bottom_up(self, g, sigma, inplace, root)`: (q [B, S], v [B, I]) (v made whatever
        `infosets` says: the level passes need it)."""
        return bottom_up(self, g, sigma, inplace, root)

    def infoset_gaps(self, q: torch.Tensor, v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """[B, I] in v's memory where the shapes allow: x[parent(j)] v_j - sum_a x(j, a) q(j, a)
        for each infoset j, from a best response's values q [B, S] (overwritten in part) and v
        [B, I] and the plan x [B, S] (`evaluation.infoset_gaps`; each infoset stands for itself,
        no `infoset_weights`), a stretch of `GAP_ENTRIES` infosets at a time (an infoset's
        sequences lie together, `infoset_offsets`): no [B, I] temporary.

        Example:
            >>> import torch, tensorcfr
            >>> cg = tensorcfr.compile("kuhn")
            >>> x, y = tensorcfr.Policy.uniform(cg).sequence_form()
            >>> q, v = cg.treeplexes[0].bottom_up(cg.operator(torch.float64).cfv(0, y))
            >>> round(float(cg.treeplexes[0].infoset_gaps(q, v, x).sum()), 6)  # BR_0 - u_0: what a best response gains
            0.375
        """
        if v.shape[0] < x.shape[0]:
            v = v.expand(x.shape[0], -1).clone()
        n = self.num_infosets
        cuts = [*range(0, n, GAP_ENTRIES), n]
        # each stretch's first sequence (only these offsets read: a list of all I + 1 would be
        # gigabytes of Python ints on a game of 10^8 infosets)
        off = self.infoset_offsets[torch.tensor(cuts, device=self.infoset_offsets.device)].tolist()
        for k in range(len(cuts) - 1):  # stretches of infosets, a few a game
            j0, j1, s0, s1 = cuts[k], cuts[k + 1], off[k], off[k + 1]
            v[:, j0:j1].mul_(x[:, self.infoset_parent[j0:j1]])
            qs, xs = q[:, s0:s1], x[:, s0:s1]
            played = qs.mul_(xs) if qs.shape[0] >= xs.shape[0] else qs * xs
            v[:, j0:j1].sub_(segments.sum(self.slot_infoset[s0 - 1:s1 - 1] - j0, played, j1 - j0))
        return v

    def parent_reach(self, x: torch.Tensor) -> torch.Tensor:
        """[B, I]: the realisation weight x [B, S] of each infoset's parent sequence."""
        return x[:, self.infoset_parent]

    def normalize(self, weights: torch.Tensor, out: torch.Tensor | None = None, head: bool = True) -> torch.Tensor:
        """`normalize(self, weights, out, head)`: behavioural strategy [B, S] proportional to weights >= 0."""
        return normalize(self, weights, out, head)

    def sequence_form(self, sigma: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """`sequence_form(self, sigma, out)`: the realisation plan [B, S] of sigma [B, S]."""
        return sequence_form(self, sigma, out)

    def instantaneous_regret(self, g: torch.Tensor, sigma: torch.Tensor, inplace: bool = False) -> torch.Tensor:
        """r(j,a) = q(j,a) - v(j) [B, S-1] for counterfactual values g [B, S] under sigma [B, S]:
        each action's value against the value of its infoset (the empty sequence has none).
        With `inplace`, g's memory holds the result."""
        q, v = bottom_up(self, g, sigma, inplace, root=False)  # [B, S] (but column 0), [B, I]
        if not inplace:
            return q[:, 1:] - v[:, self.slot_infoset]
        if fused.wanted(q) and fused.disjoint(q, v):  # v gathered as the loop goes
            n = q.shape[1] - 1
            fused.subtract_gathered(q[0, 1:].view(n, 1), v[0].view(-1, 1), self.slot_infoset)
            return q[:, 1:]
        return q[:, 1:].sub_(v[:, self.slot_infoset])

    def softmax(self, u: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
        """`softmax_bottom_up(self, u, temperature)`'s strategy [B, S]."""
        return softmax_bottom_up(self, u, temperature)[0]

    def paths(self) -> torch.Tensor:
        """[L, S] int64: each sequence's path from the root, one treeplex level a row (column s:
        s's ancestors from the top, s itself last, 0s in front: sequence 0's probability is 1
        in every strategy), built once, a level at a time (`sequence_form`).

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn").treeplexes[0].paths()[:, -1].tolist()  # "K:pb/bet" below "K:/pass"
            [5, 12]
        """
        got = self.__dict__.get("_paths")
        if got is None:
            got = torch.zeros(max(len(self.levels), 1), self.num_sequences, dtype=torch.long,
                              device=self.seq_infoset.device)
            for lv in self.levels:  # each level's columns from its parents' (levels above it, done)
                got[:-1, lv.s0:lv.s1] = got[1:, lv.seq_parent]
                got[-1, lv.s0:lv.s1] = torch.arange(lv.s0, lv.s1, device=got.device)
            object.__setattr__(self, "_paths", got)
        return got

    def up_paths(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(up [L-1, S], into [(L-1) S]) int64, from `paths`: row k of `up` holds each
        sequence's ancestor k levels up (row 0 the sequence itself), and `into`, flat, the one
        above it, 0 past the top: the rows the values bottom-up read going up (`bottom_up`),
        built once (`into` the very tensor each call adds by: a deterministic run's sums keep
        their layout on it, made once on the host, `segments.layout`).

        Example:
            >>> import tensorcfr
            >>> up, into = tensorcfr.compile("leduc").treeplexes[0].up_paths()
            >>> up.shape[0], int(into[1]), int(into.view(up.shape)[-1, 1])  # a top sequence: its parent is the root
            (3, 0, 0)
        """
        got = self.__dict__.get("_up_paths")
        if got is None:
            rows = self.paths().flip(0)  # [L, S]: each sequence, its parent, ... (0s at the end)
            got = (rows[:-1].contiguous(), rows[1:].reshape(-1))
            object.__setattr__(self, "_up_paths", got)
        return got

    def walk_layout(self) -> public_loop.WalkLayout:
        """The sequences as the compiled walks read them: rows of one type
        (`public_loop.WalkLayout`).

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn").treeplexes[0].walk_layout()[:2]  # 12 sequences after the empty one
            (12, 1)
        """
        return public_loop.WalkLayout(self.num_sequences - 1, 1, self.infoset_offsets, self.infoset_parent,
                                      self.level_offsets, self.slot_infoset)

    def regret_step(self, g: torch.Tensor, sigma: torch.Tensor, regret: torch.Tensor, positive, negative,
                    plus: bool, predictive: bool, out: torch.Tensor | None = None) -> torch.Tensor | None:
        """The next strategy [B, S] of the regret-matching family's update (regrets [B, S] updated
        in place from the values g [B, S], which it overwrites, against sigma [B, S]; `positive`,
        `negative`: the discounts or None) in one compiled walk of the treeplex, written into
        `out` (sigma allowed; None: a new array), or None where that walk does not serve
        (`public_loop.serves`) and the rule's passes run (`rules.CFRConfig.next_strategy`)."""
        return public_loop.regret_step(self, g, sigma, regret, positive, negative, plus, predictive,
                                       least=WALK_SEQUENCES, out=out)

    def averaged_plan(self, sigma: torch.Tensor, average: torch.Tensor, weight, discount=None,
                      out: torch.Tensor | None = None) -> torch.Tensor | None:
        """The realisation plan x [B, S] of sigma [B, S] (in `out` where given), with `average` [B, S] multiplied by
        `discount` (where not None) and x times `weight` added into it, all in one compiled walk
        down the treeplex; or None where that walk does not serve (nothing changed), and
        `sequence_form` and the iteration's own average serve (`iteration._averaged_plan`).
        Where the path table serves (launch-bound), the plan from it and the weighted add in one
        kernel, where the iteration's takes two (a multiply rounded, then the add: here the GPU
        may round once)."""
        x = public_loop.averaged_plan(self, sigma, average, weight, discount, least=WALK_SEQUENCES, out=out)
        if x is not None or not _by_paths(self, sigma) or sigma.shape != average.shape:
            return x
        x = sequence_form(self, sigma, out=out)
        if discount is not None:
            average.mul_(discount)
        if isinstance(weight, torch.Tensor):
            average.addcmul_(x, weight)
        else:
            average.add_(x, alpha=weight)
        return x

    def entropy_weights(self, scheme: str = "unit") -> torch.Tensor:
        """`dilated_entropy_weights(self, scheme)` [I] float64."""
        return dilated_entropy_weights(self, scheme)

    def at_sequences(self, values: torch.Tensor) -> torch.Tensor:
        """[B, S]: each sequence gets its infoset's entry of `values` [B, I]; the empty one 0.

        Example:
            >>> import torch, tensorcfr
            >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
            >>> tp.at_sequences(torch.arange(6.0)[None])[0, :5].tolist()
            [0.0, 0.0, 0.0, 1.0, 1.0]
        """
        return torch.cat([values.new_zeros(values.shape[0], 1), values[:, self.slot_infoset]], 1)

    def reachable(self, dtype: torch.dtype) -> None:
        """None: chance reaches every infoset of a treeplex built from a walk of the game."""
        return None

    def sequence_weights(self, dtype: torch.dtype) -> None:
        """None: each sequence stands for itself (`DecisionSpace.sequence_weights`)."""
        return None

    def infoset_weights(self, dtype: torch.dtype) -> None:
        """None: each infoset stands for itself (`DecisionSpace.infoset_weights`)."""
        return None

    def path_table_bytes(self, batch: int, dtype_bytes: int) -> int:
        """Bytes of the path table on a launch-bound device (`PATH_DEVICES`, up to `PATH_ENTRIES`
        gathered entries): the kept tables (`paths` [L, S], `up_paths` [L-1, S] twice, int64) and a
        pass's gathered [B, L, S] and its running product; 0 where the level loop serves.

        Example:
            >>> import tensorcfr
            >>> tp = tensorcfr.compile("kuhn").treeplexes[0]  # 2 levels of 13 sequences
            >>> tp.path_table_bytes(1, 8) == 8 * (2 + 2 * 1) * 13 + 2 * 8 * 2 * 13
            True
        """
        levels, s = max(len(self.levels), 1), self.num_sequences
        if not self.levels or batch * levels * s > PATH_ENTRIES:
            return 0
        return 8 * (levels + 2 * (levels - 1)) * s + 2 * dtype_bytes * batch * levels * s

    def weighted_dot(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """sum_s x[b, s] g[b, s] [B] (each sequence stands for itself), by chunks (`chunked_dot`)."""
        return chunked_dot(x, g)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.init and isinstance(getattr(self, f.name), torch.Tensor)}

    def to(self, device) -> "Treeplex":
        return Treeplex(self.player, self.infoset_keys, self.action_names,
                        **{k: v.to(device) for k, v in self.tensors().items()})


def segment_sum(tp: Treeplex, values: torch.Tensor) -> torch.Tensor:
    """Sum `values` [B, S] over each infoset's sequences -> [B, I]."""
    return segments.sum(tp.slot_infoset, values[:, 1:], tp.num_infosets)


def touched(tp: Treeplex, seqs: torch.Tensor):
    """The part of `tp` above the sequences `seqs` [n]: their infosets and every infoset on the
    way up (a treeplex rooted at the empty sequence, its infosets in `tp`'s order, so levels
    stay levels), as (sub-treeplex, its sequences' ids in `tp` [S'] with 0 first, its
    infosets' ids in `tp` [I'], and `where(s)`: the positions in the part of sequences s of
    `tp` that lie in it). A per-sequence tensor x [B, S] restricted to it is x[:, ids]; a
    sub-treeplex's infosets are nameless. One round per treeplex level; the work is the
    part's size and n, plus a pass over a boolean per infoset.

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> sub, ids, infosets, where = touched(tp, torch.tensor([tp.infoset_offsets[-2].item()]))
        >>> sub.num_infosets, [tp.infoset_keys[j] for j in infosets.tolist()]  # an infoset and its parent
        (2, ['K:', 'K:pb'])
    """
    dev = tp.seq_infoset.device
    marked = torch.zeros(tp.num_infosets, dtype=torch.bool, device=dev)  # [I]
    new = tp.seq_infoset[seqs[seqs > 0]]
    marked[new] = True
    while len(new):  # upwards, one treeplex level a round
        parents = tp.infoset_parent[new]
        up = tp.seq_infoset[parents[parents > 0]]
        new = up[~marked[up]]
        marked[new] = True
    found = torch.nonzero(marked).squeeze(1)  # [I'] sorted
    rank = torch.cumsum(marked, 0) - 1  # [I] an infoset's index in the part (where it is in it)
    count = tp.num_actions[found]  # [I']
    sub_offsets = torch.cat([torch.ones(1, dtype=torch.long, device=dev), 1 + torch.cumsum(count, 0)])  # [I'+1]
    owner = torch.repeat_interleave(torch.arange(len(found), device=dev), count)  # [S'-1]
    ids = torch.cat([torch.zeros(1, dtype=torch.long, device=dev),
                     tp.infoset_offsets[found][owner] + torch.arange(len(owner), device=dev) - sub_offsets[owner] + 1])

    def where(s: torch.Tensor) -> torch.Tensor:
        """Positions in the part of sequences s [n] of `tp` (every one in the part; 0 -> 0)."""
        j = tp.seq_infoset[s].clamp(min=0)
        return torch.where(s > 0, sub_offsets[rank[j]] + s - tp.infoset_offsets[j], 0)

    level = torch.searchsorted(tp.level_offsets.to(dev), found, right=True) - 1  # [I']
    sub = Treeplex(player=tp.player, infoset_keys=("",) * len(found), action_names=((),) * len(found),
                   infoset_parent=where(tp.infoset_parent[found]), infoset_offsets=sub_offsets,
                   seq_infoset=torch.cat([torch.full((1,), -1, dtype=torch.long, device=dev), owner]),
                   level_offsets=torch.searchsorted(level, torch.arange(len(tp.levels) + 1, device=dev)),
                   short_lived=True)
    return sub, ids, found, where


def normalize(tp: Treeplex, weights: torch.Tensor, out: torch.Tensor | None = None, head: bool = True) -> torch.Tensor:
    """Behavioural strategy proportional to `weights` [B, S] (>= 0); uniform where they sum to 0.

    Regret matching is `normalize(tp, regrets.clamp(min=0))`; the average strategy is
    `normalize(tp, cumulative sequence-form weights)`. Column 0 of the result is 1, written
    unless `head` is False: `out` is a strategy's own memory, whose column 0 holds 1 already (a
    kernel fewer on a GPU). `out` (weights itself allowed) receives the result.
    """
    out = torch.empty_like(weights) if out is None else out
    if public_loop.normalize(tp, weights, out, least=WALK_SEQUENCES):  # one compiled walk over the infosets
        if head:
            out[:, 0] = 1.0
        return out
    # (the public form's arithmetic in place of the mask, `public._is_zero`, gathers twice here,
    # where a gather costs more than the mask: Leduc CFR+ 0.40 against 0.32 ms, measured)
    if fused.wanted(weights) and (out is weights or fused.disjoint(weights, out)):
        # one pass, each infoset's total gathered as it goes (a types dimension of 1)
        col = lambda t: t[0, 1:].view(-1, 1)  # noqa: E731  [S-1, 1] of a one-member [1, S]
        fused.normalize_rows(col(weights), segment_sum(tp, weights)[0].view(-1, 1), tp.slot_infoset,
                             tp.uniform(weights.dtype).view(-1, 1), None if out is weights else col(out))
        if head:
            out[:, 0] = 1.0
        return out
    total = segment_sum(tp, weights)[:, tp.slot_infoset]  # [B, S-1]
    positive = total > 0
    if head:
        out[:, 0] = 1.0
    # where the total is 0 the quotient is 0/0, which the outer where discards
    torch.where(positive, weights[:, 1:] / total, tp.uniform(weights.dtype), out=out[:, 1:])
    return out


def sequence_form(tp: Treeplex, sigma: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Realisation plan x [B, S] of a behavioural strategy sigma [B, S]: top-down per level.
    `out` (sigma itself allowed: a level reads only levels above it) receives the result."""
    x = torch.empty_like(sigma) if out is None else out
    if public_loop.plan(tp, sigma, x, least=WALK_SEQUENCES):  # one compiled walk down the treeplex
        return x
    if _by_paths(tp, sigma):
        # x(s) = sigma's product along s's path, taken from the top as the loop takes it
        paths = tp.paths()  # [L, S]
        t = sigma.index_select(1, paths.view(-1)).view(sigma.shape[0], *paths.shape)  # [B, L, S]
        if len(paths) == 1:
            return x.copy_(t[:, 0])
        if len(paths) > 2 and out is None and sigma.shape[0] == 1:
            # a running product down the levels (a scan over a dimension that is not the
            # innermost runs each column in order, on the CPU and on CUDA: the loop's products):
            # 2 kernels where the products below take L, and the last level is the plan (a view:
            # one member's row is contiguous)
            return torch.cumprod(t, 1)[:, -1]
        torch.mul(t[:, 0], t[:, 1], out=x)
        for m in range(2, len(paths)):  # levels, not sequences
            x.mul_(t[:, m])
        return x
    x[:, 0] = 1.0
    for lv in tp.levels:
        torch.mul(x.index_select(1, lv.seq_parent), sigma[:, lv.s0:lv.s1], out=x[:, lv.s0:lv.s1])
    return x


def _launch_bound(tp: Treeplex, x: torch.Tensor) -> bool:
    """Whether a pass over tp with arrays like x [B, S] is launch-bound, so that the passes that
    take fewer kernels serve (`PATH_DEVICES`, `PATH_ENTRIES`); not inside torch.compile, which
    fuses the level loop's passes itself."""
    return (x.device.type in PATH_DEVICES and len(tp.levels) > 0 and not torch.compiler.is_compiling()
            and x.shape[0] * len(tp.levels) * tp.num_sequences <= PATH_ENTRIES)


def _by_paths(tp: Treeplex, x: torch.Tensor) -> bool:
    """Whether the path table serves a pass over tp with arrays like x [B, S]: launch-bound, and
    not a short-lived part (`Treeplex.short_lived`), for which a table would serve once."""
    return _launch_bound(tp, x) and not tp.short_lived


def bottom_up(tp: Treeplex, g: torch.Tensor, sigma: torch.Tensor | None = None, inplace: bool = False,
              root: bool = True):
    """Values of sequences and infosets from counterfactual values g [B, S], deepest level first.

    With `sigma` [B, S]: q(j,a) = g(j,a) + sum of child infoset values, v(j) = sum_a sigma q.
    With `sigma=None`: best response, v(j) = max_a q(j,a).
    Returns (q [B, S], v [B, I]); q[:, 0] is the value of the whole treeplex; with `root` False
    it is not (a caller that reads only the sequences below, as the regret does): g[:, 0] in
    the level loop (the top level's values not added into it: a kernel fewer), and sums past
    the top in the launch-bound pass that goes up the paths. With `inplace`, q is g itself
    where their shapes allow.
    """
    batch = max(g.shape[0], 1 if sigma is None else sigma.shape[0])
    q = g if inplace and g.shape[0] == batch else g.expand(batch, -1).clone()
    if sigma is not None and not root and len(tp.levels) > 3 and _by_paths(tp, q):
        # launch-bound and deep (Leduc's 4 levels, Liar's Dice's 7): each sequence's value
        # straight into every ancestor's, times the strategy's product on the way up (q(a) is
        # g(a) plus, over the sequences d below a, g(d) times sigma from d up to a's child): a
        # gather, a running product up the paths, a product and one add, 4 kernels where the
        # levels below take 2 (L - 1). The same sums grouped otherwise: to rounding. Paths
        # shorter than the deepest add past the top, into column 0, which root=False leaves.
        # The infosets' values are then summed from these q, as the level loop sums them. Summed
        # by whole paths as well (tried), OpenSpiel's CFR on Liar's Dice with 4 sides came out
        # 4.6e-6 apart after 50 iterations and the two forms' LCFR strategies past 1e-10: where an
        # infoset's actions are worth the same, such sums need not cancel to 0, and regret
        # matching then plays one action where it would play them all
        up, into = tp.up_paths()  # [L-1, S], [(L-1) S]
        c = torch.cumprod(sigma.index_select(1, up.view(-1)).view(sigma.shape[0], *up.shape), 1)  # [B, L-1, S]
        c = c.mul_(q[:, None]) if c.shape[0] == batch else c * q[:, None]
        segments.add(q, into, c.view(batch, -1))
        return q, segment_sum(tp, sigma * q)
    if sigma is not None and _launch_bound(tp, q):
        # launch-bound (a small game on a GPU of 3 levels or fewer, the regret's values with `root`
        # True, a sampled part of any: parts take no path table): each
        # sequence's weighted value straight into its infoset's parent, one add a level where the
        # loop takes two, and the infosets' values after, all at once: 2L + 3 kernels against
        # 3L + 1 (Leduc: 9 against 12 with `root` False). The same sums grouped otherwise: equal
        # to the loop's to rounding, not bit for bit
        for lv in reversed(tp.levels):
            if root or lv is not tp.levels[0]:
                segments.add(q, lv.seq_parent, sigma[:, lv.s0:lv.s1] * q[:, lv.s0:lv.s1])
        return q, segment_sum(tp, sigma * q)
    if sigma is not None and segments.wanted(q):
        # segment sums (a deterministic GPU run): a level's sums are its values as they come (one
        # kernel each, where adding them into zeros takes two), joined once at the end
        parts = []
        for lv in reversed(tp.levels):
            parts.append(segments.sum(lv.segment, sigma[:, lv.s0:lv.s1] * q[:, lv.s0:lv.s1], lv.i1 - lv.i0))
            if root or lv is not tp.levels[0]:
                segments.add(q, lv.parent, parts[-1])
        return q, torch.cat(parts[::-1], 1) if parts else q.new_zeros(batch, 0)
    # filled once, each level reduced into its own columns: two kernels a level fewer than a
    # fresh [B, n] per level copied in (what a small game's iteration is made of)
    if sigma is None:
        v = q.new_empty(batch, tp.num_infosets)
        if tp.levels and public_loop.best_response(tp, q, v, least=WALK_SEQUENCES):  # one walk up, as the public form's
            if root:  # the top level's values into sequence 0, as the loop below adds them
                top = tp.levels[0]
                segments.add(q, top.parent, v[:, top.i0:top.i1])
            return q, v
        v.fill_(-torch.inf)
    else:
        v = q.new_zeros(batch, tp.num_infosets)
    for lv in reversed(tp.levels):
        ql, vl = q[:, lv.s0:lv.s1], v[:, lv.i0:lv.i1]
        if sigma is None:
            vl.scatter_reduce_(1, lv.segment.expand(batch, -1), ql, "amax")
        else:
            segments.add(vl, lv.segment, sigma[:, lv.s0:lv.s1] * ql)
        if root or lv is not tp.levels[0]:  # (a treeplex level is a depth: the top one's parent is sequence 0)
            segments.add(q, lv.parent, vl)
    return q, v


def softmax_bottom_up(tp: Treeplex, u: torch.Tensor, temperature: torch.Tensor):
    """Maximiser of <u, x> + sum_j tau_j x[p_j] H(b_j) over the treeplex (H the entropy of the
    behavioural strategy b_j at infoset j): the best response to utilities u [B, S]
    regularised by the dilated entropy, with temperatures tau [B or 1, I] > 0.

    Deepest level first, per infoset: Q(j,a) = u(j,a) + the values of the infosets below (j,a),
    b(j,.) = softmax(Q(j,.) / tau_j) and V(j) = tau_j logsumexp(Q(j,.) / tau_j), which flows
    into the parent sequence. Shifting by the per-infoset maximum keeps it finite at any scale.
    Returns (behavioural strategy [B, S] with column 0 = 1, value [B] of the whole treeplex).

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> b, _ = softmax_bottom_up(tp, torch.zeros(1, tp.num_sequences), torch.ones(1, tp.num_infosets))
        >>> [round(v, 4) for v in b[0, :3].tolist()]  # "pass" leads to one more infoset's entropy
        [1.0, 0.6667, 0.3333]
    """
    batch = max(u.shape[0], temperature.shape[0])
    q = u.expand(batch, -1).clone()
    sigma = torch.empty_like(q)
    sigma[:, 0] = 1.0
    for lv in reversed(tp.levels):
        tau = temperature[:, lv.i0:lv.i1]  # [B, n] n = infosets of the level
        z = q[:, lv.s0:lv.s1] / tau.index_select(1, lv.segment)  # [B, m] m = sequences of the level
        top = z.new_full((batch, lv.i1 - lv.i0), -torch.inf).scatter_reduce_(1, lv.segment.expand(batch, -1), z, "amax")
        e = torch.exp(z - top.index_select(1, lv.segment))  # [B, m], in (0, 1]
        total = segments.sum(lv.segment, e, lv.i1 - lv.i0)  # [B, n], >= 1
        torch.div(e, total.index_select(1, lv.segment), out=sigma[:, lv.s0:lv.s1])
        segments.add(q, lv.parent, tau * (top + torch.log(total)))
    return sigma, q[:, 0]


def dilated_entropy_weights(tp: Treeplex, scheme: str = "unit") -> torch.Tensor:
    """Per-infoset weights beta_j [I] (float64) of a dilated entropy, by name (see
    `rules.FTRLConfig`), computed bottom-up over the treeplex levels.

    Example:
        >>> import tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> dilated_entropy_weights(tp, "farina21").tolist()[:3]
        [2.0, 2.0, 2.0]
    """
    if scheme not in WEIGHTS:
        raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {scheme!r}")
    beta = torch.ones(tp.num_infosets, dtype=torch.float64, device=tp.infoset_parent.device)
    if scheme == "unit":
        return beta
    below = torch.zeros(tp.num_sequences, dtype=torch.float64, device=beta.device)  # [S] sum of child weights
    for lv in reversed(tp.levels):
        most = torch.zeros(lv.i1 - lv.i0, dtype=torch.float64, device=beta.device)
        most.scatter_reduce_(0, lv.segment, below[lv.s0:lv.s1], "amax")
        beta[lv.i0:lv.i1] = 2 + 2 * most if scheme == "kroer17" else 1 + most
        below.index_add_(0, lv.parent, beta[lv.i0:lv.i1])
    return beta
