"""One Card Poker OCP(n), the thesis' poker family (Kuhn poker is OCP(3)).

Rules (../shared/reference/games.md): cards 0..n-1; one chance node deals an ordered pair of
distinct cards uniformly; ante 1 each; actions pass and bet (a bet adds 1 chip); histories
"", "p", "b", "pb"; terminals "pp" (showdown +-1), "bb" and "pbb" (showdown +-2), "bp" (+1,
player 2 folds) and "pbp" (-1, player 1 folds). Nodes 9 n (n-1) + 1, infosets 4 n.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("ocp(12)")
    >>> s = g.next_state(g.initial_state(), "11,3")
    >>> g.infoset_key(g.next_state(s, "bet"))
    '3:b'
"""

from __future__ import annotations

import functools

import numpy as np

from .base import CHANCE, TERMINAL, Game, GameError
from .vector import VectorGame

ACTIONS = ("pass", "bet")
_TERMINAL = {"pp", "bp", "bb", "pbp", "pbb"}


class OCP(Game):
    """One Card Poker with `n` cards. State = (deal or None, history)."""

    public_form = True  # dealt once, then public: tensorcfr/public.py

    def __init__(self, n: int = 3):
        if not isinstance(n, int) or n < 2:
            raise GameError(f"ocp: needs an integer number of cards n >= 2, got {n!r}")
        self.n = n
        self.name = f"ocp({n})"

    @functools.cached_property
    def _deals(self) -> list[tuple[str, float]]:
        # made on first use: OCP(5000) has 25M deals (6 s, GBs), which the vectorised form never asks for
        p = 1.0 / (self.n * (self.n - 1))
        return [(f"{a},{b}", p) for a in range(self.n) for b in range(self.n) if a != b]

    def size_hint(self):
        """The deal of an ordered pair of cards, then 9 betting nodes per deal."""
        return 1 + 9 * self.n * (self.n - 1), True

    def public_size_hint(self):
        """The nine betting histories; a type per card; no payoff matrix (a ranked deal)."""
        return len(HISTORIES), (self.n, self.n), 0

    def initial_state(self):
        return (None, "")

    def player(self, state):
        deal, h = state
        if deal is None:
            return CHANCE
        return TERMINAL if h in _TERMINAL else len(h) % 2

    def chance_outcomes(self, state):
        return self._deals

    def legal_actions(self, state):
        return ACTIONS

    def next_state(self, state, action):
        deal, h = state
        if deal is None:
            a, b = action.split(",")
            return ((int(a), int(b)), h)
        return (deal, h + action[0])

    def utilities(self, state):
        (c0, c1), h = state
        if h == "bp":
            u = 1.0
        elif h == "pbp":
            u = -1.0
        else:
            u = (2.0 if "b" in h else 1.0) * (1.0 if c0 > c1 else -1.0)
        return (u, -u)

    def infoset_key(self, state):
        deal, h = state
        return f"{deal[len(h) % 2]}:{h}"

    def describe(self, state, player):
        deal, h = state
        return f"your card {deal[player]} of 0..{self.n - 1}; betting so far: {h or '(none)'}"

    def vectorized(self):
        return CardPokerVector(self.name, self.n, "pair")


# The betting of one-card poker as a small automaton over history codes.
HISTORIES = ("", "p", "b", "pp", "pb", "bp", "bb", "pbp", "pbb")
_H = {h: i for i, h in enumerate(HISTORIES)}
_NEXT = np.array([[_H.get(h + a, -1) for a in "pb"] for h in HISTORIES], dtype=np.int64)  # [9, 2]
_MOVER = np.array([TERMINAL if h in _TERMINAL else len(h) % 2 for h in HISTORIES], dtype=np.int64)  # [9]
_STAKE = np.array([1.0 if h == "pp" else 2.0 for h in HISTORIES])  # showdown stake per history
_FOLD = np.array([{"bp": 1.0, "pbp": -1.0}.get(h, 0.0) for h in HISTORIES])  # payoff to player 0 on a fold
_FOLDED = np.array([h in ("bp", "pbp") for h in HISTORIES])


class CardPokerVector(VectorGame):
    """The vectorised form of OCP(n) and Kuhn poker. State row = (card 0, card 1, history code),
    cards -1 until dealt. `deal="pair"` deals both cards at one chance node (OCP),
    `"sequential"` one card per chance node (Kuhn, as OpenSpiel deals it)."""

    width = 3
    actions = ACTIONS
    public_hands = (0, 1)  # the cards; the betting is public

    def __init__(self, name: str, n: int, deal: str, ante: float = 1.0, card_names=None):
        self.name, self.n, self.deal, self.ante = name, n, deal, float(ante)
        # None: a card is named by its number, made when asked for (OCP(10^8) would otherwise
        # build 10^8 strings, 20 s and gigabytes, before `info` could answer)
        self.card_names = tuple(card_names) if card_names else None
        self.num_outcomes = n * n if deal == "pair" else n

    def initial(self):
        return np.array([[-1, -1, 0]], dtype=np.int64)

    def player(self, s):
        return np.where(s[:, 1] < 0, CHANCE, _MOVER[s[:, 2]])

    def legal(self, s):
        return np.ones((len(s), 2), dtype=bool)

    def chance(self, s):
        n = self.n
        if self.deal == "pair":
            probs = np.full((n, n), 1.0 / (n * (n - 1)))
            np.fill_diagonal(probs, 0.0)
            return np.broadcast_to(probs.reshape(1, -1), (len(s), n * n))
        dealt = s[:, :1] == np.arange(n)  # [m, n]: the card already dealt (to player 0)
        first = s[:, :1] < 0
        return np.where(first, 1.0 / n, np.where(dealt, 0.0, 1.0 / (n - 1)))

    def next(self, s, a):
        out = s.copy()
        chance = s[:, 1] < 0
        if self.deal == "pair":
            out[chance, 0], out[chance, 1] = a[chance] // self.n, a[chance] % self.n
        else:
            slot = np.where(s[:, 0] < 0, 0, 1)
            out[chance, slot[chance]] = a[chance]
        out[~chance, 2] = _NEXT[s[~chance, 2], a[~chance]]
        return out

    def utility(self, s):
        h = s[:, 2]
        win = np.where(s[:, 0] > s[:, 1], 1.0, -1.0)
        stake = self.ante * _STAKE[h] if self.deal == "pair" else (self.ante + _STAKE[h] - 1)
        return np.where(_FOLDED[h], self.ante * _FOLD[h], win * stake)

    def payoff_key(self, s):
        return s[:, 2]  # the betting decides the stake and any fold

    def ranked_deal(self):
        """Both deals give every ordered pair of distinct cards probability 1/(n(n-1)); the
        cards are the ranks. OCP deals at one chance node, Kuhn at one for each card."""
        chance_nodes, levels = (1, 1) if self.deal == "pair" else (1 + self.n, 2)
        return self.n, np.array([[0, 0, 0]], dtype=np.int64), chance_nodes, levels

    def ranked_payoff(self, s):
        h = s[:, 2]
        stake = self.ante * _STAKE[h] if self.deal == "pair" else (self.ante + _STAKE[h] - 1)
        return np.where(_FOLDED[h], self.ante * _FOLD[h], 0.0), np.where(_FOLDED[h], 0.0, stake)

    def infoset(self, s):
        card = np.where(_MOVER[s[:, 2]] == 0, s[:, 0], s[:, 1])
        return card * len(HISTORIES) + s[:, 2]

    def infoset_names(self, keys):
        names = self.card_names
        return [f"{names[k // len(HISTORIES)] if names else k // len(HISTORIES)}:{HISTORIES[k % len(HISTORIES)]}"
                for k in keys.tolist()]
