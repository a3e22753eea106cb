"""Leduc poker with the rules of OpenSpiel's `leduc_poker` (so values and sizes compare).

Six cards (J, Q, K in suits s and h), ante 1, raises of 2 in round 1 and 4 in round 2, at
most two raises per round, fold only when facing a bet, one public card between rounds; a
pair with the public card wins, otherwise the higher card; equal ranks split the pot.
Suits are distinct cards for the information sets, as in OpenSpiel (468 infosets a player).

Example:
    >>> from tensorcfr import games
    >>> g = games.make("leduc")
    >>> s = g.initial_state()
    >>> for a in ["Ks", "Qs", "raise", "call", "Kh", "call", "call"]:
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)
    (3.0, -3.0)
"""

from __future__ import annotations

import numpy as np

from .base import CHANCE, TERMINAL, Game
from .vector import VectorGame

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


def _public_due(r1: str) -> bool:
    """Round 1 ended without a fold: the public card is dealt next."""
    _, _, _, folder, over, _ = _replay((r1,))
    return over and folder is None


class Leduc(Game):
    """State = (dealt cards: private 0, private 1, public; round-1 bets; round-2 bets)."""

    public_form = True  # dealt once, then public: tensorcfr/public.py

    name = "leduc"

    def initial_state(self):
        return ((), "", "")

    def openspiel_twin(self):
        return "leduc_poker"

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

    def vectorized(self):
        return LeducVector(self)

    def describe(self, state, player):
        cards, r1, r2 = state
        words = lambda seq: " ".join(ACTIONS[c] for c in seq) or "-"  # noqa: E731
        text = f"your card {cards[player]}; round 1: {words(r1)}"
        if len(cards) == 3:
            text += f"; public card {cards[2]}; round 2: {words(r2)}"
        return text


class LeducVector(VectorGame):
    """The vectorised form of Leduc. State row = (card 0, card 1, public card, betting), cards
    indexing `CARDS` (-1 until dealt) and betting indexing `bettings`: every (round 1, round 2)
    string pair the rules allow, found once from `_replay`, with per-betting tables of the
    mover, legal actions, next betting and contributions."""

    width = 4
    public_hands = (0, 1)  # the private cards; the public card and the betting are public
    actions = tuple(ACTIONS.values())  # fold, call, raise: the order of `legal_actions`
    num_outcomes = len(CARDS)

    def __init__(self, game: Leduc):
        self.name = game.name
        self.bettings: list[tuple[str, str]] = [("", "")]
        index = {("", ""): 0}
        nxt, mover, legal, contrib, folder, deal_public = [], [], [], [], [], []
        k = 0
        while k < len(self.bettings):  # breadth-first over betting strings
            r1, r2 = self.bettings[k]
            second = _public_due(r1)  # in round 2 (once chance has dealt the public card)
            c, stakes, raises, fold, over, to_move = _replay((r1, r2) if second else (r1,))
            done = fold is not None or (second and over)
            row = [-1, -1, -1]
            legal_row = [False, False, False]
            if not done:
                legal_row = [stakes > c[to_move], True, raises < MAX_RAISES]
                for a, ok in enumerate(legal_row):
                    if ok:
                        code = "fcr"[a]
                        child = (r1, r2 + code) if second else (r1 + code, "")
                        if child not in index:
                            index[child] = len(self.bettings)
                            self.bettings.append(child)
                        row[a] = index[child]
            nxt.append(row)
            mover.append(TERMINAL if done else to_move)
            legal.append(legal_row)
            contrib.append(c)
            folder.append(-1 if fold is None else fold)
            deal_public.append(second and r2 == "")  # chance deals the public card before anyone moves
            k += 1
        self._next = np.array(nxt, dtype=np.int64)  # [H, 3] betting after each action (-1 illegal)
        self._mover = np.array(mover, dtype=np.int64)  # [H] 0, 1 or TERMINAL (once a due public card is dealt)
        self._legal = np.array(legal, dtype=bool)  # [H, 3]
        self._contrib = np.array(contrib, dtype=np.float64)  # [H, 2]
        self._folder = np.array(folder, dtype=np.int64)  # [H] -1: nobody folded
        self._deal_public = np.array(deal_public, dtype=bool)  # [H]
        self._rank = np.array([_rank(c) for c in CARDS], dtype=np.int64)

    def initial(self):
        return np.array([[-1, -1, -1, 0]], dtype=np.int64)

    def player(self, s):
        h = s[:, 3]
        deal = (s[:, 1] < 0) | (self._deal_public[h] & (s[:, 2] < 0))
        return np.where(deal, CHANCE, self._mover[h])

    def legal(self, s):
        return self._legal[s[:, 3]]

    def chance(self, s):
        held = np.zeros((len(s), len(CARDS)), dtype=bool)  # [n, 6] cards already dealt
        for col in range(3):
            dealt = s[:, col] >= 0
            held[np.flatnonzero(dealt), s[dealt, col]] = True
        rest = (~held).sum(axis=1, keepdims=True)
        return np.where(held, 0.0, 1.0 / rest)

    def next(self, s, a):
        out = s.copy()
        chance = self.player(s) == CHANCE
        slot = np.argmax(s[:, :3] < 0, axis=1)  # the first card not yet dealt
        out[chance, slot[chance]] = a[chance]
        out[~chance, 3] = self._next[s[~chance, 3], a[~chance]]
        return out

    def utility(self, s):
        h = s[:, 3]
        c0, c1 = self._contrib[h, 0], self._contrib[h, 1]
        fold = self._folder[h]
        public, own0, own1 = self._rank[s[:, 2]], self._rank[s[:, 0]], self._rank[s[:, 1]]
        # hand strength: a pair with the public card beats any high card; then the higher card
        strength = lambda own: np.where(own == public, 100 + own, 10 * np.maximum(own, public) + np.minimum(own, public))  # noqa: E731
        s0, s1 = strength(own0), strength(own1)
        show = np.where(s0 > s1, c1, np.where(s0 < s1, -c0, 0.0))
        return np.where(fold == 1, c1, np.where(fold == 0, -c0, show))

    def infoset(self, s):
        h = s[:, 3]
        own = np.where(self._mover[h] == 0, s[:, 0], s[:, 1])
        return ((own * (len(CARDS) + 1)) + s[:, 2] + 1) * len(self.bettings) + h

    def infoset_names(self, keys):
        out = []
        for k in keys.tolist():
            rest, h = divmod(k, len(self.bettings))
            own, public = divmod(rest, len(CARDS) + 1)
            r1, r2 = self.bettings[h]
            out.append(f"{CARDS[own]}|-|{r1}" if public == 0 else f"{CARDS[own]}|{CARDS[public - 1]}|{r1}/{r2}")
        return out
