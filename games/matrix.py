"""Matrix (normal-form) games played as a one-level extensive-form game.

The row player (player 0) picks a row, then the column player picks a column without seeing
it; the row player receives A[row][col] and the column player B[row][col] (-A for a
zero-sum game). Compiled, a zero-sum one is a tree with one infoset per player, so CFR on
it is regret matching and dilated-entropy FTRL is Hedge. General-sum games (`bimatrix`)
are for the normal-form dynamics of `tensorcfr.normal_form`; the tree solvers refuse them.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("rps")
    >>> s = g.next_state(g.next_state(g.initial_state(), "R"), "S")
    >>> g.utilities(s)
    (1.0, -1.0)
"""

from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from .base import TERMINAL, Game, GameError


def _rectangle(payoff, name: str) -> list[list[float]]:
    try:
        m = [[float(v) for v in row] for row in payoff]
    except (TypeError, ValueError):
        raise GameError(f"{name}: the payoff matrix must hold numbers, got {payoff!r}") from None
    if not m or not m[0] or any(len(r) != len(m[0]) for r in m):
        raise GameError(f"{name}: the payoff matrix must be a non-empty rectangle, got {payoff!r}")
    if not all(math.isfinite(v) for r in m for v in r):
        raise GameError(f"{name}: payoffs must be finite, got {payoff!r}")
    return m


class MatrixGame(Game):
    """A matrix game: `payoff[i][j]` (A) is the row player's payoff, `payoff_col[i][j]` (B) the
    column player's, both indexed [row action][column action]; B = -A unless given.
    State = the tuple of choices made so far."""

    def __init__(self, payoff: Sequence[Sequence[float]], rows: Sequence[str] | None = None,
                 cols: Sequence[str] | None = None, name: str = "matrix",
                 payoff_col: Sequence[Sequence[float]] | None = None):
        self.payoff = _rectangle(payoff, name)
        if payoff_col is None:
            self.payoff_col = [[-v for v in row] for row in self.payoff]
        else:
            self.payoff_col = _rectangle(payoff_col, name)
            if (len(self.payoff_col), len(self.payoff_col[0])) != (len(self.payoff), len(self.payoff[0])):
                raise GameError(f"{name}: the two payoff matrices differ in shape")
        self.zero_sum = all(abs(a + b) <= 1e-12 * max(1.0, abs(a))
                            for ra, rb in zip(self.payoff, self.payoff_col) for a, b in zip(ra, rb))
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
        i, j = self.rows.index(state[0]), self.cols.index(state[1])
        return (self.payoff[i][j], self.payoff_col[i][j])

    def infoset_key(self, state):
        return "row" if not state else "col"  # the column player does not see the row


def matrix(payoff: Sequence[Sequence[float]], rows=None, cols=None, name: str = "matrix") -> MatrixGame:
    """A zero-sum matrix game from the row player's payoffs.

    Example:
        >>> matrix([[1, -1], [-1, 1]]).legal_actions(())
        ('r0', 'r1')
    """
    return MatrixGame(payoff, rows, cols, name)


def bimatrix(payoff_row: Sequence[Sequence[float]], payoff_col: Sequence[Sequence[float]], rows=None, cols=None,
             name: str = "bimatrix") -> MatrixGame:
    """A general-sum matrix game: `payoff_row[i][j]` and `payoff_col[i][j]` are the row and the
    column player's payoffs when the row player plays i and the column player j.

    Example:
        >>> g = bimatrix([[2, 0], [0, 1]], [[1, 0], [0, 2]])
        >>> g.zero_sum, g.utilities(("r0", "c0"))
        (False, (2.0, 1.0))
    """
    return MatrixGame(payoff_row, rows, cols, name, payoff_col)


def rps() -> MatrixGame:
    """Rock-paper-scissors: the winner gets +1; value 0."""
    return MatrixGame([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], ("R", "P", "S"), ("R", "P", "S"), "rps")


def matching_pennies() -> MatrixGame:
    """Matching pennies: +1 to the row player on a match, -1 otherwise; value 0."""
    return MatrixGame([[1, -1], [-1, 1]], ("heads", "tails"), ("heads", "tails"), "matching_pennies")


def biased_rps() -> MatrixGame:
    """The course notes' biased rock-paper-scissors (general-sum).

    Row payoffs against R, P, S: R (0, -1, 1), P (1, 0, -2), S (-2, 3, 0); the column
    player's, rows again indexed by the row player's action: R (0, 3, -2), P (-2, 0, 1),
    S (1, -1, 0).
    """
    return MatrixGame([[0, -1, 1], [1, 0, -2], [-2, 3, 0]], ("R", "P", "S"), ("R", "P", "S"), "biased_rps",
                      payoff_col=[[0, 3, -2], [-2, 0, 1], [1, -1, 0]])


def ficha_domino() -> MatrixGame:
    """Ficha vs Dominó: on a 2x3 board the row player places a 1x2 domino (4 horizontal, 3
    vertical placements), the column player a token on one of the 6 cells; the row player
    gets +1 if the domino misses the token, -1 if it covers it. Value 1/3.

    Cells are named by row a/b and column 1-3 ("a1" ... "b3"); a placement by its two cells.
    """
    cells = [f"{r}{c}" for r in "ab" for c in "123"]
    placements = [(f"{r}{c}", f"{r}{c + 1}") for r in "ab" for c in (1, 2)] + [(f"a{c}", f"b{c}") for c in (1, 2, 3)]
    payoff = [[-1 if cell in p else 1 for cell in cells] for p in placements]
    return MatrixGame(payoff, tuple("".join(p) for p in placements), tuple(cells), "ficha_domino")


def blotto(soldiers: int = 5, fields: int = 3) -> MatrixGame:
    """Colonel Blotto: each player splits `soldiers` over `fields` ordered battlefields; the
    payoff is fields won minus fields lost (ties score 0). A strategy is named by its
    soldiers per field, e.g. "3-1-1". Blotto(5,3) has 21 strategies each and value 0.

    Example:
        >>> len(blotto(5, 3).rows)
        21
    """
    if not (isinstance(soldiers, int) and isinstance(fields, int)) or soldiers < 1 or fields < 1:
        raise GameError(f"blotto: soldiers and fields must be positive integers, got {soldiers}, {fields}")
    n, k = soldiers + fields - 1, min(fields - 1, soldiers)
    if k and (n > 2000 or math.comb(n, k) > 2000):  # (comb(n, k) >= n for k >= 1: never a huge one worked out)
        raise GameError(f"blotto({soldiers},{fields}): more than 2000 pure strategies")
    if math.comb(n, k) ** 2 * fields > 10**8:  # the payoff table compares every pair field by field
        raise GameError(f"blotto({soldiers},{fields}): {math.comb(n, k):,} pure strategies over {fields:,} fields, "
                        "more than 10^8 comparisons to tabulate")
    # stars and bars: the fields - 1 bars' places among soldiers + fields - 1 give each split once
    bars = itertools.combinations(range(n), fields - 1)
    splits = [tuple(b - a - 1 for a, b in zip((-1, *c), (*c, n))) for c in bars]
    splits.sort(reverse=True)
    a = np.array(splits, dtype=np.int64).reshape(len(splits), fields)  # [m, fields]
    rows = max(1, 10**7 // max(1, len(splits) * fields))  # a block of rows at a time: at most 10^7 comparisons
    payoff = np.concatenate([np.sign(a[i:i + rows, None, :] - a[None, :, :]).sum(2)
                             for i in range(0, len(splits), rows)]).tolist()  # [m, m] fields won minus lost
    names = tuple("-".join(map(str, s)) for s in splits)
    return MatrixGame(payoff, names, names, f"blotto({soldiers},{fields})")


def battle_of_sexes() -> MatrixGame:
    """Battle of the sexes (general-sum): both prefer meeting; the row player prefers the
    opera (2 to 1), the column player football (2 to 1); not meeting gives 0 to both."""
    return MatrixGame([[2, 0], [0, 1]], ("opera", "football"), ("opera", "football"), "battle_of_sexes",
                      payoff_col=[[1, 0], [0, 2]])


def prisoners_dilemma() -> MatrixGame:
    """The prisoner's dilemma (general-sum), payoffs as years lost: both cooperate -1 each,
    both defect -2 each, a lone defector 0 against the cooperator's -3."""
    return MatrixGame([[-1, -3], [0, -2]], ("cooperate", "defect"), ("cooperate", "defect"), "prisoners_dilemma",
                      payoff_col=[[-1, 0], [-3, -2]])
