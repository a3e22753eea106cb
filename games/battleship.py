"""Battleship with the rules, tree and information states of OpenSpiel's `battleship`.

Each player places its ships on its own board (`board_height` x `board_width`) in turn: player
0's first ship, player 1's first, player 0's second, and so on; a ship goes horizontally or
vertically (a ship of one cell horizontally only) with its top-left corner on a cell, inside
the board and on no cell of the player's own ships. Then the players shoot at each other's
board in turn, player 0 first, `num_shots` shots each (`allow_repeated_shots=False`: never twice
at one cell). A shot is water, a hit, or a hit that sinks a ship (all its cells hit). The game
ends when the shots run out or a fleet is sunk; each player then gets the values of the ships
it sank minus `loss_multiplier` times the values of its own ships sunk (zero-sum with a
multiplier of 1, the only one taken here).

A player sees its own placements, its own shots with their outcome and where the other shot:
infoset keys are OpenSpiel's information-state strings and action names its own, so policies
export to OpenSpiel (`openspiel_twin`).

Example:
    >>> from tensorcfr import games
    >>> g = games.make("battleship(board_width=2, board_height=2, ship_sizes=(1,), ship_values=(1.0,), num_shots=2)")
    >>> s = g.initial_state()
    >>> for a in ["Pl0: place ship horizontally with top-left corner in (0, 0)",
    ...           "Pl1: place ship horizontally with top-left corner in (0, 1)", "Pl0: shoot at (0, 1)"]:
    ...     s = g.next_state(s, a)
    >>> g.player(s) == games.TERMINAL, g.utilities(s)  # player 1's only ship is sunk
    (True, (1.0, -1.0))
"""

from __future__ import annotations

import math

from .base import TERMINAL, Game, GameError

SEARCH_LIMIT = 200_000  # partial placements remembered by the search for room for the ships
# cells of a board: the search for room lists a ship's placements cell by cell, and on a larger
# board a ship's placements, each followed by every first shot, are already 10^8 histories
MAX_CELLS = 10_000


class Battleship(Game):
    """State = the moves so far: placements as (vertical, row, column), then shots as (row, column)."""

    def __init__(self, board_width: int = 2, board_height: int = 2, ship_sizes: tuple = (1, 2),
                 ship_values: tuple = (1.0, 1.0), num_shots: int = 3, allow_repeated_shots: bool = False,
                 loss_multiplier: float = 1.0):
        for what, v in (("board_width", board_width), ("board_height", board_height), ("num_shots", num_shots)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise GameError(f"battleship: {what} must be an integer >= 1, got {v!r}")
        sizes = tuple(ship_sizes) if isinstance(ship_sizes, (tuple, list)) else (ship_sizes,)
        values = tuple(ship_values) if isinstance(ship_values, (tuple, list)) else (ship_values,)
        if not sizes or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in sizes):
            raise GameError(f"battleship: ship_sizes must be integers >= 1, got {ship_sizes!r}")
        if len(values) != len(sizes) or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0
                                            for v in values):
            raise GameError(f"battleship: ship_values must be {len(sizes)} positive numbers, one a ship, "
                            f"got {ship_values!r}")
        if board_width * board_height > MAX_CELLS:
            raise GameError(f"battleship: a {board_height} x {board_width} board has more than {MAX_CELLS:,} cells")
        if max(sizes) > max(board_width, board_height):
            raise GameError(f"battleship: a ship of size {max(sizes)} does not fit a {board_height} x {board_width} board")
        if sum(sizes) > board_width * board_height:
            raise GameError(f"battleship: ship_sizes {list(sizes)} need {sum(sizes)} cells, the board has "
                            f"{board_width * board_height}")
        if not isinstance(allow_repeated_shots, bool):
            raise GameError(f"battleship: allow_repeated_shots must be True or False, got {allow_repeated_shots!r}")
        if loss_multiplier != 1.0:
            raise GameError(f"battleship: loss_multiplier must be 1.0 (another is not zero-sum), got {loss_multiplier!r}")
        self.w, self.h, self.sizes, self.values = board_width, board_height, sizes, tuple(float(v) for v in values)
        self.shots, self.repeat = num_shots, allow_repeated_shots
        self.name = (f"battleship(board_width={board_width},board_height={board_height},ship_sizes={_tuple(sizes)},"
                     f"ship_values={_tuple(self.values)},num_shots={num_shots},allow_repeated_shots={allow_repeated_shots})")
        self._memo: dict = {}
        if not self._fits():
            raise GameError(f"battleship: ship_sizes {list(sizes)} cannot all be placed on a {board_height} x "
                            f"{board_width} board without overlapping")

    def openspiel_twin(self):
        def lst(xs):
            return "[" + ";".join(str(x) for x in xs) + "]"
        return (f"battleship(board_width={self.w},board_height={self.h},ship_sizes={lst(self.sizes)},"
                f"ship_values={lst(self.values)},num_shots={self.shots},"
                f"allow_repeated_shots={self.repeat},loss_multiplier=1.0)")

    def size_hint(self):
        """A lower bound on the histories, so that a board too large is refused before its walk:
        no fleet can sink before its owner's opponent has fired as many shots as the fleet has
        cells, so every sequence of each player's first min(num_shots, cells - 1) shots is a
        history of its own (after any one placement).

        Example:
            >>> from tensorcfr import games
            >>> games.make("battleship(board_width=6,board_height=6,ship_sizes=(2,3),ship_values=(1,1),num_shots=10)"
            ...            ).size_hint()
            (1998604238400, False)
        """
        cells, safe = self.w * self.h, min(self.shots, sum(self.sizes) - 1)
        per_player = cells ** safe if self.repeat else math.perm(cells, safe)
        return per_player ** 2, False

    def _fits(self) -> bool:
        """Whether some placement holds every ship."""
        return self._completable(0, frozenset())

    def _completable(self, i, used) -> bool:
        """Whether ships i, i+1, ... can all still be placed beside the cells `used` (a search,
        remembered: boards are small)."""
        if (i, used) not in self._memo:
            if len(self._memo) > SEARCH_LIMIT:  # hostile parameters must not hang the check
                raise GameError(f"battleship: more than {SEARCH_LIMIT:,} partial fleets searched for a placement of "
                                f"ship_sizes {list(self.sizes)}; fewer or smaller ships")
            self._memo[(i, used)] = i == len(self.sizes) or any(
                self._completable(i + 1, used | cells) for cells in self._shapes(i, used).values())
        return self._memo[(i, used)]

    def _cells(self, size, vertical, r, c):
        return frozenset((r + k, c) if vertical else (r, c + k) for k in range(size))

    def _placements(self, i, used) -> dict[tuple[int, int, int], frozenset]:
        """Ship i's legal placements beside the cells `used`: those after which the later ships
        still fit (as OpenSpiel offers them)."""
        return {m: cells for m, cells in self._shapes(i, used).items() if self._completable(i + 1, used | cells)}

    def _shapes(self, i, used) -> dict[tuple[int, int, int], frozenset]:
        """Ship i's placements inside the board on none of the cells `used`: (vertical, r, c) ->
        its cells, horizontal ones first, each row by row."""
        size, out = self.sizes[i], {}
        for vertical in ((0,) if size == 1 else (0, 1)):
            for r in range(self.h - (size - 1 if vertical else 0)):
                for c in range(self.w - (0 if vertical else size - 1)):
                    cells = self._cells(size, vertical, r, c)
                    if not cells & used:
                        out[(vertical, r, c)] = cells
        return out

    # -- the state ---------------------------------------------------------------------
    def _replay(self, state):
        """(each player's ships as cell sets, each player's shots with outcome 'W', 'H' or 'S',
        the value each player sank)."""
        n = len(self.sizes)
        ships = [[], []]
        for t, (vertical, r, c) in enumerate(state[:2 * n]):
            ships[t % 2].append(self._cells(self.sizes[t // 2], vertical, r, c))
        hit = [set(), set()]  # cells of player p's ships hit by the other
        shots, sank = [[], []], [0.0, 0.0]
        for t, cell in enumerate(state[2 * n:]):
            p = t % 2
            outcome = "W"
            for k, ship in enumerate(ships[1 - p]):
                if cell in ship:
                    was_sunk = ship <= hit[1 - p]
                    hit[1 - p].add(cell)
                    outcome = "S" if ship <= hit[1 - p] and not was_sunk else "H"
                    if outcome == "S":
                        sank[p] += self.values[k]
            shots[p].append((cell, outcome))
        return ships, shots, sank, hit

    def initial_state(self):
        return ()

    def player(self, state):
        n = len(self.sizes)
        if len(state) < 2 * n:
            return len(state) % 2
        ships, shots, _, hit = self._replay(state)
        fired = len(state) - 2 * n
        if fired == 2 * self.shots or any(set().union(*ships[p]) <= hit[p] for p in (0, 1)):
            return TERMINAL
        return fired % 2

    def chance_outcomes(self, state):
        raise GameError("battleship has no chance nodes")

    def _legal(self, state):
        """(move, action name) pairs; the players alternate in both phases."""
        n, p = len(self.sizes), len(state) % 2
        if len(state) < 2 * n:
            mine = state[p::2]  # this player's placements so far
            used = frozenset().union(*(self._cells(self.sizes[k], *m) for k, m in enumerate(mine)))
            return [(m, f"Pl{p}: place ship {'vertically' if m[0] else 'horizontally'} with top-left corner in "
                        f"({m[1]}, {m[2]})") for m in self._placements(len(mine), used)]
        fired = set(state[2 * n + p::2])
        return [((r, c), f"Pl{p}: shoot at ({r}, {c})") for r in range(self.h) for c in range(self.w)
                if self.repeat or (r, c) not in fired]

    def legal_actions(self, state):
        return [name for _, name in self._legal(state)]

    def next_state(self, state, action):
        for move, name in self._legal(state):
            if name == action:
                return state + (move,)
        raise GameError(f"battleship: {action!r} is not legal here")

    def utilities(self, state):
        sank = self._replay(state)[2]
        u = sank[0] - sank[1]
        return (u, -u)

    def infoset_key(self, state):
        n, p = len(self.sizes), len(state) % 2
        events = [f"{'v' if v else 'h'}_{r}_{c}" for v, r, c in state[p:2 * n:2]]
        if len(state) > 2 * n:
            _, shots, _, _ = self._replay(state)
            for t in range(len(state) - 2 * n):
                q, k = t % 2, t // 2
                (r, c), outcome = shots[q][k]
                events.append(f"shot_{r}_{c}:{outcome}" if q == p else f"oppshot_{r}_{c}")
        return f"T={len(state)} " + "".join("/" + e for e in events)


def _tuple(xs) -> str:
    return "(" + ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in xs) + ("," if len(xs) == 1 else "") + ")"
