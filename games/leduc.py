"""Leduc poker with the rules of OpenSpiel's `leduc_poker` (so values and sizes compare).

Six cards (J, Q, K in suits s and h), ante 1, raises of 2 in round 1 and 4 in round 2, at
most two raises per round, fold only when facing a bet, one public card between rounds; a
pair with the public card wins, otherwise the higher card; equal ranks split the pot.
Suits are distinct cards for the information sets, as in OpenSpiel (468 infosets a player).

Example:
    >>> import games
    >>> g = games.make("leduc")
    >>> s = g.initial_state()
    >>> for a in ["Ks", "Qs", "raise", "call", "Kh", "call", "call"]:
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)
    (3.0, -3.0)
"""

from __future__ import annotations

from .base import CHANCE, TERMINAL, Game

CARDS = ("Js", "Jh", "Qs", "Qh", "Ks", "Kh")
ACTIONS = {"f": "fold", "c": "call", "r": "raise"}
_CODE = {v: k for k, v in ACTIONS.items()}
RAISE = (2, 4)
MAX_RAISES = 2


def _rank(card: str) -> int:
    return "JQK".index(card[0])


def _replay(rounds: tuple[str, str]):
    """Replay the betting: (contributions, stakes, raises, folder, round over?, to move)."""
    contrib, stakes = [1, 1], 1
    folder, over, raises, to_move = None, False, 0, 0
    for r, seq in enumerate(rounds):
        raises, calls, over = 0, 0, False
        for i, a in enumerate(seq):
            p = i % 2
            if a == "f":
                folder = p
            elif a == "c":
                contrib[p] = stakes
                calls += 1
            else:
                stakes += RAISE[r]
                contrib[p] = stakes
                raises, calls = raises + 1, 0
            over = (raises == 0 and calls == 2) or (raises > 0 and calls == 1)
        to_move = len(seq) % 2
    return contrib, stakes, raises, folder, over, to_move


class Leduc(Game):
    """State = (dealt cards: private 0, private 1, public; round-1 bets; round-2 bets)."""

    name = "leduc"

    def initial_state(self):
        return ((), "", "")

    def player(self, state):
        cards, r1, r2 = state
        if len(cards) < 2:
            return CHANCE
        contrib, stakes, raises, folder, over, to_move = _replay((r1, r2) if len(cards) == 3 else (r1,))
        if folder is not None:
            return TERMINAL
        if len(cards) == 2:
            return CHANCE if over else to_move
        return TERMINAL if over else to_move

    def chance_outcomes(self, state):
        rest = [c for c in CARDS if c not in state[0]]
        return [(c, 1.0 / len(rest)) for c in rest]

    def legal_actions(self, state):
        cards, r1, r2 = state
        rounds = (r1, r2) if len(cards) == 3 else (r1,)
        contrib, stakes, raises, _, _, to_move = _replay(rounds)
        actions = ["fold"] if stakes > contrib[to_move] else []
        actions.append("call")
        if raises < MAX_RAISES:
            actions.append("raise")
        return tuple(actions)

    def next_state(self, state, action):
        cards, r1, r2 = state
        if len(cards) < 2 or (len(cards) == 2 and self.player(state) == CHANCE):
            return (cards + (action,), r1, r2)
        if len(cards) == 2:
            return (cards, r1 + _CODE[action], r2)
        return (cards, r1, r2 + _CODE[action])

    def utilities(self, state):
        cards, r1, r2 = state
        contrib, _, _, folder, _, _ = _replay((r1, r2))
        if folder is not None:
            u = contrib[1] if folder == 1 else -contrib[0]
            return (float(u), float(-u))
        public = _rank(cards[2])
        ranks = []
        for p in (0, 1):
            own = _rank(cards[p])
            ranks.append((1, own) if own == public else (0, max(own, public), min(own, public)))
        if ranks[0] == ranks[1]:
            return (0.0, 0.0)
        u = contrib[1] if ranks[0] > ranks[1] else -contrib[0]
        return (float(u), float(-u))

    def infoset_key(self, state):
        cards, r1, r2 = state
        p = self.player(state)
        if len(cards) == 2:
            return f"{cards[p]}|-|{r1}"
        return f"{cards[p]}|{cards[2]}|{r1}/{r2}"

    def describe(self, state, player):
        cards, r1, r2 = state
        words = lambda seq: " ".join(ACTIONS[c] for c in seq) or "-"
        text = f"your card {cards[player]}; round 1: {words(r1)}"
        if len(cards) == 3:
            text += f"; public card {cards[2]}; round 2: {words(r2)}"
        return text
