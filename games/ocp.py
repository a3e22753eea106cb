"""One Card Poker OCP(n), the thesis' poker family (Kuhn poker is OCP(3)).

Rules (../shared/reference/games.md): cards 0..n-1; one chance node deals an ordered pair of
distinct cards uniformly; ante 1 each; actions pass and bet (a bet adds 1 chip); histories
"", "p", "b", "pb"; terminals "pp" (showdown +-1), "bb" and "pbb" (showdown +-2), "bp" (+1,
player 2 folds) and "pbp" (-1, player 1 folds). Nodes 9 n (n-1) + 1, infosets 4 n.

Example:
    >>> import games
    >>> g = games.make("ocp(12)")
    >>> s = g.next_state(g.initial_state(), "11,3")
    >>> g.infoset_key(g.next_state(s, "bet"))
    '3:b'
"""

from __future__ import annotations

from .base import CHANCE, TERMINAL, Game, GameError

ACTIONS = ("pass", "bet")
_TERMINAL = {"pp", "bp", "bb", "pbp", "pbb"}


class OCP(Game):
    """One Card Poker with `n` cards. State = (deal or None, history)."""

    def __init__(self, n: int = 3):
        if not isinstance(n, int) or n < 2:
            raise GameError(f"ocp: needs an integer number of cards n >= 2, got {n!r}")
        self.n = n
        self.name = f"ocp({n})"
        p = 1.0 / (n * (n - 1))
        self._deals = [(f"{a},{b}", p) for a in range(n) for b in range(n) if a != b]

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
