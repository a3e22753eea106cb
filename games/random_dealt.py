"""Random games dealt once: private types at the root, then a random public tree.

Chance first deals a pair of private types (t0, t1) from a random joint distribution with
some pairs impossible (as cards that cannot be dealt twice); after that everything is
public: who moves, the legal actions and public chance outcomes depend on the public history
alone, while public chance probabilities and the payoffs depend on both types too (as the
board card of Leduc does). A player's infoset is (public node, own type). These are the games
tensorcfr's public-tree form is made for, random, so that both compiled forms can be held
equal on trees nobody shaped by hand (tests/test_forms.py).

Every property is a deterministic function of the parameters, so `"random_dealt(seed=3)"`
always names the same game. The per-node protocol and the vectorised form
(`games.vector.VectorGame`) read the same tables.

Example:
    >>> from tensorcfr import games
    >>> g = games.make("random_dealt(seed=3)")
    >>> games.check_game(g)["terminals"] > 0
    True
"""

from __future__ import annotations

import numpy as np

from .base import CHANCE, TERMINAL, Game, GameError
from .vector import VectorGame


class RandomDealt(Game):
    """A random dealt-once game. State = (t0, t1, public node), the types -1 until dealt."""

    public_form = True

    def __init__(self, seed: int = 0, types: int = 3, depth: int = 4, max_actions: int = 3):
        for what, v, lo in (("types", types, 2), ("depth", depth, 1), ("max_actions", max_actions, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= 12:
                raise GameError(f"random_dealt: {what} must be a whole number in {lo}..12, got {v!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise GameError(f"random_dealt: seed must be a whole number, got {seed!r}")
        self.seed, self.types, self.depth, self.max_actions = seed, types, depth, max_actions
        self.name = f"random_dealt(seed={seed})" if (types, depth, max_actions) == (3, 4, 3) else \
            f"random_dealt(seed={seed},types={types},depth={depth},max_actions={max_actions})"
        rng = np.random.default_rng([seed, types, depth, max_actions])
        self.T = (types, types + 1)  # player 1 has one more type: the forms must not assume T0 = T1
        deal = rng.random(self.T) * (rng.random(self.T) > 0.25)  # [T0, T1], about a quarter impossible
        deal[0, 0] = max(deal[0, 0], 0.1)
        self.deal = deal / deal.sum()
        # the public tree, breadth-first: per node its kind (0, 1, CHANCE, TERMINAL), first child, children
        kind, first, count, self.payoff, self.chance_probs = [], [], [], {}, {}
        frontier, n = [0], 1
        level = 0
        while frontier:
            nxt = []
            for node in frontier:
                r = rng.random()
                if level >= depth or (level >= 1 and r < 0.15):
                    k, c = TERMINAL, 0
                    # [T0, T1] uniform in [-3, 3]: real numbers, so no two sums tie exactly (a tie that
                    # rounding breaks either way flips regret matching: tests/test_solvers_vs_oracle.py)
                    self.payoff[node] = rng.uniform(-3, 3, size=self.T)
                elif level >= 1 and r < 0.3:
                    k, c = CHANCE, 2
                    w = rng.random((*self.T, 2)) + 0.05
                    self.chance_probs[node] = w / w.sum(axis=2, keepdims=True)  # [T0, T1, 2]: P(outcome | types)
                else:
                    k, c = int(rng.integers(0, 2)), int(rng.integers(1, max_actions + 1))
                kind.append(k)
                first.append(n)
                count.append(c)
                nxt += list(range(n, n + c))
                n += c
            frontier, level = nxt, level + 1
        self.kind, self.first, self.count = np.array(kind), np.array(first), np.array(count)
        self.actions = tuple(f"a{i}" for i in range(max_actions))

    # -- per-node protocol --------------------------------------------------------------------

    def initial_state(self):
        return (-1, -1, 0)

    def player(self, state):
        t0, _, node = state
        return CHANCE if t0 < 0 else int(self.kind[node])

    def chance_outcomes(self, state):
        t0, t1, node = state
        if t0 < 0:
            return [(f"{a},{b}", float(self.deal[a, b])) for a in range(self.T[0]) for b in range(self.T[1])
                    if self.deal[a, b] > 0]
        return [(f"c{k}", float(p)) for k, p in enumerate(self.chance_probs[node][t0, t1])]

    def legal_actions(self, state):
        return self.actions[:int(self.count[state[2]])]

    def next_state(self, state, action):
        t0, t1, node = state
        if t0 < 0:
            a, b = action.split(",")
            return (int(a), int(b), node)
        k = int(action[1:])
        return (t0, t1, int(self.first[node]) + k)

    def utilities(self, state):
        t0, t1, node = state
        u = float(self.payoff[node][t0, t1])
        return (u, -u)

    def infoset_key(self, state):
        t0, t1, node = state
        p = int(self.kind[node])
        return f"p{p}:t{(t0, t1)[p]}:n{node}"

    def vectorized(self):
        return RandomDealtVector(self)


class RandomDealtVector(VectorGame):
    """State row = (t0, t1, public node); chance outcome c of the deal is the pair (c // T1, c % T1)."""

    width = 3
    public_hands = (0, 1)

    def __init__(self, g: RandomDealt):
        self.g, self.name, self.actions = g, g.name, g.actions
        T0, T1 = g.T
        N = len(g.kind)
        self.num_outcomes = max(T0 * T1, 2)
        # dense tables over nodes: utility [N, T0, T1], public chance [N, T0, T1, 2]
        self.u = np.zeros((N, T0, T1))
        self.pc = np.zeros((N, T0, T1, 2))
        for node, w in g.payoff.items():
            self.u[node] = w
        for node, w in g.chance_probs.items():
            self.pc[node] = w

    def initial(self):
        return np.array([[-1, -1, 0]], dtype=np.int64)

    def player(self, s):
        return np.where(s[:, 0] < 0, CHANCE, self.g.kind[s[:, 2]])

    def legal(self, s):
        return np.arange(len(self.actions))[None, :] < self.g.count[s[:, 2]][:, None]

    def chance(self, s):
        T0, T1 = self.g.T
        out = np.zeros((len(s), self.num_outcomes))
        deal = s[:, 0] < 0
        out[deal, :T0 * T1] = self.g.deal.reshape(-1)
        pub = ~deal
        out[pub, :2] = self.pc[s[pub, 2], s[pub, 0], s[pub, 1]]
        return out

    def next(self, s, a):
        out = s.copy()
        deal = s[:, 0] < 0
        out[deal, 0], out[deal, 1] = a[deal] // self.g.T[1], a[deal] % self.g.T[1]
        out[~deal, 2] = self.g.first[s[~deal, 2]] + a[~deal]
        return out

    def utility(self, s):
        return self.u[s[:, 2], s[:, 0], s[:, 1]]

    def infoset(self, s):
        p = self.g.kind[s[:, 2]]
        own = np.where(p == 0, s[:, 0], s[:, 1])
        return (p * 16 + own) * len(self.g.kind) + s[:, 2]

    def infoset_names(self, keys):
        N = len(self.g.kind)
        return [f"p{k // N // 16}:t{k // N % 16}:n{k % N}" for k in keys.tolist()]
