"""Liar's Dice with the rules and tree of OpenSpiel's `liars_dice`.

Each player rolls `numdice` dice with `faces` sides, privately, one chance node per die:
player 0's dice first, then player 1's (OpenSpiel's `numdice` and `dice_sides`). A player
sees their own dice as a sorted multiset. Bids "q-f" (q of 1..2·numdice dice show face f)
rise strictly in the order 1-1 < 1-2 < ... < 1-K < 2-1 < ...; after a bid the other player
bids higher or calls "Liar". The highest face is wild: it counts for every face. On "Liar"
the bid stands if at least q dice count for f; then the bidder wins 1, otherwise the caller
does. With one die each and six faces (the default, OpenSpiel's) the tree has 294,883
histories, so speeds compare on one tree; with two dice each and three faces, 663,511.

Unlike the thesis' Dudo (games/dudo.py): a wild face, +-1 payoffs and one chance node per die.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("liars_dice")
    >>> s = g.initial_state()
    >>> for a in ["6", "3", "2-3", "Liar"]:  # the 6 is wild: two dice count for 3
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)
    (1.0, -1.0)
    >>> g = games.make("liars_dice(numdice=2, faces=3)")
    >>> s = g.initial_state()
    >>> for a in ["2", "1", "3", "3", "3-2"]:
    ...     s = g.next_state(s, a)
    >>> g.infoset_key(s)  # player 1 sees its dice sorted, and the bid
    '33 3-2'
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np

from .base import CHANCE, PAST_ANY_LIMIT, TERMINAL, Game, GameError
from .dudo import COUNTED_BIDS, DudoVector

LIAR = "Liar"


class LiarsDice(Game):
    """State = (dice rolled so far in deal order, bids as rank tuple, called)."""

    public_form = True  # dealt once, then public: tensorcfr/public.py

    def __init__(self, faces: int = 6, numdice: int = 1):
        for what, v, lo in (("faces", faces, 2), ("numdice", numdice, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise GameError(f"liars_dice: {what} must be an integer >= {lo}, got {v!r}")
        self.faces, self.numdice = faces, numdice
        self.dice = (numdice, numdice)
        params = [f"faces={faces}"] * (faces != 6) + [f"numdice={numdice}"] * (numdice != 1)
        self.name = f"liars_dice({','.join(params)})" if params else "liars_dice"
        self.num_bids = 2 * numdice * faces

    @functools.cached_property
    def bid_names(self) -> tuple[str, ...]:
        # made on first use: liars_dice(faces=10**30) has that many bids, which a size check refuses first
        return tuple(f"{q}-{f}" for q in range(1, 2 * self.numdice + 1) for f in range(1, self.faces + 1))

    @functools.cached_property
    def _rank(self) -> dict[str, int]:
        return {b: r for r, b in enumerate(self.bid_names)}

    def openspiel_twin(self):
        return f"liars_dice(numdice={self.numdice},dice_sides={self.faces})"

    def size_hint(self):
        """The dice rolled one at a time (1 + F + ... + F^(2n-1) chance nodes), then per roll
        every strictly rising sequence of the bids and a call after each non-empty one."""
        f, n = self.faces, 2 * self.numdice
        if self.num_bids > COUNTED_BIDS:
            return PAST_ANY_LIMIT, False
        return sum(f ** k for k in range(n)) + f ** n * (2 ** (self.num_bids + 1) - 1), True

    def public_size_hint(self):
        """Every strictly rising bid sequence and a call after each non-empty one; a type per
        multiset of one player's dice."""
        if self.num_bids > COUNTED_BIDS:
            return PAST_ANY_LIMIT, (1, 1)
        types = comb(self.faces + self.numdice - 1, self.numdice)  # the multisets of one player's dice
        return 2 ** (self.num_bids + 1) - 1, (types, types)

    def initial_state(self):
        return ((), (), False)

    def player(self, state):
        dice, bids, called = state
        if len(dice) < 2 * self.numdice:
            return CHANCE
        return TERMINAL if called else len(bids) % 2

    def chance_outcomes(self, state):
        return [(str(f), 1.0 / self.faces) for f in range(1, self.faces + 1)]

    def legal_actions(self, state):
        bids = state[1]
        return self.bid_names[bids[-1] + 1:] + (LIAR,) if bids else self.bid_names

    def next_state(self, state, action):
        dice, bids, _ = state
        if len(dice) < 2 * self.numdice:
            return (dice + (int(action),), bids, False)
        if action == LIAR:
            return (dice, bids, True)
        return (dice, bids + (self._rank[action],), False)

    def payoff(self, loser: int) -> float:
        return -1.0 if loser == 0 else 1.0

    def hand(self, dice: tuple[int, ...], player: int) -> tuple[int, ...]:
        """Player `player`'s dice, sorted (what the player sees)."""
        n = self.numdice
        return tuple(sorted(dice[player * n:(player + 1) * n]))

    def utilities(self, state):
        dice, bids, _ = state
        q, f = divmod(bids[-1], self.faces)
        shown = sum(d == f + 1 or d == self.faces for d in dice)
        bidder = (len(bids) - 1) % 2
        u = self.payoff(bidder if shown < q + 1 else 1 - bidder)
        return (u, -u)

    def infoset_key(self, state):
        dice, bids, _ = state
        own = "".join(map(str, self.hand(dice, len(bids) % 2)))
        return " ".join([own] + [self.bid_names[b] for b in bids])

    def describe(self, state, player):
        dice, bids, _ = state
        mine = self.hand(dice, player)
        return (f"your {'die' if len(mine) == 1 else 'dice'} {' '.join(map(str, mine))} (a {self.faces} is wild); "
                "bids so far: " + (", ".join(self.bid_names[b] for b in bids) or "(none)"))

    def vectorized(self):
        return LiarsDiceVector(self)


class LiarsDiceVector(DudoVector):
    """Dudo's vectorised form with one chance node per die, the wild face and OpenSpiel's names.
    State row = Dudo's (hand 0, hand 1, bids, last bid, called) and the dice dealt so far; a
    hand holds the faces dealt to it as a base-F number while its dice fall, and the index of
    their multiset (`multisets`, Dudo's hand numbering) once the last one has."""

    width = 6

    def __init__(self, game: LiarsDice):
        super().__init__(game)
        self.actions = game.bid_names + (LIAR,)
        self.num_outcomes = f = game.faces
        self.n = n = game.numdice
        wild = np.zeros_like(self.shows[0])
        wild[:, 1:] = self.shows[0][:, f:f + 1]  # a wild die counts for every face
        wild[:, f] = 0  # ... once, when the bid is on the wild face itself
        self.shows = [self.shows[0] + wild, self.shows[1] + wild]
        # [F^n]: the multiset index of each ordered roll (first die most significant)
        index = {roll: i for i, roll in enumerate(self.rolls[0])}
        rolls = np.indices((f,) * n).reshape(n, -1).T + 1  # [F^n, n] faces in deal order
        self.to_hand = np.array([index[tuple(sorted(r))] for r in rolls.tolist()], dtype=np.int64)

    def initial(self):
        return np.array([[0, 0, 0, -1, 0, 0]], dtype=np.int64)

    def player(self, s):
        return np.where(s[:, 5] < 2 * self.n, CHANCE, np.where(s[:, 4] > 0, TERMINAL, self.mover(s)))

    def chance(self, s):
        return np.full((len(s), self.num_outcomes), 1.0 / self.num_outcomes)

    def next(self, s, a):
        out = s.copy()
        deal = s[:, 5] < 2 * self.n
        out[~deal] = super().next(s[~deal], a[~deal])
        k = s[deal, 5]
        col = (k >= self.n).astype(np.int64)  # whose die falls
        rows = np.flatnonzero(deal)
        out[rows, col] = s[rows, col] * self.num_outcomes + a[deal]
        last = (k % self.n) == self.n - 1  # that player's last die: the ordered roll becomes its multiset
        out[rows[last], col[last]] = self.to_hand[out[rows[last], col[last]]]
        out[rows, 5] = k + 1
        return out

    def join(self, bids):
        return " ".join(bids)

    def infoset_names(self, keys):
        hands, bids = np.divmod(keys, 1 << self.game.num_bids)
        return [" ".join([self._names[0][h]] + ([self.bid_string(b)] if b else []))
                for h, b in zip(hands.tolist(), bids.tolist())]
