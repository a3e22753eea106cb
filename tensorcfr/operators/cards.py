"""The card-removal showdown of the public-tree form: a terminal's counterfactual values in
O(H) a row instead of a dense T0 x T1 product, for games whose private types are sets of
cards (hold'em's 1,326 two-card hands; `games.vector.VectorGame.card_showdown`).

A payoff class k pays W_k[t0, t1] = d0_k(t0) d1_k(t1) [t0, t1 share no card]
(a_k + b_k sign(s(t0) - s(t1))), s the strength on the class's board. Against the other
player's reach y, player 0's value of hand h is

    d0(h) (a (Y - blocked(h)) + b (win(h) - lose(h))),   Y = sum of y d1,

where blocked(h) = C[c1] + C[c2] - y(h) (C[c]: the reach of the hands holding card c), win(h)
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

NUM_CARDS = 52


@dataclass(frozen=True, eq=False)
class CardShowdown:
    """The factored payoff classes of a card game (see the module docstring): tensors on the
    compiled game's device."""

    hands: tuple[torch.Tensor, torch.Tensor]  # per player [T_p] int64: the type value (hand) of each type
    cards: torch.Tensor  # [H, 2] int64: the cards of each hand value
    d: tuple[torch.Tensor, torch.Tensor]  # per player [K, T_p] float64: the factors d0_k, d1_k
    ab: torch.Tensor  # [K, 2] float64: (a_k, b_k)
    strength: torch.Tensor  # [G, H] int64: the hands' strength on each board
    board: torch.Tensor  # [K] int64: the board (row of `strength`) of each class

    def to(self, device) -> "CardShowdown":
        moved = {}
        for f in fields(self):
            v = getattr(self, f.name)
            moved[f.name] = tuple(t.to(device) for t in v) if isinstance(v, tuple) else v.to(device)
        return replace(self, **moved)


class CardKernel:
    """The prefix-sum tables of one board and the kernel that uses them.

    Example:
        >>> import torch
        >>> cards = torch.tensor([[0, 1], [2, 3], [0, 2]])  # three hands of four cards
        >>> k = CardKernel(cards, torch.tensor([3, 1, 2]), torch.device("cpu"))
        >>> y = torch.tensor([[0.0, 1.0, 0.0]])  # the opponent holds hand 1 (cards 2, 3)
        >>> k.sums(y, torch.tensor([0, 1, 2]))  # (reach beside each hand, weaker minus stronger)
        (tensor([[1., 0., 0.]]), tensor([[1., 0., 0.]]))
    """

    def __init__(self, cards: torch.Tensor, strength: torch.Tensor, device: torch.device):
        c = cards.cpu().numpy()
        s = strength.cpu().numpy().astype(np.int64)
        H = len(s)
        self.H = H
        order = np.argsort(s, kind="stable")  # [H] hands weakest first
        ss = s[order]
        first = np.searchsorted(ss, s, side="left")  # [H] where each hand's tie group starts
        last = np.searchsorted(ss, s, side="right")  # and ends (exclusive)
        # per card the hands holding it, weakest first, padded with H (an always-empty column)
        held = [np.flatnonzero((c == card).any(axis=1)) for card in range(NUM_CARDS)]
        width = max(1, max(len(h) for h in held))
        lists = np.full((NUM_CARDS, width), H, dtype=np.int64)
        cfirst = np.zeros((H, 2), np.int64)
        clast = np.zeros((H, 2), np.int64)
        for card, h in enumerate(held):  # compile time: 52 cards
            if not len(h):
                continue
            h = h[np.argsort(s[h], kind="stable")]
            lists[card, :len(h)] = h
            sh = s[h]
            for j in (0, 1):
                mine = np.flatnonzero(c[:, j] == card)
                cfirst[mine, j] = card * (width + 1) + np.searchsorted(sh, s[mine], side="left")
                clast[mine, j] = card * (width + 1) + np.searchsorted(sh, s[mine], side="right")
        t = lambda a: torch.as_tensor(a, dtype=torch.int64, device=device)  # noqa: E731
        self.cards, self.order, self.first, self.last = t(c), t(order), t(first), t(last)
        self.lists, self.cfirst, self.clast, self.width = t(lists.reshape(-1)), t(cfirst), t(clast), width

    def sums(self, y: torch.Tensor, own: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """For the other player's reach y [R, H] (float64, by hand value) and the hands `own`
        [T] to value: (the reach of the hands sharing no card with each, [R, T]; that reach
        weaker minus that stronger, [R, T])."""
        free, below, above = self.parts(y, own)
        return free, below - above

    def parts(self, y: torch.Tensor, own: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(free, weaker, stronger) [R, T] each: the reach y of the hands sharing no card with
        each hand of `own`, and of those of them weaker and stronger (`sums`)."""
        R = y.shape[0]
        total = y.sum(-1, keepdim=True)  # [R, 1]
        per_card = y.new_zeros(R, NUM_CARDS)  # [R, 52] reach of the hands holding each card
        per_card.index_add_(1, self.cards[:, 0], y).index_add_(1, self.cards[:, 1], y)
        c0, c1 = self.cards[own, 0], self.cards[own, 1]
        free = total - per_card[:, c0] - per_card[:, c1] + y[:, own]  # [R, T]
        prefix = torch.nn.functional.pad(y[:, self.order].cumsum(-1), (1, 0))  # [R, H + 1]
        below = prefix[:, self.first[own]]
        above = total - prefix[:, self.last[own]]
        padded = torch.nn.functional.pad(y, (0, 1))  # [R, H + 1]: column H is 0
        card_prefix = torch.nn.functional.pad(padded[:, self.lists].view(R, NUM_CARDS, self.width).cumsum(-1),
                                              (1, 0)).view(R, -1)  # [R, 52 (width + 1)]
        for j, cj in ((0, c0), (1, c1)):  # the hands below / above that hold the card cj
            below = below - card_prefix[:, self.cfirst[own, j]]
            above = above - (per_card[:, cj] - card_prefix[:, self.clast[own, j]])
        return free, below, above


def kernels(showdown: CardShowdown) -> list[CardKernel]:
    """One `CardKernel` per board of `showdown`."""
    return [CardKernel(showdown.cards, showdown.strength[g], showdown.cards.device)
            for g in range(showdown.strength.shape[0])]


def card_values(showdown: CardShowdown, kernel: CardKernel, cls: torch.Tensor, rows: torch.Tensor,
                player: int) -> torch.Tensor:
    """[B, N, T_p]: player `player`'s counterfactual values (player 1's negated, as -W^T x) at N
    terminals of one board, of classes `cls` [N], against the other player's rows [B, N, T_o].

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
        >>> sd = cg.showdown
        >>> rows = torch.ones(1, 1, len(sd.hands[1]), dtype=torch.float64)
        >>> card_values(sd, kernels(sd)[0], torch.tensor([0]), rows, 0).shape
        torch.Size([1, 1, 10])
    """
    other = 1 - player
    B, N, To = rows.shape
    z = rows.double() * showdown.d[other][cls]  # [B, N, T_o]
    y = z.new_zeros(B * N, kernel.H)
    y[:, showdown.hands[other]] = z.reshape(B * N, To)
    free, margin = kernel.sums(y, showdown.hands[player])  # [B N, T_p] each
    a, b = showdown.ab[cls, 0].repeat(B)[:, None], showdown.ab[cls, 1].repeat(B)[:, None]  # [B N, 1]
    vals = a * free + (b if player == 0 else -b) * margin
    vals = vals.view(B, N, -1) * showdown.d[player][cls]
    return vals if player == 0 else vals.neg_()


def class_totals(showdown: CardShowdown, chunk: int = 1024) -> tuple[torch.Tensor, torch.Tensor]:
    """(nonzeros [K] int64, absolute sums [K] float64) of each payoff class's matrix W_k, from
    its factors alone: per hand of player 0, the other player's hands beside it that tie, lose
    and win (`CardKernel.parts`) weighted by |a|, |a + b| and |a - b|. What `sizes()` and the
    payoff's extent report for a card game that keeps no dense matrix.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
        >>> nz, total = class_totals(cg.showdown)
        >>> int(nz.sum()) == int(cg.payoff_weights[0].count_nonzero())
        True
    """
    sd = showdown
    K = sd.ab.shape[0]
    nonzeros = torch.zeros(K, dtype=torch.int64, device=sd.ab.device)
    sums = torch.zeros(K, dtype=torch.float64, device=sd.ab.device)
    a, b = sd.ab[:, 0], sd.ab[:, 1]
    coef = torch.stack([a.abs(), (a + b).abs(), (a - b).abs()], 1)  # [K, 3]: tie, win, lose
    for g, kernel in enumerate(kernels(sd)):
        ks = (sd.board == g).nonzero().view(-1)
        for lo in range(0, len(ks), chunk):
            k = ks[lo:lo + chunk]
            for weighted in (False, True):
                d1 = sd.d[1][k] if weighted else (sd.d[1][k] > 0).double()  # [k, T1]
                d0 = sd.d[0][k] if weighted else (sd.d[0][k] > 0).double()
                y = d1.new_zeros(len(k), kernel.H)
                y[:, sd.hands[1]] = d1
                free, below, above = kernel.parts(y, sd.hands[0])  # [k, T0] each
                c = coef[k] if weighted else (coef[k] > 0).double()
                per = (c[:, :1] * (free - below - above) + c[:, 1:2] * below + c[:, 2:] * above) * d0
                if weighted:
                    sums[k] = per.sum(1)
                else:
                    nonzeros[k] = per.sum(1).round().long()
    return nonzeros, sums
