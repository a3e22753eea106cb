"""Export a game to Gambit's extensive-form text format (`.efg`), which OpenSpiel reads
(`pyspiel.load_efg_game`): the way to run OpenSpiel's C++ solvers, or LiteEFG through
OpenSpiel, on a game of `games/` that OpenSpiel does not ship (OCP(n), Dudo, Domino).

Example:
    >>> import games
    >>> text = to_efg(games.make("ocp(3)"))
    >>> text.splitlines()[0]
    'EFG 2 R "ocp(3)" { "Player 1" "Player 2" }'
"""

from __future__ import annotations

import games as games_pkg
from games import CHANCE, TERMINAL, Game

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
    """A `pyspiel.TabularPolicy` of `policy` (a `Policy` of a game made from `openspiel:SPEC`),
    for OpenSpiel's own tools: `pyspiel.exploitability(game, to_openspiel_policy(cg, p))`
    equals tensorcfr's exploitability of `p`. Walks OpenSpiel's tree once (one clone per
    history) to map each infoset's action names back to OpenSpiel's action ids.

    Example (where OpenSpiel is installed):
        >>> import tensorcfr  # doctest: +SKIP
        >>> cg = tensorcfr.compile("openspiel:kuhn_poker")  # doctest: +SKIP
        >>> p = to_openspiel_policy(cg, tensorcfr.Policy.uniform(cg))  # doctest: +SKIP
    """
    from games.openspiel import _pyspiel, make_openspiel

    if not cg.name.startswith("openspiel:"):
        raise TensorCFRError(f"{cg.name} is not an OpenSpiel game (make it with openspiel:NAME)")
    pyspiel = _pyspiel()
    game = make_openspiel(cg.name[len("openspiel:"):]).game
    probs = policy.to_dict()
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
    return pyspiel.TabularPolicy(table)
