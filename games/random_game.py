"""Randomly generated games with chance, uneven branching and hidden information.

Every property is a deterministic function of the seed and the history, so a spec such as
`"random(seed=7)"` always names the same game. Each player's information-set key is the
list of everything that player has observed (own actions always; chance outcomes and the
opponent's actions only when revealed to them), which gives perfect recall by construction.
The number of actions is a function of the infoset key, so infosets are consistent; some
nodes have a single action.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("random(seed=3)")
    >>> games.check_game(g)["terminals"] > 0
    True
"""

from __future__ import annotations

import random

from .base import CHANCE, TERMINAL, Game, GameError


MAX_BRANCHING = 1000  # actions or chance outcomes a node at most


class RandomGame(Game):
    """State = tuple of events (actor, label, seen by player 0, seen by player 1)."""

    def __init__(self, seed: int = 0, min_depth: int = 4, max_depth: int = 7,
                 max_actions: int = 3, max_outcomes: int = 3, payoffs: int = 0):
        for what, v in (("min_depth", min_depth), ("max_depth", max_depth), ("max_actions", max_actions),
                        ("max_outcomes", max_outcomes)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise GameError(f"random: {what} must be an integer, got {v!r}")
        if not 1 <= min_depth <= max_depth:
            raise GameError(f"random: need 1 <= min_depth <= max_depth, got {min_depth} and {max_depth}")
        for what, v in (("max_actions", max_actions), ("max_outcomes", max_outcomes)):
            if not 1 <= v <= MAX_BRANCHING:  # a node's actions are listed one by one
                raise GameError(f"random: {what} must be from 1 to {MAX_BRANCHING:,}, got {v}")
        self.seed, self.min_depth, self.max_depth = seed, min_depth, max_depth
        self.max_actions, self.max_outcomes = max_actions, max_outcomes
        if not isinstance(payoffs, int) or payoffs < 0:
            raise GameError(f"random: payoffs must be a whole number >= 0, got {payoffs!r}")
        self.payoffs = payoffs  # 0: utilities uniform in [-3, 3]; k > 0: whole numbers in [-k, k] (many ties)
        # every setting off its default in the name: two games that differ are never one name (the
        # compile cache and the run directories go by it)
        shape = {"min_depth": (min_depth, 4), "max_depth": (max_depth, 7), "max_actions": (max_actions, 3),
                 "max_outcomes": (max_outcomes, 3), "payoffs": (payoffs, 0)}
        self.name = f"random({','.join([f'seed={seed}'] + [f'{k}={v}' for k, (v, d) in shape.items() if v != d])})"

    def _rng(self, *parts) -> random.Random:
        # Seeding with a string hashes it with SHA-512: stable across processes.
        return random.Random("/".join(map(str, (self.seed,) + parts)))

    def initial_state(self):
        return ()

    def player(self, state):
        d = len(state)
        if d >= self.max_depth:
            return TERMINAL
        u = self._rng("kind", state).random()
        if d >= self.min_depth and u < 0.2:
            return TERMINAL
        if u < 0.45:
            return CHANCE
        return 0 if u < 0.72 else 1

    def chance_outcomes(self, state):
        rng = self._rng("chance", state)
        weights = [rng.uniform(0.2, 1.0) for _ in range(1 + rng.randrange(self.max_outcomes))]
        total = sum(weights)
        return [(f"c{i}", w / total) for i, w in enumerate(weights)]

    def legal_actions(self, state):
        n = 1 + self._rng("actions", self.infoset_key(state)).randrange(self.max_actions)
        return tuple(f"a{i}" for i in range(n))

    def next_state(self, state, action):
        p = self.player(state)
        rng = self._rng("seen", state, action)
        if p == CHANCE:
            seen = [rng.random() < 0.6, rng.random() < 0.6]
        else:
            seen = [True, True]
            seen[1 - p] = rng.random() < 0.7
        return state + ((p, action, seen[0], seen[1]),)

    def utilities(self, state):
        rng = self._rng("u", state)
        u = float(rng.randint(-self.payoffs, self.payoffs)) if self.payoffs else round(rng.uniform(-3.0, 3.0), 4)
        return (u, -u)

    def _observations(self, state, player):
        obs = []
        for actor, label, *seen in state:
            who = "c" if actor == CHANCE else ("me" if actor == player else "op")
            obs.append(f"{who}:{label if seen[player] else '?'}")
        return obs

    def infoset_key(self, state):
        p = self.player(state)
        return f"p{p}|" + ",".join(self._observations(state, p))
