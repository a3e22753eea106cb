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
    >>> import games
    >>> g = games.make("domino(2,2)")
    >>> s = g.next_state(g.initial_state(), "00,12|01,22")
    >>> g.legal_actions(s)
    ('00', '12')
"""

from __future__ import annotations

from itertools import combinations
from math import comb

from .base import CHANCE, TERMINAL, Game, GameError

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
        if not isinstance(max_pips, int) or max_pips < 1:
            raise GameError(f"domino: max_pips must be an integer >= 1, got {max_pips!r}")
        self.tiles = tuple((a, b) for a in range(max_pips + 1) for b in range(a, max_pips + 1))
        if not isinstance(hand, int) or hand < 1 or 2 * hand > len(self.tiles):
            raise GameError(f"domino: {len(self.tiles)} tiles cannot deal hands of {hand!r} to two players "
                            f"(needs 1 <= hand <= {len(self.tiles) // 2})")
        self.max_pips, self.hand = max_pips, hand
        self.name = f"domino({max_pips},{hand})"
        deals = [(h0, h1) for h0 in combinations(self.tiles, hand)
                 for h1 in combinations([t for t in self.tiles if t not in h0], hand)]
        p = 1.0 / (comb(len(self.tiles), hand) * comb(len(self.tiles) - hand, hand))
        self._deals = [(f"{','.join(map(_name, a))}|{','.join(map(_name, b))}", p) for a, b in deals]
        self._by_name = {_name(t): t for t in self.tiles}

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
