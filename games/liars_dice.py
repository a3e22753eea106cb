"""Liar's Dice with the rules and tree of OpenSpiel's `liars_dice` (its default parameters).

Each player rolls one die with `faces` sides, privately (two chance nodes: player 0's die,
then player 1's). Bids "q-f" (q of 1..2 dice show face f) rise strictly in the order
1-1 < 1-2 < ... < 1-K < 2-1 < ...; after a bid the other player bids higher or calls "Liar".
The highest face is wild: it counts for every face. On "Liar" the bid stands if at least q
dice count for f; then the bidder wins 1, otherwise the caller does. 294,883 histories with
six faces, as in OpenSpiel, so speeds compare on one tree.

Unlike the thesis' Dudo (games/dudo.py): a wild face, +-1 payoffs and one chance node per die.

Example:
    >>> import games
    >>> g = games.make("liars_dice")
    >>> s = g.initial_state()
    >>> for a in ["6", "3", "2-3", "Liar"]:  # the 6 is wild: two dice count for 3
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)
    (1.0, -1.0)
"""

from __future__ import annotations

import numpy as np

from .base import CHANCE, TERMINAL, Game, GameError
from .dudo import DudoVector

LIAR = "Liar"


class LiarsDice(Game):
    """State = (dice rolled so far, bids as rank tuple, called)."""

    public_form = True  # dealt once, then public: tensorcfr/public.py

    dice = (1, 1)

    def __init__(self, faces: int = 6):
        if not isinstance(faces, int) or faces < 2:
            raise GameError(f"liars_dice: faces must be an integer >= 2, got {faces!r}")
        self.faces = faces
        self.name = "liars_dice" if faces == 6 else f"liars_dice(faces={faces})"
        self.bid_names = tuple(f"{q}-{f}" for q in (1, 2) for f in range(1, faces + 1))
        self.num_bids = len(self.bid_names)
        self._rank = {b: r for r, b in enumerate(self.bid_names)}

    def size_hint(self):
        """Two dice rolled one after the other (1 + F chance nodes), then per roll pair every
        strictly rising sequence of the 2F bids and a call after each non-empty one."""
        f = self.faces
        return 1 + f + f * f * (2 ** (2 * f + 1) - 1), True

    def public_size_hint(self):
        """Every strictly rising bid sequence and a call after each non-empty one; a type per face."""
        return 2 ** (self.num_bids + 1) - 1, (self.faces, self.faces)

    def initial_state(self):
        return ((), (), False)

    def player(self, state):
        dice, bids, called = state
        if len(dice) < 2:
            return CHANCE
        return TERMINAL if called else len(bids) % 2

    def chance_outcomes(self, state):
        return [(str(f), 1.0 / self.faces) for f in range(1, self.faces + 1)]

    def legal_actions(self, state):
        bids = state[1]
        return self.bid_names[bids[-1] + 1:] + (LIAR,) if bids else self.bid_names

    def next_state(self, state, action):
        dice, bids, _ = state
        if len(dice) < 2:
            return (dice + (int(action),), bids, False)
        if action == LIAR:
            return (dice, bids, True)
        return (dice, bids + (self._rank[action],), False)

    def payoff(self, loser: int) -> float:
        return -1.0 if loser == 0 else 1.0

    def utilities(self, state):
        dice, bids, _ = state
        q, f = divmod(bids[-1], self.faces)
        shown = sum(d == f + 1 or d == self.faces for d in dice)
        bidder = (len(bids) - 1) % 2
        u = self.payoff(bidder if shown < q + 1 else 1 - bidder)
        return (u, -u)

    def infoset_key(self, state):
        dice, bids, _ = state
        return " ".join([str(dice[len(bids) % 2])] + [self.bid_names[b] for b in bids])

    def describe(self, state, player):
        dice, bids, _ = state
        return f"your die {dice[player]} (a {self.faces} is wild); bids so far: " + \
            (", ".join(self.bid_names[b] for b in bids) or "(none)")

    def vectorized(self):
        return LiarsDiceVector(self)


class LiarsDiceVector(DudoVector):
    """Dudo's vectorised form with one chance node per die, the wild face and OpenSpiel's names
    (hands index the faces: a one-die roll's name is its face, as in Dudo)."""

    def __init__(self, game: LiarsDice):
        super().__init__(game)
        self.actions = game.bid_names + (LIAR,)
        self.num_outcomes = game.faces
        wild = np.zeros_like(self.shows[0])
        wild[:, 1:] = self.shows[0][:, game.faces:game.faces + 1]  # a wild die counts for every face
        wild[:, game.faces] = 0  # ... once, when the bid is on the wild face itself
        self.shows = [self.shows[0] + wild, self.shows[1] + wild]

    def chance(self, s):
        return np.full((len(s), self.game.faces), 1.0 / self.game.faces)

    def next(self, s, a):
        out = s.copy()
        bid = s[:, 1] >= 0
        out[bid] = super().next(s[bid], a[bid])
        first, second = s[:, 0] < 0, (s[:, 0] >= 0) & ~bid
        out[first, 0] = a[first]
        out[second, 1] = a[second]
        return out

    def join(self, bids):
        return " ".join(bids)

    def infoset_names(self, keys):
        hands, bids = np.divmod(keys, 1 << self.game.num_bids)
        return [" ".join([self._names[0][h]] + ([self.bid_string(b)] if b else []))
                for h, b in zip(hands.tolist(), bids.tolist())]
