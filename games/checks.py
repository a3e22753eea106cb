"""The checks every game must pass, with one tolerance: used by `check_game` and by both of
tensorcfr's compilers (the per-node walk and the level-by-level one).

Each check returns a message naming what is wrong (None when nothing is); the `*_rows` forms
take a level's arrays and return which rows are wrong.

Example:
    >>> chance_problem([0.5, 0.25])
    'chance probabilities [0.5, 0.25] do not sum to 1'
    >>> utility_problem((1.0, -1.0)) is None
    True
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

TOLERANCE = 1e-9  # |sum of chance probabilities - 1|, and |u0 + u1| relative to max(1, |u0|)


def chance_problem(probs: Sequence[float]) -> str | None:
    """Chance probabilities must be finite, in [0, 1], and sum to 1."""
    probs = list(probs)
    if not probs or not all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in probs) or \
            abs(sum(probs) - 1.0) > TOLERANCE:
        return f"chance probabilities {probs} do not sum to 1"
    return None


def chance_rows(probs: np.ndarray) -> np.ndarray:
    """`chance_problem` for a level: probs [n, C] (0 for absent outcomes) -> [n] bool."""
    finite = np.isfinite(probs).all(axis=1)
    return ~finite | (probs < 0).any(axis=1) | (probs > 1).any(axis=1) | ~(np.abs(probs.sum(axis=1) - 1.0) <= TOLERANCE)


def utility_problem(u: Sequence[float], zero_sum: bool = True) -> str | None:
    """Utilities must be two finite numbers that sum to 0 (unless the game is general-sum)."""
    u = tuple(u)
    if len(u) != 2 or not all(isinstance(v, (int, float, np.number)) and math.isfinite(v) for v in u):
        return f"utilities {u} are not two finite numbers"
    if zero_sum and abs(u[0] + u[1]) > TOLERANCE * max(1.0, abs(u[0])):
        return f"utilities {u} are not zero-sum"
    return None


def utility_rows(u0: np.ndarray) -> np.ndarray:
    """`utility_problem` for a level of zero-sum games given by player 0's utility u0 [n] -> [n] bool."""
    return ~np.isfinite(u0)


def actions_problem(actions: Sequence) -> str | None:
    """Legal actions must be non-empty, distinct strings."""
    actions = list(actions)
    if not actions or len(set(actions)) != len(actions):
        return f"legal actions {actions} are empty or repeat"
    if not all(isinstance(a, str) for a in actions):
        return f"action names {actions} are not all strings"
    return None
