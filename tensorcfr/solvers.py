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

from dataclasses import asdict, dataclass, fields, replace

import torch

import games as games_pkg

from . import treeplex as T
from .compiled import CompiledGame
from .compiler import compile as compile_game
from .errors import TensorCFRError
from .evaluation import Evaluation, Policy, evaluate

UPDATES = ("simultaneous", "alternating")
AVERAGING = ("uniform", "linear")


@dataclass(frozen=True)
class CFRConfig:
    """The regret-matching family as parameters of one update.

    plus:      regret matching+ (cumulative regrets clipped at 0 after each update)
    updates:   "simultaneous" | "alternating"
    averaging: "uniform" (w_t = 1) | "linear" (w_t = t) weights of the average strategy
    delay:     iterations t <= delay get weight 0 in the average (w_t = t - delay if linear)
    """

    name: str = "cfr"
    plus: bool = False
    updates: str = "simultaneous"
    averaging: str = "uniform"
    delay: int = 0

    def __post_init__(self):
        if self.updates not in UPDATES:
            raise TensorCFRError(f"updates must be one of {', '.join(UPDATES)}, got {self.updates!r}")
        if self.averaging not in AVERAGING:
            raise TensorCFRError(f"averaging must be one of {', '.join(AVERAGING)}, got {self.averaging!r}")
        if not isinstance(self.delay, int) or self.delay < 0:
            raise TensorCFRError(f"delay must be a non-negative integer, got {self.delay!r}")

    def average_weight(self, t: int) -> float:
        if t <= self.delay:
            return 0.0
        return float(t - self.delay) if self.averaging == "linear" else 1.0


PRESETS: dict[str, CFRConfig] = {
    "cfr": CFRConfig("cfr"),
    "cfr+": CFRConfig("cfr+", plus=True, updates="alternating", averaging="linear"),
}


def algorithms() -> list[str]:
    """Names of the algorithm presets."""
    return list(PRESETS)


def make_config(algo: str | CFRConfig, **overrides) -> CFRConfig:
    """Resolve a preset name or spec (`"cfr+"`, `"cfr+(delay=10)"`) plus overrides (None ignored).

    Example:
        >>> make_config("cfr+", updates="simultaneous").updates
        'simultaneous'
    """
    if isinstance(algo, CFRConfig):
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
    allowed = {f.name for f in fields(CFRConfig)} - {"name"}
    unknown = set(params) - allowed
    if unknown:
        raise TensorCFRError(f"unknown option(s) {sorted(unknown)} for {base.name}; options: {sorted(allowed)}")
    return replace(base, **params)


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
    """CFR-family solver over a compiled game, batched over the game's payoff vectors.

    State per player p: `regrets[p]` [B, S_p] cumulative regrets (column 0 unused),
    `average[p]` [B, S_p] weighted sum of realisation plans, `sigma[p]` [B, S_p] the current
    behavioural strategy.

    Example:
        >>> import tensorcfr
        >>> s = tensorcfr.Solver("kuhn", "cfr", device="cpu")
        >>> s.step(10); s.iteration
        10
        >>> sorted(s.average_policy().to_dict()["K:pb"])
        ['bet', 'pass']
    """

    def __init__(self, game: str | games_pkg.Game | CompiledGame, algo: str | CFRConfig = "cfr+", *,
                 device: str | torch.device = "auto", dtype: str | torch.dtype = "float64", **options):
        self.config = make_config(algo, **options)
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype)
        cg = game if isinstance(game, CompiledGame) else compile_game(game)
        self.game = cg.to(self.device)
        self.op = T.PayoffOperator.of(self.game, self.dtype)
        self.iteration = 0
        b = self.game.batch_size
        zeros = lambda tp: torch.zeros(b, tp.num_sequences, dtype=self.dtype, device=self.device)  # noqa: E731
        self.regrets = [zeros(tp) for tp in self.game.treeplexes]
        self.average = [zeros(tp) for tp in self.game.treeplexes]
        self.sigma = [T.normalize(tp, r) for tp, r in zip(self.game.treeplexes, self.regrets)]

    # -- the iteration skeleton ------------------------------------------------------------
    def step(self, n: int = 1) -> None:
        """Run `n` iterations."""
        tps = self.game.treeplexes
        for _ in range(n):
            t = self.iteration + 1
            if self.config.updates == "simultaneous":
                xs = [T.sequence_form(tp, s) for tp, s in zip(tps, self.sigma)]
                gs = [self.op.cfv(0, xs[1]), self.op.cfv(1, xs[0])]
                for p in (0, 1):
                    self._update(p, gs[p], xs[p], t)
            else:
                for p in (0, 1):
                    x_other = T.sequence_form(tps[1 - p], self.sigma[1 - p])
                    x_own = T.sequence_form(tps[p], self.sigma[p])
                    self._update(p, self.op.cfv(p, x_other), x_own, t)
            self.iteration = t

    def _update(self, p: int, g: torch.Tensor, x: torch.Tensor, t: int) -> None:
        """Regret-matching update of player p from counterfactual values g [B, S]."""
        tp, cfg = self.game.treeplexes[p], self.config
        q, v = T.bottom_up(tp, g, self.sigma[p])  # [B, S], [B, I]
        regret = self.regrets[p]
        regret[:, 1:] += q[:, 1:] - v[:, tp.slot_infoset]
        if cfg.plus:
            regret.clamp_(min=0)
        w = cfg.average_weight(t)
        if w:
            self.average[p].add_(x, alpha=w)
        self.sigma[p] = T.normalize(tp, regret.clamp(min=0))

    # -- reading the result -----------------------------------------------------------------
    def current_policy(self) -> Policy:
        """The strategy the next iteration will play."""
        return Policy(self.game, tuple(self.sigma))

    def average_policy(self) -> Policy:
        """The average strategy (the one that converges to equilibrium)."""
        return Policy(self.game, tuple(T.normalize(tp, a) for tp, a in zip(self.game.treeplexes, self.average)))

    def evaluate(self) -> dict[str, Evaluation]:
        """Exact evaluation of the average and the current strategy: {"average": ..., "current": ...}."""
        return {"average": evaluate(self.game, self.average_policy(), self.op),
                "current": evaluate(self.game, self.current_policy(), self.op)}

    def regret_summary(self) -> dict[str, torch.Tensor]:
        """Largest positive cumulative regret per player over t, [B] each (0 before any iteration)."""
        t = max(self.iteration, 1)
        return {f"max_p{p}": r[:, 1:].clamp(min=0).amax(1) / t if r.shape[1] > 1 else r[:, 0] * 0
                for p, r in enumerate(self.regrets)}

    def describe(self) -> dict:
        """The resolved configuration, as printed by the CLI."""
        return {"game": self.game.name, "batch": list(self.game.batch_names), "algorithm": self.config.name,
                **{k: v for k, v in asdict(self.config).items() if k != "name"},
                "device": str(self.device), "dtype": str(self.dtype).replace("torch.", "")}
