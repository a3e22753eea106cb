"""The payoff operator of the public-tree form (`tensorcfr.forms.public` has the layout):
counterfactual values per payoff class, one dense [T0, T1] product each.

Example:
    >>> import torch, tensorcfr
    >>> cg = tensorcfr.compile("kuhn", form="public")
    >>> x, y = tensorcfr.Policy.uniform(cg).sequence_form()
    >>> round(cg.operator(torch.float64).value(x, y).item(), 6)  # uniform play: player 0 wins 1/8
    0.125
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

from tensorcfr.operators import card_loop, dense_loop
from tensorcfr.operators.card_loop import group_entries
from tensorcfr.operators.payoff import values_array
from tensorcfr.operators.cards import (DenseCardKernel, card_values, factor_sets, fold_kernels, kernels,
                                       terminal_factors)
from tensorcfr.spaces import native
from tensorcfr.spaces.public import PublicTreeplex, add_rows, adds_in_order, pick_rows, put_rows

if TYPE_CHECKING:
    from tensorcfr.forms.public import PublicCompiledGame

SMALL_CLASS = 64  # payoff classes of fewer terminals share one batched product (per-terminal matrices)
# entries (terminals x types) of the large classes taken in one block by torch's path: one gather
# of the block's rows, one batched product for each run of classes of equal size, one write of
# the values, where each class took three kernels (a GPU's path; the CPU's is `dense_loop`).
# Dudo(4,2,2)'s 18 classes, 64 to 16,384 terminals, in pairs of equal size: 54 kernels a player
# become 11. Past it a class takes its own block, as large classes did alone: the block's rows
# and values are the temporaries, 8 MB each at float64 (counted in `payoff_bytes`)
CLASS_BLOCK_ENTRIES = 1 << 20


# entries of the largest array of a card kernel call, [rows, 52 (width + 1)] per-card prefix
# sums (`CardKernel.row_entries`): 1 MB at float32, so that a call's arrays stay in the caches
# (hold'em's 1,128 hands: 232 rows a call of the folds, 105 of a board's showdowns). A full-range
# turn spot's payoff values for one player (2 cores, float32, 2026-11-26): 229 ms with calls of
# 2.6 million entries (2,311 fold rows a call), 192-195 ms with 262,144, 199-210 ms with half or
# 3/4 of that (more calls). Arrays past 32 MB come from fresh pages of the kernel (glibc maps
# them), which cost more than the sums: on 2026-11-25 an iteration took 4.9 s with each group's
# terminals in one call, 1.8 s with calls of 2.6 million entries. The C loop of a group
# (`card_loop`) likewise: 212-214 ms an iteration with 2^18, 226-235 with 2^17, 246-249 with
# 2^16, 220-226 with 2^19 (the same spot, 2026-11-26)
CARD_ENTRIES = 1 << 18

# Device types on which every card game's groups of one shape (the same terminals' layout under
# each chance path: a turn spot's 48 river cards, royal Rhode Island's 189 boards) are stacked
# into one call (`_stacked`); elsewhere only the dense products' groups (`cards.DenseCardKernel`,
# few types) are. On a GPU each group's call is a dozen kernels of microseconds each: an H100 ran
# royal Rhode Island at 21.9 ms an iteration (2026-11-27), 75 times the bytes-moved floor, with
# 403 groups a player. Stacked, 8 a player, and an iteration's torch operations go from 16,423 to
# 839; the full-range turn spot's 241 groups become 7, its 25,099 operations 1,507
# (`experiments/card_stack.py`, counted on the CPU in CUDA's layout; it times both ways on any
# device). On the CPU (2 threads, float32, 2026-11-27, taking turns) the dense products gain:
# royal Rhode Island 77.1 -> 40.0 ms an iteration, a narrow-range turn spot 4.1 -> 1.1, a flop
# spot's 1,679 groups a player become 19 and 166 -> 30 ms; the prefix sums keep their groups,
# whose arrays stay in the caches (`CARD_ENTRIES`) and which the C loop (`card_loop`) takes (the
# full-range turn stacked: 503 against 138 ms)
STACK_DEVICES = ("cuda",)
# entries of the largest array of a stacked call ([rows, 52 (width + 1)] per-card prefix sums):
# 64 MB at float32
STACK_ENTRIES = 1 << 24

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
    # a card game (`operators.cards`): its showdown and per player its groups of terminals (see
    # `of`: the kernel, [N] the class of each terminal, the other's rows and the own rows as
    # `seq`, `terminal_factors`, the riders: [n_r] the showdown each rides on and a [(B,) n_r, 1],
    # or None; whether no two of its terminals and riders share an own row). The groups hold
    # their factors in the operator's dtype, one row a group: no copy of every class's d
    # [K, T_p] in it (a flop spot's: 0.9 GB at float32)
    cards: tuple | None = None
    # `_card_steps`' runs of groups, made once for each shape of the arrays a call passes
    steps: dict = field(default_factory=dict, init=False, repr=False)

    @staticmethod
    def of(cg: PublicCompiledGame, dtype: torch.dtype, showdown: bool = True,
           stack: bool | None = None) -> "PublicPayoffOperator":
        """The operator of `cg` in `dtype`; `showdown=False` takes the dense matrices of a card
        game (`PublicCompiledGame.showdown`) instead of its card-removal showdown. `stack`: a
        card game's groups of one shape in one call each (`_stacked`): every group (True), none
        (False), or by default every group on the device types of `STACK_DEVICES` (one game, not
        a batch) and the dense products' groups elsewhere (a batch's too, a member at a time, so
        that each member computes what its spot alone does)."""
        if cg.showdown is not None and showdown:  # (a ranked game has no showdown factors)
            sd = cg.showdown
            counts = cg.class_offsets.diff()
            cls = torch.repeat_interleave(torch.arange(len(counts), device=cg.device), counts)  # [Z]
            # per player, groups of terminals (the player's kernel, [N] classes, the other's rows,
            # the own rows, the factors, the riders): per set of factors d (a chance path: the
            # river card of a turn spot), its folds (their values ignore strength), then per
            # board its showdowns. A group's factors d are one row per player, [(B,) 1, T_p],
            # not gathered per terminal: 21 of a turn spot's 296 ms of payoff work went to
            # gathering them (2026-11-26). A fold where the player folded to the other's bet
            # (its other row and factors those of the showdown after a call) rides on that
            # showdown's group: its values are a times the showdown's free reach, not sums of
            # their own (half the folds of a turn spot, each player)
            d, ab = sd.factors()  # [(B,) K, T_p], [(B,) K, 2]: a batch's members' factors
            fold = (ab[..., 1] == 0).reshape(-1, ab.shape[-2]).all(0)[cls]  # b = 0 for every member
            same = factor_sets(sd)[cls]  # [Z]
            board = torch.where(fold, -1, sd.board[cls])
            ks = [(-1, fold_kernels(sd))] + list(enumerate(kernels(sd)))
            groups = ([], [])
            for p in (0, 1):
                rides = _riders(cg.terminal_seq[1 - p], fold, same)  # [Z]
                parts = []  # (kernel, [n] terminals): per set of factors, its folds, then its boards
                for gi, terms in _by_set_and_board(same, board, rides < 0, len(ks)):
                    kernel = ks[gi][1]
                    # a batch's members each take their rows: fewer terminals a call, the same bytes
                    # (not in the C loop, which runs a member at a time: a batch of 8 river spots
                    # solved in 2.09 s with calls of 13 terminals, and in 0.73 to 1.46 s in four runs with 105)
                    per_call = 1 if card_loop.serves(kernel[0], cg.device) else sd.members
                    rows = max(1, CARD_ENTRIES // (kernel[0].row_entries * per_call))
                    parts += [(kernel, part) for part in terms.tensor_split(-(-len(terms) // rows))]  # equal sizes
                for (kernel, part), (riders, at) in zip(parts, _riders_by_part(rides, [q for _, q in parts])):
                    own = torch.cat([part, riders])  # the folds riding on this part's showdowns after it
                    ride = None
                    if len(riders):
                        a_r = terminal_factors(sd, cls[riders], p, dtype, d, ab, shared=True)[2]
                        ride = (at, a_r)
                    own_rows = _rows_of(cg.terminal_seq[p, own])
                    groups[p].append((kernel[p], cls[part], _rows_of(cg.terminal_seq[1 - p, part]), own_rows,
                                      terminal_factors(sd, cls[part], p, dtype, d, ab, shared=True), ride,
                                      len(torch.unique(own_rows[0])) == len(own_rows[0])))
            if stack not in (None, True, False):
                raise ValueError(f"stack must be True, False or None, got {stack!r}")
            if stack is None:  # every group of one game on a GPU, else the dense products' groups
                alone = sd.members == 1 and cg.batch_size == 1
                stack, dense_only = True, not (cg.device.type in STACK_DEVICES and alone)
            else:
                dense_only = False
            if stack:
                board_of = {id(k): g - 1 for g, (_, pair) in enumerate(ks) for k in pair}
                groups = tuple(_stacked(groups[p], sd, p, board_of, dense_only) for p in (0, 1))
            none = _rows_of(cg.terminal_seq[0, :0])
            return PublicPayoffOperator(cg.treeplexes, ((), ()), (), small_seq=(none, none),
                                        small_weights=torch.zeros(0, dtype=dtype, device=cg.device),
                                        distinct=_distinct(cg), cards=(sd, tuple(tuple(g) for g in groups)))
        if cg.ranked:
            counts = cg.class_offsets.diff()
            cls = torch.repeat_interleave(torch.arange(len(counts), device=cg.device), counts)  # [Z]
            none = (), ()
            return PublicPayoffOperator(cg.treeplexes, none, (), small_seq=none,
                                        small_weights=torch.zeros(0, dtype=dtype, device=cg.device),
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

    def cfv(self, player: int, x_other: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Player `player`'s counterfactual values [B, S_p] against x_other [B, S_other] (`out`:
        a [B, S_p] array the result may be written into, as `Operator.cfv` says).

        Writes straight into the result: no copy of x_other with the empty sequence prepended
        and no second [B, S_p] buffer (each is 1.4 GB a player on Dudo(6,2,2) at float32).
        Rows of the empty sequence (public sequence 0, at most a few terminals) go through
        `_rows` and `_add` by hand."""
        other = 1 - player
        sp, so = self.spaces[player], self.spaces[other]
        src = so.rows(x_other)  # [B, M_o, T_o]
        if self.ranked is not None:
            flat = values_array(out, x_other, max(x_other.shape[0], self.ranked.shape[0]), sp.num_sequences, zero=True)
            rows = self._rows(x_other, src, self.ranked_seq[other])  # [B, Z, T]
            vals = _ranked_values(rows, self.ranked, player).to(flat.dtype)
            self._add(flat, sp.rows(flat), self.ranked_seq[player], vals if player == 0 else vals.neg_(),
                      self.distinct[player])
            return flat
        if self.cards is not None:
            sd, groups = self.cards
            # [B, S_p]: a plan of one member (mmd's first) against a batch's factors gives B values
            flat = values_array(out, x_other, max(x_other.shape[0], sd.members), sp.num_sequences)
            out = sp.rows(flat)
            steps, unwritten = self._card_steps(player, src, out)
            if unwritten is None:
                flat.zero_()
            else:  # the loop writes each row it reaches first (`_card_steps`): only the rest made 0
                flat[:, 0] = 0
                out.index_fill_(1, unwritten, 0)
            # one pass a board (a public chance outcome), each over all of that board's terminals:
            # its rows share one set of index tables, so every gather takes one index vector.
            # Stacking the boards with an index row per terminal row was tried and measured
            # slower (a 49-board turn spot: 330 ms an iteration against 54; the river 5.4 against 4.2)
            for step in steps:
                if isinstance(step, card_loop.Groups):  # a run of groups in one compiled call
                    card_loop.add_groups(step, src, out)
                    continue
                kernel, cls, other_rows, own_rows, factors, riders, once = step
                rows = self._rows(x_other, src, other_rows)  # [B, N, T_o]
                if cls.dim() == 2:  # G groups stacked (`_stacked`)
                    vals = _stack_values(sd, kernel, cls, rows, player, factors, riders)
                else:
                    vals = card_values(sd, kernel, cls, rows, player, factors=factors, riders=riders)  # [B, N + riders, T_p]
                self._add(flat, out, own_rows, vals, self.distinct[player])
            return flat
        flat = dense_loop.values(self, player, x_other, out=out)  # every class in one compiled loop, where it serves
        if flat is not None:
            return flat
        b = max(x_other.shape[0], self.small_weights.shape[0])
        flat = values_array(out, x_other, b, sp.num_sequences, zero=True)  # [B, S_p]
        out = sp.rows(flat)  # [B, M_p, T_p] view
        for seq, runs in self._class_blocks():
            rows = self._rows(x_other, src, seq[other])  # [B, n, T_o]: the block's classes, one after another
            if len(runs) == 1:  # one run of classes of one size (one class: a product as before)
                _, g, size, w = runs[0]  # w [B, g, T0, T1]
                r = rows if g == 1 else rows.unflatten(1, (g, size))
                w = w[:, 0] if g == 1 else w
                # player 0: rows @ W^T ([n, T1] x [T1, T0]); player 1: -(rows @ W) ([n, T0] x [T0, T1])
                vals = torch.matmul(r, w.transpose(-1, -2) if player == 0 else w).flatten(1, -2 if g > 1 else 1)
            else:
                vals = rows.new_empty(max(rows.shape[0], runs[0][3].shape[0]), rows.shape[1], sp.types)  # [B, n, T_p]
                for start, g, size, w in runs:  # g classes of `size` terminals: one batched product
                    end = start + g * size
                    torch.matmul(rows[:, start:end].unflatten(1, (g, size)), w.transpose(-1, -2) if player == 0 else w,
                                 out=vals[:, start:end].unflatten(1, (g, size)))  # [B, g, size, T_p]
            self._add(flat, out, seq[player], vals if player == 0 else vals.neg_(), self.distinct[player])
        if self.small_seq[0][0].numel():
            rows = self._rows(x_other, src, self.small_seq[other]).unsqueeze(-1)  # [B, Zs, T_o, 1]
            w = self.small_weights if player == 0 else self.small_weights.transpose(2, 3)  # [B, Zs, T_p, T_o]
            vals = torch.matmul(w, rows).squeeze(-1)  # [B, Zs, T_p]
            self._add(flat, out, self.small_seq[player], vals if player == 0 else vals.neg_(), self.distinct[player])
        return flat

    def _class_blocks(self) -> list:
        """The large classes in blocks of at most `CLASS_BLOCK_ENTRIES` entries (a class past it
        alone), as torch's path takes them: per block, ((rows, empties) per player, as `seq`,
        of its classes one after another) and its runs of classes of one size, (first terminal
        in the block, g classes, terminals a class, [B, g, T0, T1] their matrices). Made once,
        on the first call (before a CUDA graph records one: no host read inside a recording).

        Example:
            >>> import torch, tensorcfr
            >>> op = tensorcfr.compile("liars_dice", form="public").operator(torch.float64)
            >>> [[(start, g, size) for start, g, size, _ in runs] for _, runs in op._class_blocks()][0][:3]
            [(0, 2, 64), (128, 2, 128), (384, 2, 256)]
        """
        got = self.steps.get("class_blocks")
        if got is not None:
            return got
        types = max(sp.types for sp in self.spaces)
        blocks, members, entries = [], [], 0
        for k, (own, _) in enumerate(self.seq[0]):
            if members and entries + len(own) * types > CLASS_BLOCK_ENTRIES:
                blocks.append(members)
                members, entries = [], 0
            members.append(k)
            entries += len(own) * types
        if members:
            blocks.append(members)
        got = []
        for ks in blocks:
            sizes = [len(self.seq[0][k][0]) for k in ks]
            starts = [sum(sizes[:i]) for i in range(len(ks))]
            seq = tuple((torch.cat([self.seq[p][k][0] for k in ks]),
                         torch.cat([self.seq[p][k][1] + s for k, s in zip(ks, starts)])) for p in (0, 1))
            runs, i = [], 0
            while i < len(ks):  # consecutive classes of one size
                j = i
                while j + 1 < len(ks) and sizes[j + 1] == sizes[i]:
                    j += 1
                runs.append((starts[i], j - i + 1, sizes[i], torch.stack([self.weights[k] for k in ks[i:j + 1]], 1)))
                i = j + 1
            got.append((seq, runs))
        self.steps["class_blocks"] = got
        return got

    def _card_steps(self, player: int, src: torch.Tensor, out: torch.Tensor) -> tuple[list, torch.Tensor | None]:
        """Player `player`'s groups of a card game as the steps `cfv` takes on src [B_x, M_o, T_o]
        and out [B, M_p, T_p]: each run of groups that the compiled loop takes, as one
        `card_loop.Groups` (one call a run: 1,936 groups a player on a flop spot, each call with a
        fixed cost of some 45 µs), and the others as they are, for torch's path; and, where the
        loop takes every group, the rows no terminal writes ([k] int64), else None. Made once for
        the arrays' shapes and strides, and kept.

        Where the loop takes every group, each terminal (or rider) that comes first to its row in
        the call writes its values there and the later ones add theirs: out need not be zeroed
        but for the rows no terminal reaches, and the numbers are those of adding into zeros (0 +
        v is v; only a zero's sign may differ). Zeroing a flop spot's values took 14 and 24 ms a
        player (200 and 320 MB at float32), 7% of an iteration's time (cProfile); the iteration gained
        less (the turn spot's 230.5 against 224.1 ms, the flop's within the noise), a first write
        still bringing its line in from memory."""
        key = (player, src.dtype, tuple(src.shape), src.stride(), tuple(out.shape), out.stride(), native.traced())
        steps = self.steps.get(key)
        if steps is not None:
            return steps
        steps, run, writers = [], [], []
        moves = src.shape[1] > 0  # (a player who never moves has no rows)
        put = self.distinct[player]
        for group in self.cards[1][player]:
            kernel, cls, other_rows, own_rows, factors, riders, once = group
            # the group in one compiled loop where it can be (`card_loop`: the same numbers).
            # Where each row takes one value of the group (`once`), adding it in order and
            # `add_rows`' sparse product (a sum of one value, then added) round alike
            loop = None
            if (moves and cls.dim() == 1 and not other_rows[1].numel() and not own_rows[1].numel()
                    and (put or once or adds_in_order(out, own_rows[0]))):
                writes = torch.full(own_rows[0].shape, int(put), dtype=torch.uint8)  # (filled in below)
                loop = group_entries(kernel, src, other_rows[0], out, own_rows[0], factors, riders, writes)
            if loop is not None:
                run.append(loop)
                writers.append((writes, own_rows[0]))
                continue
            if run:
                steps.append(card_loop.Groups.join(run))
                run = []
            steps.append(group)
        if run:
            steps.append(card_loop.Groups.join(run))
        unwritten = None
        if len(steps) == 1 and isinstance(steps[0], card_loop.Groups):  # every group in one call
            seen = torch.zeros(out.shape[1], dtype=torch.bool)
            for writes, rows in writers:  # (in the call's order: a block of hands goes through each in turn)
                if not put:  # (put: no two terminals share a row, each writes its own)
                    _, at = np.unique(rows.numpy(), return_index=True)  # each row's first terminal in the group
                    at = torch.from_numpy(at)
                    writes.zero_()[at] = (~seen[rows[at]]).to(torch.uint8)
                seen[rows] = True
            unwritten = (~seen).nonzero().flatten()
        self.steps[key] = (steps, unwritten)
        return steps, unwritten

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
            # (index_fill_, not vals[:, idx] = 0: on CUDA that assignment makes the 0 a host
            # tensor and copies it over, which a CUDA graph cannot record)
            vals.index_fill_(1, seq[1], 0)
        (put_rows if distinct else add_rows)(out, seq[0], vals)

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x^T A y [B]: player 0's expected payoff (each sequence weighed by the twins it stands
        for, `PublicTreeplex.sequence_weights`)."""
        w = self.spaces[0].sequence_weights(x.dtype)
        return (x * self.cfv(0, y) * (1 if w is None else w)).sum(1)


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


def _stack_values(sd, kernel, cls: torch.Tensor, rows: torch.Tensor, player: int, factors: tuple,
                  riders: tuple | None) -> torch.Tensor:
    """[B, G (N + n_r), T_p]: `card_values` of a stack of G groups of N terminals (`_stacked`;
    cls [G, N]) against the other player's rows [B_x, G N, T_o], a call a member or plan (B is
    1 in a solver's iteration of one game; several plans at once come from evaluations), each
    with its rows [G, N, T_o], its factors [G, ...] and its kernel (a batch on boards of its own
    has one a member), so that each member computes what its spot alone does. The values are in
    the own rows' order: each group's terminals, then its riders."""
    pick = lambda x, b: x if x.dim() < 4 else x[b if x.shape[0] > 1 else 0]  # noqa: E731  (a member's [G, ...])
    batched = (*factors, *((riders[1],) if riders else ()))  # [B, G, ...] where a batch's
    B = max(rows.shape[0], len(kernel) if isinstance(kernel, list) else 1, *(f.shape[0] for f in batched if f.dim() == 4))
    out = []
    for b in range(B):  # batch members, not nodes: a call each
        r = rows[b if rows.shape[0] > 1 else 0]
        k = kernel[b] if isinstance(kernel, list) else kernel
        ride = None if riders is None else (riders[0], pick(riders[1], b))
        v = card_values(sd, k, cls, r.view(*cls.shape, r.shape[-1]), player, factors=tuple(pick(f, b) for f in factors),
                        riders=ride)  # [G, N + n_r, T_p]
        out.append(v.view(1, -1, v.shape[-1]))
    return out[0] if B == 1 else torch.cat(out)


def _stacked(groups: list, sd, player: int, board_of: dict, dense_only: bool = False) -> tuple:
    """`groups` (one player's, as `PublicPayoffOperator.of` makes them) with the groups of one
    shape stacked, at most `STACK_ENTRIES` a call: the same kernel class, number of terminals
    and riders' positions, no terminal on an empty sequence; folds share their kernel, a
    board's showdowns become a member of a kernel of the stack's boards (`board_of`: a kernel's
    board, -1 for the folds). A stack is one group whose classes are [G, N] (G groups of N
    terminals), its factors [G, ...], its rows each group's in turn (riders after their group's
    terminals); `card_values` takes its reach as [G, N, T_o], every group a member. The
    stacked group stands where the first of its groups stood. A batch's factors stack behind
    its member dimension ([B, G, ...]); on boards of their own its kernel is a list, a stacked
    kernel a member. `dense_only`: only the dense products' groups (`DenseCardKernel`).

    Example:
        >>> import torch, tensorcfr
        >>> spot = "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)"
        >>> cg = tensorcfr.compile(spot, form="public")
        >>> [len(PublicPayoffOperator.of(cg, torch.float64, stack=on).cards[1][0]) for on in (False, True)]
        [13, 3]
    """
    def key(g):
        kernel, cls, other_rows, own_rows, factors, riders, once = g
        if (other_rows[1].numel() or own_rows[1].numel() or cls.dim() != 1 or kernel.members not in (1, sd.members)
                or (dense_only and not isinstance(kernel, DenseCardKernel))):
            return None  # alone
        shared = id(kernel) if board_of.get(id(kernel), -1) < 0 else None  # the folds' one kernel
        return (type(kernel), shared, len(cls), None if riders is None else tuple(riders[0].tolist()))
    buckets: dict = {}
    for i, g in enumerate(groups):
        k = key(g)
        buckets.setdefault(i if k is None else k, []).append(g)
    out = []
    for gs in buckets.values():
        kernel, cls = gs[0][0], gs[0][1]
        n_r = 0 if gs[0][5] is None else len(gs[0][5][0])
        per = max(1, STACK_ENTRIES // ((len(cls) + n_r) * kernel.row_entries))
        for lo in range(0, len(gs), per):
            chunk = gs[lo:lo + per]
            out.append(chunk[0] if len(chunk) == 1 else _stack(chunk, sd, player, board_of))
    return tuple(out)


def _stack(chunk: list, sd, player: int, board_of: dict) -> tuple:
    """One group of the groups `chunk` (see `_stacked`)."""
    kernel = chunk[0][0]
    boards = [board_of.get(id(g[0]), -1) for g in chunk]
    if boards[0] >= 0:  # showdowns: a member a board, each with its board's tables
        cards = [sd.cards[h] for h in sd.hands]
        at = torch.tensor(boards, device=sd.strength.device)

        def of(strength):  # the stack's kernel on the boards' strengths [boards, H]
            s = [strength.index_select(0, at)[:, h] for h in sd.hands]  # [G, T_p] a player
            return type(kernel)(cards[player], cards[1 - player], s[player], s[1 - player])
        kernel = of(sd.strength) if sd.strength_batch is None else [of(x) for x in sd.strength_batch]
    cat = lambda i, j: torch.cat([g[i][j] for g in chunk])  # noqa: E731
    # each group's [..., n, x] tensors stacked before their last two dimensions: [(B,) G, n, x]
    stack = lambda ts: torch.stack(ts, ts[0].dim() - 2)  # noqa: E731
    empty = chunk[0][2][1]
    own_rows = (cat(3, 0), empty)
    factors = tuple(stack([g[4][j] for g in chunk]) for j in range(4))  # [(B,) G, 1, T] d, [(B,) G, N, 1] a, b
    riders = None if chunk[0][5] is None else (chunk[0][5][0], stack([g[5][1] for g in chunk]))
    return (kernel, torch.stack([g[1] for g in chunk]), (cat(2, 0), empty), own_rows, factors, riders,
            len(torch.unique(own_rows[0])) == len(own_rows[0]))


def _distinct(cg: "PublicCompiledGame") -> tuple[bool, bool]:
    """Per player, whether its terminals' last public sequences are distinct and none is the
    empty sequence (`PublicPayoffOperator.distinct`)."""
    seq = cg.terminal_seq  # [2, Z]
    return tuple(bool(seq.shape[1] == 0 or (bool((seq[p] > 0).all()) and len(torch.unique(seq[p])) == seq.shape[1]))
                 for p in (0, 1))


def _by_set_and_board(same: torch.Tensor, board: torch.Tensor, keep: torch.Tensor, boards: int):
    """[(kernel index, [n] terminals)]: the terminals `keep` [Z] marks, grouped by set of
    factors (`same` [Z]) and then by board (`board` [Z], -1 for the folds: kernel index board + 1
    of `boards`), in ascending order of each and of the terminals within a group. One sort: a
    mask per set and board cost royal Rhode Island hold'em (thousands of sets) 22 s.

    Example:
        >>> t = torch.tensor
        >>> g = _by_set_and_board(t([0, 1, 0, 0, 1]), t([-1, 0, 1, -1, 0]), t([True] * 5), 3)
        >>> [(k, x.tolist()) for k, x in g]
        [(0, [0, 3]), (2, [2]), (1, [1, 4])]
    """
    terms = keep.nonzero().view(-1)
    key = same[terms] * boards + board[terms] + 1
    key, order = key.sort(stable=True)
    terms = terms[order]
    keys, counts = torch.unique_consecutive(key, return_counts=True)
    return [(k % boards, t) for k, t in zip(keys.tolist(), terms.split(counts.tolist()))]


def _riders_by_part(rides: torch.Tensor, parts: list[torch.Tensor]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per part (`parts`: disjoint [n] showdown terminals), (the folds riding on its showdowns
    (`rides` [Z], `_riders`), in ascending order; each one's showdown's position in the part).

    Example:
        >>> t = torch.tensor
        >>> [(r.tolist(), at.tolist()) for r, at in _riders_by_part(t([-1, -1, -1, 2, 0, 2]), [t([0, 1]), t([2])])]
        [([4], [0]), ([3, 5], [0, 0])]
    """
    if not parts:
        return []
    lens = torch.tensor([len(q) for q in parts], device=rides.device)
    every = torch.cat(parts)
    part_of = torch.full_like(rides, -1)
    part_of[every] = torch.repeat_interleave(torch.arange(len(parts), device=rides.device), lens)
    pos = torch.full_like(rides, -1)
    pos[every] = torch.arange(len(every), device=rides.device) - torch.repeat_interleave(lens.cumsum(0) - lens, lens)
    riding = (rides >= 0).nonzero().view(-1)
    riding = riding[part_of[rides[riding]] >= 0]
    which, order = part_of[rides[riding]].sort(stable=True)
    riding = riding[order]
    split = riding.split(torch.bincount(which, minlength=len(parts)).tolist())
    return [(r, pos[rides[r]]) for r in split]


def _riders(other_seq: torch.Tensor, fold: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
    """[Z] per terminal, a showdown terminal whose other player's public sequence (other_seq [Z])
    and set of factors (same [Z], `cards.factor_sets`) are this fold's, or -1: a fold (fold [Z])
    whose values are then a times that showdown's free reach, by linearity (the same reach of
    the other player against the same factors)."""
    key = other_seq.long() * (int(same.max()) + 1 if len(same) else 1) + same
    show, folds = (~fold).nonzero().view(-1), fold.nonzero().view(-1)
    out = torch.full_like(key, -1)
    if not len(show) or not len(folds):
        return out
    sk, order = key[show].sort()
    pos = torch.searchsorted(sk, key[folds]).clamp_(max=len(sk) - 1)
    hit = sk[pos] == key[folds]
    out[folds[hit]] = show[order[pos[hit]]]
    return out


def _rows_of(seq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(row [n], positions of the empty sequence [n_e]) for public sequences `seq` [n] numbered
    from 1 (0: the empty sequence, given row 0 and fixed by hand)."""
    return (seq - 1).clamp_(min=0).contiguous(), (seq == 0).nonzero().view(-1)
