"""A slow, plainly recursive Monte-Carlo CFR (external and outcome sampling) over the game
protocol, in Python floats, fed with given uniforms so that it can replay the draws of the
tensor sampler (`tensorcfr.sampling`).

It shares nothing with the tensor code but the game and two conventions a replay needs:
chance classes are numbered in breadth-first order of the chance edges (one uniform per class
picks the outcome at each of its chance nodes), and a uniform u picks the first action (or
outcome) whose running sum of probabilities exceeds u, the last one if none does.
"""

from __future__ import annotations

from collections import deque

from tensorcfr.games import CHANCE, TERMINAL


def pick(u: float, probs) -> int:
    total = 0.0
    for a, pr in enumerate(probs):
        total += pr
        if u < total:
            return a
    return len(probs) - 1


def chance_classes(game) -> dict[tuple, int]:
    """{history (tuple of actions and outcomes) below a chance edge: its class}, breadth first."""
    classes, n = {}, 1
    frontier = deque([(game.initial_state(), ())])
    while frontier:
        state, path = frontier.popleft()
        p = game.player(state)
        if p == TERMINAL:
            continue
        if p == CHANCE:
            for a, _ in game.chance_outcomes(state):
                classes[path + (a,)] = n
                n += 1
                frontier.append((game.next_state(state, a), path + (a,)))
        else:
            for a in game.legal_actions(state):
                frontier.append((game.next_state(state, a), path + (a,)))
    return classes


class RecursiveMCCFR:
    """Regret matching (or regret matching+ with `plus`) on sampled counterfactual regrets,
    one traversal per player, alternating: player 0 first, player 1 against its new strategy."""

    def __init__(self, game, scheme: str, plus: bool = False, epsilon: float = 0.6):
        self.game, self.scheme, self.plus, self.epsilon = game, scheme, plus, epsilon
        self.classes = chance_classes(game)
        self.regret: dict[str, list[float]] = {}

    def strategy(self, key: str, n: int) -> list[float]:
        r = [max(x, 0.0) for x in self.regret.get(key, [0.0] * n)]
        total = sum(r)
        return [x / total for x in r] if total > 0 else [1.0 / n] * n

    def traverse(self, p: int, chance_u: dict[int, float], own_u: dict[str, float], other_u: dict[str, float]):
        """One traversal for player p with the given uniforms: {class: u}, {infoset key: u}."""
        inst: dict[str, list[float]] = {}

        def walk(state, path, cls, own_q):
            g = self.game
            pl = g.player(state)
            if pl == TERMINAL:
                u = g.utilities(state)[p]
                return u / own_q if self.scheme == "outcome" else u
            if pl == CHANCE:
                outcomes = list(g.chance_outcomes(state))
                a = outcomes[pick(chance_u[cls], [pr for _, pr in outcomes])][0]
                return walk(g.next_state(state, a), path + (a,), self.classes[path + (a,)], own_q)
            key, actions = g.infoset_key(state), list(g.legal_actions(state))
            sigma = self.strategy(key, len(actions))
            if pl != p:
                a = actions[pick(other_u[key], sigma)]
                return walk(g.next_state(state, a), path + (a,), cls, own_q)
            acc = inst.setdefault(key, [0.0] * len(actions))
            if self.scheme == "external":
                vals = [walk(g.next_state(state, a), path + (a,), cls, own_q) for a in actions]
                v = sum(s * x for s, x in zip(sigma, vals))
                for i, x in enumerate(vals):
                    acc[i] += x - v
                return v
            n = len(actions)
            explore = [self.epsilon / n + (1 - self.epsilon) * s for s in sigma]
            i = pick(own_u[key], explore)
            w = walk(g.next_state(state, actions[i]), path + (actions[i],), cls, own_q * explore[i])
            v = sigma[i] * w
            for j in range(n):
                acc[j] += (w if j == i else 0.0) - v
            return v

        walk(self.game.initial_state(), (), 0, 1.0)
        for key, r in inst.items():
            old = self.regret.get(key, [0.0] * len(r))
            new = [a + b for a, b in zip(old, r)]
            self.regret[key] = [max(x, 0.0) for x in new] if self.plus else new
