"""The card-removal showdown of the public-tree form: a terminal's counterfactual values in
O(H) a row instead of a dense T0 x T1 product, for games whose private types are sets of
cards (hold'em's 1,326 two-card hands; `games.vector.VectorGame.card_showdown`).

A payoff class k pays W_k[t0, t1] = d0_k(t0) d1_k(t1) [t0, t1 share no card]
(a_k + b_k sign(s(t0) - s(t1))), s the strength on the class's board. Against the other
player's reach y, player 0's value of hand h is

    d0(h) (a (Y - blocked(h)) + b (win(h) - lose(h))),   Y = sum of y d1,

where blocked(h) = C[c1] + C[c2] - y(h) (C[c]: the reach of the hands holding card c; a type of
one card, Rhode Island hold'em's, has blocked(h) = C[c1]), win(h)
the reach of the weaker hands minus those of them that hold c1 or c2, and lose(h) likewise for
the stronger: prefix sums over the hands sorted by strength, and over each card's hands sorted
by strength (Johanson et al., AAMAS 2011, "Accelerating best response calculation in large
extensive games", applied with card removal). Player 1's is the same with b negated.

Example:
    >>> import torch, tensorcfr
    >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
    >>> cg.showdown is not None
    True
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
import torch

from tensorcfr.spaces.scan import gather_scan

NUM_CARDS = 52
# up to this many entries R T_p a call, a one-member ranked kernel's `sums` takes its gathers as
# one from the joined tables (`CardKernel._sums_merged`: 2 kernels a call where they take 3k + 3,
# the tables copied once more: the river spot's CFR+ iteration 14 kernels fewer, 6 MB more of its
# 133). A GPU's small spots are launch-bound; larger calls, where the bytes count more than the
# launches, keep the separate gathers. Not yet timed on a GPU
MERGED_ENTRIES = 1 << 18


@dataclass(frozen=True, eq=False)
class CardShowdown:
    """The factored payoff classes of a card game (see the module docstring): tensors on the
    compiled game's device."""

    hands: tuple[torch.Tensor, torch.Tensor]  # per player [T_p] int64: the type value (hand) of each type
    cards: torch.Tensor  # [H, k] int64: the cards of each hand value (k = 2 in hold'em, 1 in Rhode Island)
    # per player [P, T_p] float64: the factors d0_k, d1_k, one row for the classes that share them
    # (`d_index`): the classes of one run of cards do, so the docs' isomorphic flop spot keeps
    # 1,136 rows, not 183,403 (1 GB)
    d: tuple[torch.Tensor, torch.Tensor]
    ab: torch.Tensor  # [K, 2] float64: (a_k, b_k)
    strength: torch.Tensor  # [G, H] int64: the hands' strength on each board
    board: torch.Tensor  # [K] int64: the board (row of `strength`) of each class
    # a batch of games over one tree and board(s) that differ in their ranges (the deal) or
    # their payoffs: every member's factors, per player [B, K, T_p] and [B, K, 2]; `d` and `ab`
    # above are member 0's. None for one game
    d_batch: tuple[torch.Tensor, torch.Tensor] | None = None
    ab_batch: torch.Tensor | None = None
    # a batch whose members show down on boards of their own (river spots on other boards):
    # every member's strengths [B, G, H]; `strength` above is member 0's. None where all share them
    strength_batch: torch.Tensor | None = None
    # [K] int64: the row of d holding each class's factors (every member's alike); None: a row a class
    d_index: torch.Tensor | None = None

    def rows(self, cls: torch.Tensor) -> torch.Tensor:
        """The rows of `d` holding the factors of classes `cls` (any shape, int64).

        Example:
            >>> import tensorcfr
            >>> sd = tensorcfr.compile("holdem_turn(board=AsKhQsJh, ranks=AKQJT, suits=sh, bets=(1,), cap=0)",
            ...                        form="public").showdown
            >>> bool((sd.rows(torch.arange(len(sd.ab))) < len(sd.d[0])).all())  # fewer rows than classes
            True
        """
        return cls if self.d_index is None else self.d_index[cls]

    def class_factors(self, player: int) -> torch.Tensor:
        """Player `player`'s factors a class, [(B,) K, T_p]: `d` spread over the classes (a copy
        of K rows; the operators read `d` by `rows` instead).

        Example:
            >>> import tensorcfr
            >>> sd = tensorcfr.compile("holdem_turn(board=AsKhQsJh, ranks=AKQJT, suits=sh, bets=(1,), cap=0)",
            ...                        form="public").showdown
            >>> k = len(sd.ab) - 1
            >>> torch.equal(sd.class_factors(0)[k], sd.d[0][sd.rows(torch.tensor(k))])
            True
        """
        d = self.factors()[0][player]
        return d if self.d_index is None else d.index_select(-2, self.d_index)

    def to(self, device) -> "CardShowdown":
        """This showdown on `device`: itself where every array is there already, so that what it
        has made once (its kernels) is not made again."""
        moved = []

        def move(t: torch.Tensor) -> torch.Tensor:
            out = t.to(device)
            moved.append(out is not t)
            return out
        there = self.mapped(move)
        return there if any(moved) else self

    def mapped(self, fn) -> "CardShowdown":
        """This showdown with fn applied to each of its arrays (in tuples too; None stays None):
        moved to a device, or turned into numpy arrays and back to be sent between processes.

        Example:
            >>> sd = CardShowdown(hands=(torch.arange(2), torch.arange(3)), cards=torch.zeros(2, 1),
            ...                   d=(None, None), ab=torch.ones(1, 2), strength=torch.zeros(1, 2), board=torch.zeros(1))
            >>> sent = sd.mapped(lambda t: t.numpy())
            >>> type(sent.hands[1]).__name__, torch.equal(sent.mapped(torch.from_numpy).hands[1], sd.hands[1])
            ('ndarray', True)
        """
        def one(v):
            return tuple(one(x) for x in v) if isinstance(v, tuple) else None if v is None else fn(v)
        return replace(self, **{f.name: one(getattr(self, f.name)) for f in fields(self)})

    @property
    def members(self) -> int:
        """Batch members whose factors this holds (1 for one game)."""
        return 1 if self.ab_batch is None else int(self.ab_batch.shape[0])

    def factors(self) -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
        """(d, ab) as the operator takes them: [P, T_p] and [K, 2], or [B, P, T_p] and [B, K, 2]
        for a batch (class k's factors are row `rows(k)` of d)."""
        return (self.d, self.ab) if self.ab_batch is None else (self.d_batch, self.ab_batch)

    def member(self, b: int) -> "CardShowdown":
        """Batch member b's showdown alone."""
        if self.ab_batch is None:
            return self
        strength = self.strength if self.strength_batch is None else self.strength_batch[b]
        return replace(self, d=(self.d_batch[0][b], self.d_batch[1][b]), ab=self.ab_batch[b], d_batch=None,
                       ab_batch=None, strength=strength, strength_batch=None)

    def members_slice(self, lo: int, hi: int) -> "CardShowdown":
        """Batch members lo:hi as a batch of their own (member lo's factors as `d` and `ab`)."""
        if self.ab_batch is None:
            return self
        d = tuple(x[lo:hi] for x in self.d_batch)
        return replace(self, d=(d[0][0], d[1][0]), ab=self.ab_batch[lo], d_batch=d, ab_batch=self.ab_batch[lo:hi],
                       strength=self.strength if self.strength_batch is None else self.strength_batch[lo],
                       strength_batch=None if self.strength_batch is None else self.strength_batch[lo:hi])

    def strengths(self, g: int) -> torch.Tensor:
        """[H] the hands' strength on board g, or [B, H] per member where the members' boards differ."""
        return self.strength[g] if self.strength_batch is None else self.strength_batch[:, g]


class CardKernel:
    """The prefix-sum tables of one board for one player's hands (`own`) against the other
    player's (`other`), and the kernel that uses them. The other's reach comes by its own types
    [R, T_o], the values go out by the player's [R, T_p]: no scatter into all 1,326 hands.
    Without `strength` (fold terminals, whose value ignores it) only `free` is available.
    Strengths [M, T] (a batch of M members on boards of their own) make tables per member; the
    reach then comes as [M, N, T_o], member m's rows sorted by member m's strengths.

    Example:
        >>> import torch
        >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])  # three hands of four cards
        >>> k = CardKernel(cards, cards, torch.tensor([3, 1, 2]), torch.tensor([3, 1, 2]))
        >>> y = torch.tensor([[0.0, 1.0, 0.0]])  # the opponent holds hand 1 (cards 2, 3)
        >>> k.sums(y)  # (reach beside each hand, weaker minus stronger)
        (tensor([[1., 0., 0.]]), tensor([[1., 0., 0.]]))
    """

    def __init__(self, own: torch.Tensor, other: torch.Tensor, own_strength: torch.Tensor | None = None,
                 other_strength: torch.Tensor | None = None, device: torch.device | None = None):
        device = own.device if device is None else device
        c, oc = own.cpu().numpy(), other.cpu().numpy()  # [T_p, k], [T_o, k] cards, k = 1 or 2
        To, k = len(oc), c.shape[1]
        self.To, self.k = To, k
        t = lambda a: torch.as_tensor(a, dtype=torch.int64, device=device)  # noqa: E731
        # the other's type holding the same cards as each own type (To: none, a zero column)
        key = lambda x: x.min(1) * 64 + x.max(1)  # noqa: E731
        okey, same = key(oc), np.full(len(c), To, dtype=np.int64)
        if To:
            sort = np.argsort(okey, kind="stable")
            pos = np.searchsorted(okey[sort], key(c)).clip(0, To - 1)
            hit = okey[sort][pos] == key(c)
            same[hit] = sort[pos][hit]
        self.cs = [t(c[:, j]) for j in range(k)]  # own types' cards, a column each
        self.same = t(same)
        self.ranked = own_strength is not None
        self.members = 1
        # per card the other's types holding it [52, width], in type order, padded with To (a
        # zero column)
        held = _held_lists(oc)
        width = self.width = held.shape[1]
        # the C loop's tables leave the padding out (`starts`)
        self.held_counts = t(np.count_nonzero(held < To, axis=1))  # [52]
        self.row_entries = max(To + 1, NUM_CARDS * (width + 1))  # of the largest array a row of a call holds
        if not self.ranked:
            # a fold's kernel sums each card's list as it comes: the order does not matter
            self.lists = t(np.concatenate([np.full((NUM_CARDS, 1), To), held], 1).reshape(-1))
            return
        s, os_ = own_strength.cpu().numpy().astype(np.int64), other_strength.cpu().numpy().astype(np.int64)
        s, os_ = s.reshape(-1, len(c)), os_.reshape(-1, To)  # [M, T_p], [M, T_o]: M members' boards
        M = self.members = len(s)
        order = np.argsort(os_, axis=1, kind="stable")  # [M, T_o] the other's types weakest first
        ss = np.take_along_axis(os_, order, 1)
        first = _search_rows(ss, s, "left")  # [M, T_p] where the other's hands tying each start
        last = _search_rows(ss, s, "right")  # and end (exclusive)
        # per card the other's types holding it, weakest first (ties in type order), the padding
        # stronger than any hand so that it sorts last and no search passes it: every card at
        # once (a loop over the 52 cards took the 2,200 kernels of a flop spot's operator 26 s)
        pad = max(int(os_.max(initial=0)), int(s.max(initial=0))) + 1
        strength = np.concatenate([os_, np.full((M, 1), pad, np.int64)], 1)[:, held]  # [M, 52, width]
        srt = np.argsort(strength, axis=2, kind="stable")
        lists = np.take_along_axis(np.broadcast_to(held, (M, NUM_CARDS, width)), srt, 2)
        sh = np.take_along_axis(strength, srt, 2).reshape(M * NUM_CARDS, width)  # a row a (member, card)
        rows = np.arange(M)[:, None, None] * NUM_CARDS + c[None]  # [M, T_p, k] the row of each own card
        at = np.broadcast_to(s[:, :, None], rows.shape)
        cfirst = c * (width + 1) + _search_in_rows(sh, rows, at, "left")  # [M, T_p, k]
        clast = c * (width + 1) + _search_in_rows(sh, rows, at, "right")
        lead = np.full((M, NUM_CARDS, 1), To, dtype=np.int64)
        # one member: index vectors [n], as every gather of a board's rows takes them; several:
        # [M, n], member m's rows gathered by row m
        one = (lambda a: a[0]) if M == 1 else (lambda a: a)  # noqa: E731
        self.order = t(one(np.concatenate([np.full((M, 1), To), order], 1)))
        self.first, self.last = t(one(first)), t(one(last))
        self.lists = t(one(np.concatenate([lead, lists], 2).reshape(M, -1)))  # [(M,) 52 (width + 1)]
        self.cfirst = [t(one(np.ascontiguousarray(cfirst[..., j]))) for j in range(k)]
        self.clast = [t(one(np.ascontiguousarray(clast[..., j]))) for j in range(k)]

    def _free(self, take, padded: torch.Tensor, per_card: torch.Tensor, total: torch.Tensor) -> tuple:
        """(free, and per own card column j the reach of the other's hands holding that card) of
        the reach `padded` (with its zero type T_o), per_card (the reach of the other's hands
        holding each card) and total (all the other's reach), in either layout: by rows
        (`take` = `_take`: [R, T_o + 1], [R, 52], [R, 1] -> [R, T_p]) or transposed (`_take_t`:
        [T_o + 1, R], [52, R], [R] -> [T_p, R])."""
        holding = [take(per_card, c) for c in self.cs]
        free = total - holding[0]
        if self.k == 2:  # less those holding the second card, plus the one hand holding both
            free -= holding[1]
            free += take(padded, self.same)
        return free, holding

    def _margin(self, take, prefix: torch.Tensor, card_prefix: torch.Tensor, total: torch.Tensor,
                holding: list) -> torch.Tensor:
        """Weaker minus stronger (see `sums`) from the exclusive prefix sums by strength and by
        card, in `_free`'s layouts: prefix(first) + prefix(last) - total, less, per own card, the
        hands holding it below and at or below, plus all those holding it."""
        margin = take(prefix, self.first)
        margin += take(prefix, self.last)
        margin -= total
        for held, cf, cl in zip(holding, self.cfirst, self.clast):
            margin -= take(card_prefix, cf)
            margin -= take(card_prefix, cl)
            margin += held
        return margin

    def free(self, y: torch.Tensor) -> torch.Tensor:
        """[R, T_p]: the other's reach y [R, T_o] of the hands sharing no card with each own hand."""
        padded = torch.nn.functional.pad(y, (0, 1))  # [R, T_o + 1]: column T_o is 0
        # each card's reach as the sum of its list, a gather and a sum: index_add_ of each own
        # card column scatters column by column on the CPU (with the showdowns' reach from their
        # prefix sums, a turn spot's payoff work went from 326-338 to 280-288 ms)
        per_card = _take(padded, self.lists).view(y.shape[0], NUM_CARDS, self.width + 1).sum(-1)
        return self._free(_take, padded, per_card, y.sum(-1, keepdim=True))[0]

    def _tables(self, y: torch.Tensor) -> tuple:
        """What `parts` and `sums` both read, of reach y [..., T_o] ([M, N, T_o] for M members):
        (y's leading shape, the gather of a row's index vector (per member where there are
        several), free, total, holding (see `_free`), and the exclusive prefix sums over the other's
        hands by strength [R, T_o + 1] and over each card's hands [R, 52 (width + 1)])."""
        shape = y.shape[:-1]
        if self.members > 1 and (y.dim() != 3 or y.shape[0] != self.members):
            raise ValueError(f"a kernel of {self.members} members takes reach [{self.members}, N, T], got {list(y.shape)}")
        y = y.reshape(-1, y.shape[-1])
        R = y.shape[0]
        take = _take if self.members == 1 else (lambda x, idx: _take_rows(x, idx, self.members))  # noqa: E731
        padded = torch.nn.functional.pad(y, (0, 1))  # [R, T_o + 1]: column T_o is 0
        # exclusive: `order` and `lists` lead with the zero column T_o
        prefix = take(padded, self.order).cumsum_(-1)
        card_prefix = take(padded, self.lists).view(R, NUM_CARDS, self.width + 1).cumsum_(-1)
        # a card's last prefix sum is the reach of all the hands holding it
        total = y.sum(-1, keepdim=True)  # [R, 1]
        free, holding = self._free(take, padded, card_prefix[:, :, -1], total)
        return shape, take, free, total, holding, prefix, card_prefix.view(R, -1)

    def sums(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """For the other player's reach y [R, T_o]: (the reach of the hands sharing no card with
        each own hand, [R, T_p]; that reach weaker minus that stronger, [R, T_p]). `parts`'
        below - above, summed in one array: weaker minus stronger is prefix(first) +
        prefix(last) - total, less, per own card, the hands holding it below and at or below,
        plus all those holding it (fewer passes over [R, T_p]: the turn spot's showdowns, the
        bulk of its iteration, are memory-bound)."""
        if self.members == 1 and self.ranked and y.numel() // y.shape[-1] * len(self.cs[0]) <= MERGED_ENTRIES:
            return self._sums_merged(y)
        shape, take, free, total, holding, prefix, card_prefix = self._tables(y)
        margin = self._margin(take, prefix, card_prefix, total, holding)
        return free.view(*shape, -1), margin.view(*shape, -1)

    def _sums_merged(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """`sums` of a one-member ranked kernel with its 3k + 3 gathers from the three tables
        (the padded reach, the prefix sums by strength and by card) taken as one: the tables
        joined, one gather by a stacked index (`merged_index`), and the same sums of the same
        numbers in the same order as `_free` and `_margin` (bit for bit). Two kernels a call
        where those take 3k + 3 (a small spot's iteration is launch-bound on a GPU)."""
        shape = y.shape[:-1]
        y = y.reshape(-1, y.shape[-1])
        R, k = y.shape[0], self.k
        padded = torch.nn.functional.pad(y, (0, 1))  # [R, T_o + 1]: column T_o is 0
        prefix = _take(padded, self.order).cumsum_(-1)
        card_prefix = _take(padded, self.lists).view(R, NUM_CARDS, self.width + 1).cumsum_(-1)
        total = y.sum(-1, keepdim=True)  # [R, 1]
        table = torch.cat([padded, prefix, card_prefix.view(R, -1)], 1)
        g = _take(table, self.merged_index()).view(R, -1, len(self.cs[0]))  # [R, 3k + 3, T_p]
        held = [g[:, j] for j in range(k)]
        free = total - held[0]
        if k == 2:
            free -= held[1]
            free += g[:, 2]
        margin = g[:, k + 1] + g[:, k + 2]  # (rounded as `_margin`'s first take plus its second)
        margin -= total
        for j in range(k):
            margin -= g[:, k + 3 + 2 * j]
            margin -= g[:, k + 4 + 2 * j]
            margin += held[j]
        return free.view(*shape, -1), margin.view(*shape, -1)

    def merged_index(self) -> torch.Tensor:
        """[(3k + 3) T_p] int64: the columns of `_sums_merged`'s joined tables [R, T_o + 1 | T_o +
        1 | 52 (width + 1)] that its one gather reads, a row of T_p each: each own card's holders
        (its card's last prefix sum); for k = 2 the other's type holding the same cards (for
        k = 1 a slot left to the first card's, unread); the places by strength (first, last);
        then per own card its place among the card's hands below and at or below.

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3]])
            >>> CardKernel(cards, cards, torch.tensor([1, 2]), torch.tensor([1, 2])).merged_index().shape
            torch.Size([18])
        """
        idx = self.__dict__.get("_merged_index")
        if idx is None:
            p0, p1, p2 = 0, self.To + 1, 2 * (self.To + 1)
            w = self.width + 1
            rows = [p2 + c * w + (w - 1) for c in self.cs]
            rows.append(p0 + self.same if self.k == 2 else rows[0])
            rows += [p1 + self.first, p1 + self.last]
            for cf, cl in zip(self.cfirst, self.clast):
                rows += [p2 + cf, p2 + cl]
            idx = self.__dict__["_merged_index"] = torch.cat(rows).contiguous()
        return idx

    # -- the same sums with the reach transposed: y_t [T_o + 1, R] (row T_o zero), a row per type.
    # Every gather is then a copy of whole rows (index_select along dim 0, contiguous and
    # vectorised) where the layout above gathers number by number, and the prefix sums run down
    # the rows, R numbers at a time. Measured on the 2-core CPU, float32, both players' payoff
    # work on the full-range turn spot, the two layouts taking turns in one process (2026-11-26):
    # 220-298 ms (median 233) against 246-259 (256) by rows, and 233-253 (237) against 258-282
    # (270) in a second run, and even (397 against 398) in a third, with the machine slower; the
    # transposes in and out included (`card_values` writes them in passes it makes anyway).
    # Calls of 2^17 or 2^20 entries (`CARD_ENTRIES`) were no faster
    def free_t(self, y_t: torch.Tensor) -> torch.Tensor:
        """`free` transposed: y_t [T_o + 1, R] (row T_o zero) -> [T_p, R].

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
            >>> k = CardKernel(cards, cards)
            >>> k.free_t(torch.tensor([[0.0], [1.0], [0.0], [0.0]])).view(-1).tolist()  # the other holds hand 1
            [1.0, 0.0, 0.0]
        """
        return self._free(_take_t, y_t, *self.card_sums_t(y_t))[0]

    def card_sums_t(self, y_t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(per card the reach of the other's hands holding it [52, R], all their reach [R]) of
        y_t [T_o + 1, R] (row T_o zero), for a kernel without strength.

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
            >>> per_card, total = CardKernel(cards, cards).card_sums_t(torch.tensor([[0.0], [1.0], [0.0], [0.0]]))
            >>> per_card[:4, 0].tolist(), total.tolist()  # hand 1 holds cards 2 and 3
            ([0.0, 0.0, 1.0, 1.0], [1.0])
        """
        # running sums, not .sum(): a reduction across rows rounds a column by where it falls in
        # the vectorised loop, so a batch member would not be its spot alone to the last bit; each
        # hand is in k cards' lists, so the total is the cards' sum over k (exact for k = 1, 2)
        per_card = gather_scan(y_t, self.lists, NUM_CARDS, last=True)  # [52, R]
        return per_card, per_card.cumsum(0)[-1] / self.k

    def prefix_sums_t(self, y_t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The exclusive prefix sums of y_t [T_o + 1, R] (row T_o zero) over the other's hands by
        strength [T_o + 1, R] (the last row: all their reach) and over each card's hands by
        strength [52, width + 1, R] (a card's last: the reach of the hands holding it).

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
            >>> k = CardKernel(cards, cards, torch.tensor([3, 1, 2]), torch.tensor([3, 1, 2]))
            >>> prefix, by_card = k.prefix_sums_t(torch.tensor([[0.0], [1.0], [0.0], [0.0]]))
            >>> prefix[-1].tolist(), by_card[2, -1].tolist()  # all the reach; that of card 2's hands
            ([1.0], [1.0])
        """
        # exclusive: `order` and `lists` lead with the zero row T_o. Gathered and summed in one
        # pass (`spaces.scan`: torch's numbers, 2-3x faster than its index_select and cumsum)
        return gather_scan(y_t, self.order, 1)[0], gather_scan(y_t, self.lists, NUM_CARDS)

    def starts(self) -> torch.Tensor:
        """[53] int64: where each card's list begins in the C loop's tables (`packed_lists`),
        and their length: card c's rows starts[c] to starts[c + 1], its lead zero row then the
        other's hands holding it, without `lists`' padding to the widest card.

        The padding held a row a card for every hand the widest card has more: on the tutorial's
        isomorphic flop spot, 52 x 27 and 52 x 32 rows where the cards' own lists need 620 and
        956, so a river board's card tables (186 terminals) took 1.0 and 1.2 MB instead of 0.5
        and 0.7, and left the 2 MB a core's L2 cache holds less room for the other tables.
        Without the padding that spot's iteration took 878 ms against 974 (medians of 6 blocks of 4, the
        two codes' solvers taking turns in one process, 2 threads, float32, 2026-11-29; the same
        strategies); the full-range turn spot, whose cards are held alike, 282 against 280.

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
            >>> CardKernel(cards, cards).starts()[:5].tolist()  # card 0 in two hands, 1 in one, 2 in two
            [0, 3, 5, 8, 10]
        """
        got = self.__dict__.get("_starts")
        if got is None:
            got = self.__dict__["_starts"] = torch.nn.functional.pad((self.held_counts + 1).cumsum(0), (1, 0))
        return got

    def packed_lists(self, member: int = 0) -> torch.Tensor:
        """[starts()[52]] int64: `lists` (member `member`'s, for a kernel of several) without its
        padding, each card's rows where `starts` says; the C loop's (`card_loop`).

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
            >>> CardKernel(cards, cards).packed_lists()[:8].tolist()  # card 0: lead 3 (zero), hands 0, 2; card 1: 3, 0
            [3, 0, 2, 3, 0, 3, 1, 2]
        """
        made = self.__dict__.setdefault("_packed_lists", {})
        got = made.get(member)
        if got is None:
            lists = self.lists[member] if self.lists.dim() == 2 else self.lists
            got = made[member] = lists[self._packed_rows()].contiguous()
        return got

    def _packed_rows(self) -> torch.Tensor:
        """[starts()[52]]: each packed row's place in the padded layout [52 (width + 1)]."""
        starts, n = self.starts(), self.held_counts + 1
        card = torch.repeat_interleave(torch.arange(NUM_CARDS, device=n.device), n)
        return card * (self.width + 1) + torch.arange(int(starts[-1]), device=n.device) - starts[card]

    def _packed(self, v: torch.Tensor) -> torch.Tensor:
        """A row v of the padded card tables [52 (width + 1), .] as its row in the packed ones: a
        place in the padding reads the card's last sum, which the padding's zero rows leave as
        it was."""
        w = self.width + 1
        card = torch.div(v, w, rounding_mode="floor")
        return self.starts()[card] + torch.minimum(v - card * w, self.held_counts[card])

    def fused_index(self, member: int = 0) -> torch.Tensor:
        """[rows, T_p] int64: the rows of the tables each own type reads, stacked once for the C
        loop (`card_loop`): per own card j (its card's total, its place among the card's hands
        below and at or below; rows of the packed card tables, `starts`), then the other's type
        holding the same cards (k = 2) and its places by strength; without strength, the own
        cards and the same type. A kernel of several members (boards of their own) has one a
        member.

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3]])
            >>> CardKernel(cards, cards).fused_index().tolist()  # own cards 0 and 2, 1 and 3; the same hands
            [[0, 2], [1, 3], [0, 1]]
        """
        made = self.__dict__.setdefault("_fused_index", {})
        idx = made.get(member)
        if idx is None:
            if self.ranked:
                w = self.width + 1
                at = (lambda a: a) if self.members == 1 else (lambda a: a[member])  # noqa: E731
                parts = [self._packed(v) for j in range(self.k)
                         for v in (self.cs[j] * w + (w - 1), at(self.cfirst[j]), at(self.clast[j]))]
                parts += ([self.same] if self.k == 2 else []) + [at(self.first), at(self.last)]
            else:
                parts = self.cs + ([self.same] if self.k == 2 else [])
            idx = made[member] = torch.stack(parts).contiguous()
        return idx

    def sums_t(self, y_t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """`sums` transposed: y_t [T_o + 1, R] (row T_o zero) -> (free, margin) [T_p, R] each
        (one member's kernel).

        Example:
            >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
            >>> k = CardKernel(cards, cards, torch.tensor([3, 1, 2]), torch.tensor([3, 1, 2]))
            >>> [v.view(-1).tolist() for v in k.sums_t(torch.tensor([[0.0], [1.0], [0.0], [0.0]]))]
            [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
        """
        if self.members != 1:
            raise ValueError("sums_t takes one member's kernel")
        prefix, card_prefix = self.prefix_sums_t(y_t)  # the last prefix is the total
        total = prefix[-1]
        free, holding = self._free(_take_t, y_t, card_prefix[:, -1], total)
        card_prefix = card_prefix.view(NUM_CARDS * (self.width + 1), -1)
        return free, self._margin(_take_t, prefix, card_prefix, total, holding)

    def parts(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(free, weaker, stronger) [R, T_p] each: the other's reach y [R, T_o] of the hands
        sharing no card with each own hand, and of those of them weaker and stronger (`sums`).
        A kernel of M members takes y [M, N, T_o] and returns [M, N, T_p] each."""
        shape, take, free, total, holding, prefix, card_prefix = self._tables(y)
        below = take(prefix, self.first)
        above = total - take(prefix, self.last)
        for held, cf, cl in zip(holding, self.cfirst, self.clast):  # the hands below / above that hold the card
            below -= take(card_prefix, cf)
            above -= held - take(card_prefix, cl)
        return tuple(v.view(*shape, -1) for v in (free, below, above))


def _take(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x[:, idx] for x [R, n] and idx [m] (a gather: measured 3x faster than indexing on the CPU)."""
    return torch.gather(x, 1, idx.expand(x.shape[0], -1))


def _take_t(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x[idx] for x [n, R] (the transposed layout) and idx [m]: whole rows copied."""
    return x.index_select(0, idx)


def _take_rows(x: torch.Tensor, idx: torch.Tensor, members: int) -> torch.Tensor:
    """`_take` with an index vector per member: x [M N, n] (member m's rows together), idx [M, k]
    (or [k], every member's) -> [M N, k]."""
    if idx.dim() == 1:
        return _take(x, idx)
    n = x.shape[0] // members
    return torch.gather(x.view(members, n, -1), 2, idx[:, None, :].expand(-1, n, -1)).view(members * n, -1)


def _search_rows(sorted_rows: np.ndarray, queries: np.ndarray, side: str) -> np.ndarray:
    """`np.searchsorted` of each row of queries [M, m] in the same row of sorted_rows [M, n]
    (integers), in one call: row r's values are shifted into a band of their own.

    Example:
        >>> _search_rows(np.array([[1, 2, 3], [5, 6, 7]]), np.array([[2], [7]]), "right").tolist()
        [[2], [3]]
    """
    M, n = sorted_rows.shape
    if not sorted_rows.size or not queries.size:
        return np.zeros(queries.shape, np.int64)
    lo = min(int(sorted_rows.min()), int(queries.min()))
    band = max(int(sorted_rows.max()), int(queries.max())) - lo + 1
    shift = np.arange(M, dtype=np.int64)[:, None] * band - lo
    pos = np.searchsorted((sorted_rows + shift).reshape(-1), (queries + shift).reshape(-1), side=side)
    return pos.reshape(queries.shape) - np.arange(M, dtype=np.int64)[:, None] * n


def _search_in_rows(sorted_rows: np.ndarray, rows: np.ndarray, queries: np.ndarray, side: str) -> np.ndarray:
    """`np.searchsorted` of each query in row `rows` of sorted_rows [R, n] (integers; rows and
    queries of one shape), in one call: row r's values are shifted into a band of their own.

    Example:
        >>> _search_in_rows(np.array([[1, 2, 3], [5, 6, 7]]), np.array([1, 0, 1]), np.array([7, 2, 5]),
        ...                 "right").tolist()
        [3, 2, 1]
    """
    R, n = sorted_rows.shape
    if not sorted_rows.size or not queries.size:
        return np.zeros(queries.shape, np.int64)
    lo = min(int(sorted_rows.min()), int(queries.min()))
    band = max(int(sorted_rows.max()), int(queries.max())) - lo + 1
    flat = (sorted_rows + (np.arange(R, dtype=np.int64)[:, None] * band - lo)).reshape(-1)
    return np.searchsorted(flat, queries + (rows * band - lo), side=side) - rows * n


def _held_lists(cards: np.ndarray) -> np.ndarray:
    """[52, width]: per card the types of `cards` [T, k] holding it, in type order, padded
    with T (width: the most types holding one card, at least 1).

    Example:
        >>> _held_lists(np.array([[0, 1], [1, 2]]))[:4].tolist()
        [[0, 2], [0, 1], [1, 2], [2, 2]]
    """
    T, k = cards.shape
    card, typ = cards.reshape(-1), np.repeat(np.arange(T, dtype=np.int64), k)
    order = np.lexsort((typ, card))  # by card, then type
    card, typ = card[order], typ[order]
    counts = np.bincount(card, minlength=NUM_CARDS)
    out = np.full((NUM_CARDS, max(1, int(counts.max(initial=0)))), T, dtype=np.int64)
    out[card, np.arange(len(card)) - (np.cumsum(counts) - counts)[card]] = typ
    return out


def apart_hands(c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    """[T0, T1] whether hand i of c0 [T0, k] and hand j of c1 [T1, k] (cards) share no card: by
    bit masks of the cards where they fit in 63 bits (4 ms for 1,326 x 1,326 hold'em hands
    against 42 for the comparison of every pair of cards, measured), else by that comparison.

    Example:
        >>> apart_hands(np.array([[0, 1], [2, 3]]), np.array([[1, 4], [5, 6]])).tolist()
        [[False, True], [True, True]]
    """
    if min(c0.min(initial=0), c1.min(initial=0)) >= 0 and max(c0.max(initial=0), c1.max(initial=0)) < 63:
        m0, m1 = ((np.int64(1) << c).sum(1) for c in (c0, c1))  # a hand's cards are distinct: the sum is an or
        return (m0[:, None] & m1[None, :]) == 0
    return ~(c0[:, None, :, None] == c1[None, :, None, :]).any(axis=(2, 3))


class DenseCardKernel:
    """`CardKernel`'s sums as one product with the board's [T_p, T_o] matrices (sharing no card;
    times the sign of the strengths): fewer, larger calls where the types are few (Rhode Island's
    one card), where a product of T_p T_o a row costs less than the prefix sums' dozens of passes.

    Example:
        >>> import torch
        >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])
        >>> k = DenseCardKernel(cards, cards, torch.tensor([3, 1, 2]), torch.tensor([3, 1, 2]))
        >>> k.sums(torch.tensor([[0.0, 1.0, 0.0]]))
        (tensor([[1., 0., 0.]]), tensor([[1., 0., 0.]]))
    """

    def __init__(self, own: torch.Tensor, other: torch.Tensor, own_strength: torch.Tensor | None = None,
                 other_strength: torch.Tensor | None = None):
        apart = torch.as_tensor(apart_hands(own.cpu().numpy(), other.cpu().numpy()), device=own.device)  # [T_p, T_o]
        self.ranked = own_strength is not None
        self.members = 1 if not self.ranked or own_strength.dim() == 1 else own_strength.shape[0]
        rows = [apart.double().expand(self.members, -1, -1)]
        if self.ranked:
            s, os_ = own_strength.reshape(self.members, -1), other_strength.reshape(self.members, -1)
            rows.append(torch.sign(s[:, :, None] - os_[:, None]).double() * apart)
        self.m = torch.cat(rows, 1)  # [M, T_p or 2 T_p, T_o]: M members' boards
        self.Tp = apart.shape[0]
        self.row_entries = max(self.m.shape[1], 1)
        self._cast: dict = {}

    def _product(self, y: torch.Tensor) -> torch.Tensor:
        """y [R, T_o] (or [M, N, T_o] for M members) times each board's matrix."""
        m = self._cast.get(y.dtype)
        if m is None:
            m = self._cast[y.dtype] = self.m.to(y.dtype).transpose(1, 2).contiguous()  # [M, T_o, rows]
        return y @ m[0] if self.members == 1 else torch.bmm(y, m)

    def free(self, y: torch.Tensor) -> torch.Tensor:
        return self._product(y)[..., :self.Tp]

    def sums(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self._product(y)
        return out[..., :self.Tp], out[..., self.Tp:]


# Up to this many pairs of types T0 T1 a card game's kernels are dense products (`DenseCardKernel`).
# Measured on the 2-core CPU, one thread, float32, both players' payoff work: royal Rhode Island
# (20 x 20 one-card types) 140-160 ms against 377-431 with the prefix sums; river spots on
# Ks7d2c9h4s with 151 hands a player 1.1 against 2.7 ms, 469 hands 4.4 against 4.2, full ranges
# (1,081) 18.0 against 7.1 (the prefix sums by rows, before the transposed layout)
DENSE_KERNEL_PAIRS = 300 * 300

# Device types on which a one-member `CardKernel` works on the reach transposed (`sums_t`),
# measured faster on the CPU (see there); CUDA keeps the layout its kernels were measured in
TRANSPOSED_DEVICES = ("cpu",)


def _kernel_class(showdown: CardShowdown):
    t0, t1 = (len(h) for h in showdown.hands)
    return DenseCardKernel if t0 * t1 <= DENSE_KERNEL_PAIRS else CardKernel


def kernels(showdown: CardShowdown, kind=None) -> list[tuple[CardKernel, CardKernel]]:
    """Per board of `showdown`, the kernels of player 0's and player 1's values (`kind`: the
    kernel class, by default dense products for few types, else prefix sums). Made once per
    showdown and kind: the payoff's extent (`class_sums`) and the operator read the same ones
    (a flop spot's 1,099 boards took 1.6 s to make, 2026-11-28)."""
    sd, kind = showdown, kind or _kernel_class(showdown)
    made = sd.__dict__.setdefault("_kernels", {})
    if kind not in made:
        cards, out = [sd.cards[h] for h in sd.hands], []
        for g in range(sd.strength.shape[0]):
            s = [sd.strengths(g)[..., h] for h in sd.hands]  # [(B,) T_p]: per member where boards differ
            out.append(tuple(kind(cards[p], cards[1 - p], s[p], s[1 - p]) for p in (0, 1)))
        made[kind] = out
    return list(made[kind])


def fold_kernels(showdown: CardShowdown) -> tuple[CardKernel, CardKernel]:
    """The kernels of the fold terminals (b = 0) of every board: card removal only."""
    cards, kind = [showdown.cards[h] for h in showdown.hands], _kernel_class(showdown)
    return tuple(kind(cards[p], cards[1 - p]) for p in (0, 1))


def card_values(showdown: CardShowdown, kernel: CardKernel, cls: torch.Tensor, rows: torch.Tensor,
                player: int, d: tuple[torch.Tensor, torch.Tensor] | None = None,
                ab: torch.Tensor | None = None, factors: tuple | None = None,
                riders: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """[B, N, T_p]: player `player`'s counterfactual values (player 1's negated, as -W^T x) at N
    terminals of one board, of classes `cls` [N], against the other player's rows [B, N, T_o],
    computed in the rows' dtype (`d`, `ab`: the showdown's factors already in it, member b's
    for row b where they are batched; `factors`: `terminal_factors` of these terminals, kept by
    the operator, whose d may be one row [(B,) 1, T] for all of them). `riders` (pos [n_r],
    a [(B,) n_r, 1]): folds with the factors of these terminals whose other player's rows are
    those of terminals `pos`, their values a times those terminals' free reach, appended as
    [B, N + n_r, T_p]. A kernel without strength takes fold classes only (b = 0).

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
        >>> sd = cg.showdown
        >>> rows = torch.ones(1, 1, len(sd.hands[1]), dtype=torch.float64)
        >>> card_values(sd, kernels(sd)[0][0], torch.tensor([0]), rows, 0).shape
        torch.Size([1, 1, 10])
    """
    if d is None:
        d, ab = showdown.factors()
    own, other, a, b = factors if factors is not None else terminal_factors(showdown, cls, player, rows.dtype, d, ab)
    n_r = 0 if riders is None else len(riders[0])
    if n_r and own.shape[-2] != 1:  # the riders' values take the group's one row of factors
        raise ValueError("card_values: riders need the terminals' factors as one row (terminal_factors(shared=True))")
    if transposed(kernel, rows.device):
        return _card_values_t(kernel, rows, own, other, a, b, riders)
    y = rows * other  # [B, N, T_o] (rows of one member, B 1, against a batch's factors: B members)
    B, N, To = y.shape
    if kernel.members == 1:
        y = y.view(B * N, To)  # one board for every member: one set of index vectors
    if kernel.ranked:
        free, margin = kernel.sums(y)  # [B N, T_p] each, or [B, N, T_p]
    else:
        free, margin = kernel.free(y), None
    free = free.view(B, N, -1)
    vals = free.new_empty(B, N + n_r, free.shape[-1])
    torch.mul(free, a, out=vals[:, :N])
    if margin is not None:
        # a product, then a sum (not addcmul_, whose fused multiply-add some strides take and
        # others not): a batch member's values stay those of its solve alone, to the last bit
        vals[:, :N] += b * margin.view(B, N, -1)
    if n_r:
        torch.mul(free.index_select(1, riders[0]), riders[1], out=vals[:, N:])
    return vals.mul_(own)


def transposed(kernel, device) -> bool:
    """Whether `card_values` works on the reach transposed (`CardKernel.sums_t`) for `kernel` on
    `device`: a one-member prefix-sum kernel on a device type of `TRANSPOSED_DEVICES`.

    Example:
        >>> cards = torch.tensor([[0, 1], [2, 3]])
        >>> transposed(CardKernel(cards, cards), "cpu"), transposed(DenseCardKernel(cards, cards), "cpu")
        (True, False)
    """
    return isinstance(kernel, CardKernel) and kernel.members == 1 and torch.device(device).type in TRANSPOSED_DEVICES


def _card_values_t(kernel: CardKernel, rows: torch.Tensor, own, other, a, b, riders) -> torch.Tensor:
    """`card_values` with the reach transposed (`CardKernel.sums_t`): the product with the other
    player's factors writes the transpose, and the product with the own factors reads it back."""
    B, N, To = _broadcast3(rows.shape, other.shape)
    y_t = rows.new_empty(To + 1, B * N)  # [T_o + 1, B N]: a column per terminal row, row T_o zero
    y_t[To] = 0
    torch.mul(rows, other, out=y_t[:To].t().view(B, N, To))
    cols = lambda v: v.expand(B, v.shape[-2], 1).reshape(1, -1)  # noqa: E731  ([(B,) n, 1] -> [1, B n])
    if kernel.ranked:
        free, margin = kernel.sums_t(y_t)  # [T_p, B N] each
        v_t = free * cols(a)
        # a product, then a sum: see card_values
        v_t += cols(b) * margin
    else:
        free = kernel.free_t(y_t)
        v_t = free * cols(a)
    Tp = v_t.shape[0]
    n_r = 0 if riders is None else len(riders[0])
    vals = rows.new_empty(B, N + n_r, Tp)
    torch.mul(v_t.t().view(B, N, Tp), own, out=vals[:, :N])
    if n_r:
        ride = free.view(Tp, B, N).index_select(2, riders[0])  # [T_p, B, n_r]
        ride *= riders[1].reshape(-1, n_r)  # a [(B,) n_r, 1]
        torch.mul(ride.permute(1, 2, 0), own, out=vals[:, N:])
    return vals


def _broadcast3(a: torch.Size, b: torch.Size) -> tuple[int, int, int]:
    """`torch.broadcast_shapes` of two shapes of up to 3 dimensions that broadcast, in plain
    Python: 0.6 us a call against torch's 16 us (measured), which a flop spot's iteration makes
    9,620 times.

    Example:
        >>> _broadcast3(torch.Size([1, 5, 3]), torch.Size([4, 1, 3]))
        (4, 5, 3)
    """
    a, b = (1,) * (3 - len(a)) + tuple(a), (1,) * (3 - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def terminal_factors(showdown: CardShowdown, cls: torch.Tensor, player: int, dtype: torch.dtype,
                     d: tuple[torch.Tensor, torch.Tensor] | None = None, ab: torch.Tensor | None = None,
                     shared: bool = False) -> tuple:
    """(own [N, T_p], other [N, T_o], a [N, 1], b [N, 1]) of terminals of classes `cls` [N], for
    `player`'s values in `dtype`: the factors d of both players, and a and b as the player's sums
    take them (player 1's values are -W^T x: -a times the free reach, and b times its own margin,
    whose sign already turns the strengths round). Batched factors ([B, P, ...]) give [B, N, ...].
    `shared`: the classes have the same factors d (one of `factor_sets`), given once, [(B,) 1, T].
    d and ab, where given, are the showdown's (`factors()`): d read by its `rows`."""
    if d is None:
        d, ab = showdown.factors()
    sign = 1.0 if player == 0 else -1.0
    ab = ab.index_select(-2, cls).to(dtype)  # [(B,) N, 2]
    rows = showdown.rows(cls[:1] if shared else cls)
    return (d[player].index_select(-2, rows).to(dtype), d[1 - player].index_select(-2, rows).to(dtype),
            sign * ab[..., :1], ab[..., 1:])


def factor_sets(showdown: CardShowdown) -> torch.Tensor:
    """[K] int64: a number per payoff class, the same for classes whose factors d are equal for
    both players (and every batch member). In hold'em they are the ranges' weights on one chance
    path (a turn spot's 48 river cards and the turn itself: 49 sets of its 12,012 classes), so
    the classes of a set share one row of factors instead of a row each.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
        >>> factor_sets(cg.showdown).unique().tolist()  # one board, one deal: one set
        [0]
    """
    d, _ = showdown.factors()  # per player [(B,) P, T_p] float64: a row for the classes that share it
    K = showdown.ab.shape[-2]
    rows = showdown.rows(torch.arange(K, device=d[0].device))  # [K]
    P = d[0].shape[-2]
    # a hash of each row's factors finds the candidates: their float64 bits times random
    # integers, summed in int64 (exact and in any order, so equal rows hash alike; a float
    # projection rounded equal rows apart), a chunk of rows at a time (no copy of all the
    # factors: a batch of 8 turn spots held 0.9 GB of them a player, a row a class); then each
    # class's row is compared with that of the first class of its set, entry by entry
    g = torch.Generator(device="cpu").manual_seed(0)
    key = torch.zeros(P, dtype=torch.int64, device=d[0].device)
    for x in d:
        x3 = (x if x.dim() == 3 else x[None]).double()  # [B, P, T]
        r = torch.randint(-(1 << 62), 1 << 62, (x3.shape[0], 1, x3.shape[2]), generator=g).to(x.device)
        for lo in range(0, P, 1024):
            key[lo:lo + 1024] += (x3[:, lo:lo + 1024].contiguous().view(torch.int64) * r).sum((0, 2))
    _, first, inverse = np.unique(key[rows].cpu().numpy(), return_index=True, return_inverse=True)
    ids = torch.as_tensor(inverse.reshape(-1), dtype=torch.int64, device=key.device)
    rep = torch.as_tensor(first, dtype=torch.int64, device=key.device)[ids]  # [K] the first class of each set
    pairs = torch.unique(torch.stack([rows, rows[rep]]), dim=1)  # [2, n]: (a class's row, its set's first's)
    pairs = pairs[:, pairs[0] != pairs[1]]
    for x in d:
        for lo in range(0, pairs.shape[1], 1024):
            if not torch.equal(x.index_select(-2, pairs[0, lo:lo + 1024]), x.index_select(-2, pairs[1, lo:lo + 1024])):
                return torch.arange(K, device=key.device)  # a collision: no sharing
    return ids


# entries (members x classes x types) of the arrays `class_totals` holds at once in a batch
TOTALS_ENTRIES = 1 << 19


def class_totals(showdown: CardShowdown, chunk: int = 1024) -> tuple[torch.Tensor, torch.Tensor]:
    """(nonzeros [K] int64, absolute sums [K] float64) of each payoff class's matrix W_k, from
    its factors alone: per hand of player 0, the other player's hands beside it that tie, lose
    and win (`CardKernel.parts`) weighted by |a|, |a + b| and |a - b|. What `sizes()` reports
    for a card game that keeps no dense matrix (the payoff's extent reads the sums alone:
    `class_sums`). Of a batch, [B, K] each,
    its members a slice at a time, each slice's kernels made for its members at once (a
    kernel a member took 1,000 river spots' solver 13.5 s to build).

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
        >>> nz, total = class_totals(cg.showdown)
        >>> int(nz.sum()) == int(cg.payoff_weights[0].count_nonzero())
        True
    """
    return _class_totals_by_slices(showdown, chunk, (False, True))


def class_sums(showdown: CardShowdown, chunk: int = 1024) -> torch.Tensor:
    """`class_totals`' absolute sums alone ([K] float64, or [B, K]): what the payoff's extent
    reads, in half the work (the nonzeros are a pass of their own).

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
        >>> torch.equal(class_sums(cg.showdown), class_totals(cg.showdown)[1])
        True
    """
    return _class_totals_by_slices(showdown, chunk, (True,))[1]


def _class_totals_by_slices(sd: CardShowdown, chunk: int, passes: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    """`_class_totals`, a batch's members a slice at a time."""
    if sd.ab_batch is not None:
        B, K = sd.ab_batch.shape[:2]
        step = max(1, TOTALS_ENTRIES // max(1, K * max(x.shape[-1] for x in sd.d_batch)))
        if step >= B:  # one slice: the showdown itself, whose kernels the operator reads again
            return _class_totals(sd, chunk, passes)
        parts = [_class_totals(sd.members_slice(lo, min(lo + step, B)), chunk, passes) for lo in range(0, B, step)]
        return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])
    return _class_totals(sd, chunk, passes)


def _class_totals(sd: CardShowdown, chunk: int, passes: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    """`class_totals` of one game ([K] each) or of a batch's members at once ([B, K]); `passes`:
    which of the nonzeros (False) and the sums (True) to count (the other stays 0)."""
    d, ab = sd.factors()  # [(B,) P, T_p], [(B,) K, 2]
    nonzeros = torch.zeros(ab.shape[:-1], dtype=torch.int64, device=ab.device)
    sums = torch.zeros(ab.shape[:-1], dtype=torch.float64, device=ab.device)
    a, b = ab[..., 0], ab[..., 1]
    coef = torch.stack([a.abs(), (a + b).abs(), (a - b).abs()], -1)  # [(B,) K, 3]: tie, win, lose
    for g, (kernel, _) in enumerate(kernels(sd, CardKernel)):
        ks = (sd.board == g).nonzero().view(-1)
        for lo in range(0, len(ks), chunk):
            k = ks[lo:lo + chunk]
            r = sd.rows(k)
            for weighted in passes:
                d1 = d[1][..., r, :] if weighted else (d[1][..., r, :] > 0).double()  # [(B,) k, T1]
                d0 = d[0][..., r, :] if weighted else (d[0][..., r, :] > 0).double()
                free, below, above = kernel.parts(d1)  # [(B,) k, T0] each
                c = coef[..., k, :] if weighted else (coef[..., k, :] > 0).double()
                per = (c[..., :1] * (free - below - above) + c[..., 1:2] * below + c[..., 2:] * above) * d0
                if weighted:
                    sums[..., k] = per.sum(-1)
                else:
                    nonzeros[..., k] = per.sum(-1).round().long()
    return nonzeros, sums
