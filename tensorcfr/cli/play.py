"""Playing saved policies: exact head-to-head values, sampled matches, and a person in a terminal.

Policies here are tables `{infoset key: {action: probability}}` (see `tensorcfr.policy_io`).
Sampling walks the game through its own protocol (`games.Game`), one game at a time.

Example:
    >>> import tensorcfr
    >>> from tensorcfr.cli.play import exact_value, simulate
    >>> cg = tensorcfr.compile("kuhn")
    >>> uniform = tensorcfr.Policy.uniform(cg).to_dict()
    >>> round(exact_value(cg, uniform, uniform), 12)
    0.125
    >>> r = simulate("kuhn", uniform, uniform, games=4000, seed=1)
    >>> r["ci95"][0] <= 0.125 <= r["ci95"][1]
    True
"""

from __future__ import annotations

import math
import random
import sys
from typing import Callable

from tensorcfr import games as games_pkg
from tensorcfr.games import CHANCE, TERMINAL

from tensorcfr.errors import TensorCFRError


def exact_value(cg, table_a: dict, table_b: dict) -> float:
    """Player 0's exact expected payoff when player 0 plays `table_a`'s strategy and player 1
    `table_b`'s (each table checked against the game by `Policy.from_dict`)."""
    from tensorcfr.evaluation import Policy

    a, b = Policy.from_dict(cg, table_a), Policy.from_dict(cg, table_b)
    x = cg.treeplexes[0].sequence_form(a.sigma[0])
    y = cg.treeplexes[1].sequence_form(b.sigma[1])
    return float(cg.operator(x.dtype).value(x, y)[0])


def _choose(table: dict, key: str, actions, rng: random.Random, who: str, game=None) -> str:
    probs = table.get(key)
    if probs is None and game is not None:  # a spot solved with suit isomorphism keeps the twin's
        probs = table.get(game.canonical_key(key))
    if probs is None:
        raise TensorCFRError(f"{who} has no strategy for infoset {key!r}")
    weights = [float(probs.get(a, 0.0)) for a in actions]
    if not sum(weights) > 0:
        raise TensorCFRError(f"{who} gives no probability to the legal actions {list(actions)} at {key!r}")
    return rng.choices(list(actions), weights)[0]


def _chance(game, state, rng: random.Random):
    outcomes = list(game.chance_outcomes(state))
    return rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]


def simulate(game, table_a: dict, table_b: dict, games: int = 10_000, seed: int = 0) -> dict:
    """Play `games` games by sampling chance and both policies (A is player 0, B player 1).

    Returns `mean` (player 0's mean payoff), `std_error`, `ci95` (mean +- 1.96 standard errors,
    the normal approximation), `games` and `seed`.
    """
    g = games_pkg.make(game)
    if games < 2:
        raise TensorCFRError("play: --games must be at least 2 for a confidence interval")
    rng = random.Random(seed)
    tables, names = (table_a, table_b), ("policy A", "policy B")
    total = total_sq = 0.0
    for _ in range(games):
        state = g.initial_state()
        while (p := g.player(state)) != TERMINAL:
            if p == CHANCE:
                a = _chance(g, state, rng)
            else:
                a = _choose(tables[p], g.infoset_key(state), tuple(g.legal_actions(state)), rng, names[p], g)
            state = g.next_state(state, a)
        u = float(g.utilities(state)[0])
        total, total_sq = total + u, total_sq + u * u
    mean = total / games
    var = max(total_sq / games - mean * mean, 0.0) * games / (games - 1)
    se = math.sqrt(var / games)
    return {"games": games, "seed": seed, "mean": mean, "std_error": se, "ci95": (mean - 1.96 * se, mean + 1.96 * se)}


MAX_ANSWER = 1024  # characters of one typed answer; a stream with no newline (/dev/zero) is cut there


def read_answer(prompt: str, stream=None) -> str:
    """`input(prompt)` that reads at most `MAX_ANSWER` characters: an endless line is an error,
    not an endless read. Raises EOFError at the end of the input, as `input` does."""
    stream = stream or sys.stdin
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = stream.readline(MAX_ANSWER + 1)
    if not line:
        raise EOFError
    if len(line) > MAX_ANSWER and not line.endswith("\n"):
        raise TensorCFRError(f"an answer longer than {MAX_ANSWER} characters: is the input a terminal or a text?")
    return line.rstrip("\n")


def interactive(game, table: dict, seat: int = 0, seed: int | None = None,
                read: Callable[[str], str] = read_answer, write: Callable[[str], None] = print,
                rounds: int | None = None) -> list[float]:
    """Let a person play seat `seat` (0 or 1) against `table` in a terminal: shows their private
    information and the public history, rejects illegal moves, reveals the payoffs. Plays
    until `rounds` games, end of input, or "q". Returns the person's payoff per game.
    """
    g = games_pkg.make(game)
    if seat not in (0, 1):
        raise TensorCFRError(f"seat must be 0 or 1, got {seat}")
    rng = random.Random(seed)
    results: list[float] = []
    write(f"{g.name}: you are p{seat} (seat {seat}); type an action's name, or q to quit.")
    while rounds is None or len(results) < rounds:
        state, public = g.initial_state(), []
        while (p := g.player(state)) != TERMINAL:
            if p == CHANCE:
                state = g.next_state(state, _chance(g, state, rng))
                continue
            actions = tuple(g.legal_actions(state))
            if p != seat:
                a = _choose(table, g.infoset_key(state), actions, rng, "the policy", g)
                write(f"  opponent: {a}")
            else:
                write(f"  you see: {g.describe(state, seat)}")
                write(f"  public history: {' '.join(public) if public else '(start)'}")
                while True:
                    try:
                        answer = read(f"  your move [{' / '.join(actions)}]: ").strip()
                    except EOFError:
                        write("")
                        return results
                    if answer.lower() in ("q", "quit", "exit"):
                        return results
                    if answer in actions:
                        a = answer
                        break
                    write(f"  illegal move {answer!r}; legal moves: {', '.join(actions)}")
            public.append(f"P{p + 1}:{a}")
            state = g.next_state(state, a)
        u = float(g.utilities(state)[seat])
        results.append(u)
        write(f"  game over: {state!r}; you {'win' if u > 0 else 'lose' if u < 0 else 'draw'} "
              f"{abs(u):g}. Total after {len(results)} game(s): {sum(results):+g}")
    return results
