"""A slow, obviously-correct recursive CFR over the game protocol, in float64 Python.

It shares nothing with the tensor solver but the game: it walks histories recursively,
keeps regrets and average-strategy sums in dicts keyed by infoset, and implements the same
options (regret matching or regret matching+, simultaneous or alternating updates, uniform
or linear averaging with a delay) the textbook way.
"""

from __future__ import annotations

import games
from games import CHANCE, TERMINAL


class RecursiveCFR:
    def __init__(self, game, plus=False, updates="simultaneous", averaging="uniform", delay=0,
                 alpha=None, beta=None, gamma=None, predictive=False):
        self.game = game
        self.plus, self.updates, self.averaging, self.delay = plus, updates, averaging, delay
        self.alpha, self.beta, self.gamma, self.predictive = alpha, beta, gamma, predictive
        self.last_regret: dict[str, list[float]] = {}
        self.regret: dict[str, list[float]] = {}
        self.avg: dict[str, list[float]] = {}
        self.actions: dict[str, tuple[str, ...]] = {}
        self.player_of: dict[str, int] = {}
        self.t = 0
        self._discover(game.initial_state())

    def _discover(self, state):
        p = self.game.player(state)
        if p == TERMINAL:
            return
        if p == CHANCE:
            for a, _ in self.game.chance_outcomes(state):
                self._discover(self.game.next_state(state, a))
            return
        key = self.game.infoset_key(state)
        acts = tuple(self.game.legal_actions(state))
        self.actions[key], self.player_of[key] = acts, p
        self.regret.setdefault(key, [0.0] * len(acts))
        self.avg.setdefault(key, [0.0] * len(acts))
        for a in acts:
            self._discover(self.game.next_state(state, a))

    def strategy(self, key):
        target = self.regret[key]
        if self.predictive and key in self.last_regret:
            target = [r + m for r, m in zip(target, self.last_regret[key])]
        pos = [max(r, 0.0) for r in target]
        total = sum(pos)
        n = len(pos)
        return [r / total for r in pos] if total > 0 else [1.0 / n] * n

    def average_strategy(self, key):
        total = sum(self.avg[key])
        n = len(self.avg[key])
        return [a / total for a in self.avg[key]] if total > 0 else [1.0 / n] * n

    def _weight(self):
        if self.t <= self.delay:
            return 0.0
        if self.averaging == "power":
            return float(self.t - self.delay) ** self.gamma
        return float(self.t - self.delay) if self.averaging == "linear" else 1.0

    def _traverse(self, state, reach, chance, policy, updating, regret_acc, counted):
        """Player 0's expected utility below `state`; accumulates regrets and averages."""
        g = self.game
        p = g.player(state)
        if p == TERMINAL:
            return g.utilities(state)[0]
        if p == CHANCE:
            return sum(pr * self._traverse(g.next_state(state, a), reach, chance * pr, policy, updating,
                                           regret_acc, counted)
                       for a, pr in g.chance_outcomes(state))
        key = g.infoset_key(state)
        sigma = policy[key]
        values = []
        for a, s in zip(self.actions[key], sigma):
            child_reach = list(reach)
            child_reach[p] *= s
            values.append(self._traverse(g.next_state(state, a), child_reach, chance, policy, updating,
                                         regret_acc, counted))
        v = sum(s * q for s, q in zip(sigma, values))
        if p in updating:
            sign = 1.0 if p == 0 else -1.0
            cf_reach = reach[1 - p] * chance
            acc = regret_acc.setdefault(key, [0.0] * len(sigma))
            for i, q in enumerate(values):
                acc[i] += cf_reach * sign * (q - v)
            if key not in counted:  # own reach is the same at every history of the infoset
                counted.add(key)
                w = self._weight()
                for i, s in enumerate(sigma):
                    self.avg[key][i] += w * reach[p] * s
        return v

    def _apply(self, regret_acc):
        t = self.t
        for key, acc in regret_acc.items():
            r = [a + b for a, b in zip(self.regret[key], acc)]
            if self.plus:
                r = [max(x, 0.0) for x in r]
            if self.alpha is not None:  # discounted CFR
                r = [x * (t ** self.alpha / (t ** self.alpha + 1)) if x >= 0 else
                     x * (t ** self.beta / (t ** self.beta + 1)) for x in r]
            self.regret[key] = r
            self.last_regret[key] = list(acc)

    def iterate(self):
        self.t += 1
        root = self.game.initial_state()
        groups = [(0, 1)] if self.updates == "simultaneous" else [(0,), (1,)]
        for updating in groups:
            policy = {k: self.strategy(k) for k in self.actions}
            acc: dict[str, list[float]] = {}
            self._traverse(root, [1.0, 1.0], 1.0, policy, set(updating), acc, set())
            self._apply(acc)

    def current_policy(self):
        return {k: dict(zip(self.actions[k], self.strategy(k))) for k in self.actions}

    def average_policy(self):
        return {k: dict(zip(self.actions[k], self.average_strategy(k))) for k in self.actions}


def expected_value(game, policy, state=None):
    """Player 0's expected utility of a profile `{key: {action: prob}}`, recursively."""
    state = game.initial_state() if state is None else state
    p = game.player(state)
    if p == TERMINAL:
        return game.utilities(state)[0]
    if p == CHANCE:
        return sum(pr * expected_value(game, policy, game.next_state(state, a)) for a, pr in game.chance_outcomes(state))
    row = policy[game.infoset_key(state)]
    return sum(pr * expected_value(game, policy, game.next_state(state, a)) for a, pr in row.items() if pr)


def make(spec):
    return games.make(spec)
