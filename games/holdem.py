"""Heads-up no-limit hold'em subgames: a river, turn or flop spot with a known board, the two
players' ranges, a pot, an effective stack and a bet abstraction.

The two hands are dealt once, with probability proportional to r0(h0) r1(h1) over the pairs
that share no card with each other or the board; everything after is public (the bets, and the
cards still to come, each dealt by chance from the cards neither hand holds: the river on the
turn, the turn and then the river on the flop), so the game has a public-tree form with a type
per hand. Player 0 is out of position and acts first on each street.

Money: the pot at the start holds `pot`, half from each player; each has `stack` more behind.
A fold loses what the folder put in; a showdown wins what the loser put in; a tie pays 0.

Bets are fractions of the pot (the pot including every bet so far): a bet of f puts in f x pot;
a raise of f calls, then adds f x the pot after the call; a size at or past the stack is the
all-in, which is an action of its own where `bets` (or `raises`) holds "allin". At most `cap`
raises a street (an all-in facing a bet counts as one). Sizes may differ per street: `bets=((0.5,
1), (0.75, allin))` gives the turn's, then the river's (a flop spot takes three).

Example:
    >>> from tensorcfr import games
    >>> g = games.make("holdem_river(board=Ks7d2c9h4s, range0='AA,KK', range1='AA,KK', bets=(1,))")
    >>> s = g.initial_state()
    >>> for a in ["AsAd", "KhKc", "bet 1", "call"]:
    ...     s = g.next_state(s, a)
    >>> g.utilities(s)  # trips of kings beat aces: player 0 loses the half pot and the bet
    (-15.0, 15.0)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .base import CHANCE, TERMINAL, Game, GameError
from .betting import FOLD0, FOLD1, SHOWDOWN, BettingTable
from .cards import HANDS, NUM_CARDS, NUM_HANDS, RANKS, SUITS, card_name, card_names, deck_of, hand_index, hand_name, \
    hand_names, parse_cards, parse_range, strengths, suit_swap, traded_cards
from .vector import VectorGame

ALLIN = "allin"
MAX_NODES = 1_000_000  # betting nodes of one spot's abstraction
# the smallest bet or raise, as a fraction of the pot: 1e-300 of it added to the chips already
# in changed nothing, so the same player could bet again without end (found by the fuzz)
MIN_SIZE = 1e-6


def _size(x, what: str):
    """A bet size: a positive finite fraction of the pot, or "allin"."""
    if isinstance(x, str) and x.strip().lower() in ("allin", "all-in", "a"):
        return ALLIN
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise GameError(f"{what}: a bet size is a fraction of the pot or 'allin', got {x!r}")
    if not (math.isfinite(x) and x >= MIN_SIZE):  # a smaller bet can vanish in the chips already in
        raise GameError(f"{what}: a bet size must be a finite fraction of the pot >= {MIN_SIZE:g}, got {x!r}")
    return float(x)


def _sizes(value, streets: int, what: str) -> list[list]:
    """Per street the sizes of `bets` / `raises`: one tuple for every street or one per street."""
    if isinstance(value, (int, float, str)):
        value = (value,)
    if not isinstance(value, (tuple, list)):
        raise GameError(f"{what}: expected a tuple of bet sizes such as (0.5, 1, allin), got {value!r}")
    per_street = value and all(isinstance(v, (tuple, list)) for v in value)
    if per_street and len(value) != streets:
        raise GameError(f"{what}: {len(value)} streets of sizes for a spot of {streets}")
    rows = list(value) if per_street else [value] * streets
    out = []
    for row in rows:
        sizes = [_size(x, what) for x in row]
        fractions = sorted({x for x in sizes if x != ALLIN})
        out.append(fractions + ([ALLIN] if ALLIN in sizes else []))
    return out


def _fmt(f: float) -> str:
    return f"{f:g}"


class HoldemSpot(Game):
    """A hold'em subgame from the flop (`streets=3`), the turn (2) or the river (1); see the
    module docstring. `ranks` and `suits` shrink the deck (small games for tests: the generic
    form and the LP can solve them)."""

    public_form = True  # dealt once, then public

    def __init__(self, board: str, pot: float = 10, stack: float = 100, range0: str | None = None,
                 range1: str | None = None, bets=(0.5, 1, ALLIN), raises=None, cap: int = 2,
                 ranks: str = RANKS, suits: str = SUITS, suit_isomorphism: bool = False, *, streets: int, kind: str):
        self.streets, self.kind = streets, kind
        if not isinstance(suit_isomorphism, bool):
            raise GameError(f"{kind}: suit_isomorphism must be True or False, got {suit_isomorphism!r}")
        self.board = parse_cards(board, f"{kind}: board")
        want = 6 - streets
        if len(self.board) != want:
            raise GameError(f"{kind}: board {board!r} has {len(self.board)} cards; the {kind.split('_')[1]} "
                            f"needs {want}")
        for what, v in (("pot", pot), ("stack", stack)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise GameError(f"{kind}: {what} must be a finite number, got {v!r}")
        if not pot > 0:
            raise GameError(f"{kind}: pot must be > 0, got {pot!r}")
        if not stack > 0:
            raise GameError(f"{kind}: stack must be > 0, got {stack!r}")
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 0:
            raise GameError(f"{kind}: cap (raises a street) must be a whole number >= 0, got {cap!r}")
        self.pot, self.stack, self.cap = float(pot), float(stack), cap
        self.bets = _sizes(bets, streets, f"{kind}: bets")
        self.raises = _sizes(bets if raises is None else raises, streets, f"{kind}: raises")
        self.deck = deck_of(ranks, suits, kind)
        off = [c for c in self.board if not self.deck[c]]
        if off:
            raise GameError(f"{kind}: board card {card_name(off[0])} is not in the deck ({ranks} x {suits})")
        need = len(self.board) + 4 + streets - 1  # the board, two hands of two, the cards to come
        if int(self.deck.sum()) < need:
            raise GameError(f"{kind}: the deck ({ranks} x {suits}) holds {int(self.deck.sum())} cards; the board, "
                            f"two hands and {streets - 1} card(s) to come need {need}")
        # hands that hold a board card or a card outside the deck get no weight
        usable = self.deck[HANDS].all(axis=1) & ~np.isin(HANDS, self.board).any(axis=1)
        self.weights = []
        for p, text in enumerate((range0, range1)):
            w = parse_range(text, f"{kind}: range{p}") * usable
            if not w.any():
                raise GameError(f"{kind}: range{p} {text!r} holds no hand that the board and deck leave possible")
            self.weights.append(w / w.max())  # relative weights: 1e-300 each would vanish in the products below
        self.compat = _compat()
        # [1326] player 1's weight left beside each hand of player 0 (the relation is symmetric;
        # its float copy is the product's own cast, made once: 3.0 -> 0.2 ms a spot)
        mass = self.weights[1] @ _compat_float()
        deal0 = self.weights[0] * mass
        if not deal0.sum() > 0:
            raise GameError(f"{kind}: every pair of hands of the two ranges shares a card; nothing can be dealt")
        self.deal0 = deal0 / deal0.sum()
        self.suit_isomorphism = suit_isomorphism
        # the transpositions of two suits (a, b) that leave the deck and both ranges as they are:
        # where the board also holds the same ranks in a and b, a card of b deals the subtree of
        # its twin in a, its hands traded (`HoldemVector.card_symmetries`)
        self.swaps = {}
        for a in range(4):
            for b in range(a + 1, 4) if suit_isomorphism else ():
                perm = suit_swap(a, b)
                if np.array_equal(self.deck[traded_cards(a, b)], self.deck) and all(
                        np.array_equal(w[perm], w) for w in self.weights):
                    self.swaps[a, b] = perm
        self._build_tree()
        names = {"ranks": ranks, "suits": suits, "range0": range0, "range1": range1, "raises": raises,
                 "suit_isomorphism": suit_isomorphism}
        defaults = {"ranks": RANKS, "suits": SUITS, "range0": None, "range1": None, "raises": None,
                    "suit_isomorphism": False}
        extra = "".join(f", {k}={v!r}" for k, v in names.items() if v != defaults[k])
        self.name = (f"{kind}(board={''.join(card_names(self.board))!r}, pot={pot:g}, stack={stack:g}, "
                     f"bets={self._bets_text(bets)}, cap={cap}{extra})")
        self._strength = self._vector = None  # made when first asked for

    @staticmethod
    def _bets_text(bets) -> str:
        if isinstance(bets, (tuple, list)):
            return "(" + ", ".join(HoldemSpot._bets_text(b) for b in bets) + ("," if len(bets) == 1 else "") + ")"
        return _fmt(bets) if isinstance(bets, (int, float)) else repr(bets)

    # -- the betting tree, built once: a table of nodes --------------------------------------

    def _build_tree(self):
        alphabet = ["fold", "check", "call"]
        alphabet += sorted({f"bet {_fmt(f)}" for row in self.bets for f in row if f != ALLIN},
                           key=lambda a: float(a.split()[1]))
        alphabet += sorted({f"raise {_fmt(f)}" for row in self.raises for f in row if f != ALLIN},
                           key=lambda a: float(a.split()[1]))
        alphabet.append(ALLIN)
        self.actions = tuple(alphabet)
        t = BettingTable(alphabet, MAX_NODES, f"{self.kind}: the bet abstraction")
        node = t.node

        def end_street(c, s, ln):
            if s + 1 == self.streets:
                return node(TERMINAL, SHOWDOWN, c, s, ln)
            u = node(CHANCE, 0, c, s, ln)  # the next card
            t.link(u, alphabet[0], begin(c, s + 1, ln + ("",)))  # a chance node's child in column 0
            return u

        def begin(c, s, ln):
            if c[0] >= self.stack:  # both all in: no more betting
                return end_street(c, s, ln)
            return decide(0, c, s, ln, 0, False)

        def decide(p, c, s, ln, raises, acted):
            u = node(p, 0, c, s, ln)
            pot = self.pot + c[0] + c[1]
            to_call = c[1 - p] - c[p]
            left = self.stack - c[p]

            def after(action, cc, then):  # the child `then` makes after `action`, with contributions cc
                t.link(u, action, then(cc, ln[:-1] + ((ln[-1] + " " + action).strip(),)))

            if to_call == 0:
                after("check", c, lambda cc, l2: end_street(cc, s, l2) if acted
                      else decide(1 - p, cc, s, l2, raises, True))
                allin = ALLIN in self.bets[s]
                for f in self.bets[s]:
                    if f == ALLIN:
                        continue
                    amount = f * pot
                    if amount >= left:
                        allin = True
                        continue
                    cc = list(c)
                    cc[p] += amount
                    after(f"bet {_fmt(f)}", cc, lambda cc, l2: decide(1 - p, cc, s, l2, raises, True))
                if allin and left > 0:
                    cc = list(c)
                    cc[p] = self.stack
                    after(ALLIN, cc, lambda cc, l2: decide(1 - p, cc, s, l2, raises, True))
            else:
                after("fold", c, lambda cc, l2: node(TERMINAL, FOLD0 if p == 0 else FOLD1, cc, s, l2))
                cc = list(c)
                cc[p] = c[1 - p]
                after("call", cc, lambda cc, l2: end_street(cc, s, l2))
                if raises < self.cap and left > to_call:
                    allin = ALLIN in self.raises[s]
                    for f in self.raises[s]:
                        if f == ALLIN:
                            continue
                        total = c[1 - p] + f * (pot + to_call)
                        if total >= self.stack:
                            allin = True
                            continue
                        cc = list(c)
                        cc[p] = total
                        after(f"raise {_fmt(f)}", cc, lambda cc, l2: decide(1 - p, cc, s, l2, raises + 1, True))
                    if allin:
                        cc = list(c)
                        cc[p] = self.stack
                        after(ALLIN, cc, lambda cc, l2: decide(1 - p, cc, s, l2, raises + 1, True))
            return u

        begin([0.0, 0.0], 0, ("",))
        t.finish()
        self.tree = t

    # -- sizes --------------------------------------------------------------------------------

    def _pairs(self) -> int:
        return int(np.count_nonzero((self.weights[0] > 0)[:, None] & (self.weights[1] > 0)[None] & self.compat))

    def _subtree(self, held: int, terminals: bool = False) -> int:
        """Nodes of the tree (`terminals`: its terminals only), each card node's subtree counted
        once per card it deals: the deck less the board, the cards dealt before it and `held`
        hole cards (4 for a deal's tree, 0 for the public tree, which keeps `_kept_cards()` where
        a player acts after the card)."""
        t = self.tree
        kept = self._kept_cards() if held == 0 else {}
        n = (t.mover == TERMINAL).astype(np.float64) if terminals else np.ones(len(t.mover), np.float64)
        for u in range(len(n) - 1, -1, -1):  # children have larger ids
            kids = t.next[u][t.next[u] >= 0]
            # a card node on street s deals the (s + 1)-th card after the board
            times = int(self.deck.sum()) - len(self.board) - held - int(t.street[u]) if t.mover[u] == CHANCE else 1
            if t.mover[u] == CHANCE and int(t.street[u]) in kept and t.mover[t.next[u, 0]] in (0, 1):
                times = kept[int(t.street[u])]
            n[u] += times * n[kids].sum()
        return round(n[0])

    def _kept_cards(self) -> dict[int, float]:
        """{street: cards} a public tree keeps at a card node of that street where a player acts
        after it, with `suit_isomorphism` (one card of each class, `canonical_deal`): the turn's
        (or a turn spot's river's) count, and a flop's river's averaged over the kept turns, so
        that products along a path sum to the paths kept; {} without classes."""
        if not self.swaps or self.streets == 1:
            return {}
        if "_kept" not in self.__dict__:  # (once: a flop's 2,352 runs of two cards)
            left = [c for c in np.flatnonzero(self.deck).tolist() if c not in self.board]
            first = [c for c in left if self.canonical_deal([c])[0] == [c]]
            self._kept = {0: float(len(first))}
            if self.streets == 3:
                second = sum(1 for a in first for b in left if b != a and self.canonical_deal([a, b])[0] == [a, b])
                self._kept[1] = second / len(first)
        return self._kept

    def size_hint(self):
        """The deal (a root, then a chance node per hand of player 0), then per deal the betting
        tree with, at each card node, one subtree per card left."""
        return 1 + int(np.count_nonzero(self.deal0)) + self._pairs() * self._subtree(4), True

    def public_size_hint(self):
        """Public nodes: the betting nodes, a subtree per card the board leaves at each card node;
        the types; the entries of the dense payoff matrices (T0 x T1 a payoff class) and of the
        showdown's factors (T0 + T1 a class), from the exact count of payoff classes (`_classes`:
        the compile's 22 on the river spot of the docs, 12,012 on the turn, 299,688 on the flop);
        the terminals a board has, on average over the runs of cards still to come."""
        public = self._subtree(0)
        t1 = (self.weights[1] > 0) & (self.weights[0] @ _compat_float() > 0)
        types = (int(np.count_nonzero(self.deal0)), int(np.count_nonzero(t1)))
        classes = self._classes()
        left = int(self.deck.sum()) - len(self.board)
        boards = math.prod(left - i for i in range(5 - len(self.board)))  # the card sequences still to come
        if self._kept_cards():  # those a tree dealing one card of each class keeps
            boards = round(math.prod(self._kept_cards().values()))
        return public, types, classes * types[0] * types[1], classes * sum(types), -(-self._subtree(0, True) // boards)

    def _classes(self) -> int:
        """Payoff classes of the public tree (`BettingTable.payoff_classes`)."""
        return self.tree.payoff_classes(int(self.deck.sum()) - len(self.board), self._kept_cards())

    # -- hand strength ------------------------------------------------------------------------

    def strength(self) -> np.ndarray:
        """[R, 1326] int64: the hands' strengths on the board and the cards dealt after it, in
        row `board_row(first, second)` (row 0 the river spot's board, row 1 + c a turn spot's
        board with river card c, a flop spot's 53 + c1 + 53 c2 the turn c1 and river c2); -1 where
        a hand holds a board card, and in the rows of boards not complete."""
        if self._strength is None:
            table = np.full(({1: 1, 2: 53, 3: 53 * 53}[self.streets], NUM_HANDS), -1, dtype=np.int64)
            left = [int(c) for c in np.flatnonzero(self.deck) if c not in self.board]
            if self.streets == 1:
                table[0] = strengths(self.board)
            elif self.streets == 2:
                for c in left:
                    table[1 + c] = strengths(self.board + (c,))
            else:  # the turn and river in either order make one board: evaluated once
                for i, c1 in enumerate(left):  # game construction: 1,176 boards, 1.2 s
                    for c2 in left[i + 1:]:
                        table[board_row(c1, c2)] = table[board_row(c2, c1)] = strengths(self.board + (c1, c2))
            self._strength = table
        return self._strength

    # -- the per-node protocol: state = (hand 0, hand 1, first card, second card, betting node),
    # -1 unset; the first and second cards are those dealt after the board (a turn spot's river;
    # a flop spot's turn and river)

    def initial_state(self):
        return (-1, -1, -1, -1, 0)

    def player(self, state):
        return CHANCE if state[1] < 0 else int(self.tree.mover[state[4]])

    def chance_outcomes(self, state):
        row = self.vectorized().chance(np.array([state], dtype=np.int64))[0]
        name = hand_name if state[1] < 0 else card_name
        return [(name(int(o)), float(row[o])) for o in np.flatnonzero(row)]

    def legal_actions(self, state):
        return tuple(self.actions[a] for a in np.flatnonzero(self.tree.legal[state[4]]))

    def next_state(self, state, action):
        h0, h1, c1, c2, u = state
        if h1 < 0:
            h = hand_index(parse_cards(action, "deal"))
            return (h, -1, -1, -1, u) if h0 < 0 else (h0, h, -1, -1, u)
        if self.tree.mover[u] == CHANCE:
            card = parse_cards(action, "card")[0]
            return (h0, h1, card, -1, int(self.tree.next[u, 0])) if c1 < 0 else \
                (h0, h1, c1, card, int(self.tree.next[u, 0]))
        return (h0, h1, c1, c2, int(self.tree.next[u, self.actions.index(action)]))

    def utilities(self, state):
        return self.vectorized().state_utilities(state)

    def infoset_key(self, state):
        return self.vectorized().state_infoset_key(state)

    def describe(self, state, player):
        h0, h1, c1, c2, u = state
        board = card_names(self.board) + [card_name(c) for c in (c1, c2) if c >= 0]
        own = hand_name(h0 if player == 0 else h1)
        return (f"your hand {own}; board {' '.join(board)}; pot {self.pot:g}, you put in "
                f"{self.tree.contrib[u, player]:g} more, the other {self.tree.contrib[u, 1 - player]:g}; "
                f"betting: {self.tree.line[u] or '-'}")

    def canonical_deal(self, dealt) -> tuple[list[int], list[int], int]:
        """(the cards the public form deals in place of `dealt`, the cards dealt after the board
        in order; the map of suits [4] that takes a hand below `dealt` to its twin below them;
        how many runs of cards they stand for), by the classes of `HoldemVector.card_symmetries`
        on a key's cards (a player acts after each).

        Example:
            >>> g = holdem_turn("AdKdQhJh", range0="AA", range1="KK", bets=(1,), cap=0, suit_isomorphism=True)
            >>> g.canonical_deal([parse_cards("2s")[0]])  # spades trade with clubs (0): 2s deals 2c's subtree
            ([0], [3, 1, 2, 0], 2)
        """
        suit = [0, 1, 2, 3]  # the map so far
        out, twins, board = [], 1, list(self.board)
        for c in dealt:
            c = c // 4 * 4 + suit[c % 4]
            b = c % 4
            kin = self._alike(board, b)
            twins *= len(kin)
            a = kin[0]
            if a != b:  # trade suits a and b from here on
                c = c - b + a
                suit = [a if s == b else b if s == a else s for s in suit]
            out.append(c)
            board.append(c)
        return out, suit, twins

    def _alike(self, board, b: int) -> list[int]:
        """The suits alike with suit `b` on `board` (b among them, the first the class's kept
        one): those the board holds the same ranks in and the ranges trade with b (`swaps`)."""
        ranks = [{c // 4 for c in board if c % 4 == s} for s in range(4)]
        return [a for a in range(4) if a == b or ((min(a, b), max(a, b)) in self.swaps and ranks[a] == ranks[b])]

    def canonical_key(self, key: str) -> str:
        if not self.swaps:
            return key
        parts = key.split("|")
        cards = parts[1].split("/") if len(parts) == 3 else []
        if len(cards) < 2:
            return key
        # a whole policy's keys share few runs of dealt cards and 1,326 hands: each run's deal and
        # each (hand, map of suits) is worked out once (201,240 keys of a flop: 4.4 s -> 0.2 s)
        memo = self.__dict__.setdefault("_canonical_memo", {})
        run = memo.get(parts[1])
        if run is None:
            dealt, suit, _ = self.canonical_deal([parse_cards(c, "card")[0] for c in cards[1:]])
            run = memo[parts[1]] = ("/".join([cards[0]] + card_names(dealt)), tuple(suit))
        hand = memo.get((parts[0], run[1]))
        if hand is None:
            hand = memo[parts[0], run[1]] = hand_name(hand_index([c // 4 * 4 + run[1][c % 4]
                                                                   for c in parse_cards(parts[0], "hand")]))
        return "|".join([hand, run[0], parts[2]])

    def vectorized(self):
        if self._vector is None:
            self._vector = HoldemVector(self)
        return self._vector


def board_row(first, second):
    """The row of `HoldemSpot.strength` of the board with the cards `first` and `second` (-1:
    none) dealt after it; works on arrays.

    Example:
        >>> board_row(-1, -1), board_row(7, -1), board_row(7, 9)
        (0, 8, 538)
    """
    return (first + 1) + 53 * (second + 1)


class HoldemVector(VectorGame):
    """The vectorised form of a hold'em spot: state row = (hand 0, hand 1, first card, second
    card, betting node), as in the per-node protocol. The deal is two chance levels (player 0's
    hand by its marginal, then player 1's given it), so no level holds more than 1,326 x 1,326
    outcomes."""

    width = 5
    public_hands = (0, 1)
    num_outcomes = NUM_HANDS

    def __init__(self, game: HoldemSpot):
        self.game, self.name, self.actions = game, game.name, game.actions

    def initial(self):
        return np.array([[-1, -1, -1, -1, 0]], dtype=np.int64)

    def player(self, s):
        return np.where(s[:, 1] < 0, CHANCE, self.game.tree.mover[s[:, 4]])

    def legal(self, s):
        return self.game.tree.legal[s[:, 4]]

    def chance(self, s):
        g = self.game
        if len(s) and (s[:, 0] >= 0).all() and (s[:, 1] < 0).all():
            # player 1's hand below each of player 0's (the compiler asks for them all at once):
            # returned as made, not written into a zeroed [n, 1326] through a mask (a batch of
            # spots makes these a thousand times)
            return self._second(s[:, 0])
        out = np.zeros((len(s), NUM_HANDS))
        first = s[:, 0] < 0
        out[first] = g.deal0
        second = ~first & (s[:, 1] < 0)
        if second.any():
            out[second] = self._second(s[second, 0])
        card = ~first & ~second
        if card.any():
            held = np.zeros((int(card.sum()), NUM_CARDS), bool)
            held[:, list(g.board)] = True
            rows = np.arange(len(held))[:, None]
            held[rows, HANDS[s[card, 0]]] = True
            held[rows, HANDS[s[card, 1]]] = True
            dealt = s[card, 2]  # the flop's turn card, when the river comes
            held[rows[dealt >= 0, 0], dealt[dealt >= 0]] = True
            left = g.deck[None] & ~held
            out[card, :NUM_CARDS] = left / left.sum(axis=1, keepdims=True)
        return out

    def _second(self, h0: np.ndarray) -> np.ndarray:
        """[n, 1326]: player 1's hand dealt after player 0's hands h0 [n], each row summing to 1."""
        w = self.game.weights[1][None] * self.game.compat[h0]
        w /= w.sum(axis=1, keepdims=True)
        return w

    def next(self, s, a):
        g = self.game
        out = s.copy()
        first, second = s[:, 0] < 0, (s[:, 0] >= 0) & (s[:, 1] < 0)
        out[first, 0] = a[first]
        out[second, 1] = a[second]
        move = ~first & ~second
        u = s[move, 4]
        card = g.tree.mover[u] == CHANCE
        rows = np.flatnonzero(move)
        second_card = s[rows, 2] >= 0  # the first card is out: this deals the second
        out[rows[card & ~second_card], 2] = a[move][card & ~second_card]
        out[rows[card & second_card], 3] = a[move][card & second_card]
        out[rows, 4] = np.where(card, g.tree.next[u, 0], g.tree.next[u, np.where(card, 0, a[move])])
        return out

    def utility(self, s):
        g = self.game
        strength, row = g.strength(), board_row(s[:, 2], s[:, 3])
        return g.tree.utility(s[:, 4], g.pot / 2, strength[row, s[:, 0]], strength[row, s[:, 1]])

    def card_showdown(self):
        return HANDS, self.game.weights[0], self.game.weights[1]

    def dealt_by_type(self):
        return True  # player 0's hand (by its marginal `deal0`), then player 1's given it

    def card_boards(self, s):
        g = self.game
        # the turn and river in either order are one board; a fold before the river reads row 0,
        # all -1 on a turn or flop spot (its strengths are ignored, b = 0), whatever was dealt
        first, second = np.minimum(s[:, 2], s[:, 3]), np.maximum(s[:, 2], s[:, 3])
        complete = (s[:, 2:4] >= 0).sum(1) == g.streets - 1
        rows = np.where(complete, np.where(first >= 0, board_row(first, second), board_row(second, first)), 0)
        used, board = np.unique(rows, return_inverse=True)
        return (*g.tree.payoff(s[:, 4], g.pot / 2), board.reshape(-1).astype(np.int64), g.strength()[used])

    def card_chance(self, s):
        # the next card: any card of the deck not on the board, not dealt before (the flop's turn,
        # when the river comes) and in neither hand, alike
        g = self.game
        left = np.broadcast_to(g.deck, (len(s), NUM_CARDS)).copy()
        left[:, list(g.board)] = False
        dealt = s[:, 2] >= 0
        left[np.flatnonzero(dealt), s[dealt, 2]] = False
        n = left.sum(axis=1, keepdims=True) - 4
        if (n <= 0).any():
            return None
        return np.broadcast_to(np.arange(NUM_CARDS), (len(s), NUM_CARDS)), left / n

    def card_symmetries(self, s):
        # suits a < b are one class where the board so far (with a flop's turn card, when the
        # river comes) holds the same ranks in both and the ranges trade them (`HoldemSpot.swaps`):
        # a card of b deals the subtree of its twin in the class's first suit. Not where no one
        # acts after the card (both all in): the run of cards to the showdown keeps every card.
        g = self.game
        if not g.swaps:
            return None
        pairs = list(g.swaps)
        perms = np.stack([np.arange(NUM_HANDS)] + [g.swaps[k] for k in pairs])  # [1 + swaps, 1326]; 0: none
        canon = np.broadcast_to(np.arange(NUM_CARDS), (len(s), NUM_CARDS)).copy()
        swap = np.zeros((len(s), NUM_CARDS), np.int64)
        acts = np.isin(g.tree.mover[g.tree.next[s[:, 4], 0]], (0, 1))
        dealt = s[:, 2]
        for d in np.unique(dealt[acts]).tolist():  # compile time: a board at a time (<= 50 on a flop)
            rows = np.flatnonzero(acts & (dealt == d))
            board = list(g.board) + ([d] if d >= 0 else [])
            for b in range(4):
                a = g._alike(board, b)[0]
                if a != b:
                    twins = np.arange(13) * 4 + b
                    canon[np.ix_(rows, twins)] = twins - b + a
                    swap[np.ix_(rows, twins)] = 1 + pairs.index((a, b))
        return canon, swap, perms

    def payoff_key(self, s):
        return self.game.tree.payoff_key(s[:, 4])

    def infoset(self, s):
        g = self.game
        u = s[:, 4]
        own = np.where(g.tree.mover[u] == 0, s[:, 0], s[:, 1])
        return ((u * (NUM_CARDS + 1) + s[:, 2] + 1) * (NUM_CARDS + 1) + s[:, 3] + 1) * NUM_HANDS + own

    def infoset_names(self, keys):
        g = self.game
        out = []
        hands, line = hand_names(), g.tree.line
        # the cards part of a key, by (first, second) dealt card + 1 (0: none), made once each
        board, runs = "".join(card_names(g.board)), {}
        for k in np.asarray(keys).tolist():
            rest, own = divmod(k, NUM_HANDS)
            u, dealt = divmod(rest, (NUM_CARDS + 1) ** 2)
            cards = runs.get(dealt)
            if cards is None:
                cards = runs[dealt] = board + "".join("/" + card_name(c - 1) for c in divmod(dealt, NUM_CARDS + 1)
                                                      if c > 0)
            out.append(f"{hands[own]}|{cards}|{line[u]}")
        return out


@functools.lru_cache(maxsize=1)
def _compat() -> np.ndarray:
    """[1326, 1326] bool: the hands share no card (one array for every spot: a batch of a
    thousand spots would keep a thousand copies of its 1.8 MB). Read-only."""
    share = (HANDS[:, None, :, None] == HANDS[None, :, None, :]).any(axis=(2, 3))
    compat = ~share
    compat.setflags(write=False)
    return compat


@functools.lru_cache(maxsize=1)
def _compat_float() -> np.ndarray:
    """`_compat()` as float64 (14 MB, once): the vector products of a spot's deal read it."""
    out = _compat().astype(np.float64)
    out.setflags(write=False)
    return out


def holdem_river(board: str, pot: float = 10, stack: float = 100, range0: str | None = None,
                 range1: str | None = None, bets=(0.5, 1, ALLIN), raises=None, cap: int = 2,
                 ranks: str = RANKS, suits: str = SUITS, suit_isomorphism: bool = False) -> HoldemSpot:
    """A river spot: a 5-card board, one street of betting, then the showdown.

    Example:
        >>> g = holdem_river("Ks7d2c9h4s", range0="AA", range1="KK")
        >>> g.public_size_hint()[1]
        (6, 3)
    """
    return HoldemSpot(board, pot, stack, range0, range1, bets, raises, cap, ranks, suits, suit_isomorphism,
                      streets=1, kind="holdem_river")


def holdem_flop(board: str, pot: float = 10, stack: float = 100, range0: str | None = None,
                range1: str | None = None, bets=(0.5, 1, ALLIN), raises=None, cap: int = 2,
                ranks: str = RANKS, suits: str = SUITS, suit_isomorphism: bool = False) -> HoldemSpot:
    """A flop spot: a 3-card board, the flop's betting, the turn card dealt by chance from the
    cards neither hand holds, the turn's betting, the river card likewise, the river's betting,
    the showdown. `suit_isomorphism=True`: the public-tree form deals one card of each class of
    suits the board and both ranges leave alike (`HoldemVector.card_symmetries`); the game is
    the same.

    Example:
        >>> g = holdem_flop("Ks7d2c", range0="AA", range1="KK", bets=(1,), cap=0)
        >>> g.public_size_hint()[0] > 49 * 48
        True
    """
    return HoldemSpot(board, pot, stack, range0, range1, bets, raises, cap, ranks, suits, suit_isomorphism,
                      streets=3, kind="holdem_flop")


def holdem_turn(board: str, pot: float = 10, stack: float = 100, range0: str | None = None,
                range1: str | None = None, bets=(0.5, 1, ALLIN), raises=None, cap: int = 2,
                ranks: str = RANKS, suits: str = SUITS, suit_isomorphism: bool = False) -> HoldemSpot:
    """A turn spot: a 4-card board, the turn's betting, the river card dealt by chance from
    the cards neither hand holds, the river's betting, the showdown (`suit_isomorphism`: as
    `holdem_flop`'s).

    Example:
        >>> g = holdem_turn("Ks7d2c9h", range0="AA", range1="KK", bets=(1,), cap=0)
        >>> g.public_size_hint()[0] > 48
        True
    """
    return HoldemSpot(board, pot, stack, range0, range1, bets, raises, cap, ranks, suits, suit_isomorphism,
                      streets=2, kind="holdem_turn")
