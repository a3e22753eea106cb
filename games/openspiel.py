"""Any two-player zero-sum (or constant-sum) OpenSpiel game as a game of this package:
`games.make("openspiel:NAME")` or `"openspiel:NAME(k=v,...)"`, OpenSpiel's own parameter syntax
(e.g. `"openspiel:goofspiel(num_cards=4,imp_info=True,points_order=descending)"`). Needs the
optional `open-spiel` package (the `bench` extra).

Infoset keys are OpenSpiel's `information_state_string`s, chance outcomes come from
`chance_outcomes()` and action names from `action_to_string` (made unique where they repeat);
simultaneous-move games go through OpenSpiel's turn-based conversion. A state is the tuple of
OpenSpiel actions that leads to it; each history's OpenSpiel state is made once, by one clone
and one `apply_action` from its parent, and dropped once its children are made. A constant-sum
game is shifted to zero-sum (each player's payoff less half the constant), which changes no
strategy, saying so on stderr.

Example (where OpenSpiel is installed):
    >>> g = make_openspiel("kuhn_poker")  # doctest: +SKIP
    >>> g.infoset_key(g.next_state(g.next_state(g.initial_state(), "Deal:0"), "Deal:1"))  # doctest: +SKIP
    '0'
"""

from __future__ import annotations

import functools
import sys

from .base import CHANCE, TERMINAL, Game, GameError


def _pyspiel():
    try:
        import pyspiel
    except ImportError:
        raise GameError("openspiel: games need the optional open-spiel package: pip install open-spiel "
                        "(or the bench extra)") from None
    return pyspiel


def make_openspiel(spec: str) -> "OpenSpielGame":
    """The OpenSpiel game `spec` (a name, or OpenSpiel's `name(k=v,...)`), checked: two players,
    zero-sum or constant-sum."""
    pyspiel = _pyspiel()
    try:
        game = pyspiel.load_game(spec)
    except Exception as e:  # noqa: BLE001 - pyspiel raises its own error types for unknown names and parameters
        raise GameError(f"openspiel:{spec}: {str(e).strip().splitlines()[-1][:300]}") from None
    t = game.get_type()
    if game.num_players() != 2:
        raise GameError(f"openspiel:{spec} has {game.num_players()} players; tensorcfr solves two-player games")
    if t.utility == pyspiel.GameType.Utility.GENERAL_SUM or t.utility == pyspiel.GameType.Utility.IDENTICAL:
        raise GameError(f"openspiel:{spec} is not zero-sum ({t.utility.name.lower().replace('_', '-')})")
    if t.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    shift = 0.0
    if t.utility == pyspiel.GameType.Utility.CONSTANT_SUM:
        shift = game.utility_sum() / 2
        print(f"tensorcfr: openspiel:{spec} is constant-sum ({game.utility_sum():g}); each payoff is shifted by "
              f"{-shift:g} to make it zero-sum (the same strategies)", file=sys.stderr)
    return OpenSpielGame(spec, game, shift, pyspiel.__version__ if hasattr(pyspiel, "__version__") else "")


def _spiel_errors(method):
    """A protocol method whose OpenSpiel errors (a game whose parameters load but whose states
    fail OpenSpiel's own checks, as `liars_dice(numdice=0)` does) become a `GameError` naming
    the history."""
    @functools.wraps(method)
    def wrapped(self, h, *args):
        try:
            return method(self, h, *args)
        except Exception as e:  # noqa: BLE001 - pyspiel.SpielError, imported only where present
            if type(e).__name__ != "SpielError":
                raise
            raise GameError(f"{self.name}: OpenSpiel failed at history {list(h)}: "
                            f"{str(e).strip().splitlines()[0][:300]}") from None
    return wrapped


class OpenSpielGame(Game):
    """An OpenSpiel game behind the `games.Game` protocol. State: the tuple of OpenSpiel actions."""

    def __init__(self, spec: str, game, shift: float, version: str):
        self.name, self.spec, self.game, self.shift, self.version = f"openspiel:{spec}", spec, game, shift, version
        self._states = {(): game.new_initial_state()}  # history -> OpenSpiel state, until its children are made
        self._made: dict[tuple, int] = {}  # history -> children made so far
        self._names: dict[tuple, dict[str, int]] = {}  # history -> {action name: OpenSpiel action}

    def cache_token(self):
        """OpenSpiel's version and the game string: another version may build another tree."""
        return (self.version, str(self.game))

    def _state(self, h: tuple):
        s = self._states.get(h)
        if s is None:  # dropped, or never made: replay (a walk in another order than the compiler's)
            s = self.game.new_initial_state()
            for a in h:
                s.apply_action(a)
            self._states[h] = s
        return s

    def _actions(self, h: tuple) -> dict[str, int]:
        names = self._names.get(h)
        if names is None:
            s = self._state(h)
            ids = [a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()
            names = {}
            for a in ids:
                text = s.action_to_string(s.current_player(), a)
                names[text if text not in names else f"{text}#{a}"] = a
            self._names[h] = names
        return names

    def initial_state(self):
        return ()

    @_spiel_errors
    def player(self, h):
        s = self._state(h)
        if s.is_terminal():
            return TERMINAL
        if s.is_chance_node():
            return CHANCE
        return s.current_player()

    @_spiel_errors
    def chance_outcomes(self, h):
        probs = dict(self._state(h).chance_outcomes())
        return [(name, probs[a]) for name, a in self._actions(h).items()]

    @_spiel_errors
    def legal_actions(self, h):
        return tuple(self._actions(h))

    @_spiel_errors
    def next_state(self, h, action):
        a = self._actions(h)[action]
        child = h + (a,)
        if child not in self._states:
            s = self._state(h).clone()
            s.apply_action(a)
            self._states[child] = s
        self._made[h] = self._made.get(h, 0) + 1
        if self._made[h] >= len(self._actions(h)) and h:  # every child made: the parent is no longer needed
            self._states.pop(h, None)
            self._names.pop(h, None)
            self._made.pop(h, None)
        return child

    @_spiel_errors
    def utilities(self, h):
        r = self._state(h).returns()
        return float(r[0] - self.shift), float(r[1] - self.shift)

    @_spiel_errors
    def infoset_key(self, h):
        s = self._state(h)
        return s.information_state_string(s.current_player())

    def describe(self, h, player):
        return str(self._state(h))
