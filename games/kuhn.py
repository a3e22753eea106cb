"""Kuhn poker, dealt as OpenSpiel deals it (one chance node per card: 58 histories).

Example:
    >>> from tensorcfr import games
    >>> g = games.make("kuhn(ante=2)")
    >>> s = g.initial_state()
    >>> for a in ["K", "J", "bet", "pass"]:
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)
    (2.0, -2.0)
"""

from __future__ import annotations

from .base import CHANCE, TERMINAL, Game, GameError

CARDS = ("J", "Q", "K")
ACTIONS = ("pass", "bet")
_TERMINAL_HISTORIES = {"pp", "bp", "bb", "pbp", "pbb"}


class Kuhn(Game):
    """Kuhn poker: three cards, ante `ante` each, one bet of 1. State = (cards, history)."""

    public_form = True  # dealt once, then public: tensorcfr/public.py

    def __init__(self, ante: float = 1):
        if not ante > 0:
            raise GameError(f"kuhn: ante must be positive, got {ante}")
        self.ante = ante
        self.name = "kuhn" if ante == 1 else f"kuhn(ante={ante})"

    def initial_state(self):
        return ((), "")

    def player(self, state):
        cards, h = state
        if len(cards) < 2:
            return CHANCE
        if h in _TERMINAL_HISTORIES:
            return TERMINAL
        return len(h) % 2

    def chance_outcomes(self, state):
        rest = [c for c in CARDS if c not in state[0]]
        return [(c, 1.0 / len(rest)) for c in rest]

    def legal_actions(self, state):
        return ACTIONS

    def next_state(self, state, action):
        cards, h = state
        if len(cards) < 2:
            return (cards + (action,), h)
        return (cards, h + action[0])

    def utilities(self, state):
        cards, h = state
        a = float(self.ante)
        if h == "bp":
            u = a
        elif h == "pbp":
            u = -a
        else:
            stake = a + 1 if "b" in h else a
            u = stake if CARDS.index(cards[0]) > CARDS.index(cards[1]) else -stake
        return (u, -u)

    def infoset_key(self, state):
        cards, h = state
        return f"{cards[len(h) % 2]}:{h}"

    def describe(self, state, player):
        cards, h = state
        names = {"p": "pass", "b": "bet"}
        return f"your card {cards[player]}; moves so far: {' '.join(names[c] for c in h) or '-'}"

    def openspiel_twin(self):
        return "kuhn_poker" if self.ante == 1 else None  # OpenSpiel's antes are 1

    def vectorized(self):
        from .ocp import CardPokerVector
        return CardPokerVector(self.name, 3, "sequential", ante=self.ante, card_names=CARDS)
