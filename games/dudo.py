"""Dudo(K, D1, D2), the thesis' one-round Liar's Dice.

Rules (../shared/reference/games.md): player 1 rolls D1 dice and player 2 rolls D2 dice with
K faces, privately (one chance node deals the pair of multisets with multinomial
probabilities). Bids (q, f), 1 <= q <= D1+D2, 1 <= f <= K, ranked (q-1) K + (f-1); no wild
faces. Player 1 opens with a bid; then a player bids strictly higher or calls "dudo". On
dudo with last bid (q, f), n = dice showing f in both hands: n < q, the bidder loses a die;
otherwise (exact included) the caller does.

The payoff is the value of the continuation game: the loser bids first in the next round
with one die fewer. With V(a, b) the value of Dudo(K, a, b) for its first bidder, V(0, b) =
-1 and V(a, 0) = +1; player 1 receives V(D1-1, D2) when it loses the die and -V(D2-1, D1)
when player 2 does. The game takes V as data: `values`, a mapping (a, b) -> V(a, b) for games
with dice on both sides, read when a payoff is first needed (so a lazy mapping can solve on
demand). This package knows nothing of solvers: `Dudo(...)` without values can only be played where no
such value is needed; `games.make("dudo(...)")` uses the factory that tensorcfr registers
when imported (`tensorcfr.run.continuation.dudo_game`), whose mapping solves the smaller games
first and caches their values.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("dudo(4,1,1)")
    >>> s = g.next_state(g.initial_state(), "2|3")
    >>> s = g.next_state(g.next_state(s, "1x3"), "dudo")
    >>> g.utilities(s)  # one 3 shows and one was bid: the caller (player 2) loses
    (1.0, -1.0)
"""

from __future__ import annotations

import functools
from itertools import combinations_with_replacement
from math import comb, factorial
from typing import Callable, Mapping

import numpy as np

from .base import CHANCE, PAST_ANY_LIMIT, TERMINAL, Game, GameError
from .vector import VectorGame, popcount

DUDO = "dudo"
# bids past which a closed-form size is not worked out: 2^10001 bid sequences (3,011 digits)
# alone pass any limit (`PAST_ANY_LIMIT`)
COUNTED_BIDS = 10_000


def multisets(faces: int, dice: int) -> list[tuple[tuple[int, ...], float]]:
    """Every roll of `dice` dice as a sorted tuple, with its multinomial probability."""
    out = []
    for roll in combinations_with_replacement(range(1, faces + 1), dice):
        ways = factorial(dice)
        for f in set(roll):
            ways //= factorial(roll.count(f))
        out.append((roll, ways / faces ** dice))
    return out


class Dudo(Game):
    """Dudo(faces, dice1, dice2). State = (hands or None, bids as rank tuple, called)."""

    public_form = True  # dealt once, then public: tensorcfr/public.py

    def __init__(self, faces: int = 4, dice1: int = 1, dice2: int = 1,
                 values: Mapping[tuple[int, int], float] | None = None,
                 continuation: Callable[[int, int], float] | None = None):
        for what, v, lo in (("faces", faces, 2), ("dice1", dice1, 1), ("dice2", dice2, 1)):
            if not isinstance(v, int) or v < lo:
                raise GameError(f"dudo: {what} must be an integer >= {lo}, got {v!r}")
        if values is not None and (not hasattr(values, "__getitem__") or isinstance(values, (str, bytes))):
            raise GameError(f"dudo: values must be a mapping {{(a, b): V(a, b)}}, got {values!r}")
        if continuation is not None and not callable(continuation):
            raise GameError(f"dudo: continuation must be a function (a, b) -> V(a, b), got {continuation!r}")
        self.faces, self.dice = faces, (dice1, dice2)
        self.name = f"dudo({faces},{dice1},{dice2})"
        self.num_bids = faces * (dice1 + dice2)
        self._values = values
        self._continuation = continuation  # the older spelling: a function (a, b) -> V(a, b)
        self._payoff = {}  # loser -> player 1's payoff, filled on first use

    @functools.cached_property
    def bid_names(self) -> tuple[str, ...]:
        # made on first use: dudo(10**30) has that many bids, which a size check refuses first
        d = self.dice[0] + self.dice[1]
        return tuple(f"{q}x{f}" for q in range(1, d + 1) for f in range(1, self.faces + 1))

    @functools.cached_property
    def _rank(self) -> dict[str, int]:
        return {name: r for r, name in enumerate(self.bid_names)}

    def value(self, a: int, b: int) -> float:
        """V(a, b): the first bidder's value of Dudo(faces, a, b)."""
        if a == 0:
            return -1.0
        if b == 0:
            return 1.0
        if self._values is not None:
            return float(self._values[(a, b)])
        if self._continuation is not None:
            return float(self._continuation(a, b))
        raise GameError(f"{self.name}: payoffs need the value of dudo({self.faces},{a},{b}); pass "
                        "values={(a, b): V, ...}, or build it with games.make: tensorcfr's factory solves the "
                        "smaller games")

    def payoff(self, loser: int) -> float:
        """Player 1's payoff when `loser` (0 or 1) loses the die."""
        if loser not in self._payoff:
            d1, d2 = self.dice
            self._payoff[loser] = self.value(d1 - 1, d2) if loser == 0 else -self.value(d2 - 1, d1)
        return self._payoff[loser]

    @functools.cached_property
    def _deals(self) -> list[tuple[str, float]]:
        # made on first use: dudo(100,5,5) has 8e15 deals, which a size check refuses first
        p1, p2 = multisets(self.faces, self.dice[0]), multisets(self.faces, self.dice[1])
        return [(f"{''.join(map(str, a))}|{''.join(map(str, b))}", pa * pb) for a, pa in p1 for b, pb in p2]

    def size_hint(self):
        """The deal, then per deal every strictly rising sequence of the B bids (2^B of them,
        the empty one included) and a call after each non-empty one: 1 + deals (2^(B+1) - 1)."""
        if self.num_bids > COUNTED_BIDS:
            return PAST_ANY_LIMIT, False
        deals = comb(self.faces + self.dice[0] - 1, self.dice[0]) * comb(self.faces + self.dice[1] - 1, self.dice[1])
        return 1 + deals * (2 ** (self.num_bids + 1) - 1), True

    def public_size_hint(self):
        """Every strictly rising bid sequence and a call after each non-empty one; a type per roll."""
        if self.num_bids > COUNTED_BIDS:
            return PAST_ANY_LIMIT, (1, 1)
        types = tuple(comb(self.faces + d - 1, d) for d in self.dice)
        return 2 ** (self.num_bids + 1) - 1, types

    def cache_token(self):
        """The payoffs, which come from the continuation values: a compiled copy on disk made
        with other values is not this game."""
        return (self.payoff(0), self.payoff(1))

    def initial_state(self):
        return (None, (), False)

    def player(self, state):
        hands, bids, called = state
        if hands is None:
            return CHANCE
        return TERMINAL if called else len(bids) % 2

    def chance_outcomes(self, state):
        return self._deals

    def legal_actions(self, state):
        bids = state[1]
        if not bids:
            return self.bid_names
        return self.bid_names[bids[-1] + 1:] + (DUDO,)

    def next_state(self, state, action):
        hands, bids, _ = state
        if hands is None:
            a, b = action.split("|")
            return ((tuple(map(int, a)), tuple(map(int, b))), bids, False)
        if action == DUDO:
            return (hands, bids, True)
        return (hands, bids + (self._rank[action],), False)

    def utilities(self, state):
        hands, bids, _ = state
        q, f = divmod(bids[-1], self.faces)
        q, f = q + 1, f + 1
        shown = hands[0].count(f) + hands[1].count(f)
        bidder = (len(bids) - 1) % 2
        loser = bidder if shown < q else 1 - bidder
        u = self.payoff(loser)
        return (u, -u)

    def infoset_key(self, state):
        hands, bids, _ = state
        me = len(bids) % 2
        return f"{''.join(map(str, hands[me]))}|{','.join(self.bid_names[b] for b in bids)}"

    def describe(self, state, player):
        hands, bids, _ = state
        return (f"your dice {hands[player]}; bids so far: "
                f"{', '.join(self.bid_names[b] for b in bids) or '(none)'}")

    def vectorized(self):
        return DudoVector(self)


class DudoVector(VectorGame):
    """The vectorised form of Dudo. State row = (hand 0, hand 1, bids, last bid, called):
    hands index `multisets` (-1 until dealt), bids is the set of bid ranks made so far as a
    bit set (bids only rise, so the set is the sequence), last bid -1 before the first."""

    width = 5
    public_hands = (0, 1)  # the rolls; the bids are public

    def __init__(self, game: Dudo):
        self.game, self.name = game, game.name
        self.actions = game.bid_names + (DUDO,)
        k = game.faces
        rolls = [[r for r, _ in multisets(k, d)] for d in game.dice]
        self.rolls = rolls
        # [hands, faces + 1]: dice of each hand showing each face (column 0 unused)
        self.shows = [np.array([[r.count(f) for f in range(k + 1)] for r in rs], dtype=np.int64) for rs in rolls]
        probs = [np.array([p for _, p in multisets(k, d)]) for d in game.dice]
        self._deal = np.outer(*probs).reshape(1, -1)  # [1, C]: pairs of hands, player 0's major
        self.num_outcomes = self._deal.shape[1]
        self._names = [["".join(map(str, r)) for r in rs] for rs in rolls]
        self._bids: dict[int, str] = {}

    def initial(self):
        return np.array([[-1, -1, 0, -1, 0]], dtype=np.int64)

    def mover(self, s):
        return popcount(s[:, 2]) % 2

    def player(self, s):  # chance until player 1's hand is dealt (the last of the deal)
        return np.where(s[:, 1] < 0, CHANCE, np.where(s[:, 4] > 0, TERMINAL, self.mover(s)))

    def legal(self, s):
        a = np.arange(len(self.actions))
        return np.where(a < self.game.num_bids, a > s[:, 3:4], s[:, 3:4] >= 0)

    def chance(self, s):
        return np.broadcast_to(self._deal, (len(s), self.num_outcomes))

    def next(self, s, a):
        out = s.copy()
        deal = s[:, 0] < 0
        call = ~deal & (a == self.game.num_bids)
        bid = ~deal & ~call
        out[deal, 0], out[deal, 1] = np.divmod(a[deal], len(self.rolls[1]))
        out[call, 4] = 1
        out[bid, 2] |= np.left_shift(1, a[bid])
        out[bid, 3] = a[bid]
        return out

    def shown(self, s, face):
        """[n]: dice of both hands that count for `face` [n]."""
        return self.shows[0][s[:, 0], face] + self.shows[1][s[:, 1], face]

    def loser_payoffs(self):
        return self.game.payoff(0), self.game.payoff(1)

    def utility(self, s):
        q, f = np.divmod(s[:, 3], self.game.faces)
        bidder = (popcount(s[:, 2]) - 1) % 2
        loser = np.where(self.shown(s, f + 1) < q + 1, bidder, 1 - bidder)
        return np.where(loser == 0, *self.loser_payoffs())

    def payoff_key(self, s):
        """The last bid and who made it decide the payoff of a call."""
        return 2 * s[:, 3] + (popcount(s[:, 2]) - 1) % 2

    def infoset(self, s):
        hand = np.where(self.mover(s) == 0, s[:, 0], s[:, 1])
        return (hand << self.game.num_bids) | s[:, 2]

    def bid_string(self, bids: int) -> str:
        text = self._bids.get(bids)
        if text is None:
            text = self._bids[bids] = self.join([self.actions[b] for b in range(self.game.num_bids) if bids >> b & 1])
        return text

    def join(self, bids: list[str]) -> str:
        return ",".join(bids)

    def infoset_names(self, keys):
        hands, bids = np.divmod(keys, 1 << self.game.num_bids)
        movers = (popcount(bids) % 2).tolist()
        return [f"{self._names[m][h]}|{self.bid_string(b)}" for h, b, m in zip(hands.tolist(), bids.tolist(), movers)]
