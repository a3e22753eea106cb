"""Goofspiel with the rules, tree and information states of OpenSpiel's `goofspiel`, played
turn by turn as OpenSpiel's CFR plays it (`pyspiel.convert_to_turn_based`).

Each player holds the cards 1..N; a deck of point cards 1..N is turned one card a round
(`points_order`: "random", a chance node a round; "descending" or "ascending", no chance).
Both players bid a card at once (player 0 first, player 1 without seeing that bid); the higher
bid wins the point card, a tie gives it to nobody, and the bid cards are gone. With one card left
each, the last round plays itself. `imp_info=True` (the field's benchmark, and the only variant
here): a player sees its own bids, the point cards and who won each round, not the other's
bids. `returns_type`: "win_loss" (+1, -1 or 0 by total points) or "point_difference" (each
player's points minus the mean); OpenSpiel's "total_points" is not zero-sum.

Infoset keys are OpenSpiel's information-state strings and action names its own, so policies
export to OpenSpiel (`openspiel_twin`). The level-by-level form (`GoofspielVector`) compiles
Goofspiel-7 with descending points (47.5M histories) without a Python call per node.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("goofspiel(num_cards=3, points_order=descending)")
    >>> s = g.initial_state()
    >>> for a in ["[P0]Bid: 1", "[P1]Bid: 2"]:  # player 1 wins the 3
    ...     s = g.next_state(s, a)
    >>> g.infoset_key(s).splitlines()[1:6]  # OpenSpiel's information-state string
    ['P0 hand: 2 3 ', 'P0 action sequence: 0 ', 'Point card sequence: 3 2 ', 'Win sequence: 1 ', 'Points: 0 3 ']
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .base import CHANCE, PAST_ANY_LIMIT, TERMINAL, Game, GameError
from .vector import VectorGame

ORDERS = ("random", "descending", "ascending")
RETURNS = ("win_loss", "point_difference")
TIE = -3  # OpenSpiel's win-sequence entry for a tied round


class Goofspiel(Game):
    """State = (point cards turned, player 0's bids, player 1's bids), cards as values 1..N; a
    round is under way while player 0 has bid more often than player 1."""

    def __init__(self, num_cards: int = 4, imp_info: bool = True, points_order: str = "random",
                 returns_type: str = "win_loss"):
        if isinstance(num_cards, bool) or not isinstance(num_cards, int) or num_cards < 2:
            raise GameError(f"goofspiel: num_cards must be an integer >= 2, got {num_cards!r}")
        if imp_info is not True:
            raise GameError(f"goofspiel: imp_info must be True (the imperfect-information game), got {imp_info!r}")
        if points_order not in ORDERS:
            raise GameError(f"goofspiel: points_order must be one of {', '.join(ORDERS)}, got {points_order!r}")
        if returns_type not in RETURNS:
            why = " (total_points is not zero-sum)" if returns_type == "total_points" else ""
            raise GameError(f"goofspiel: returns_type must be one of {', '.join(RETURNS)}, got {returns_type!r}{why}")
        self.n, self.order, self.returns_type = num_cards, points_order, returns_type
        params = [f"num_cards={num_cards}"] + [f"points_order={points_order}"] * (points_order != "random") \
            + [f"returns_type={returns_type}"] * (returns_type != "win_loss")
        self.name = f"goofspiel({','.join(params)})"

    @functools.cached_property
    def bids(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        # made on first use: goofspiel(num_cards=10**30) has that many, which a size check refuses first
        return tuple(tuple(f"[P{p}]Bid: {v}" for v in range(1, self.n + 1)) for p in (0, 1))

    def openspiel_twin(self):
        return (f"turn_based_simultaneous_game(game=goofspiel(num_cards={self.n},imp_info=True,"
                f"points_order={self.order},returns_type={self.returns_type}))")

    def size_hint(self):
        """Round k (0-based, all but the last) has P(N,k)^2 bid histories for each turned point
        sequence (P(N,k) = N!/(N-k)!), a player-0 node each and N-k player-1 nodes; random order
        adds a chance node before each round; (N!)^2 bid pairs end the game, times N! point
        orders when random."""
        if self.n > 1000:  # past any limit ((N!)^2 > 10^5000), and slow to work out exactly
            return PAST_ANY_LIMIT, False
        n, perm = self.n, lambda k: math.perm(self.n, k)
        deals = (lambda k: perm(k + 1)) if self.order == "random" else (lambda k: 1)
        total = sum(deals(k) * perm(k) ** 2 * (1 + n - k) for k in range(n - 1))
        if self.order == "random":
            total += sum(perm(k) * perm(k) ** 2 for k in range(n - 1))
        return total + (math.factorial(n) if self.order == "random" else 1) * math.factorial(n) ** 2, True

    # -- the per-node protocol ------------------------------------------------------------
    def _next_point(self, turned):
        left = [v for v in range(1, self.n + 1) if v not in turned]
        return max(left) if self.order == "descending" else min(left)

    def initial_state(self):
        return ((), (), ()) if self.order == "random" else ((self._next_point(()),), (), ())

    def player(self, state):
        turned, b0, b1 = state
        if len(b1) == self.n:
            return TERMINAL
        if len(turned) == len(b1):
            return CHANCE
        return 0 if len(b0) == len(b1) else 1

    def chance_outcomes(self, state):
        left = [v for v in range(1, self.n + 1) if v not in state[0]]
        return [(f"Deal {v}", 1.0 / len(left)) for v in left]

    def legal_actions(self, state):
        turned, b0, b1 = state
        p = 0 if len(b0) == len(b1) else 1
        mine = (b0, b1)[p]
        return [self.bids[p][v - 1] for v in range(1, self.n + 1) if v not in mine]

    def next_state(self, state, action):
        turned, b0, b1 = state
        if self.player(state) == CHANCE:
            return (turned + (int(action.split()[1]),), b0, b1)
        bid = int(action.rsplit(" ", 1)[1])
        if len(b0) == len(b1):
            return (turned, b0 + (bid,), b1)
        b1 = b1 + (bid,)
        if len(b1) == self.n - 1:  # the last round plays itself
            last = lambda used: next(v for v in range(1, self.n + 1) if v not in used)  # noqa: E731
            return (turned + (last(turned),), b0 + (last(b0),), b1 + (last(b1),))
        return (turned if self.order == "random" else turned + (self._next_point(turned),), b0, b1)

    def _points(self, turned, b0, b1):
        pts, wins = [0, 0], []
        for v, x, y in zip(turned, b0, b1):
            w = 0 if x > y else 1 if y > x else TIE
            wins.append(w)
            if w != TIE:
                pts[w] += v
        return pts, wins

    def utilities(self, state):
        (p0, p1), _ = self._points(*state)
        if self.returns_type == "win_loss":
            u = float((p0 > p1) - (p0 < p1))
        else:
            u = (p0 - p1) / 2
        return (u, -u)

    def infoset_key(self, state):
        turned, b0, b1 = state
        p = 0 if len(b0) == len(b1) else 1
        mine = (b0, b1)[p]
        pts, wins = self._points(turned, b0, b1)
        return _key(p, [v for v in range(1, self.n + 1) if v not in mine], mine, turned, wins, pts)

    def describe(self, state, player):
        turned, b0, b1 = state
        mine = (b0, b1)[player]
        pts, wins = self._points(turned, b0, b1)
        names = {0: "you" if player == 0 else "they", 1: "you" if player == 1 else "they", TIE: "tie"}
        rounds = ", ".join(f"{v}: {names[w]}" for v, w in zip(turned, wins))
        return (f"point card {turned[-1]}; your cards {' '.join(str(v) for v in range(1, self.n + 1) if v not in mine)}; "
                f"rounds so far {rounds or '(none)'}; points you {pts[player]}, they {pts[1 - player]}")

    def vectorized(self):
        return GoofspielVector(self) if GoofspielVector.fits(self) else None


def _key(p, hand, bids, turned, wins, pts):
    """OpenSpiel's information-state string (turn-based goofspiel with imp_info)."""
    row = lambda xs: "".join(f"{x} " for x in xs)  # noqa: E731
    return (f"Current player: {p}\nP{p} hand: {row(hand)}\nP{p} action sequence: {row(v - 1 for v in bids)}\n"
            f"Point card sequence: {row(turned)}\nWin sequence: {row(wins)}\nPoints: {pts[0]} {pts[1]} \nTerminal?: 0\n")


# columns of a state row of GoofspielVector
K, HAND0, HAND1, LEFT, SEQ0, SEQ1, TURNED, DEALT, WINS, PTS0, PTS1, PENDING = range(12)


class GoofspielVector(VectorGame):
    """The level-by-level form. A state row: completed rounds k, each hand and the point cards
    left as bit sets, each player's bids (action ids, base N, first most significant), the point
    cards turned (values - 1, base N) and how many, the round winners (base 3: 0, 1, 2 = tie), the
    points, and player 0's bid of the round under way (-1: none). An infoset key packs the mover,
    k, its bids, the turned cards (random order only) and the winners into an int64."""

    width = 12

    def __init__(self, game: Goofspiel):
        self.game, self.n = game, game.n
        self.name = game.name
        self.actions = game.bids[0] + game.bids[1]  # player 0's bids, then player 1's
        self.num_outcomes = game.n

    @staticmethod
    def fits(game: Goofspiel) -> bool:
        """Whether an infoset key fits in 63 bits (N <= 7 with random points, N <= 11 without)."""
        n = game.n
        bits = 1 + math.log2(n + 1) + n * math.log2(n) + n * math.log2(3)
        return bits + (n * math.log2(n) if game.order == "random" else 0) < 63

    def initial(self):
        s = np.zeros((1, self.width), np.int64)
        full = (1 << self.n) - 1
        s[0, [HAND0, HAND1, LEFT]] = full
        s[0, PENDING] = -1
        if self.game.order != "random":
            s = self._deal(s, self._auto(s))
        return s

    def _auto(self, s):
        """[n] the index of the point card a fixed order turns next."""
        left = s[:, LEFT]
        if self.game.order == "ascending":
            return _lowest(left)
        return _highest(left)

    def _deal(self, s, c):
        s = s.copy()
        s[:, LEFT] &= ~(np.int64(1) << c)
        s[:, TURNED] = s[:, TURNED] * self.n + c
        s[:, DEALT] += 1
        return s

    def player(self, s):
        return np.where(s[:, K] == self.n, TERMINAL,
                        np.where(s[:, DEALT] == s[:, K], CHANCE, np.where(s[:, PENDING] < 0, 0, 1)))

    def legal(self, s):
        bits = np.arange(self.n)
        mover = s[:, PENDING] >= 0
        hand = np.where(mover, s[:, HAND1], s[:, HAND0])
        own = ((hand[:, None] >> bits) & 1).astype(bool)  # [n, N]
        out = np.zeros((len(s), 2 * self.n), bool)
        out[:, :self.n] = own & ~mover[:, None]
        out[:, self.n:] = own & mover[:, None]
        return out

    def chance(self, s):
        left = ((s[:, LEFT, None] >> np.arange(self.n)) & 1).astype(np.float64)  # [n, N]
        return left / left.sum(1, keepdims=True)

    def next(self, s, a):
        out = s.copy()
        kind = self.player(s)
        c = kind == CHANCE
        out[c] = self._deal(s[c], a[c])
        first = kind == 0
        out[first, PENDING] = a[first]
        out[first, HAND0] &= ~(np.int64(1) << a[first])
        out[first, SEQ0] = s[first, SEQ0] * self.n + a[first]
        second = np.flatnonzero(kind == 1)
        if len(second):
            out[second] = self._round(s[second], s[second, PENDING], a[second] - self.n)
        return out

    def _round(self, s, x, y):
        """Rows `s` after player 1 bids y [n] against player 0's pending x [n] (card indices):
        the round is scored, the last round plays itself, a fixed order turns the next card."""
        s = s.copy()
        s[:, HAND1] &= ~(np.int64(1) << y)
        s[:, SEQ1] = s[:, SEQ1] * self.n + y
        s = self._score(s, x, y)
        last = s[:, K] == self.n - 1
        if last.any():
            r = s[last]
            r = self._deal(r, _highest(r[:, LEFT]))  # the one card left
            x0, y0 = _highest(r[:, HAND0]), _highest(r[:, HAND1])
            r[:, HAND0] = 0
            r[:, HAND1] = 0
            r[:, SEQ0] = r[:, SEQ0] * self.n + x0
            r[:, SEQ1] = r[:, SEQ1] * self.n + y0
            s[last] = self._score(r, x0, y0)
        more = ~last
        if self.game.order != "random" and more.any():
            s[more] = self._deal(s[more], self._auto(s[more]))
        return s

    def _score(self, s, x, y):
        point = s[:, TURNED] % self.n + 1  # the card turned last
        s[:, PTS0] += np.where(x > y, point, 0)
        s[:, PTS1] += np.where(y > x, point, 0)
        s[:, WINS] = s[:, WINS] * 3 + np.where(x > y, 0, np.where(y > x, 1, 2))
        s[:, K] += 1
        s[:, PENDING] = -1
        return s

    def utility(self, s):
        d = s[:, PTS0] - s[:, PTS1]
        return np.sign(d).astype(np.float64) if self.game.returns_type == "win_loss" else d / 2.0

    def infoset(self, s):
        n, p = self.n, (s[:, PENDING] >= 0).astype(np.int64)
        key = np.where(p == 1, s[:, SEQ1], s[:, SEQ0])
        key = key * 3 ** n + s[:, WINS]
        if self.game.order == "random":
            key = key * n ** n + s[:, TURNED]
        return (key * (n + 1) + s[:, K]) * 2 + p

    def infoset_names(self, keys):
        n, names = self.n, []
        for key in keys.tolist():
            p, key = key % 2, key // 2
            k, key = key % (n + 1), key // (n + 1)
            if self.game.order == "random":
                turned_code, key = key % n ** n, key // n ** n
                turned = [d + 1 for d in _digits(turned_code, n, k + 1)]
            else:
                order = range(n, 0, -1) if self.game.order == "descending" else range(1, n + 1)
                turned = list(order)[:k + 1]
            wins_code, key = key % 3 ** n, key // 3 ** n
            wins = [(0, 1, TIE)[w] for w in _digits(wins_code, 3, k)]
            bids = [d + 1 for d in _digits(key, n, k)]
            pts = [0, 0]
            for v, w in zip(turned, wins):
                if w != TIE:
                    pts[w] += v
            names.append(_key(p, [v for v in range(1, n + 1) if v not in bids], bids, turned, wins, pts))
        return names


def _digits(x: int, base: int, count: int) -> list[int]:
    """The `count` base-`base` digits of x, most significant first."""
    out = []
    for _ in range(count):
        x, d = divmod(x, base)
        out.append(d)
    return out[::-1]


def _highest(mask: np.ndarray) -> np.ndarray:
    """[n] the index of the highest set bit of each mask (> 0)."""
    return (np.floor(np.log2(mask.astype(np.float64)))).astype(np.int64)


def _lowest(mask: np.ndarray) -> np.ndarray:
    """[n] the index of the lowest set bit of each mask (> 0)."""
    return _highest(mask & -mask)
