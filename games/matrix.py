"""Zero-sum matrix games played as a one-level extensive-form game.

The row player (player 0) picks a row, then the column player picks a column without seeing
it; the row player receives A[row][col]. Compiled, this is a tree with one infoset per
player, so CFR on it is regret matching and dilated-entropy FTRL is Hedge.

Example:
    >>> import games
    >>> g = games.make("rps")
    >>> s = g.next_state(g.next_state(g.initial_state(), "R"), "S")
    >>> g.utilities(s)
    (1.0, -1.0)
"""

from __future__ import annotations

from typing import Sequence

from .base import TERMINAL, Game, GameError


class MatrixGame(Game):
    """A zero-sum matrix game; `A[i][j]` is the row player's payoff. State = tuple of choices."""

    def __init__(self, payoff: Sequence[Sequence[float]], rows: Sequence[str] | None = None,
                 cols: Sequence[str] | None = None, name: str = "matrix"):
        self.payoff = [[float(v) for v in row] for row in payoff]
        if not self.payoff or not self.payoff[0] or any(len(r) != len(self.payoff[0]) for r in self.payoff):
            raise GameError(f"{name}: the payoff matrix must be a non-empty rectangle, got {payoff!r}")
        self.rows = tuple(rows) if rows is not None else tuple(f"r{i}" for i in range(len(self.payoff)))
        self.cols = tuple(cols) if cols is not None else tuple(f"c{j}" for j in range(len(self.payoff[0])))
        if len(self.rows) != len(self.payoff) or len(self.cols) != len(self.payoff[0]):
            raise GameError(f"{name}: {len(self.rows)} row and {len(self.cols)} column names for a "
                            f"{len(self.payoff)}x{len(self.payoff[0])} matrix")
        if len(set(self.rows)) != len(self.rows) or len(set(self.cols)) != len(self.cols):
            raise GameError(f"{name}: action names must be distinct")
        self.name = name

    def initial_state(self):
        return ()

    def player(self, state):
        return TERMINAL if len(state) == 2 else len(state)

    def legal_actions(self, state):
        return self.rows if not state else self.cols

    def next_state(self, state, action):
        return state + (action,)

    def utilities(self, state):
        u = self.payoff[self.rows.index(state[0])][self.cols.index(state[1])]
        return (u, -u)

    def infoset_key(self, state):
        return "row" if not state else "col"  # the column player does not see the row


def matrix(payoff: Sequence[Sequence[float]], rows=None, cols=None, name: str = "matrix") -> MatrixGame:
    """A zero-sum matrix game from the row player's payoffs.

    Example:
        >>> matrix([[1, -1], [-1, 1]]).legal_actions(())
        ('r0', 'r1')
    """
    return MatrixGame(payoff, rows, cols, name)


def rps() -> MatrixGame:
    """Rock-paper-scissors: the winner gets +1; value 0."""
    return MatrixGame([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], ("R", "P", "S"), ("R", "P", "S"), "rps")


def matching_pennies() -> MatrixGame:
    """Matching pennies: +1 to the row player on a match, -1 otherwise; value 0."""
    return MatrixGame([[1, -1], [-1, 1]], ("heads", "tails"), ("heads", "tails"), "matching_pennies")
