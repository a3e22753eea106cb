"""A slow, obviously-correct recursive CFR over the game protocol, in float64 Python.

It shares nothing with the tensor solver but the game: it walks the game once into a tree of
nested tuples (what `player`, `chance_outcomes`, `infoset_key` and `utilities` said of each
history; asking the game again each iteration made the small hold'em flop's comparison take
20 s, 6 s now, 2026-11-28), then
walks that tree recursively each iteration, keeps regrets and average-strategy sums in dicts
keyed by infoset, and implements the same options (regret matching or regret matching+,
simultaneous or alternating updates, uniform or linear averaging with a delay) the textbook way.
"""

from __future__ import annotations

import math

from tensorcfr import games
from tensorcfr.games import CHANCE, TERMINAL


class RecursiveCFR:
    def __init__(self, game, plus=False, updates="simultaneous", averaging="uniform", delay=0,
                 alpha=None, beta=None, gamma=None, predictive=False, regret_tolerance=None, number=float,
                 alpha_end=None, beta_end=None, gamma_end=None, horizon=None):
        # number=fractions.Fraction (with `ExactGame`) runs it in exact rational arithmetic
        self.num = number
        self.game = game
        self.regret_tolerance = regret_tolerance
        self.plus, self.updates, self.averaging, self.delay = plus, updates, averaging, delay
        self.alpha, self.beta, self.gamma, self.predictive = alpha, beta, gamma, predictive
        # a schedule (HS-DCFR, HS-PCFR+): each of alpha, beta, gamma with an end moves linearly
        # to it over iterations 1..horizon; a scheduled gamma discounts the average DCFR's way
        self.end = {"alpha": alpha_end, "beta": beta_end, "gamma": gamma_end}
        self.horizon = horizon
        self.last_regret: dict[str, list[float]] = {}
        self.regret: dict[str, list[float]] = {}
        self.avg: dict[str, list[float]] = {}
        self.actions: dict[str, tuple[str, ...]] = {}
        self.player_of: dict[str, int] = {}
        self.t = 0
        self.value_scale = [number(0), number(0)]  # per player: the largest |counterfactual value| of its last update
        self.root = self._discover(game.initial_state())

    def _discover(self, state):
        """The tree below `state`: (TERMINAL, the players' utilities), (CHANCE, [(probability,
        child), ...]) or (player, infoset key, [child of each legal action, in order])."""
        p = self.game.player(state)
        if p == TERMINAL:
            return TERMINAL, tuple(self.game.utilities(state))
        if p == CHANCE:
            return CHANCE, [(pr, self._discover(self.game.next_state(state, a)))
                            for a, pr in self.game.chance_outcomes(state)]
        key = self.game.infoset_key(state)
        acts = tuple(self.game.legal_actions(state))
        self.actions[key], self.player_of[key] = acts, p
        self.regret.setdefault(key, [self.num(0)] * len(acts))
        self.avg.setdefault(key, [self.num(0)] * len(acts))
        return p, key, [self._discover(self.game.next_state(state, a)) for a in acts]

    def strategy(self, key):
        target = self.regret[key]
        if self.predictive and key in self.last_regret:
            target = [r + m for r, m in zip(target, self.last_regret[key])]
        pos = [max(r, self.num(0)) for r in target]
        if self.regret_tolerance:  # the player's largest cumulative regret plus its largest last value
            p = self.player_of[key]
            scale = max(abs(r) for k, rs in self.regret.items() if self.player_of[k] == p for r in rs)
            scale += self.value_scale[p]
            pos = [r if r > self.regret_tolerance * scale else self.num(0) for r in pos]
        total = sum(pos)
        n = len(pos)
        return [r / total for r in pos] if total > 0 else [self.num(1) / n] * n

    def average_strategy(self, key):
        total = sum(self.avg[key])
        n = len(self.avg[key])
        return [a / total for a in self.avg[key]] if total > 0 else [self.num(1) / n] * n

    def _at(self, name):
        """alpha, beta or gamma at the current iteration (on its schedule where it has one)."""
        start, end = getattr(self, name), self.end[name]
        if end is None:
            return start
        return start + (end - start) * min(self.t, self.horizon) / self.horizon

    def _weight(self):
        if self.t <= self.delay:
            return self.num(0)
        if self.end["gamma"] is not None:  # the sums were discounted by ((t-1)/t)^gamma_t instead
            return self.num(1)
        if self.averaging == "power":
            return self.num(self.t - self.delay) ** self.gamma
        return self.num(self.t - self.delay) if self.averaging == "linear" else self.num(1)

    def _traverse(self, node, reach, chance, policy, updating, regret_acc, counted):
        """Player 0's expected utility below `node` (of `_discover`'s tree); accumulates regrets
        and averages."""
        p = node[0]
        if p == TERMINAL:
            return node[1][0]
        if p == CHANCE:
            return sum(pr * self._traverse(child, reach, chance * pr, policy, updating, regret_acc, counted)
                       for pr, child in node[1])
        _, key, children = node
        sigma = policy[key]
        values = []
        for child, s in zip(children, sigma):
            child_reach = list(reach)
            child_reach[p] *= s
            values.append(self._traverse(child, child_reach, chance, policy, updating, regret_acc, counted))
        v = sum(s * q for s, q in zip(sigma, values))
        if p in updating:
            sign = 1 if p == 0 else -1
            cf_reach = reach[1 - p] * chance
            acc = regret_acc.setdefault(key, [self.num(0)] * len(sigma))
            val = regret_acc.setdefault(("values", key), [self.num(0)] * len(sigma))
            for i, q in enumerate(values):
                acc[i] += cf_reach * sign * (q - v)
                val[i] += cf_reach * sign * q
            if key not in counted:  # own reach is the same at every history of the infoset
                counted.add(key)
                w = self._weight()
                for i, s in enumerate(sigma):
                    self.avg[key][i] += w * reach[p] * s
        return v

    def _apply(self, regret_acc):
        t = self.t
        for key, acc in list(regret_acc.items()):
            if isinstance(key, tuple):  # ("values", infoset): the counterfactual values, for the tolerance's scale
                p = self.player_of[key[1]]
                self.value_scale[p] = max(self.value_scale[p], max(abs(x) for x in acc))
                continue
            r = [a + b for a, b in zip(self.regret[key], acc)]
            if self.plus:
                r = [max(x, self.num(0)) for x in r]
            if self.alpha is not None:  # discounted CFR
                a, b = self._at("alpha"), self._at("beta")
                r = [x * (t ** a / (t ** a + 1)) if x >= 0 else x * (t ** b / (t ** b + 1)) for x in r]
            self.regret[key] = r
            self.last_regret[key] = list(acc)

    def iterate(self):
        self.t += 1
        s = self.t - self.delay
        if self.end["gamma"] is not None and s > 0:  # DCFR's discount of the average, scheduled
            d = ((s - 1) / s) ** self._at("gamma")
            self.avg = {k: [x * d for x in v] for k, v in self.avg.items()}
        root = self.root
        groups = [(0, 1)] if self.updates == "simultaneous" else [(0,), (1,)]
        for updating in groups:
            policy = {k: self.strategy(k) for k in self.actions}
            acc: dict = {}
            for p in updating:
                self.value_scale[p] = self.num(0)
            self._traverse(root, [self.num(1), self.num(1)], self.num(1), policy, set(updating), acc, set())
            self._apply(acc)

    def current_policy(self):
        return {k: dict(zip(self.actions[k], self.strategy(k))) for k in self.actions}

    def average_policy(self):
        return {k: dict(zip(self.actions[k], self.average_strategy(k))) for k in self.actions}


class ExactGame:
    """`game` with its utilities and chance probabilities as `fractions.Fraction`, each the
    exact value of the float the game gives (the numbers the tensor solver starts from), for
    `RecursiveCFR(number=Fraction)`: every later operation is exact."""

    def __init__(self, game):
        self._game = game

    def __getattr__(self, name):
        return getattr(self._game, name)

    def utilities(self, state):
        from fractions import Fraction

        return tuple(Fraction(u) for u in self._game.utilities(state))

    def chance_outcomes(self, state):
        from fractions import Fraction

        return [(a, Fraction(p)) for a, p in self._game.chance_outcomes(state)]


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


class RecursiveFTRL(RecursiveCFR):
    """Sequence-form FTRL with dilated entropy, the textbook way: a dict of cumulative
    utilities per (infoset, action), filled by a recursive walk to the terminals, and a
    recursive per-infoset softmax over each player's tree of infosets.

    Shares with RecursiveCFR only the discovered tree and infosets, the averaging weights and the
    reading of the average strategy.
    """

    def __init__(self, game, eta=1.0, weights="unit", optimistic=False, updates="simultaneous",
                 averaging="uniform", delay=0, gamma=None):
        super().__init__(game, updates=updates, averaging=averaging, delay=delay, gamma=gamma)
        self.eta, self.weights, self.optimistic = eta, weights, optimistic
        self.children: dict[tuple[str, int], set[str]] = {}  # (infoset, action index) -> own infosets below
        self.roots: list[set[str]] = [set(), set()]
        self._link(self.root, [None, None])
        self.utility = {k: [0.0] * len(a) for k, a in self.actions.items()}
        self.sigma = {}
        self.beta = {}
        for p in (0, 1):
            for k in self.roots[p]:
                self._weight_of(k)
                self._solve(k, self.utility)  # the first strategy minimises the regulariser

    def _link(self, node, last):
        p = node[0]
        if p == TERMINAL:
            return
        if p == CHANCE:
            for _, child in node[1]:
                self._link(child, last)
            return
        _, key, children = node
        (self.roots[p] if last[p] is None else self.children.setdefault(last[p], set())).add(key)
        for i, child in enumerate(children):
            nxt = list(last)
            nxt[p] = (key, i)
            self._link(child, nxt)

    def _weight_of(self, key):
        if key not in self.beta:
            below = max(sum(self._weight_of(c) for c in self.children.get((key, i), ()))
                        for i in range(len(self.actions[key])))
            self.beta[key] = {"unit": 1.0, "farina21": 1.0 + below, "kroer17": 2.0 + 2.0 * below}[self.weights]
        return self.beta[key]

    def strategy(self, key):
        return self.sigma[key]

    def _solve(self, key, target):
        """Value of infoset `key` under the regularised best response; sets its strategy."""
        q = [target[key][i] + sum(self._solve(c, target) for c in self.children.get((key, i), ()))
             for i in range(len(self.actions[key]))]
        tau = self.beta[key] / self.eta
        top = max(v / tau for v in q)
        e = [math.exp(v / tau - top) for v in q]
        self.sigma[key] = [x / sum(e) for x in e]
        return tau * (top + math.log(sum(e)))

    def _utilities(self, node, reach, chance, last, g_acc, updating, counted):
        p = node[0]
        if p == TERMINAL:
            u = node[1]
            for q in updating:
                if last[q] is not None:
                    key, i = last[q]
                    g_acc.setdefault(key, [0.0] * len(self.actions[key]))[i] += chance * reach[1 - q] * u[q]
            return
        if p == CHANCE:
            for pr, child in node[1]:
                self._utilities(child, reach, chance * pr, last, g_acc, updating, counted)
            return
        _, key, children = node
        sigma = self.sigma[key]
        if p in updating and key not in counted:
            counted.add(key)
            w = self._weight()
            for i, s in enumerate(sigma):
                self.avg[key][i] += w * reach[p] * s
        for i, child in enumerate(children):
            r = list(reach)
            r[p] *= sigma[i]
            nxt = list(last)
            nxt[p] = (key, i)
            self._utilities(child, r, chance, nxt, g_acc, updating, counted)

    def iterate(self):
        self.t += 1
        groups = [(0, 1)] if self.updates == "simultaneous" else [(0,), (1,)]
        for updating in groups:
            g_acc: dict[str, list[float]] = {}
            self._utilities(self.root, [1.0, 1.0], 1.0, [None, None], g_acc, set(updating), set())
            for p in updating:
                target = {k: self._target(k, g_acc.get(k, [0.0] * len(self.actions[k])))
                          for k in self.actions if self.player_of[k] == p}
                for k in self.roots[p]:
                    self._solve(k, target)

    def _target(self, k, gk):
        """The utilities infoset k's softmax maximises against, from this update's values gk."""
        self.utility[k] = [u + x for u, x in zip(self.utility[k], gk)]
        return [u + x for u, x in zip(self.utility[k], gk)] if self.optimistic else self.utility[k]


def reference_normal_form(A, B, procedure, uniforms, mu=None):
    """Hart and Mas-Colell's procedures on a bimatrix game, one run, in plain Python floats.

    A[i][j], B[i][j]: the row and column player's payoffs; `uniforms`: one (u_row, u_col)
    per iteration, drawn by inversion of each player's cumulative probabilities. Returns the
    actions played [(j, l), ...], the cumulative unconditional regrets (row, column) and the
    distributions of the next play. The invariant vector is a least-squares solve of
    q Q = 0, sum q = 1 (numpy), with the same tiny perturbation as the library.
    """
    import numpy as np

    m, n = len(A), len(A[0])
    own = [A, [[B[i][j] for i in range(m)] for j in range(n)]]  # own[p][k][other action]
    size = [m, n]
    if mu is None:
        mu = [(k - 1) * (max(map(max, P)) - min(map(min, P))) for k, P in zip(size, own)]
    else:
        mu = [mu, mu]
    R = [[0.0] * k for k in size]
    D = [[[0.0] * k for _ in range(k)] for k in size]
    strategy = [[1.0 / k] * k for k in size]
    plays = []
    for t, us in enumerate(uniforms, 1):
        acts = []
        for p, u in zip(strategy, us):
            c, a = 0.0, 0
            for prob in p:
                c += prob
                a += c < u
            acts.append(min(a, len(p) - 1))
        plays.append(tuple(acts))
        for i in (0, 1):
            a, b = acts[i], acts[1 - i]
            for k in range(size[i]):
                d = own[i][k][b] - own[i][a][b]
                R[i][k] += d
                D[i][a][k] += d
        for i in (0, 1):
            k_ = size[i]
            if procedure == "sampled-rm":
                pos = [max(r, 0.0) for r in R[i]]
                s = sum(pos)
                strategy[i] = [v / s for v in pos] if s > 0 else [1.0 / k_] * k_
            elif procedure == "conditional-rm":
                j = acts[i]
                p = [max(D[i][j][k], 0.0) / t / mu[i] if k != j else 0.0 for k in range(k_)]
                p[j] = 1.0 - sum(p)
                strategy[i] = p
            else:  # invariant-rm
                M = np.maximum(np.array(D[i]), 0.0) / t
                M = M + (1e-9 * M.max() + 1e-300)
                Q = M - np.diag(M.sum(1))
                system = np.vstack([Q.T, np.ones(k_)])
                q = np.linalg.lstsq(system, np.r_[np.zeros(k_), 1.0], rcond=None)[0].clip(min=0)
                strategy[i] = list(q / q.sum())
    return plays, R, strategy


class PaperPDCFRPlus(RecursiveCFR):
    """PDCFR+ as its paper and its authors' code write it (Xu et al., IJCAI 2024;
    github.com/rpSebastian/PDCFRPlus, `pdcfr_plus.py`), not as tensorcfr parametrises it:
    undiscounted-then-discounted regrets R_t = [R_{t-1} d_t + r_t]^+ with d_t = (t-1)^alpha /
    ((t-1)^alpha + 1), the next strategy regret matching on [R_t d_{t+1} + r_t]^+, made when
    the infoset's update is applied; alternating updates, average weights t^gamma."""

    def __init__(self, game, alpha=2.3, gamma=5.0):
        super().__init__(game, updates="alternating", averaging="power", gamma=gamma)
        self.alpha = None  # (the base class's discounting stays off: _apply below is the paper's)
        self.paper_alpha = alpha
        self.raw: dict[str, list[float]] = {}
        self.policy: dict[str, list[float]] = {}

    def _d(self, t):
        x = (t - 1) ** self.paper_alpha
        return x / (x + 1)

    def strategy(self, key):
        n = len(self.actions[key])
        return self.policy.get(key, [1.0 / n] * n)

    def _apply(self, regret_acc):
        t = self.t
        for key, r in regret_acc.items():
            if isinstance(key, tuple):
                continue
            old = self.raw.get(key, [0.0] * len(r))
            self.raw[key] = [max(x * self._d(t) + y, 0.0) for x, y in zip(old, r)]
            pred = [max(x * self._d(t + 1) + y, 0.0) for x, y in zip(self.raw[key], r)]
            total = sum(pred)
            self.policy[key] = [p / total for p in pred] if total > 0 else [1.0 / len(pred)] * len(pred)


class RecursiveMMD(RecursiveFTRL):
    """Magnetic mirror descent with the dilated entropy, the textbook way (Sokota et al., ICLR
    2023; OpenSpiel's `mmd_dilated.py`): each step maximises eta <g, x> - D(x, x_t) - eta alpha
    psi(x), solved by RecursiveFTRL's recursive per-infoset softmax on the utilities
    eta g + beta log b_t at temperatures beta (1 + eta alpha). Starts uniform."""

    def __init__(self, game, eta=1.0, alpha=0.05, weights="unit", updates="simultaneous", averaging="uniform"):
        # RecursiveFTRL's softmax divides beta by its eta: that divisor is 1 / (1 + eta alpha) here
        super().__init__(game, eta=1.0 / (1.0 + eta * alpha), weights=weights, updates=updates, averaging=averaging)
        self.step = eta
        self.sigma = {k: [1.0 / len(a)] * len(a) for k, a in self.actions.items()}

    def _target(self, k, gk):
        return [self.step * g + self.beta[k] * math.log(b) for g, b in zip(gk, self.sigma[k])]


class RecursiveRTCFR(RecursiveFTRL):
    """RTCFR+ (Meng et al., NeurIPS 2025) the textbook way: CFR+ whose counterfactual value of
    each (infoset, action) loses mu (x - r), x the realisation-plan entry of the strategy played
    and r the reference's, computed by recursive walks over each player's tree of infosets.
    The regrets are those of the strategy regret matching+ proposes; the strategy played raises
    each probability to at least p_t, (1 - p_t |A|) s + p_t; every `period` iterations the
    reference becomes the plan played and p_t halves. An infoset whose regrets sum to less than
    `floor` plays uniformly."""

    def __init__(self, game, mu=1e-3, perturbation=1e-10, period=100, floor=1e-9, updates="alternating",
                 averaging="linear", delay=0, gamma=None):
        super().__init__(game, updates=updates, averaging=averaging, delay=delay, gamma=gamma)
        self.mu, self.p0, self.period, self.floor = mu, perturbation, period, floor
        self.sigma = {k: [1.0 / len(a)] * len(a) for k, a in self.actions.items()}
        self.ref = {**self._plan(0), **self._plan(1)}

    def _plan(self, p):
        """{infoset: [x(I, a)]} of player p's strategy played, top-down."""
        x = {}

        def down(key, reach):
            x[key] = [reach * s for s in self.sigma[key]]
            for i in range(len(self.actions[key])):
                for child in self.children.get((key, i), ()):
                    down(child, x[key][i])
        for k in self.roots[p]:
            down(k, 1.0)
        return x

    def _matched(self, key):
        r = self.regret[key]
        total = sum(r)
        n = len(r)
        return [x / total for x in r] if total > 0 and total >= self.floor else [1.0 / n] * n

    def iterate(self):
        self.t += 1
        if self.t % self.period == 0:
            self.ref = {**self._plan(0), **self._plan(1)}
        floor_p = self.p0 * 0.5 ** (self.t // self.period)
        groups = [(0, 1)] if self.updates == "simultaneous" else [(0,), (1,)]
        for updating in groups:
            g_acc: dict[str, list[float]] = {}
            self._utilities(self.root, [1.0, 1.0], 1.0, [None, None], g_acc, set(updating), set())
            for p in updating:
                x = self._plan(p)
                proposed = {k: self._matched(k) for k in self.actions if self.player_of[k] == p}

                def value(key, g_acc=g_acc, x=x, proposed=proposed):
                    g = g_acc.get(key, [0.0] * len(self.actions[key]))
                    q = [g[i] - self.mu * (x[key][i] - self.ref[key][i])
                         + sum(value(c) for c in self.children.get((key, i), ()))
                         for i in range(len(self.actions[key]))]
                    v = sum(s * qi for s, qi in zip(proposed[key], q))
                    self.regret[key] = [max(r + qi - v, 0.0) for r, qi in zip(self.regret[key], q)]
                    return v
                for k in self.roots[p]:
                    value(k)
                for k in proposed:
                    n = len(self.actions[k])
                    self.sigma[k] = [(1 - floor_p * n) * s + floor_p for s in self._matched(k)]
