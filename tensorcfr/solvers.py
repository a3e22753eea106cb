"""Solvers: one iteration skeleton, algorithms as update rules with named presets.

An iteration computes, for each player p, counterfactual values g_p against the other
player's realisation plan (one sparse mat-vec), the sequence and infoset values by a
bottom-up pass, and hands them to the update rule, which keeps the cumulative regrets and
the average-strategy accumulator and returns the next strategy. `updates="simultaneous"`
evaluates both players against the same profile; `"alternating"` updates player 0 first and
player 1 against player 0's new strategy.

Example:
    >>> import tensorcfr
    >>> s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> s.step(500)
    >>> ev = s.evaluate()
    >>> ev["average"].exploitability.item() < 1e-2
    True
"""

from __future__ import annotations

import types
import warnings
from dataclasses import asdict, dataclass, fields, replace

import torch

import games as games_pkg

from . import treeplex as T
from ._malloc import keep_freed_memory
from .compiled import CompiledGame
from .compiler import compile as compile_game
from .errors import TensorCFRError
from .evaluation import Evaluation, Policy, evaluate

UPDATES = ("simultaneous", "alternating")
AVERAGING = ("uniform", "linear", "power")
WEIGHTS = ("unit", "kroer17", "farina21")
CAPTURE = ("none", "static", "cuda-graph", "compile")
COMPILE_GATHER_MAX = 1 << 15  # payoff nonzeros up to which capture="compile" fuses the operator
ETA_DEFAULT = 2.0  # FTRL step size of the presets; see FTRLConfig

Param = float | tuple[float, ...] | None  # a tuple is a batch of settings, one per member


def _batch(value: Param) -> tuple[float, ...] | None:
    if value is None:
        return None
    return tuple(float(v) for v in value) if isinstance(value, (tuple, list)) else (float(value),)


@dataclass(frozen=True)
class _Schedule:
    """What every algorithm shares: the update schedule and the average-strategy weights.

    updates:    "simultaneous" | "alternating" (player 1 answers player 0's new strategy)
    averaging:  weights w_t of the average strategy: "uniform" (1), "linear" (t) or
                "power" (t^gamma); iterations t <= delay get 0 and t counts from the delay
    delay:      see averaging
    gamma:      the exponent of "power" averaging
    """

    name: str = "cfr"
    updates: str = "simultaneous"
    averaging: str = "uniform"
    delay: int = 0
    gamma: Param = None

    BATCHED = ("gamma",)  # the fields that may be tuples (one setting per batch member)

    def __post_init__(self):
        if self.updates not in UPDATES:
            raise TensorCFRError(f"updates must be one of {', '.join(UPDATES)}, got {self.updates!r}")
        if self.averaging not in AVERAGING:
            raise TensorCFRError(f"averaging must be one of {', '.join(AVERAGING)}, got {self.averaging!r}")
        if not isinstance(self.delay, int) or self.delay < 0:
            raise TensorCFRError(f"delay must be a non-negative integer, got {self.delay!r}")
        if (self.averaging == "power") != (self.gamma is not None):
            raise TensorCFRError("gamma is the exponent of averaging='power' and needs it (and vice versa)")
        for k in self.BATCHED:
            try:
                _batch(getattr(self, k))
            except (TypeError, ValueError):
                raise TensorCFRError(f"{k} must be a number or a tuple of numbers, got {getattr(self, k)!r}") from None
        self.batch_size  # noqa: B018  (checks that the tuples agree in length)

    @property
    def batch_size(self) -> int:
        """Number of hyper-parameter settings carried (1 unless some parameter is a tuple)."""
        sizes = {len(_batch(getattr(self, k))) for k in self.BATCHED if getattr(self, k) is not None}
        sizes.discard(1)
        if len(sizes) > 1:
            raise TensorCFRError(f"{self.name}: {', '.join(self.BATCHED)} tuples must have one length, "
                                 f"got {sorted(sizes)}")
        return sizes.pop() if sizes else 1

    def scalars(self, t: int) -> dict[str, tuple[float, ...]]:
        """Every number of iteration t that depends on t, per setting. The update rules read
        them from here (as floats, or tensors a captured iteration refreshes before each replay)."""
        return {"average_weight": self.average_weight(t)}

    def average_weight(self, t: int) -> tuple[float, ...]:
        """w_t per setting."""
        if t <= self.delay:
            return (0.0,)
        if self.averaging == "power":
            return tuple(float(t - self.delay) ** g for g in _batch(self.gamma))
        return (float(t - self.delay) if self.averaging == "linear" else 1.0,)


@dataclass(frozen=True)
class CFRConfig(_Schedule):
    """The regret-matching family as parameters of one update (DESIGN.md §2).

    plus:       regret matching+ (cumulative regrets clipped at 0 after each update)
    alpha/beta: after iteration t, positive cumulative regrets are multiplied by
                t^alpha/(t^alpha+1) and negative ones by t^beta/(t^beta+1) (None: kept)
    predictive: the next strategy regret-matches R + r_t (the last instantaneous regret as
                the prediction of the next one)
    and the schedule of `_Schedule` (updates, averaging, delay, gamma).

    alpha, beta and gamma may be tuples: one setting per batch member, all in one run.

    Example:
        >>> CFRConfig("my-dcfr", updates="alternating", alpha=(1.0, 2.0), beta=0.0).batch_size
        2
    """

    plus: bool = False
    alpha: Param = None
    beta: Param = None
    predictive: bool = False

    BATCHED = ("alpha", "beta", "gamma")

    def __post_init__(self):
        super().__post_init__()
        if (self.alpha is None) != (self.beta is None):
            raise TensorCFRError("alpha and beta (regret discounting) go together")

    def discounts(self, t: int):
        """(positive, negative) regret multipliers per setting, or None."""
        if self.alpha is None:
            return None
        f = lambda e: tuple(t ** a / (t ** a + 1) for a in _batch(e))  # noqa: E731
        return f(self.alpha), f(self.beta)

    def scalars(self, t: int) -> dict[str, tuple[float, ...]]:
        out = super().scalars(t)
        discounts = self.discounts(t)
        if discounts is not None:
            out["positive"], out["negative"] = discounts
        return out

    def init_state(self, zeros) -> dict:
        return {"regrets": zeros()}

    def initial_strategy(self, solver: "Solver", p: int) -> torch.Tensor:
        """Uniform: regret matching on zero regrets."""
        return T.normalize(solver.game.treeplexes[p], solver.state[p]["regrets"])

    def next_strategy(self, solver: "Solver", p: int, g: torch.Tensor, sc: dict) -> torch.Tensor:
        """Regret-matching update of player p from counterfactual values g [B, S]; `sc`: the
        iteration's `scalars`, each a float or a [B or 1, 1] tensor."""
        tp, st = solver.game.treeplexes[p], solver.state[p]
        q, v = T.bottom_up(tp, g, solver.sigma[p])  # [B, S], [B, I]
        inst = q[:, 1:] - v[:, tp.slot_infoset]  # [B, S-1] instantaneous regret; the empty sequence has none
        regret = st["regrets"]  # [B, S], column 0 stays 0
        regret[:, 1:].add_(inst)  # (not +=, which copies the slice onto itself afterwards)
        if self.plus:
            regret.clamp_(min=0)
        if "positive" in sc:
            torch.where(regret >= 0, regret * sc["positive"], regret * sc["negative"], out=regret)
        if self.predictive:
            predicted = regret.clone()
            predicted[:, 1:].add_(inst)
            return T.normalize(tp, predicted.clamp_(min=0))
        # regret matching+ keeps its regrets non-negative: no second clamp
        return T.normalize(tp, regret if self.plus and "positive" not in sc else regret.clamp(min=0))


@dataclass(frozen=True)
class FTRLConfig(_Schedule):
    """Sequence-form FTRL with a dilated-entropy regulariser, and its optimistic form.

    The strategy after t iterations maximises <U_t, x> - psi(x) / eta over the treeplex, where
    U_t is the sum of the counterfactual-value vectors g_1..g_t (plus g_t once more when
    `optimistic`) and psi(x) = sum_j beta_j x[p_j] sum_a b(j,a) log b(j,a) is the dilated
    entropy with per-infoset weights beta_j. The maximiser is a bottom-up softmax per infoset
    (`treeplex.softmax_bottom_up`) with temperature beta_j / eta.

    eta:        step size (a tuple: one per batch member). Counterfactual values carry the
                chance probabilities, so a good eta grows with the number of chance outcomes.
    weights:    "unit"     beta_j = 1, the weight-one dilated entropy (DilEnt) of Fan, Kroer
                           and Farina (2024), iterate-equivalent to kernelised OMWU;
                "kroer17"  beta_j = 2 + 2 max_a sum_{j' below (j,a)} beta_j'  (Kroer, Waugh,
                           Kilinc-Karzan and Sandholm, "Faster algorithms for extensive-form
                           game solving via improved smoothing functions");
                "farina21" beta_j = 1 + max_a sum_{j' below (j,a)} beta_j'  (Farina, Kroer and
                           Sandholm, "Better regularization for sequential decision spaces").
    optimistic: predict the next utility by the last one (optimistic FTRL).
    and the schedule of `_Schedule` (updates, averaging, delay, gamma).

    Example:
        >>> FTRLConfig("my-oftrl", optimistic=True, eta=(0.5, 1.0, 2.0)).batch_size
        3
    """

    eta: Param = 1.0
    weights: str = "unit"
    optimistic: bool = False

    BATCHED = ("eta", "gamma")

    def __post_init__(self):
        super().__post_init__()
        if self.weights not in WEIGHTS:
            raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {self.weights!r}")
        if self.eta is None or any(e <= 0 for e in _batch(self.eta)):
            raise TensorCFRError(f"eta (the step size) must be positive, got {self.eta!r}")

    def init_state(self, zeros) -> dict:
        return {"utility": zeros()}  # [B, S] cumulative counterfactual values

    def initial_strategy(self, solver: "Solver", p: int) -> torch.Tensor:
        """The regulariser's minimiser (FTRL on no utilities). Not uniform: an action with
        infosets below it leads to more entropy, so it gets more weight."""
        return self._softmax(solver, p, solver.state[p]["utility"])

    def _softmax(self, solver: "Solver", p: int, target: torch.Tensor) -> torch.Tensor:
        st = solver.state[p]
        if "temperature" not in st:
            st["temperature"] = self.temperature(solver, p)
        return T.softmax_bottom_up(solver.game.treeplexes[p], target, st["temperature"])[0]

    def temperature(self, solver: "Solver", p: int) -> torch.Tensor:
        """beta_j / eta per member and infoset: [B or 1, I]."""
        beta = dilated_entropy_weights(solver.game.treeplexes[p], self.weights).to(solver.dtype)  # [I]
        return beta[None, :] / solver.per_member(_batch(self.eta))  # eta: a float or [B, 1]

    def next_strategy(self, solver: "Solver", p: int, g: torch.Tensor, sc: dict) -> torch.Tensor:
        st = solver.state[p]
        st["utility"] += g
        target = st["utility"] + g if self.optimistic else st["utility"]
        return self._softmax(solver, p, target)


Config = CFRConfig | FTRLConfig


def dilated_entropy_weights(tp, scheme: str = "unit") -> torch.Tensor:
    """Per-infoset weights beta_j [I] (float64) of a dilated entropy, by name (see FTRLConfig).

    Computed bottom-up over the treeplex levels.

    Example:
        >>> import tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> dilated_entropy_weights(tp, "farina21").tolist()[:3]
        [2.0, 2.0, 2.0]
    """
    if scheme not in WEIGHTS:
        raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {scheme!r}")
    beta = torch.ones(tp.num_infosets, dtype=torch.float64, device=tp.infoset_parent.device)
    if scheme == "unit":
        return beta
    below = torch.zeros(tp.num_sequences, dtype=torch.float64, device=beta.device)  # [S] sum of child weights
    for lv in reversed(tp.levels):
        most = torch.zeros(lv.i1 - lv.i0, dtype=torch.float64, device=beta.device)
        most.scatter_reduce_(0, lv.segment, below[lv.s0:lv.s1], "amax")
        beta[lv.i0:lv.i1] = 2 + 2 * most if scheme == "kroer17" else 1 + most
        below.index_add_(0, lv.parent, beta[lv.i0:lv.i1])
    return beta


PRESETS: dict[str, Config] = {
    "cfr": CFRConfig("cfr"),
    "cfr+": CFRConfig("cfr+", plus=True, updates="alternating", averaging="linear"),
    "lcfr": CFRConfig("lcfr", updates="alternating", alpha=1.0, beta=1.0, averaging="linear"),
    "dcfr": CFRConfig("dcfr", updates="alternating", alpha=1.5, beta=0.0, averaging="power", gamma=2.0),
    "pcfr+": CFRConfig("pcfr+", plus=True, updates="alternating", predictive=True, averaging="power", gamma=2.0),
    "ftrl": FTRLConfig("ftrl", eta=ETA_DEFAULT),
    "oftrl": FTRLConfig("oftrl", eta=ETA_DEFAULT, optimistic=True),
}


def algorithms() -> list[str]:
    """Names of the algorithm presets."""
    return list(PRESETS)


def make_config(algo: str | Config, **overrides) -> Config:
    """Resolve a preset name or spec (`"cfr+"`, `"cfr+(delay=10)"`, `"oftrl(eta=2)"`) plus
    overrides (None values ignored). An option the algorithm does not have is an error.

    Example:
        >>> make_config("cfr+", updates="simultaneous").updates
        'simultaneous'
        >>> make_config("oftrl(eta=(1,2))").batch_size
        2
    """
    if isinstance(algo, _Schedule):
        base, params = algo, {}
    else:
        try:
            name, args, params = games_pkg.parse_spec(algo.replace("cfr+", "cfr_plus"))
        except games_pkg.GameError:
            raise TensorCFRError(f"cannot parse algorithm {algo!r}") from None
        name = name.replace("cfr_plus", "cfr+")
        if name not in PRESETS:
            raise TensorCFRError(f"unknown algorithm {name!r}; available: {', '.join(PRESETS)}")
        if args:
            raise TensorCFRError(f"algorithm {algo!r}: give parameters by name, e.g. {name}(delay=10)")
        base = PRESETS[name]
    params.update({k: v for k, v in overrides.items() if v is not None})
    allowed = {f.name for f in fields(base)} - {"name"}
    unknown = set(params) - allowed
    if unknown:
        raise TensorCFRError(f"unknown option(s) {sorted(unknown)} for {base.name}; options: {sorted(allowed)}")
    if "gamma" in params and "averaging" not in params:
        params["averaging"] = "power"
    elif params.get("averaging") in ("uniform", "linear"):
        params.setdefault("gamma", None)
    try:
        return replace(base, **params)
    except TypeError as e:
        raise TensorCFRError(f"{base.name}: {e}") from None


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """`"auto"` -> CUDA when available, else CPU; `"cuda"` without CUDA is an error."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise TensorCFRError(f"unknown device {device!r}; use cpu, cuda or auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise TensorCFRError("device cuda requested but CUDA is not available; use --device cpu or auto")
    if dev.type not in ("cpu", "cuda"):
        raise TensorCFRError(f"unsupported device {device!r}; use cpu, cuda or auto")
    return dev


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    table = {"float32": torch.float32, "float64": torch.float64, torch.float32: torch.float32,
             torch.float64: torch.float64}
    if dtype not in table:
        raise TensorCFRError(f"unsupported dtype {dtype!r}; use float32 or float64")
    return table[dtype]


class Solver:
    """One iteration skeleton over a compiled game, batched over payoff vectors and settings;
    the algorithm (a `CFRConfig` or `FTRLConfig`) supplies the update rule.

    State per player p: `sigma[p]` [B, S_p] the current behavioural strategy, `average[p]`
    [B, S_p] the weighted sum of realisation plans, and the rule's own tensors in `state[p]`
    (`regrets` [B, S_p] for the CFR family, column 0 unused; `utility` [B, S_p] for FTRL).

    Example:
        >>> import tensorcfr
        >>> s = tensorcfr.Solver("kuhn", "cfr", device="cpu")
        >>> s.step(10); s.iteration
        10
        >>> sorted(s.average_policy().to_dict()["K:pb"])
        ['bet', 'pass']
    """

    def __init__(self, game: str | games_pkg.Game | CompiledGame, algo: str | Config = "cfr+", *,
                 device: str | torch.device = "auto", dtype: str | torch.dtype = "float64",
                 capture: str = "none", **options):
        self.config = make_config(algo, **options)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype)
        if capture not in CAPTURE:
            raise TensorCFRError(f"capture must be one of {', '.join(CAPTURE)}, got {capture!r}")
        if capture == "cuda-graph" and self.device.type != "cuda":
            raise TensorCFRError("capture='cuda-graph' needs a CUDA device; on the CPU use capture='compile' "
                                 "(small games) or 'none'")
        self.capture, self._graph, self._scalars, self._compiled = capture, None, None, None
        self._warm = False  # an unrecorded iteration has run in this process (CUDA graphs need one)
        self._graphable = self.device.type == "cuda"
        if self.device.type == "cpu":
            keep_freed_memory()  # reused temporaries, not page faults (tensorcfr/_malloc.py)
        cg = game if isinstance(game, CompiledGame) else compile_game(game)
        self.game = cg.to(self.device)
        # compiled, a small game's payoff operator fuses into the iteration as gathers and
        # scatter-adds; past that size the sparse mat-mul (outside the compiled graph) is faster
        # (measured, 2 cores: Leduc, 5.5k nonzeros, 0.17 ms gathers vs 0.71 ms sparse; Liar's
        # Dice, 147k nonzeros, 2.9 ms vs 1.4 ms)
        gather = capture == "compile" and self.game.payoff.shape[1] <= COMPILE_GATHER_MAX
        self.op = T.PayoffOperator.of(self.game, self.dtype, gather=gather)
        self.iteration = 0
        b = self.game.batch_size
        if self.config.batch_size > 1:
            if b not in (1, self.config.batch_size):
                raise TensorCFRError(f"a batch of {b} games and of {self.config.batch_size} settings do not match")
            b = self.config.batch_size
        self.batch_size = b
        tps = self.game.treeplexes
        zeros = lambda tp: torch.zeros(b, tp.num_sequences, dtype=self.dtype, device=self.device)  # noqa: E731
        self.state = [self.config.init_state(lambda tp=tp: zeros(tp)) for tp in tps]
        self.average = [zeros(tp) for tp in tps]
        self.sigma = [self.config.initial_strategy(self, p) for p in (0, 1)]

    @property
    def regrets(self) -> list[torch.Tensor]:
        """Cumulative regrets per player, [B, S_p] (CFR family only)."""
        if "regrets" not in self.state[0]:
            raise TensorCFRError(f"{self.config.name} keeps no regrets")
        return [st["regrets"] for st in self.state]

    # -- the iteration skeleton ------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Run `n` iterations."""
        for _ in range(n):
            t = self.iteration + 1
            if self.capture == "none":
                self._iterate({k: self.per_member(v) for k, v in self.config.scalars(t).items()})
            else:
                self._refresh_scalars(t)
                self._captured_iteration()
            self.iteration = t

    def _captured_iteration(self) -> None:
        """One iteration in the in-place form: replayed from a CUDA graph once one is recorded;
        else compiled (`capture="compile"`; its first call compiles) or eager. On CUDA,
        "cuda-graph" and "compile" record the iteration as a graph after one unrecorded
        iteration (the warm-up a capture needs: cuSPARSE and kernel set-up must not happen
        inside it), so a compiled iteration is both fused and launched once."""
        if self._graph is not None:
            self._graph.replay()
            return
        if self.capture == "compile" and self._compiled is None:
            self._compile()  # runs the first iteration
            self._warm = True
            return
        run = self._compiled or self._iterate
        if self._warm and self._graphable and self.capture in ("cuda-graph", "compile"):
            self._capture(run)
            if self._graph is not None:
                self._graph.replay()
                return
        run(self._scalars)
        self._warm = True

    def _iterate(self, sc: dict) -> None:
        """One iteration: counterfactual values, then each player's update (`sc`: the iteration's
        scalars, floats or tensors)."""
        tps = self.game.treeplexes
        xs = [T.sequence_form(tp, s) for tp, s in zip(tps, self.sigma)]
        if self.config.updates == "simultaneous":
            gs = [self.op.cfv(0, xs[1]), self.op.cfv(1, xs[0])]
            for p in (0, 1):
                self._update(p, gs[p], xs[p], sc)
        else:
            self._update(0, self.op.cfv(0, xs[1]), xs[0], sc)
            xs[0] = T.sequence_form(tps[0], self.sigma[0])  # player 1 answers player 0's new strategy
            self._update(1, self.op.cfv(1, xs[0]), xs[1], sc)

    def per_member(self, values: tuple[float, ...]) -> torch.Tensor | float:
        """A setting as a scalar, or [B, 1] when it differs per batch member."""
        if len(values) == 1:
            return values[0]
        return torch.tensor(values, dtype=self.dtype, device=self.device)[:, None]

    def _update(self, p: int, g: torch.Tensor, x: torch.Tensor, sc: dict) -> None:
        """Average in x [B, S] (the plan just played), then the rule's next strategy from g [B, S]."""
        w = sc["average_weight"]
        if isinstance(w, torch.Tensor) or w:  # a captured iteration adds x * 0 while the weight is 0
            self.average[p].add_(x * w)
        nxt = self.config.next_strategy(self, p, g, sc)
        if self.capture == "none":
            self.sigma[p] = nxt
        else:
            self.sigma[p].copy_(nxt)  # a replayed graph reads and writes the same memory every time

    # -- captured iterations ------------------------------------------------------------------
    def _refresh_scalars(self, t: int) -> None:
        """Write iteration t's scalars into the fixed tensors the captured iteration reads."""
        values = self.config.scalars(t)
        if self._scalars is None:
            self._scalar_buffer = torch.zeros(len(values), self.batch_size, dtype=self.dtype, device=self.device)
            self._scalars = {k: self._scalar_buffer[i][:, None] for i, k in enumerate(values)}  # [B, 1] views
        rows = [list(v) * (self.batch_size // len(v)) for v in values.values()]
        # from pageable memory: staged at once, so the next iteration may overwrite it; no sync
        self._scalar_buffer.copy_(torch.tensor(rows, dtype=self.dtype), non_blocking=True)

    def _capture(self, run) -> None:
        """Record `run` (one iteration) as a CUDA graph (recording runs nothing); `step` then
        replays it: one launch, not one per kernel. Operations that cannot be recorded leave
        the iterations unrecorded (eager, or compiled), with a warning."""
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                run(self._scalars)
        except RuntimeError as e:  # pragma: no cover - needs a GPU
            warnings.warn(f"tensorcfr: CUDA graph capture failed ({e}); running unrecorded", RuntimeWarning)
            self._graphable = False
            if self.capture == "cuda-graph":
                self.capture = "static"
            return
        self._graph = graph

    def _compile(self) -> None:
        """Compile the iteration with `torch.compile` and run it once (compiling takes seconds):
        a dispatch-bound iteration of a small game becomes a few fused kernels. A failed
        compile warns, restores the state and goes on with eager iterations."""
        # a code object of its own: Dynamo keeps compiled versions per code object, and a shared
        # one would hit its recompile limit after a few solvers and silently run eagerly
        own = types.FunctionType(Solver._iterate.__code__.replace(), Solver._iterate.__globals__, "_iterate")
        before = self.state_dict()
        # Inductor's vectorised CPU code generation fails on some scatter-adds (an assertion in
        # torch 2.13, e.g. a [2, 3] -> [2, 1] index_add_ of FTRL with two settings); scalar
        # code generation compiles them
        attempts = [None, {"cpp.simdlen": 1}] if self.device.type == "cpu" else [None]
        for options in attempts:
            compiled = torch.compile(types.MethodType(own, self), dynamic=False, options=options)
            try:
                compiled(self._scalars)
            except Exception as e:  # noqa: BLE001 - any compiler failure: the eager form is always there
                self.load_state_dict({**before, "iteration": self.iteration})  # a failure may come mid-way
                error = e
                continue
            self._compiled = compiled
            return
        warnings.warn(f"tensorcfr: torch.compile failed ({type(error).__name__}: {str(error)[:200]}); "
                      "running eagerly", RuntimeWarning)
        self.capture = "static"
        self._iterate(self._scalars)

    # -- checkpoints ----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Everything the next iterations depend on (tensors on the CPU), for `load_state_dict`."""
        cpu = lambda t: t.detach().cpu().clone()  # noqa: E731
        return {"iteration": self.iteration, "sigma": [cpu(t) for t in self.sigma],
                "average": [cpu(t) for t in self.average],
                "state": [{k: cpu(t) for k, t in st.items()} for st in self.state]}

    def load_state_dict(self, d: dict) -> None:
        """Continue from `state_dict()`; the solver must have been built with the same game and settings."""
        def put(old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
            if tuple(new.shape) != tuple(old.shape):
                raise TensorCFRError(f"checkpoint does not fit this solver: a tensor of shape {tuple(new.shape)} "
                                     f"where {tuple(old.shape)} is expected")
            return old.copy_(new)  # in place: a captured iteration keeps reading these tensors
        self.sigma = [put(o, n) for o, n in zip(self.sigma, d["sigma"])]
        self.average = [put(o, n) for o, n in zip(self.average, d["average"])]
        if [sorted(st) for st in self.state] != [sorted(st) for st in d["state"]]:
            raise TensorCFRError("checkpoint does not fit this solver: it was written by another algorithm")
        self.state = [{k: put(st[k], new[k]) for k in st} for st, new in zip(self.state, d["state"])]
        self.iteration = int(d["iteration"])

    # -- reading the result -----------------------------------------------------------------
    def current_policy(self) -> Policy:
        """The strategy the next iteration will play."""
        return Policy(self.game, tuple(s.clone() if self.capture != "none" else s for s in self.sigma))

    def average_policy(self) -> Policy:
        """The average strategy (the one that converges to equilibrium)."""
        return Policy(self.game, tuple(T.normalize(tp, a) for tp, a in zip(self.game.treeplexes, self.average)))

    def evaluate(self) -> dict[str, Evaluation]:
        """Exact evaluation of the average and the current strategy: {"average": ..., "current": ...}."""
        return {"average": evaluate(self.game, self.average_policy(), self.op),
                "current": evaluate(self.game, self.current_policy(), self.op)}

    def regret_summary(self) -> dict[str, torch.Tensor]:
        """Largest positive cumulative regret per player over t, [B] each (column 0 is always 0);
        empty for algorithms that keep no regrets."""
        if "regrets" not in self.state[0]:
            return {}
        t = max(self.iteration, 1)
        return {f"max_p{p}": r.clamp(min=0).amax(1) / t for p, r in enumerate(self.regrets)}

    def member_names(self) -> list[str]:
        """A label per batch member: the game spec, plus the setting where settings differ."""
        names = list(self.game.batch_names) * (self.batch_size // self.game.batch_size)
        for k in self.config.BATCHED:
            vals = _batch(getattr(self.config, k))
            if vals is not None and len(vals) > 1:
                names = [f"{n} {k}={v:g}" for n, v in zip(names, vals)]
        return names

    def describe(self) -> dict:
        """The resolved configuration, as printed by the CLI."""
        return {"game": self.game.name, "batch": self.member_names(), "algorithm": self.config.name,
                **{k: v for k, v in asdict(self.config).items() if k != "name"},
                "device": str(self.device), "dtype": str(self.dtype).replace("torch.", ""), "capture": self.capture}
