"""Domino(M, N), the thesis' two-player draw domino, in the compact model.

Rules (../shared/reference/games.md): tiles (a, b), 0 <= a <= b <= M; each player receives N
tiles; the rest form a face-down pack. Player 1 opens with any tile of its hand (the tile
(a, b) makes the ends a | b). A tile goes on the left if it shows the left end, on the right
if it shows the right end and the ends differ. A player who can play must play; one who
cannot draws one tile if the pack is not empty, seeing it, and must play it at once if it
fits, otherwise passes; with an empty pack, passes. The game ends, checked before each move,
when a hand is empty (that player wins the opponent's pip total) or when the pack is empty and
the last two moves were passes (blocked: the lower pip total wins the opponent's pip total;
equal totals pay 0).

Compact model: hands are sets, the deal is one chance node over pairs of hands, and every
draw is a chance node inside the tree, uniform over the tiles not in either hand (the pack in
random order, seen one tile at a time). A player's information: own hand, the public moves
(placements, passes, and who drew), and the identity of its own draws.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("domino(2,2)")
    >>> s = g.next_state(g.initial_state(), "00,12|01,22")
    >>> g.legal_actions(s)
    ('00', '12')
"""

from __future__ import annotations

import functools
from itertools import combinations
from math import comb

import numpy as np

from .base import CHANCE, PAST_ANY_LIMIT, TERMINAL, Game, GameError
from .vector import KeyTable, VectorGame

PASS = "pass"


def _name(tile) -> str:
    return f"{tile[0]}{tile[1]}"


class Domino(Game):
    """Domino(max_pips, hand). State = (hands, ends, turn, history, passes, drawn, board).

    hands:   (frozenset, frozenset) of tiles; the pack = the tiles in no hand and not on the board
    ends:    (left, right) or None before the opening
    turn:    the player to move (or to draw, at a draw chance node)
    history: per player, the events it has seen, as key strings
    passes:  consecutive passes so far; drawn: the tile just drawn that must be played, or None
    board:   frozenset of the tiles played
    """

    def __init__(self, max_pips: int = 2, hand: int = 2):
        if isinstance(max_pips, bool) or not isinstance(max_pips, int) or max_pips < 1:
            raise GameError(f"domino: max_pips must be an integer >= 1, got {max_pips!r}")
        n = (max_pips + 1) * (max_pips + 2) // 2  # the tiles (a, b), a <= b
        if isinstance(hand, bool) or not isinstance(hand, int) or hand < 1 or 2 * hand > n:
            raise GameError(f"domino: {n:,} tiles cannot deal hands of {hand!r} to two players "
                            f"(needs 1 <= hand <= {n // 2:,})")
        self.max_pips, self.hand, self.num_tiles = max_pips, hand, n
        self.name = f"domino({max_pips},{hand})"

    # made on first use, as the deals are: domino(10**30) has 5e59 tiles, which a size check refuses first
    @functools.cached_property
    def tiles(self) -> tuple[tuple[int, int], ...]:
        return tuple((a, b) for a in range(self.max_pips + 1) for b in range(a, self.max_pips + 1))

    @functools.cached_property
    def _by_name(self) -> dict[str, tuple[int, int]]:
        return {_name(t): t for t in self.tiles}

    @functools.cached_property
    def num_deals(self) -> int:
        n, h = self.num_tiles, self.hand
        return comb(n, h) * comb(n - h, h)

    @functools.cached_property
    def _deal_tiles(self) -> list:
        # made on first use: domino(9,9) has 10^20 deals, which a size check refuses first
        return [(h0, h1) for h0 in combinations(self.tiles, self.hand)
                for h1 in combinations([t for t in self.tiles if t not in h0], self.hand)]

    @functools.cached_property
    def _deals(self) -> list[tuple[str, float]]:
        p = 1.0 / self.num_deals
        return [(f"{','.join(map(_name, a))}|{','.join(map(_name, b))}", p) for a, b in self._deal_tiles]

    def size_hint(self):
        """At least the deal, and per deal player 1's first decision and one move out of it (a
        lower bound: the rest of the play is not counted)."""
        # deals >= C(n, h) >= max(n, 2^h) (n >= 2h): past any limit from 1,000 cards a hand or
        # 10^300 tiles, and not worked out there (a product of thousands of huge numbers)
        if self.hand >= 1000 or self.num_tiles > PAST_ANY_LIMIT:
            return PAST_ANY_LIMIT, False
        return 1 + 2 * self.num_deals, False

    # -- helpers --------------------------------------------------------------------------
    def _pack(self, state):
        hands, ends, turn, history, passes, drawn, board = state
        return [t for t in self.tiles if t not in hands[0] and t not in hands[1] and t not in board]

    @staticmethod
    def _placements(tile, ends):
        """The sides on which `tile` can go: 'L' and/or 'R' (just 'L' when the ends are equal)."""
        if ends is None:
            return ("",)
        left, right = ends
        sides = []
        if left in tile:
            sides.append("L")
        if right in tile and right != left:
            sides.append("R")
        return tuple(sides)

    def _moves(self, tiles, ends):
        return tuple(_name(t) + s for t in sorted(tiles) for s in self._placements(t, ends))

    # -- protocol -------------------------------------------------------------------------
    def initial_state(self):
        return None

    def player(self, state):
        if state is None:
            return CHANCE
        hands, ends, turn, history, passes, drawn, board = state
        if self._winner(state) is not None:
            return TERMINAL
        if drawn is None and not self._moves(hands[turn], ends) and self._pack(state):
            return CHANCE  # must draw: the draw is a chance node, no decision before it
        return turn

    def _winner(self, state):
        """None while the game goes on, else the payoff to player 1 (checked before each move)."""
        hands, ends, turn, history, passes, drawn, board = state
        if drawn is not None:
            return None
        pips = [sum(a + b for a, b in h) for h in hands]
        for p in (0, 1):
            if not hands[p]:
                return pips[1] if p == 0 else -pips[0]
        if passes >= 2 and not self._pack(state):
            return 0 if pips[0] == pips[1] else (pips[1] if pips[0] < pips[1] else -pips[0])
        return None

    def chance_outcomes(self, state):
        if state is None:
            return self._deals
        pack = self._pack(state)
        return [(_name(t), 1.0 / len(pack)) for t in pack]

    def legal_actions(self, state):
        hands, ends, turn, history, passes, drawn, board = state
        if drawn is not None:  # must play the drawn tile if it fits, else pass keeping it
            return self._moves([drawn], ends) or (PASS,)
        return self._moves(hands[turn], ends) or (PASS,)

    def next_state(self, state, action):
        if state is None:
            a, b = action.split("|")
            hands = tuple(frozenset(self._by_name[t] for t in side.split(",")) for side in (a, b))
            return (hands, None, 0, ((), ()), 0, None, frozenset())
        hands, ends, turn, history, passes, drawn, board = state
        if self.player(state) == CHANCE:  # a draw: the drawer sees the tile, the opponent that a draw happened
            tile = self._by_name[action]
            hands = tuple(h | {tile} if q == turn else h for q, h in enumerate(hands))
            seen = tuple(h + (f"d{action}" if q == turn else "d",) for q, h in enumerate(history))
            return (hands, ends, turn, seen, passes, tile, board)
        if action == PASS:  # a draw-then-pass counts as a pass
            seen = tuple(h + (f"{turn}:{PASS}",) for h in history)
            return (hands, ends, 1 - turn, seen, passes + 1, None, board)
        tile, side = self._by_name[action[:2]], action[2:]
        if ends is None:
            ends = tile
        else:
            left, right = ends
            if side == "L":
                ends = (tile[1] if tile[0] == left else tile[0], right)
            else:
                ends = (left, tile[1] if tile[0] == right else tile[0])
        hands = tuple(h - {tile} if q == turn else h for q, h in enumerate(hands))
        seen = tuple(h + (f"{turn}:{action}",) for h in history)
        return (hands, ends, 1 - turn, seen, 0, None, board | {tile})

    def utilities(self, state):
        u = float(self._winner(state))
        return (u, -u)

    def infoset_key(self, state):
        hands, ends, turn, history, passes, drawn, board = state
        return f"{','.join(map(_name, sorted(hands[turn])))}|{' '.join(history[turn])}"

    def vectorized(self):
        return DominoVector(self)


class DominoVector(VectorGame):
    """Domino level by level. A state row: kind (0 the root, 1 dealt), the two hands and the
    board as bit sets of tile indices, the left and right ends (-1 before the opening), the
    player to move, consecutive passes, the tile just drawn (-1: none), and each player's
    history id.

    A player's history (the events it has seen) is too long for an int64, so histories are
    numbered as nodes of a trie grown while the tree is walked: the id of a history is looked
    up (or made) from its parent's id and the new event, so equal histories get equal ids
    wherever they occur. An infoset key packs the mover's history id and hand.

    Decision actions: tile t on side "" (the opening), "L" or "R" is 3 t + side; "pass" is 3 T.
    Chance outcomes: deal k at the root; tile t at a draw. A batch without the root returns
    only the T tile columns of `chance` (the compiler reads its nonzeros).

    Example:
        >>> from tensorcfr import games
        >>> vg = games.make("domino(2,2)").vectorized()
        >>> s = vg.next(vg.initial(), np.array([0]))  # the first deal: 00,01 | 02,11
        >>> [vg.actions[a] for a in np.flatnonzero(vg.legal(s)[0])]
        ['00', '01']
    """

    KIND, H0, H1, BOARD, LEFT, RIGHT, TURN, PASSES, DRAWN, HIST0, HIST1 = range(11)
    width = 11

    def __init__(self, game: Domino):
        self.name = game.name
        tiles = game.tiles
        self.T = T = len(tiles)
        self.a = np.array([t[0] for t in tiles], np.int64)  # [T] low pips
        self.b = np.array([t[1] for t in tiles], np.int64)  # [T] high pips
        self.bit = np.int64(1) << np.arange(T, dtype=np.int64)  # [T]
        index = {t: i for i, t in enumerate(tiles)}
        mask = lambda hand: sum(1 << index[t] for t in hand)  # noqa: E731
        self.deal = np.array([[mask(h0), mask(h1)] for h0, h1 in game._deal_tiles], np.int64)  # [D, 2]
        self.names = [_name(t) for t in tiles]
        self.actions = tuple(self.names[t] + side for t in range(T) for side in ("", "L", "R")) + (PASS,)
        self.num_outcomes = len(self.deal)
        self.events = 7 * T + 3  # own draw of t: t; the other's draw: T; q passes: T+1+q; q plays a: T+3+q*3T+a
        # the history trie: ids of the codes parent * events + event, and per id (in chunks) its
        # parent and event (id 0 is the empty history)
        self._trie = KeyTable(first_id=1)
        self._parent, self._event = [np.zeros(1, np.int64)], [np.full(1, -1, np.int64)]

    # -- helpers ----------------------------------------------------------------------------
    def _pips(self, hand: np.ndarray) -> np.ndarray:
        """[n] pip totals of bit-set hands [n]."""
        return ((hand[:, None] & self.bit) != 0) @ (self.a + self.b)

    def _pack(self, s):
        return ((np.int64(1) << self.T) - 1) & ~(s[:, self.H0] | s[:, self.H1] | s[:, self.BOARD])

    def _mover_hand(self, s):
        return np.where(s[:, self.TURN] == 0, s[:, self.H0], s[:, self.H1])

    def _playable(self, s):
        """[n, 3T] bool: tile-and-side moves of the tiles the mover may play."""
        cand = np.where(s[:, self.DRAWN] >= 0, np.int64(1) << np.maximum(s[:, self.DRAWN], 0), self._mover_hand(s))
        has = (cand[:, None] & self.bit) != 0  # [n, T]
        left, right = s[:, self.LEFT, None], s[:, self.RIGHT, None]
        opening = left < 0
        moves = np.zeros((len(s), self.T, 3), bool)
        moves[:, :, 0] = has & opening
        moves[:, :, 1] = has & ~opening & ((self.a == left) | (self.b == left))
        moves[:, :, 2] = has & ~opening & ((self.a == right) | (self.b == right)) & (right != left)
        return moves.reshape(len(s), 3 * self.T)

    def _winner(self, s):
        """([n] bool ended, [n] float64 player 0's payoff where ended)."""
        h0, h1 = s[:, self.H0], s[:, self.H1]
        pips0, pips1 = self._pips(h0), self._pips(h1)
        live = s[:, self.DRAWN] < 0
        blocked = (s[:, self.PASSES] >= 2) & (self._pack(s) == 0)
        u = np.where(h0 == 0, pips1, np.where(h1 == 0, -pips0,
                     np.where(pips0 == pips1, 0, np.where(pips0 < pips1, pips1, -pips0))))
        return live & ((h0 == 0) | (h1 == 0) | blocked), u.astype(np.float64)

    def _history(self, parent: np.ndarray, event: np.ndarray) -> np.ndarray:
        """[n] ids of the histories `parent` [n] extended by `event` [n], made where new."""
        uniq, inv = np.unique(parent * self.events + event, return_inverse=True)
        ids, new = self._trie.number(uniq)
        self._parent.append(uniq[new] // self.events)
        self._event.append(uniq[new] % self.events)
        return ids[inv.reshape(-1)]

    # -- protocol -----------------------------------------------------------------------------
    def initial(self):
        return np.array([[0, 0, 0, 0, -1, -1, 0, 0, -1, 0, 0]], np.int64)

    def player(self, s):
        ended, _ = self._winner(s)
        draw = (s[:, self.DRAWN] < 0) & ~self._playable(s).any(axis=1) & (self._pack(s) != 0)
        out = np.where(ended, TERMINAL, np.where(draw, CHANCE, s[:, self.TURN]))
        return np.where(s[:, self.KIND] == 0, CHANCE, out)

    def legal(self, s):
        moves = self._playable(s)
        return np.concatenate([moves, ~moves.any(axis=1, keepdims=True)], axis=1)

    def chance(self, s):
        pack = (self._pack(s)[:, None] & self.bit) != 0  # [n, T]
        draws = pack / pack.sum(axis=1, keepdims=True)
        root = s[:, self.KIND] == 0
        if not root.any():
            return draws
        out = np.zeros((len(s), max(self.num_outcomes, self.T)))
        out[~root, :self.T] = draws[~root]
        out[root, :self.num_outcomes] = 1.0 / self.num_outcomes
        return out

    def next(self, s, a):
        a = np.asarray(a, np.int64)
        out = s.copy()
        root = s[:, self.KIND] == 0
        if root.any():
            out[root] = self.initial()
            out[root, self.KIND] = 1
            out[root, self.H0], out[root, self.H1] = self.deal[a[root], 0], self.deal[a[root], 1]
        dealt = ~root
        draw = dealt & (self.player(s) == CHANCE)
        turn = s[:, self.TURN]
        event = [np.zeros(len(s), np.int64), np.zeros(len(s), np.int64)]  # per player's view
        if draw.any():  # the drawer sees the tile, the other that a draw happened
            d = np.flatnonzero(draw)
            hand = np.where(turn[d] == 0, self.H0, self.H1)
            out[d, hand] |= self.bit[a[d]]
            out[d, self.DRAWN] = a[d]
            for q in (0, 1):
                event[q][d] = np.where(turn[d] == q, a[d], self.T)
        passing = dealt & ~draw & (a == 3 * self.T)
        if passing.any():  # a draw-then-pass counts as a pass
            d = np.flatnonzero(passing)
            out[d, self.TURN] = 1 - turn[d]
            out[d, self.PASSES] += 1
            out[d, self.DRAWN] = -1
            for q in (0, 1):
                event[q][d] = self.T + 1 + turn[d]
        play = dealt & ~draw & (a < 3 * self.T)
        if play.any():
            d = np.flatnonzero(play)
            t, side = a[d] // 3, a[d] % 3
            ta, tb = self.a[t], self.b[t]
            left, right = s[d, self.LEFT], s[d, self.RIGHT]
            out[d, self.LEFT] = np.where(side == 0, ta, np.where(side == 1, np.where(ta == left, tb, ta), left))
            out[d, self.RIGHT] = np.where(side == 0, tb, np.where(side == 2, np.where(ta == right, tb, ta), right))
            hand = np.where(turn[d] == 0, self.H0, self.H1)
            out[d, hand] &= ~self.bit[t]
            out[d, self.BOARD] |= self.bit[t]
            out[d, self.TURN] = 1 - turn[d]
            out[d, self.PASSES] = 0
            out[d, self.DRAWN] = -1
            for q in (0, 1):
                event[q][d] = self.T + 3 + turn[d] * 3 * self.T + a[d]
        moved = np.flatnonzero(dealt)
        for q, col in ((0, self.HIST0), (1, self.HIST1)):
            out[moved, col] = self._history(s[moved, col], event[q][moved])
        return out

    def utility(self, s):
        return self._winner(s)[1]

    def infoset(self, s):
        turn = s[:, self.TURN]
        history = np.where(turn == 0, s[:, self.HIST0], s[:, self.HIST1])
        return (history << self.T) | self._mover_hand(s)

    def _event_name(self, e: int) -> str:
        if e < self.T:
            return f"d{self.names[e]}"
        if e == self.T:
            return "d"
        if e <= self.T + 2:
            return f"{e - self.T - 1}:{PASS}"
        q, a = divmod(e - self.T - 3, 3 * self.T)
        return f"{q}:{self.actions[a]}"

    def infoset_names(self, keys):
        parent, event = np.concatenate(self._parent), np.concatenate(self._event)
        out = []
        for key in np.asarray(keys, np.int64).tolist():
            hand = [self.names[t] for t in range(self.T) if key >> t & 1]
            h, events = key >> self.T, []
            while h:
                events.append(self._event_name(int(event[h])))
                h = int(parent[h])
            out.append(f"{','.join(hand)}|{' '.join(reversed(events))}")
        return out
