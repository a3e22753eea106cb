"""Rhode Island hold'em (Shi & Littman 2001), and its royal variant, as PokerKit defines them
(`pokerkit.RhodeIslandHoldem`, `pokerkit.RoyalRhodeIslandHoldem`).

Each player antes 5 and is dealt one private card; a betting round; a public card (the flop);
a betting round; a second public card (the turn); a last betting round; the showdown, where
each player's hand is their card with the two public ones. Betting is fixed-limit: a bet or a
raise is 10 in the first round and 20 in the others, at most 3 of them a round (the bet
counts). Player 0 acts first in every round; a round ends when both check or one calls.

Three-card hands rank, from the best: straight flush, three of a kind, straight, flush, pair,
high card (a straight is rarer than a flush with three cards); A-2-3 is the lowest straight.
The royal variant deals from the 20 cards from ten to ace. The private cards are dealt once
and everything after is public, so the game has a public-tree form: a type per card, public
chance dealing the board cards (`VectorGame.card_chance`), showdowns by card-removal prefix
sums (`operators.cards`), never a 52 x 52 matrix per public node.

Sizes: the royal variant has 120,665,601 histories (uoftcprg/noregret counts 120,665,581 nodes,
leaving out the 20 chance nodes that deal the second private card), 2,702,720 infosets and
6,756,800 sequences; the full game 6,705,372,545 histories and 2,736,573 public nodes.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("rhode_island(royal=True)")
    >>> s = g.initial_state()
    >>> for a in ["As", "Kh", "bet", "call", "Ah", "check", "check", "Kd", "check", "check"]:
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)  # a pair of aces against a pair of kings: the ante and the bet of 10
    (15.0, -15.0)
"""

from __future__ import annotations

import math

import numpy as np

from .base import CHANCE, TERMINAL, Game, GameError
from .betting import FOLD0, FOLD1, SHOWDOWN, BettingTable
from .cards import NUM_CARDS, RANKS, SUITS, card_name, deck_of, parse_cards
from .vector import VectorGame

ROYAL_RANKS = "TJQKA"
ACTIONS = ("fold", "check", "call", "bet", "raise")
MAX_RAISES = 20  # a round of r bets and raises has about 4 r betting nodes; three rounds, (4 r)^3 lines


def hand_values(private: np.ndarray, board0: np.ndarray, board1: np.ndarray) -> np.ndarray:
    """[n] int64: the strength of three-card hands (larger is better), from the cards' ranks
    (card // 4) and suits (card % 4), in PokerKit's order of Rhode Island hands.

    Example:
        >>> c = lambda s: np.array(parse_cards(s, "hand"))[:, None]  # three rows of one card
        >>> straight, flush = hand_values(*c("2c3d4h")), hand_values(*c("2cTcKc"))
        >>> bool(straight[0] > flush[0])
        True
    """
    cards = np.stack([np.asarray(private), np.asarray(board0), np.asarray(board1)], 1)  # [n, 3]
    r = np.sort(cards // 4, axis=1)[:, ::-1]  # [n, 3] ranks, highest first
    suited = (cards % 4 == (cards[:, :1] % 4)).all(1)
    trips = (r[:, 0] == r[:, 2])
    pair = ~trips & ((r[:, 0] == r[:, 1]) | (r[:, 1] == r[:, 2]))
    run = (r[:, 0] - r[:, 1] == 1) & (r[:, 1] - r[:, 2] == 1)
    wheel = (r[:, 0] == 12) & (r[:, 1] == 1) & (r[:, 2] == 0)  # A-2-3: its top card is the 3
    straight = run | wheel
    top = np.where(wheel, 1, r[:, 0])
    # pairs: the pair's rank, then the odd card's
    paired = np.where(r[:, 0] == r[:, 1], r[:, 0], r[:, 1])
    kicker = np.where(r[:, 0] == r[:, 1], r[:, 2], r[:, 0])
    base = 13 ** 3
    high = r[:, 0] * 169 + r[:, 1] * 13 + r[:, 2]
    category = np.select([straight & suited, trips, straight, suited, pair], [5, 4, 3, 2, 1], 0)
    tie = np.select([straight, trips, pair], [top * 169, r[:, 0] * 169, paired * 13 + kicker], high)
    return category * base + tie


class RhodeIsland(Game):
    """Rhode Island hold'em (see the module docstring). `royal=True` deals the 20 cards from ten
    to ace; `ranks` and `suits` choose another deck (small games for the tests)."""

    public_form = True

    def __init__(self, royal: bool = False, ante: float = 5, small_bet: float = 10, big_bet: float = 20,
                 raises: int = 3, ranks: str | None = None, suits: str = SUITS):
        if not isinstance(royal, bool):
            raise GameError(f"rhode_island: royal must be True or False, got {royal!r}")
        for what, v in (("ante", ante), ("small_bet", small_bet), ("big_bet", big_bet)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise GameError(f"rhode_island: {what} must be a finite number > 0, got {v!r}")
        if isinstance(raises, bool) or not isinstance(raises, int) or not 0 <= raises <= MAX_RAISES:
            raise GameError(f"rhode_island: raises (bets and raises a round) must be a whole number from 0 to "
                            f"{MAX_RAISES}, got {raises!r}")
        if not math.isfinite(ante + raises * (small_bet + 2 * big_bet)):
            raise GameError("rhode_island: ante and bets: the chips a player can put in are not finite")
        if ranks is None:
            ranks = ROYAL_RANKS if royal else RANKS
        elif royal:
            raise GameError("rhode_island: give royal=True or ranks, not both")
        self.deck = deck_of(ranks, suits, "rhode_island")
        self.n = int(self.deck.sum())
        if self.n < 4:
            raise GameError(f"rhode_island: a deck of {self.n} cards ({ranks} x {suits}); two private and two "
                            "public cards need 4")
        self.ante, self.bets, self.raises = float(ante), (float(small_bet), float(big_bet), float(big_bet)), raises
        self.actions = ACTIONS
        self._build_tree()
        params = {"royal": (royal, False), "ante": (ante, 5), "small_bet": (small_bet, 10),
                  "big_bet": (big_bet, 20), "raises": (raises, 3),
                  "ranks": (ranks, ROYAL_RANKS if royal else RANKS), "suits": (suits, SUITS)}
        extra = [f"{k}={v!r}" if isinstance(v, str) else f"{k}={v:g}" if not isinstance(v, bool) else f"{k}={v}"
                 for k, (v, default) in params.items() if v != default]
        self.name = "rhode_island" + (f"({', '.join(extra)})" if extra else "")
        self._strength = self._vector = None

    # -- the betting tree, built once: a table of nodes ------------------------------------

    def _build_tree(self):
        t = BettingTable(ACTIONS)
        node = t.node

        def end_round(c, s, ln):
            if s == 2:
                return node(TERMINAL, SHOWDOWN, c, s, ln)
            u = node(CHANCE, 0, c, s, ln)  # the next public card
            t.link(u, ACTIONS[0], decide(0, c, s + 1, ln + ("",), 0, False))  # a chance node's child in column 0
            return u

        def decide(p, c, s, ln, count, acted):
            u = node(p, 0, c, s, ln)

            def after(action, cc, then):
                t.link(u, action, then(cc, ln[:-1] + ((ln[-1] + " " + action).strip(),)))

            size = self.bets[s]
            if c[0] == c[1]:
                after("check", c, lambda cc, l2: end_round(cc, s, l2) if acted else decide(1 - p, cc, s, l2, count, True))
                if count < self.raises:
                    cc = list(c)
                    cc[p] += size
                    after("bet", cc, lambda cc, l2: decide(1 - p, cc, s, l2, count + 1, True))
            else:
                after("fold", c, lambda cc, l2: node(TERMINAL, FOLD0 if p == 0 else FOLD1, cc, s, l2))
                cc = list(c)
                cc[p] = c[1 - p]
                after("call", cc, lambda cc, l2: end_round(cc, s, l2))
                if count < self.raises:
                    cc = list(c)
                    cc[p] = c[1 - p] + size
                    after("raise", cc, lambda cc, l2: decide(1 - p, cc, s, l2, count + 1, True))
            return u

        decide(0, [0.0, 0.0], 0, ("",), 0, False)
        t.finish()
        self.tree = t

    def _subtree(self) -> np.ndarray:
        """[N] histories in each node's subtree of one deal, each public card counted."""
        n = np.ones(len(self.tree.mover), np.int64)
        for u in range(len(n) - 1, -1, -1):  # children have larger ids
            kids = self.tree.next[u][self.tree.next[u] >= 0]
            if self.tree.mover[u] == CHANCE:  # the flop from n - 2 cards, the turn from n - 3 (street 1)
                n[u] += (self.n - 2 - int(self.tree.street[u])) * n[kids].sum()
            else:
                n[u] += n[kids].sum()
        return n

    def size_hint(self):
        """The deal (a root, then a chance node per card of player 0), then per pair of private
        cards the betting tree with its public cards."""
        return 1 + self.n + self.n * (self.n - 1) * int(self._subtree()[0]), True

    def public_size_hint(self):
        pub = np.ones(len(self.tree.mover), np.int64)  # public nodes: the betting tree, a card at a time
        for u in range(len(pub) - 1, -1, -1):
            kids = self.tree.next[u][self.tree.next[u] >= 0]
            pub[u] += (self.n - int(self.tree.street[u]) if self.tree.mover[u] == CHANCE else 1) * pub[kids].sum()
        classes = self.tree.payoff_classes(self.n)
        return int(pub[0]), (self.n, self.n), classes * self.n * self.n, classes * 2 * self.n

    # -- hand strength ------------------------------------------------------------------------

    def strength(self) -> np.ndarray:
        """[52, 52, 52] int64: the strength of card c with the public cards f and t at [f, t, c];
        -1 where two of them are one card."""
        if self._strength is None:
            f, t, c = (a.reshape(-1) for a in np.meshgrid(*[np.arange(NUM_CARDS)] * 3, indexing="ij"))
            v = hand_values(c, f, t)
            v[(f == t) | (f == c) | (t == c)] = -1
            self._strength = v.reshape(NUM_CARDS, NUM_CARDS, NUM_CARDS)
        return self._strength

    # -- the per-node protocol: state = (card 0, card 1, flop, turn, betting node), -1 unset ---

    def initial_state(self):
        return (-1, -1, -1, -1, 0)

    def player(self, state):
        return CHANCE if state[1] < 0 else int(self.tree.mover[state[4]])

    def chance_outcomes(self, state):
        row = self.vectorized().chance(np.array([state], dtype=np.int64))[0]
        return [(card_name(int(o)), float(row[o])) for o in np.flatnonzero(row)]

    def legal_actions(self, state):
        return tuple(ACTIONS[a] for a in np.flatnonzero(self.tree.legal[state[4]]))

    def next_state(self, state, action):
        vg = self.vectorized()
        s = np.array([state], dtype=np.int64)
        a = parse_cards(action, "card")[0] if self.player(state) == CHANCE else ACTIONS.index(action)
        return tuple(int(x) for x in vg.next(s, np.array([a]))[0])

    def utilities(self, state):
        return self.vectorized().state_utilities(state)

    def infoset_key(self, state):
        return self.vectorized().state_infoset_key(state)

    def describe(self, state, player):
        c0, c1, flop, turn, u = state
        board = " ".join(card_name(c) for c in (flop, turn) if c >= 0) or "-"
        return (f"your card {card_name(c0 if player == 0 else c1)}; public cards {board}; you put in "
                f"{self.ante + self.tree.contrib[u, player]:g}, the other {self.ante + self.tree.contrib[u, 1 - player]:g}; "
                f"betting: {self.tree.line[u] or '-'}")

    def vectorized(self):
        if self._vector is None:
            self._vector = RhodeIslandVector(self)
        return self._vector


class RhodeIslandVector(VectorGame):
    """The vectorised form: state row = (card 0, card 1, flop, turn, betting node)."""

    width = 5
    public_hands = (0, 1)
    num_outcomes = NUM_CARDS

    def __init__(self, game: RhodeIsland):
        self.game, self.name, self.actions = game, game.name, ACTIONS

    def initial(self):
        return np.array([[-1, -1, -1, -1, 0]], dtype=np.int64)

    def player(self, s):
        return np.where(s[:, 1] < 0, CHANCE, self.game.tree.mover[s[:, 4]])

    def legal(self, s):
        return self.game.tree.legal[s[:, 4]]

    def _left(self, s) -> np.ndarray:
        """[n, 52] the cards of the deck that no one holds and the board does not show."""
        left = np.broadcast_to(self.game.deck, (len(s), NUM_CARDS)).copy()
        rows = np.arange(len(s))
        for col in range(4):
            known = s[:, col] >= 0
            left[rows[known], s[known, col]] = False
        return left

    def chance(self, s):
        left = self._left(s)
        return left / left.sum(axis=1, keepdims=True)

    def next(self, s, a):
        g = self.game
        out = s.copy()
        deal0, deal1 = s[:, 0] < 0, (s[:, 0] >= 0) & (s[:, 1] < 0)
        out[deal0, 0] = a[deal0]
        out[deal1, 1] = a[deal1]
        move = ~deal0 & ~deal1
        u = s[:, 4]
        card = move & (g.tree.mover[u] == CHANCE)
        flop = card & (s[:, 2] < 0)
        out[flop, 2] = a[flop]
        out[card & ~flop, 3] = a[card & ~flop]
        out[move, 4] = np.where(card[move], g.tree.next[u[move], 0], g.tree.next[u[move], np.where(card[move], 0, a[move])])
        return out

    def utility(self, s):
        g = self.game
        strength = g.strength()  # a fold before the turn reads any row: b = 0 there
        return g.tree.utility(s[:, 4], g.ante, strength[s[:, 2], s[:, 3], s[:, 0]], strength[s[:, 2], s[:, 3], s[:, 1]])

    def card_showdown(self):
        w = self.game.deck.astype(np.float64)
        return np.arange(NUM_CARDS)[:, None], w, w

    def card_payoff(self, s):
        g = self.game
        a, b = g.tree.payoff(s[:, 4], g.ante)
        kind = g.tree.kind[s[:, 4]]
        # a fold before the turn has no full board: any strength serves (b = 0 there)
        strength = g.strength()[s[:, 2].clip(0), s[:, 3].clip(0)]  # [n, 52]
        return a, b, np.where(kind[:, None] == SHOWDOWN, strength, 0)

    def card_chance(self, s):
        g = self.game
        board = (s[:, 2] >= 0).astype(np.int64) + (s[:, 3] >= 0)
        left = np.broadcast_to(g.deck, (len(s), NUM_CARDS)).copy()
        rows = np.arange(len(s))
        for col in (2, 3):
            known = s[:, col] >= 0
            left[rows[known], s[known, col]] = False
        q = left / (g.n - board - 2)[:, None]
        return np.broadcast_to(np.arange(NUM_CARDS), (len(s), NUM_CARDS)), q

    def payoff_key(self, s):
        return self.game.tree.payoff_key(s[:, 4])

    def infoset(self, s):
        g = self.game
        u = s[:, 4]
        own = np.where(g.tree.mover[u] == 0, s[:, 0], s[:, 1])
        return ((u * (NUM_CARDS + 1) + s[:, 2] + 1) * (NUM_CARDS + 1) + s[:, 3] + 1) * NUM_CARDS + own

    def infoset_names(self, keys):
        g = self.game
        out = []
        for k in np.asarray(keys).tolist():
            rest, own = divmod(k, NUM_CARDS)
            rest, turn = divmod(rest, NUM_CARDS + 1)
            u, flop = divmod(rest, NUM_CARDS + 1)
            board = "".join(card_name(c - 1) for c in (flop, turn) if c > 0)
            out.append(f"{card_name(own)}|{board}|{g.tree.line[u]}")
        return out
