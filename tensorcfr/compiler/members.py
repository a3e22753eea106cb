"""The games a compile is asked for, made and held to what every form needs (`tensorcfr.compile`
and `compile_public` both start here).

Example:
    >>> [g.name for g in members_of(["kuhn", "kuhn(ante=2)"])]
    ['kuhn', 'kuhn(ante=2)']
"""

from __future__ import annotations

from tensorcfr import games as games_pkg
from tensorcfr.games import Game, GameError
from tensorcfr.errors import TensorCFRError


def members_of(game) -> list[Game]:
    """The games of a spec, a `Game`, or a list of them, made and checked to be zero-sum (a
    `TensorCFRError` names a bad spec or a general-sum game)."""
    members = list(game) if isinstance(game, (list, tuple)) else [game]
    if not members:
        raise TensorCFRError("compile: empty list of games")
    try:
        members = [games_pkg.make(g) for g in members]
    except GameError as e:
        raise TensorCFRError(str(e)) from None
    for g in members:
        if not getattr(g, "zero_sum", True):
            raise TensorCFRError(f"{g.name} is general-sum: the tree solvers need a zero-sum game; the "
                                 "normal-form procedures (tensorcfr.normal_form: rm, rm+, sampled-rm, "
                                 "conditional-rm, invariant-rm) take it")
    return members
