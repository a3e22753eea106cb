"""Export a game to Gambit's extensive-form text format (`.efg`), which OpenSpiel reads
(`pyspiel.load_efg_game`): the way to run OpenSpiel's C++ solvers, or LiteEFG through
OpenSpiel, on a game of `games/` that OpenSpiel does not ship (OCP(n), Dudo, Domino).

Example:
    >>> from tensorcfr import games
    >>> text = to_efg(games.make("ocp(3)"))
    >>> text.splitlines()[0]
    'EFG 2 R "ocp(3)" { "Player 1" "Player 2" }'
"""

from __future__ import annotations

from tensorcfr import games as games_pkg
from tensorcfr.games import CHANCE, TERMINAL, Game

from tensorcfr.errors import TensorCFRError


def _q(text: str) -> str:
    return '"' + str(text).replace('"', "'") + '"'


def to_efg(game: str | Game) -> str:
    """The game as EFG text: one line per node in depth-first order, infosets numbered per
    player in order of discovery, chance nodes each with their own chance infoset, one outcome
    (player 0's and player 1's payoff) per terminal. Walks the tree one node per Python call:
    OCP(1000) (9.0M histories, 329 MB of text) takes 20 s, and OpenSpiel 19 s to read it."""
    g = games_pkg.make(game)
    lines = [f"EFG 2 R {_q(g.name)} {{ \"Player 1\" \"Player 2\" }}", '""']
    infosets: list[dict[str, int]] = [{}, {}]
    chance_sets = outcomes = 0
    stack = [g.initial_state()]
    while stack:
        s = stack.pop()
        p = g.player(s)
        if p == TERMINAL:
            outcomes += 1
            u0, u1 = g.utilities(s)
            lines.append(f't "" {outcomes} "" {{ {u0!r} {u1!r} }}')
            continue
        if p == CHANCE:
            chance_sets += 1
            outs = list(g.chance_outcomes(s))
            body = " ".join(f"{_q(a)} {pr!r}" for a, pr in outs)
            lines.append(f'c "" {chance_sets} "" {{ {body} }} 0')
            children = [g.next_state(s, a) for a, _ in outs]
        else:
            key = g.infoset_key(s)
            number = infosets[p].setdefault(key, len(infosets[p]) + 1)
            acts = list(g.legal_actions(s))
            lines.append(f'p "" {p + 1} {number} {_q(key)} {{ {" ".join(map(_q, acts))} }} 0')
            children = [g.next_state(s, a) for a in acts]
        stack.extend(reversed(children))  # depth first, children in order
    return "\n".join(lines) + "\n"


def to_openspiel_policy(cg, policy):
    """A `pyspiel.TabularPolicy` of `policy` for OpenSpiel's own tools:
    `pyspiel.exploitability(game, to_openspiel_policy(cg, p))` equals tensorcfr's exploitability
    of `p`. `cg` is a game made from `openspiel:SPEC`, or a native game with an OpenSpiel twin
    (`kuhn` and `kuhn_poker`, `leduc` and `leduc_poker`, `liars_dice` and OpenSpiel's
    `liars_dice`; `Game.openspiel_twin()` names it). Walks OpenSpiel's tree once (one clone per
    history) to map each infoset's actions to OpenSpiel's action ids; a native game is walked
    beside it, deal for deal (chance outcomes in order) and action for action (names equal but
    for case), checking that players, probabilities, payoffs and infosets agree.

    Example (where OpenSpiel is installed):
        >>> import tensorcfr, pyspiel  # doctest: +SKIP
        >>> cg = tensorcfr.compile("leduc")  # doctest: +SKIP
        >>> p = to_openspiel_policy(cg, tensorcfr.Policy.uniform(cg))  # doctest: +SKIP
        >>> pyspiel.exploitability(pyspiel.load_game("leduc_poker"), p)  # doctest: +SKIP
        2.37...
    """
    from tensorcfr.games.openspiel import _pyspiel, make_openspiel

    probs = policy.to_dict()
    if cg.name.startswith("openspiel:"):
        pyspiel = _pyspiel()
        return pyspiel.TabularPolicy(_openspiel_table(make_openspiel(cg.name[len("openspiel:"):]).game, probs))
    try:
        native = games_pkg.make(cg.name)
    except games_pkg.GameError:  # a Game object compiled directly, not a registered spec
        native = None
    twin = native.openspiel_twin() if native is not None else None
    if twin is None:
        raise TensorCFRError(f"{cg.name} has no OpenSpiel twin: to_openspiel_policy takes games made from openspiel:NAME "
                             "and kuhn, leduc and liars_dice")
    pyspiel = _pyspiel()
    return pyspiel.TabularPolicy(_twin_table(native, pyspiel.load_game(twin), probs))


def _openspiel_table(game, probs):
    """{OpenSpiel infoset string: [(action id, probability)]} of a game made from `openspiel:`,
    whose infoset keys are OpenSpiel's and action names `action_to_string` ("#id" where one repeats)."""
    table: dict[str, list[tuple[int, float]]] = {}
    stack = [game.new_initial_state()]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            continue
        ids = [a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()
        if not s.is_chance_node():
            key = s.information_state_string(s.current_player())
            if key not in table:
                names: dict[str, int] = {}
                for a in ids:  # the names `games.openspiel` gives, "#id" where one repeats
                    text = s.action_to_string(s.current_player(), a)
                    names[text if text not in names else f"{text}#{a}"] = a
                table[key] = [(a, float(probs[key][name])) for name, a in names.items()]
        for a in ids:
            child = s.clone()
            child.apply_action(a)
            stack.append(child)
    return table


def _twin_table(native: Game, game, probs):
    """The table of `_openspiel_table` for a native game walked beside its OpenSpiel twin `game`.
    Several OpenSpiel infosets may share one of ours (Leduc's suits), never the other way round."""
    table: dict[str, list[tuple[int, float]]] = {}
    ours_of: dict[str, str] = {}

    def differ(what):
        return TensorCFRError(f"{native.name} and OpenSpiel's {game} differ: {what}")

    stack = [(game.new_initial_state(), native.initial_state())]
    while stack:
        s, t = stack.pop()
        p = native.player(t)
        if s.is_terminal():
            if p != TERMINAL or any(abs(a - b) > 1e-9 for a, b in zip(native.utilities(t), s.returns())):
                raise differ(f"payoffs {native.utilities(t) if p == TERMINAL else 'none'} against {s.returns()} "
                             f"after {s.history_str()}")
            continue
        if s.is_chance_node():
            ours, theirs = list(native.chance_outcomes(t)), s.chance_outcomes()
            if p != CHANCE or len(ours) != len(theirs) or any(abs(a[1] - b[1]) > 1e-12 for a, b in zip(ours, theirs)):
                raise differ(f"the deal after {s.history_str()}")
            pairs = [(a, name) for (a, _), (name, _) in zip(theirs, ours)]
        else:
            ours_names, theirs_ids = list(native.legal_actions(t)), s.legal_actions()
            by_name = {name.lower(): name for name in ours_names}
            names = [by_name.get(s.action_to_string(s.current_player(), a).lower()) for a in theirs_ids]
            if p != s.current_player() or None in names or len(ours_names) != len(theirs_ids):
                raise differ(f"the actions after {s.history_str()}")
            pairs = list(zip(theirs_ids, names))
            key, ours_key = s.information_state_string(), native.infoset_key(t)
            if ours_of.setdefault(key, ours_key) != ours_key:
                raise differ(f"OpenSpiel's infoset {key!r} holds ours {ours_of[key]!r} and {ours_key!r}")
            if key not in table:
                table[key] = [(a, float(probs[ours_key][name])) for a, name in pairs]
        for a, name in pairs:
            child = s.clone()
            child.apply_action(a)
            stack.append((child, native.next_state(t, name)))
    return table
