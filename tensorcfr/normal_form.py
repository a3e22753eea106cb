"""Normal-form games: regret-matching dynamics as batched tensor ops, and an exact LP solution.

The thesis' first chapter. A batch of B runs advances at once: a batch of games of one shape,
each with `runs` independent random streams. Payoffs are held from each player's side,
P_0 = A [B, m, n] and P_1 = B^T [B, n, m] (own action, opponent's action), so one code path
serves both players. The procedures (`PROCEDURES`):

- `rm`: regret matching with expected values: x_{t+1} proportional to [R_t]^+, where
  R_t = sum over tau <= t of (A y_tau - x_tau^T A y_tau); uniform while no regret is positive.
- `rm+`: regret matching+: R_t = [R_{t-1} + r_t]^+.
- `sampled-rm`: unconditional regret matching on realised play: each player draws an action,
  and R_t sums u(k, l_tau) - u(j_tau, l_tau) over the actions (j, l) actually played.
- `conditional-rm`: Hart and Mas-Colell's (2000) conditional regret matching with inertia:
  with D_t(j, k) = (1/t) sum over tau <= t with j_tau = j of u(k, l_tau) - u(j, l_tau), a player
  who last played j switches to k != j with probability [D_t(j, k)]^+ / mu and repeats j
  otherwise. The default mu, (m - 1) times the player's payoff range, keeps this a distribution.
- `invariant-rm`: plays the invariant probability vector q of the conditional-regret matrix,
  q_k sum_j [D_t(k, j)]^+ = sum_j q_j [D_t(j, k)]^+ (no inertia). Where the chain has several
  invariant vectors, a 1e-9-relative uniform perturbation of the matrix picks one.

All start from uniform play and update both players simultaneously. The "average" strategy
is the empirical distribution of play: the joint Z = (1/T) sum_t x_t (x) y_t (one-hot for the
sampled procedures) and its marginals; the "current" one is the distribution the next play is
drawn from. For general-sum games the empirical joint approaches the coarse correlated
equilibria (unconditional regret) or, for `conditional-rm` and `invariant-rm`, the correlated
equilibria (conditional regret); `joint_regrets` measures both.

Example:
    >>> from tensorcfr.normal_form import RegretMatching, lp_solve
    >>> rm = RegretMatching("rps", "rm+", device="cpu")
    >>> rm.step(1000)
    >>> rm.evaluate()["average"].exploitability.item() < 1e-3
    True
    >>> round(lp_solve("ficha_domino")[0], 9)
    0.333333333
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from tensorcfr import games as games_pkg

from tensorcfr.devices import deterministic, resolve_device, resolve_dtype
from tensorcfr.errors import TensorCFRError
from tensorcfr.evaluation import Evaluation
from tensorcfr.forms import PayoffExtent
from tensorcfr.run import numbers
from tensorcfr.updates.specs import algorithm_name, parse_algorithm
from tensorcfr.updates.validate import number

PROCEDURES = ("rm", "rm+", "sampled-rm", "conditional-rm", "invariant-rm")
SAMPLED = ("sampled-rm", "conditional-rm", "invariant-rm")
_INVARIANT_PERTURBATION = 1e-9


def payoff_tensors(game, dtype=torch.float64, device="cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """(A, B) [m, n]: the row and the column player's payoffs of a matrix game (spec or object).

    Example:
        >>> payoff_tensors("matching_pennies")[1]
        tensor([[-1.,  1.],
                [ 1., -1.]], dtype=torch.float64)
    """
    g = games_pkg.make(game) if isinstance(game, str) else game
    if not isinstance(g, games_pkg.MatrixGame):
        raise TensorCFRError(f"{g.name} is not a matrix game; the normal-form procedures take "
                             "rps, biased_rps, matching_pennies, ficha_domino, blotto, battle_of_sexes, "
                             "prisoners_dilemma or games.matrix / games.bimatrix")
    return (torch.tensor(g.payoff, dtype=dtype, device=device), torch.tensor(g.payoff_col, dtype=dtype, device=device))


def lp_solve(game) -> tuple[float, list[float], list[float]]:
    """Value and an equilibrium (x, y) of a zero-sum matrix game by linear programming (scipy).

    Example:
        >>> value, x, y = lp_solve("matching_pennies")
        >>> value, x
        (0.0, [0.5, 0.5])
    """
    try:
        from scipy.optimize import linprog
    except ImportError:
        raise TensorCFRError("lp_solve needs scipy: pip install scipy") from None
    A, B = (t.numpy() for t in payoff_tensors(game))
    if abs(A + B).max() > 1e-12 * max(1.0, abs(A).max()):
        raise TensorCFRError("lp_solve: the game is not zero-sum")

    def maximin(M):  # max_x min_j (x^T M)_j: variables (x, v), minimise -v
        m, n = M.shape
        c = [0.0] * m + [-1.0]
        a_ub = [[-M[i, j] for i in range(m)] + [1.0] for j in range(n)]  # v - (x^T M)_j <= 0
        res = linprog(c, A_ub=a_ub, b_ub=[0.0] * n, A_eq=[[1.0] * m + [0.0]], b_eq=[1.0],
                      bounds=[(0, None)] * m + [(None, None)], method="highs")
        if res.status != 0:
            raise TensorCFRError(f"lp_solve: {res.message}")
        x = [max(float(v), 0.0) for v in res.x[:m]]
        s = sum(x)
        return float(res.x[m]), [v / s for v in x]

    value, x = maximin(A)
    _, y = maximin(-A.T)
    return value + 0.0, x, y  # + 0.0: no -0.0


def evaluate_profile(A: torch.Tensor, B: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> Evaluation:
    """Exact evaluation of the product profile (x [Bt, m], y [Bt, n]) in the game (A, B) [Bt, m, n]
    (or [m, n]): best-response values, NashConv (each player's best-response gain, summed),
    exploitability = NashConv / 2, and the row player's expected payoff as `game_value`.

    Example:
        >>> A, B = payoff_tensors("rps")
        >>> ev = evaluate_profile(A, B, torch.tensor([[1., 0, 0]], dtype=A.dtype), torch.full((1, 3), 1 / 3, dtype=A.dtype))
        >>> ev.nash_conv.item()
        1.0
    """
    A, B = A.expand(x.shape[0], *A.shape[-2:]), B.expand(x.shape[0], *B.shape[-2:])
    u0 = torch.einsum("bmn,bn->bm", A, y)  # [Bt, m] row actions against y
    u1 = torch.einsum("bmn,bm->bn", B, x)  # [Bt, n] column actions against x
    v0, v1 = (x * u0).sum(1), (y * u1).sum(1)
    br0, br1 = u0.amax(1), u1.amax(1)
    nash_conv = (br0 - v0) + (br1 - v1)
    return Evaluation((br0, br1), nash_conv, nash_conv / 2, v0)


def joint_regrets(A: torch.Tensor, B: torch.Tensor, Z: torch.Tensor) -> dict[str, torch.Tensor]:
    """Regrets of a joint distribution Z [Bt, m, n] (sums to 1), each [Bt]:

    `unconditional_p{i}`: the most player i gains by always playing one fixed action instead
    (clipped at 0; all <= eps: an eps-coarse correlated equilibrium);
    `conditional_p{i}`: the most player i gains by replacing one action j by k wherever Z
    recommends j (all <= eps: an eps-correlated equilibrium).

    Example:
        >>> A, B = payoff_tensors("battle_of_sexes")
        >>> Z = torch.tensor([[[0.5, 0.0], [0.0, 0.5]]], dtype=A.dtype)  # a public coin: a CE
        >>> {k: v.item() for k, v in joint_regrets(A, B, Z).items()}
        {'unconditional_p0': 0.0, 'unconditional_p1': 0.0, 'conditional_p0': 0.0, 'conditional_p1': 0.0}
    """
    A, B = A.expand_as(Z), B.expand_as(Z)
    out = {}
    for i, (P, W) in enumerate(((A, Z), (B.transpose(1, 2), Z.transpose(1, 2)))):  # own action first
        value = (P * W).sum((1, 2))
        out[f"unconditional_p{i}"] = ((P @ W.sum(1, keepdim=True).transpose(1, 2)).squeeze(2).amax(1) - value).clamp(min=0)
        C = W @ P.transpose(1, 2)  # [Bt, own j, own k]: payoff of k where j was recommended
        out[f"conditional_p{i}"] = (C - C.diagonal(dim1=1, dim2=2)[:, :, None]).amax((1, 2))
    return {k: out[k] for k in ("unconditional_p0", "unconditional_p1", "conditional_p0", "conditional_p1")}


@dataclass(frozen=True)
class RMConfig:
    """A normal-form procedure and its settings (see the module docstring).

    mu:   the inertia of conditional-rm, one number for both players (default per player:
          (m - 1) times the range of their payoffs)
    seed: the random stream of the sampled procedures (runs draw from one generator)
    runs: independent runs per game, advanced as one batch
    regret_tolerance: rm and rm+ match on regrets at most this times the largest regret plus
          the largest action value (absolute) as 0, as `CFRConfig.regret_tolerance` does (None:
          off): regrets exactly 0 in exact arithmetic come out as +-1e-17 depending on the order
          of summation (CPU or GPU)
    """

    name: str = "rm+"
    mu: float | None = None
    seed: int = 0
    runs: int = 1
    regret_tolerance: float | None = None

    def __post_init__(self):
        if self.name not in PROCEDURES:
            raise TensorCFRError(f"unknown procedure {self.name!r}; available: {', '.join(PROCEDURES)}")
        if self.mu is not None and self.name != "conditional-rm":
            raise TensorCFRError("mu is the positive inertia of conditional-rm only")
        if self.mu is not None:
            number("mu", self.mu, lo=0, lo_open=True)
        if not isinstance(self.runs, int) or self.runs < 1:
            raise TensorCFRError(f"runs must be a positive integer, got {self.runs!r}")
        if self.runs > 1 and self.name not in SAMPLED:
            raise TensorCFRError(f"{self.name} is deterministic: runs > 1 would repeat one run")
        tol = self.regret_tolerance
        if tol is not None and self.name not in ("rm", "rm+"):
            raise TensorCFRError(f"regret_tolerance is an option of rm and rm+, not of {self.name}")
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < 1):
            raise TensorCFRError(f"regret_tolerance must be a number in [0, 1), got {tol!r}")


def make_procedure(spec: str | RMConfig, **overrides) -> RMConfig:
    """`"rm+"`, `"conditional-rm(mu=10)"`, ... plus overrides (None values ignored).

    Example:
        >>> make_procedure("conditional-rm(mu=10)", runs=4)
        RMConfig(name='conditional-rm', mu=10.0, seed=0, runs=4, regret_tolerance=None)
    """
    if isinstance(spec, RMConfig):
        name, params = spec.name, {k: v for k, v in asdict(spec).items() if k != "name"}
    else:
        name, params = parse_algorithm(spec, "procedure")
    params.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(params) - {"mu", "seed", "runs", "regret_tolerance"}
    if unknown:
        raise TensorCFRError(f"unknown option(s) {sorted(unknown)} for {name}; options: mu, seed, runs, "
                             "regret_tolerance")
    if params.get("mu") is not None:
        params["mu"] = float(params["mu"])
    return RMConfig(name, **params)


def _regret_matching(r: torch.Tensor, tolerance: float | None = None, u: torch.Tensor | None = None) -> torch.Tensor:
    """[Bt, k] cumulative regrets -> strategy proportional to the positive part, uniform if none
    (entries at most `tolerance` times the row's largest |regret| plus largest |u|, the last
    action values [Bt, k], count as 0)."""
    pos = r.clamp(min=0)
    if tolerance:
        scale = r.abs().amax(1, keepdim=True) + u.abs().amax(1, keepdim=True)  # [Bt, 1]
        pos = torch.where(pos > scale * tolerance, pos, 0.0)
    total = pos.sum(1, keepdim=True)
    return torch.where(total > 0, pos / total.clamp(min=1e-300), 1.0 / r.shape[1])


def _draw(p: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """One action per row of p [Bt, k] by inversion of uniform draws u [Bt]."""
    return (p.cumsum(1) < u[:, None]).sum(1).clamp(max=p.shape[1] - 1)


def _invariant(D: torch.Tensor, t: int) -> torch.Tensor:
    """Invariant probability vectors q [Bt, k] of the regret matrices [D/t]^+ [Bt, k, k]."""
    M = D.clamp(min=0) / t
    M = M + (_INVARIANT_PERTURBATION * M.amax((1, 2), keepdim=True) + 1e-300)  # unique and irreducible
    Q = M - torch.diag_embed(M.sum(2))  # generator: q Q = 0
    system = Q.transpose(1, 2).clone()
    system[:, -1, :] = 1.0  # replace one balance equation by sum(q) = 1
    rhs = torch.zeros(D.shape[:2], dtype=D.dtype, device=D.device)
    rhs[:, -1] = 1.0
    q = torch.linalg.solve(system, rhs).clamp(min=0)
    return q / q.sum(1, keepdim=True)


class RegretMatching:
    """Batched normal-form dynamics with the interface of `Solver` (`step`, `evaluate`,
    `regret_summary`, ...), so `tensorcfr.train`, the CLI and TensorBoard logging take it.

    `game`: a matrix-game spec or `games.MatrixGame`, or a list of them of one shape; each gets
    `runs` runs, so the batch has B = games x runs members (member b: game b // runs).

    State: `Z` [B, m, n] the summed joint play; `regrets[i]` [B, m_i] the cumulative
    unconditional regrets (unclipped; rm+ plays by its clipped `clipped[i]`); `strategy` (x [B, m], y [B, n]) the next play's
    distribution; for conditional-rm and invariant-rm `conditional[i]` [B, m_i, m_i], t times D_t.

    Example:
        >>> rm = RegretMatching("biased_rps", "rm", device="cpu")
        >>> rm.step(1)
        >>> [[round(r, 9) + 0.0 for r in rm.regrets[i][0].tolist()] for i in (0, 1)]
        [[0.0, -0.333333333, 0.333333333], [-0.333333333, 0.666666667, -0.333333333]]
        >>> rm.strategy[0].tolist(), rm.strategy[1].tolist()  # pure S and pure P
        ([[0.0, 0.0, 1.0]], [[0.0, 1.0, 0.0]])
    """

    def __init__(self, game, procedure: str | RMConfig = "rm+", *, device="auto", dtype="float64",
                 deterministic: bool = False, **options):
        self.config = make_procedure(procedure, **options)
        self.device, self.dtype = resolve_device(device), resolve_dtype(dtype)
        self.threads = torch.get_num_threads()  # as the process has them: a matrix game's work is too small to matter
        self.deterministic = bool(deterministic)  # (`Solver`'s; the sampled plays' sums are exact anyway)
        members = list(game) if isinstance(game, (list, tuple)) else [game]
        try:
            self.games = [games_pkg.make(g) for g in members]
        except games_pkg.GameError as e:
            raise TensorCFRError(str(e)) from None
        pairs = [payoff_tensors(g, self.dtype, self.device) for g in self.games]
        if len({p[0].shape for p in pairs}) != 1:
            raise TensorCFRError("a batch of matrix games must share one shape, got "
                                 + ", ".join(f"{g.name} {tuple(p[0].shape)}" for g, p in zip(self.games, pairs)))
        # what the dtype must hold (`run.numbers`): checked now and before each step
        largest = max((float(np.abs(np.asarray(m, dtype=np.float64)).max(initial=0.0))
                       for g in self.games for m in (g.payoff, g.payoff_col)), default=0.0)
        nonzero = [float(np.abs(v[v != 0]).min()) for g in self.games for m in (g.payoff, g.payoff_col)
                   for v in [np.asarray(m, dtype=np.float64)] if (v != 0).any()]
        self.extent = PayoffExtent(total=largest, largest=largest, smallest=min(nonzero, default=0.0))
        numbers.check(numbers.payoff_problem(self.extent, self.dtype))
        self.game = self.games[0]
        runs = self.config.runs
        self.A = torch.stack([p[0] for p in pairs]).repeat_interleave(runs, 0)  # [B, m, n]
        self.B = torch.stack([p[1] for p in pairs]).repeat_interleave(runs, 0)  # [B, m, n]
        self.P = (self.A, self.B.transpose(1, 2).contiguous())  # own action first: [B, m, n], [B, n, m]
        self.batch_size, m, n = self.A.shape
        self.iteration = 0
        zeros = lambda *s: torch.zeros(self.batch_size, *s, dtype=self.dtype, device=self.device)  # noqa: E731
        self.Z = zeros(m, n)
        self.regrets = [zeros(m), zeros(n)]
        self.strategy = (zeros(m) + 1 / m, zeros(n) + 1 / n)
        name = self.config.name
        if name == "rm+":
            self.clipped = [zeros(m), zeros(n)]  # the regrets it plays by
        if name in ("conditional-rm", "invariant-rm"):
            self.conditional = [zeros(m, m), zeros(n, n)]
        if name == "conditional-rm":
            if self.config.mu is not None:
                self.mu = [self.config.mu, self.config.mu]
            else:  # large enough that the switching probabilities sum to at most 1
                self.mu = [(P.shape[1] - 1) * max(float(P.amax() - P.amin()), 1e-12) for P in self.P]
        # the draws come from a CPU generator on every device, so a seed means the same plays on each
        self.generator = torch.Generator().manual_seed(self.config.seed)
        self._rows = torch.arange(self.batch_size, device=self.device)

    # -- the dynamics ---------------------------------------------------------------------------
    def check_numbers(self, iterations: int) -> None:
        """Refuse running to `iterations` in all where the regrets or the summed play could
        leave the dtype's range (`run.numbers`: a value is at most the largest payoff)."""
        numbers.check(numbers.horizon_problem(self.config, self.extent, self.dtype, iterations))

    def non_finite(self) -> str | None:
        """The name of the first state tensor holding a NaN or an infinity, or None."""
        named = {"the summed joint play": self.Z, **{f"the regrets of player {i}": r for i, r in enumerate(self.regrets)},
                 **{f"the strategy of player {i}": x for i, x in enumerate(self.strategy)}}
        return numbers.non_finite(named)

    def step(self, n: int = 1) -> None:
        """Run `n` iterations."""
        self.check_numbers(self.iteration + n)
        with deterministic(self.deterministic and self.device.type == "cuda"):
            for _ in range(n):
                self._iterate()

    def _iterate(self):
        """One simultaneous iteration; returns what was played: (x, y) [B, m], [B, n] for the
        expected procedures, the actions (j, l) [B] each for the sampled ones."""
        t = self.iteration + 1
        x, y = self.strategy
        if self.config.name in ("rm", "rm+"):
            played = (x, y)
            self.Z.add_(x[:, :, None] * y[:, None, :])
            values = []
            for i, (P, own, other) in enumerate(zip(self.P, (x, y), (y, x))):
                u = (P @ other[:, :, None]).squeeze(2)  # [B, m_i] each action against the other's mix
                values.append(u)
                inst = u - (own * u).sum(1, keepdim=True)
                self.regrets[i].add_(inst)
                if self.config.name == "rm+":
                    self.clipped[i].add_(inst).clamp_(min=0)
            target = self.clipped if self.config.name == "rm+" else self.regrets
            tol = self.config.regret_tolerance
            self.strategy = (_regret_matching(target[0], tol, values[0]), _regret_matching(target[1], tol, values[1]))
        else:
            u = torch.rand(2, self.batch_size, generator=self.generator, dtype=self.dtype).to(self.device)
            j, l = _draw(x, u[0]), _draw(y, u[1])
            played = (j, l)
            self.Z.view(self.batch_size, -1).index_put_((self._rows, j * self.Z.shape[2] + l),
                                                        torch.ones_like(u[0]), accumulate=True)
            nxt = []
            for i, (P, a, b) in enumerate(zip(self.P, (j, l), (l, j))):
                g = P[self._rows, :, b]  # [B, m_i] each own action against the realised one
                inst = g - g.gather(1, a[:, None])
                self.regrets[i].add_(inst)
                if self.config.name == "sampled-rm":
                    nxt.append(_regret_matching(self.regrets[i]))
                    continue
                D = self.conditional[i]
                D[self._rows, a] += inst
                if self.config.name == "invariant-rm":
                    nxt.append(_invariant(D, t))
                    continue
                p = D[self._rows, a].clamp(min=0) / (t * self.mu[i])  # switch from a to k
                p[self._rows, a] = 0.0
                p[self._rows, a] = 1.0 - p.sum(1)
                nxt.append(p)
            self.strategy = tuple(nxt)
        self.iteration = t
        return played

    def run(self, max_iterations: int, target_regret: float | None = None, chunk: int = 1024) -> dict:
        """Iterate until every member's largest unconditional regret (of either player, over the
        iterations so far) is below `target_regret`, or `max_iterations` in all.

        Returns per member [B]: `iterations` (the first t at which the regret was below the
        target, or the iterations run), `reached` (bool) and `Z` [B, m, n], the empirical joint
        distribution at that t; `seconds` for the whole batch.

        Example:
            >>> rm = RegretMatching("matching_pennies", "sampled-rm", runs=3, device="cpu")
            >>> out = rm.run(100_000, target_regret=0.01)
            >>> bool(out["reached"].all()), bool((joint_regrets(rm.A, rm.B, out["Z"])["unconditional_p0"] < 0.01).all())
            (True, True)
        """
        B = self.batch_size
        stop = torch.zeros(B, dtype=torch.long, device=self.device)  # 0: still running
        Z_stop = torch.zeros_like(self.Z)
        t0 = time.perf_counter()
        while self.iteration < max_iterations and not bool((stop > 0).all()):
            k, start = min(chunk, max_iterations - self.iteration), self.iteration
            played, worst = [], torch.empty(k, B, dtype=self.dtype, device=self.device)
            for s in range(k):
                played.append(self._iterate())
                torch.maximum(self.regrets[0].amax(1), self.regrets[1].amax(1), out=worst[s])
            if target_regret is None:
                continue
            below = (worst / torch.arange(start + 1, start + k + 1, device=self.device, dtype=self.dtype)[:, None]
                     < target_regret) & (stop == 0)
            hit = below.any(0)  # [B] members that reach the target in this chunk
            if not bool(hit.any()):
                continue
            first = below.int().argmax(0)  # [B] first such iteration within the chunk
            after = (torch.arange(k, device=self.device)[:, None] > first) & hit  # [k, B] plays to take back
            Z = self.Z.clone()
            for s in range(k):  # (at most one chunk) undo the plays after each member's stopping point
                if self.config.name in SAMPLED:
                    j, l = played[s]
                    Z[self._rows, j, l] -= after[s].to(self.dtype)
                else:
                    x, y = played[s]
                    Z -= after[s].to(self.dtype)[:, None, None] * (x[:, :, None] * y[:, None, :])
            Z_stop[hit] = Z[hit]
            stop[hit] = start + first[hit] + 1
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        seconds = time.perf_counter() - t0
        reached = stop > 0
        iterations = torch.where(reached, stop, torch.full_like(stop, self.iteration))
        Z_stop[~reached] = self.Z[~reached]
        return {"iterations": iterations, "reached": reached,
                "Z": Z_stop / iterations.to(self.dtype)[:, None, None], "seconds": seconds}

    # -- checkpoints --------------------------------------------------------------------------------
    _STATE = ("Z", "regrets", "clipped", "strategy", "conditional")

    def state_dict(self, copy: bool = True) -> dict:
        """Everything the next iterations depend on, the random stream included (`copy=False`:
        a CPU procedure's own tensors, for writing straight to a file)."""
        cpu = lambda v: ([cpu(t) for t in v] if isinstance(v, (list, tuple))  # noqa: E731
                         else v.detach().cpu().clone() if copy else v.detach().cpu())
        d = {k: cpu(getattr(self, k)) for k in self._STATE if hasattr(self, k)}
        return {**d, "iteration": self.iteration, "generator": self.generator.get_state()}

    def load_state_dict(self, d: dict) -> None:
        """Continue from `state_dict()` of a run with the same game and procedure."""
        for k in self._STATE:
            if hasattr(self, k) != (k in d):
                raise TensorCFRError("checkpoint does not fit this solver: it was written by another procedure")
            if k not in d:
                continue
            old, new = getattr(self, k), d[k]
            pairs = list(zip(old, new)) if isinstance(old, (list, tuple)) else [(old, new)]
            if any(tuple(a.shape) != tuple(b.shape) for a, b in pairs):
                raise TensorCFRError(f"checkpoint does not fit this solver: {k} has another shape")
            moved = [b.to(device=a.device, dtype=a.dtype) for a, b in pairs]
            setattr(self, k, type(old)(moved) if isinstance(old, (list, tuple)) else moved[0])
        self.iteration = int(d["iteration"])
        self.generator.set_state(d["generator"])

    # -- reading the result -----------------------------------------------------------------------
    def policy_tables(self, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
        """{"average" | "current": {"row" | "col": {action: probability}}}: the same keys as the
        matrix game's one-level tree, so policy files and `tensorcfr eval` take them."""
        b = min(member, self.batch_size - 1)
        tables = {}
        for which, (x, y) in (("average", self.average_strategy()), ("current", self.strategy)):
            tables[which] = {"row": dict(zip(self.game.rows, x[b].tolist())),
                             "col": dict(zip(self.game.cols, y[b].tolist()))}
        return tables

    def infoset_keys(self) -> list[str]:
        """The two "infosets" of a matrix game: "row" and "col"."""
        return ["row", "col"]

    def infoset_players(self) -> dict[str, int]:
        return {"row": 0, "col": 1}

    def strategies(self, keys, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
        """{"row" | "col": {"average" | "current": {action: probability}}} for `keys`."""
        tables = self.policy_tables(member)
        return {k: {w: tables[w][k] for w in ("average", "current")} for k in keys}

    def histograms(self, member: int = 0, evaluation: dict | None = None,
                   quotients: bool = False) -> dict[str, torch.Tensor]:
        """`regret_p{i}`: each action's cumulative unconditional regret over t (`evaluation`,
        `quotients`: unused, the protocol's; a matrix's rows are small)."""
        t = max(self.iteration, 1)
        return {f"regret_p{i}": r[min(member, r.shape[0] - 1)] / t for i, r in enumerate(self.regrets)}

    def joint(self) -> torch.Tensor:
        """The empirical joint distribution of play [B, m, n]."""
        return self.Z / max(self.iteration, 1)

    def average_strategy(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The empirical marginals (x [B, m], y [B, n])."""
        Z = self.joint()
        return Z.sum(2), Z.sum(1)

    def evaluate(self, infoset_gaps: bool = False) -> dict[str, Evaluation]:
        """Exact evaluation of the empirical marginals ("average") and of the distribution the next
        play is drawn from ("current"), as product profiles (`infoset_gaps`: unused, a matrix
        game has no infosets to log)."""
        if self.iteration == 0:
            raise TensorCFRError("no play yet: step() first")
        return {"average": evaluate_profile(self.A, self.B, *self.average_strategy()),
                "current": evaluate_profile(self.A, self.B, *self.strategy)}

    def regret_summary(self) -> dict[str, torch.Tensor]:
        """Per player, [B] each: `max_p{i}` the largest unconditional regret per iteration (clipped
        at 0) and `conditional_p{i}` the largest conditional regret of the empirical joint play."""
        if self.iteration == 0:
            return {}
        r = joint_regrets(self.A, self.B, self.joint())
        return {"max_p0": r["unconditional_p0"], "max_p1": r["unconditional_p1"],
                "conditional_p0": r["conditional_p0"], "conditional_p1": r["conditional_p1"]}

    def member_names(self) -> list[str]:
        runs = self.config.runs
        return [g.name + (f" run={r}" if runs > 1 else "") for g in self.games for r in range(runs)]

    def describe(self) -> dict:
        """The resolved configuration, as printed by the CLI."""
        out = {"game": self.game.name, "batch": self.member_names(), "algorithm": self.config.name,
               **{k: v for k, v in asdict(self.config).items() if k != "name"},
               "device": str(self.device), "threads": self.threads, "dtype": str(self.dtype).replace("torch.", "")}
        if self.config.name == "conditional-rm":
            out["mu"] = self.mu
        return out


def is_procedure(spec) -> bool:
    """Whether an algorithm spec names a normal-form procedure (rather than a tree algorithm)."""
    if isinstance(spec, RMConfig):
        return True
    return algorithm_name(spec) in PROCEDURES


__all__ = ["PROCEDURES", "RMConfig", "RegretMatching", "evaluate_profile", "is_procedure", "joint_regrets",
           "lp_solve", "make_procedure", "payoff_tensors"]
