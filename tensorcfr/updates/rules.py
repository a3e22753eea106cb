"""Update rules: how a player's next strategy follows from its counterfactual values.

A rule is a frozen configuration (`CFRConfig` for the regret-matching family, `FTRLConfig`
for sequence-form FTRL) with three methods that see only what they need, never a solver:

    state = rule.init_state(space, batch, dtype, device)   # its own typed state per player
    sigma = rule.initial_strategy(space, state)             # [B, S] before any iteration
    sigma = rule.next_strategy(space, state, g, sigma, sc)  # after counterfactual values g [B, S]
                                                            # (g and the old sigma are its to overwrite)

`space` is the player's decision space (a `treeplex.Treeplex`: `normalize`, `sequence_form`,
`instantaneous_regret`, `softmax`, `entropy_weights`), `state` a dataclass per rule
(`RegretState`, `FTRLState`) updated in place, and `sc` the iteration's numbers as typed
fields (`Scalars`, from `rule.scalars(t)`). `iteration.iterate` calls them; a new rule is a
configuration with these three methods, or a preset of an existing one (`PRESETS`).

Example:
    >>> import torch, tensorcfr
    >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
    >>> rule = make_config("cfr+")
    >>> st = rule.init_state(tp, 1, torch.float64, "cpu")
    >>> sigma = rule.initial_strategy(tp, st)
    >>> g = torch.zeros(1, tp.num_sequences, dtype=torch.float64); g[0, 1] = 1.0  # "J: pass" pays 1
    >>> rule.next_strategy(tp, st, g, sigma, rule.scalars(1))[0, 1:3].tolist()
    [1.0, 0.0]
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Union

import torch

from tensorcfr.spaces import fused
from tensorcfr.errors import TensorCFRError
from tensorcfr.updates.specs import parse_algorithm
from tensorcfr.spaces.treeplex import WEIGHTS, Treeplex
from tensorcfr.updates.validate import number, numbers_or_one

UPDATES = ("simultaneous", "alternating")
AVERAGING = ("uniform", "linear", "power")
ETA_DEFAULT = 2.0  # FTRL step size of the presets; see FTRLConfig
# bounds of the numeric settings: beyond them the weights t^gamma and the softmax temperatures
# leave float64's range within an ordinary run (a NaN strategy, not an error)
GAMMA_MAX = 20.0
GAMMA_SCHEDULED_MAX = 1e3  # a scheduled gamma enters as ((t-1)/t)^gamma, never as t^gamma
DISCOUNT_MAX = 1e3  # |alpha|, |beta|
ETA_MAX = 1e9

Param = Union[float, tuple[float, ...], None]  # a tuple is a batch of settings, one per member
Number = Union[float, torch.Tensor]  # a Python float, or a [B, 1] tensor (per member, or captured)


def _batch(value: Param) -> tuple[float, ...] | None:
    if value is None:
        return None
    return tuple(float(v) for v in value) if isinstance(value, (tuple, list)) else (float(value),)


def per_member(values: tuple[float, ...], dtype: torch.dtype, device) -> Number:
    """A setting as a Python float, or [B, 1] when it differs per batch member."""
    if len(values) == 1:
        return values[0]
    return torch.tensor(values, dtype=dtype, device=device)[:, None]


@dataclass(frozen=True)
class Scalars:
    """The numbers of one iteration t, per batch member: each a tuple of floats (one, or one
    per member) from `scalars(t)`, then `Number`s as the iteration reads them (`as_numbers`,
    or the fixed [B, 1] views a captured iteration refreshes before each replay).

    average_weight: w_t, the weight of the iteration's plan in the average strategy
    average_discount: the multiplier of the average's sums before the plan is added (None: 1):
                    a scheduled gamma's DCFR discount ((t-1)/t)^gamma_t, whose products as
                    absolute weights would leave float32's range within 20 iterations
    positive/negative: DCFR's multipliers of positive and negative cumulative regrets (None
                    for the rules that do not discount)
    perturbation/refresh: RTCFR+'s floor on each action's probability this iteration, and 1
                    where its reference plan becomes the plan just played (else 0)
    """

    average_weight: tuple[float, ...] | Number
    average_discount: tuple[float, ...] | Number | None = None
    positive: tuple[float, ...] | Number | None = None
    negative: tuple[float, ...] | Number | None = None
    perturbation: tuple[float, ...] | Number | None = None
    refresh: tuple[float, ...] | Number | None = None

    def present(self) -> list[str]:
        """The fields this rule sets (the same at every iteration)."""
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]

    def as_numbers(self, dtype: torch.dtype, device) -> "Scalars":
        """Each tuple as a float, or [B, 1] where it differs per member."""
        return replace(self, **{k: per_member(getattr(self, k), dtype, device) for k in self.present()})


@dataclass
class RegretState:
    """The regret-matching family's state of one player."""

    regrets: torch.Tensor  # [B, S] cumulative regrets; column 0 (the empty sequence) stays 0


@dataclass
class FTRLState:
    """FTRL's state of one player."""

    utility: torch.Tensor  # [B, S] cumulative counterfactual values
    temperature: torch.Tensor  # [B or 1, I] beta_j / eta: the regulariser's weight per infoset


RuleState = Union[RegretState, FTRLState, "MMDState", "RTState"]


@dataclass(frozen=True)
class Schedule:
    """What every rule shares: the update schedule and the average-strategy weights.

    updates:    "simultaneous" | "alternating" (player 1 answers player 0's new strategy)
    averaging:  weights w_t of the average strategy: "uniform" (1), "linear" (t) or
                "power" (t^gamma); iterations t <= delay get 0 and t counts from the delay
    delay:      see averaging
    gamma:      the exponent of "power" averaging
    gamma_end, horizon: a schedule (Zhang, McAleer and Sandholm, "Faster game solving via
                hyperparameter schedules", arXiv 2404.09097): gamma moves linearly from
                `gamma` to `gamma_end` over iterations 1..horizon and stays there. The average
                then takes DCFR's form, its sums multiplied by ((t-1)/t)^gamma_t before each
                plan is added with weight 1 (for a constant gamma the same average as t^gamma)
    """

    name: str = "cfr"
    updates: str = "simultaneous"
    averaging: str = "uniform"
    delay: int = 0
    gamma: Param = None
    gamma_end: Param = None
    horizon: int | None = None

    BATCHED = ("gamma", "gamma_end")  # the fields that may be tuples (one setting per batch member)
    SCHEDULED = ("gamma",)  # the fields that may move over the horizon (`<name>_end`)
    BOUNDS = {"gamma": dict(lo=0.0, hi=GAMMA_MAX), "alpha": dict(lo=-DISCOUNT_MAX, hi=DISCOUNT_MAX),
              "beta": dict(lo=-DISCOUNT_MAX, hi=DISCOUNT_MAX), "eta": dict(lo=0.0, lo_open=True, hi=ETA_MAX)}

    def __post_init__(self):
        if self.updates not in UPDATES:
            raise TensorCFRError(f"updates must be one of {', '.join(UPDATES)}, got {self.updates!r}")
        if self.averaging not in AVERAGING:
            raise TensorCFRError(f"averaging must be one of {', '.join(AVERAGING)}, got {self.averaging!r}")
        if isinstance(self.delay, bool) or not isinstance(self.delay, int) or self.delay < 0:
            raise TensorCFRError(f"delay must be a non-negative integer, got {self.delay!r}")
        if (self.averaging == "power") != (self.gamma is not None):
            raise TensorCFRError("gamma is the exponent of averaging='power' and needs it (and vice versa)")
        scheduled = [k for k in self.SCHEDULED if getattr(self, f"{k}_end") is not None]
        if scheduled and self.horizon is None:
            raise TensorCFRError(f"{', '.join(k + '_end' for k in scheduled)} needs horizon (the iteration "
                                 "at which the schedule reaches its end value)")
        if self.horizon is not None:
            number("horizon", self.horizon, lo=1, integer=True)
            if not scheduled:
                raise TensorCFRError(f"horizon is the length of a schedule and needs one of "
                                     f"{', '.join(k + '_end' for k in self.SCHEDULED)}")
        for k in scheduled:
            if getattr(self, k) is None:
                raise TensorCFRError(f"{k}_end is where {k}'s schedule ends and needs {k}")
        for k in self.BATCHED:
            if getattr(self, k) is not None:
                bounds = self.BOUNDS.get(k.removesuffix("_end"), {})
                if k in ("gamma", "gamma_end") and self.gamma_end is not None:
                    bounds = dict(bounds, hi=GAMMA_SCHEDULED_MAX)  # discounts, not powers: no overflow
                numbers_or_one(k, getattr(self, k), **bounds)
        self.batch_size  # noqa: B018  (checks that the tuples agree in length)

    def at(self, name: str, t: int) -> tuple[float, ...] | None:
        """The setting `name` at iteration t, per batch member: its value, or on a schedule
        (`<name>_end`, `horizon`) start + (end - start) min(t, horizon) / horizon.

        Example:
            >>> make_config("hs-dcfr(horizon=100)").at("gamma", 50)
            (27.5,)
        """
        start, end = _batch(getattr(self, name)), _batch(getattr(self, f"{name}_end", None))
        if start is None or end is None:
            return start
        f = min(t, self.horizon) / self.horizon
        n = max(len(start), len(end))
        return tuple(a + (b - a) * f for a, b in zip(start * (n // len(start)), end * (n // len(end))))

    @property
    def batch_size(self) -> int:
        """Number of hyper-parameter settings carried (1 unless some parameter is a tuple)."""
        sizes = {len(_batch(getattr(self, k))) for k in self.BATCHED if getattr(self, k) is not None}
        sizes.discard(1)
        if len(sizes) > 1:
            raise TensorCFRError(f"{self.name}: {', '.join(self.BATCHED)} tuples must have one length, "
                                 f"got {sorted(sizes)}")
        return sizes.pop() if sizes else 1

    def scalars(self, t: int) -> Scalars:
        """Every number of iteration t that depends on t, per setting."""
        return Scalars(average_weight=self.average_weight(t), average_discount=self.average_discount(t))

    def average_discount(self, t: int) -> tuple[float, ...] | None:
        """A scheduled gamma's multiplier ((t-1)/t)^gamma_t of the average's sums (t counted
        from the delay; 1 up to it), or None without a schedule."""
        if self.gamma_end is None:
            return None
        s = t - self.delay
        if s <= 0:
            return (1.0,)
        return tuple(((s - 1) / s) ** g for g in self.at("gamma", t))

    def average_weight(self, t: int) -> tuple[float, ...]:
        """w_t per setting: uniform, linear (Brown and Sandholm 2019's LCFR) or power averaging
        (t^gamma, DCFR's gamma; 1 on a schedule, whose `average_discount` weighs), zero up to
        `delay`."""
        if t <= self.delay:
            return (0.0,)
        if self.gamma_end is not None:
            return (1.0,)
        if self.averaging == "power":
            return tuple(float(t - self.delay) ** g for g in _batch(self.gamma))
        return (float(t - self.delay) if self.averaging == "linear" else 1.0,)



def _discount(t: int, a: float) -> float:
    """t^a / (t^a + 1), DCFR's multiplier; 1 where t^a overflows a float (its limit)."""
    try:
        x = t ** a
    except OverflowError:
        return 1.0
    return x / (x + 1)


@dataclass(frozen=True)
class CFRConfig(Schedule):
    """The regret-matching family as parameters of one update (docs/concepts.md).

    plus:       regret matching+ (cumulative regrets clipped at 0 after each update)
    alpha/beta: after iteration t, positive cumulative regrets are multiplied by
                t^alpha/(t^alpha+1) and negative ones by t^beta/(t^beta+1) (None: kept)
    predictive: the next strategy regret-matches R + r_t (the last instantaneous regret as
                the prediction of the next one)
    regret_tolerance: regrets matched on that are at most this times the scale of the batch
                member's regrets (its largest cumulative regret plus its largest counterfactual
                value this iteration, in absolute value) count as 0 (None: off). Regrets
                that are exactly 0 in exact arithmetic come out as +-1e-17 or so depending on
                the order of summation (CPU or GPU, eager or compiled, generic or public-tree
                form), and regret matching then plays a pure instead of a uniform strategy;
                a tolerance of, say, 1e-12 makes the trajectory independent of that order.
    alpha_end/beta_end: with `horizon`, alpha and beta move linearly to these over iterations
                1..horizon, as gamma to `gamma_end` (`Schedule`): HS-DCFR and HS-PCFR+
    and the schedule of `Schedule` (updates, averaging, delay, gamma, gamma_end, horizon).

    alpha, beta and gamma (and their ends) may be tuples: one setting per batch member, all in
    one run.

    Example:
        >>> CFRConfig("my-dcfr", updates="alternating", alpha=(1.0, 2.0), beta=0.0).batch_size
        2
    """

    plus: bool = False
    alpha: Param = None
    beta: Param = None
    predictive: bool = False
    regret_tolerance: float | None = None
    alpha_end: Param = None
    beta_end: Param = None

    BATCHED = ("alpha", "beta", "gamma", "alpha_end", "beta_end", "gamma_end")
    SCHEDULED = ("alpha", "beta", "gamma")

    def __post_init__(self):
        if (self.alpha is None) != (self.beta is None):
            raise TensorCFRError("alpha and beta (regret discounting) go together")
        super().__post_init__()
        tol = self.regret_tolerance
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < 1):
            raise TensorCFRError(f"regret_tolerance must be a number in [0, 1), got {tol!r}")

    def discounts(self, t: int) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """(positive, negative) regret multipliers per setting, or None."""
        if self.alpha is None:
            return None
        f = lambda e: tuple(_discount(t, a) for a in self.at(e, t))  # noqa: E731
        return f("alpha"), f("beta")

    def scalars(self, t: int) -> Scalars:
        discounts = self.discounts(t)
        if discounts is None:
            return super().scalars(t)
        return replace(super().scalars(t), positive=discounts[0], negative=discounts[1])

    def init_state(self, space: Treeplex, batch: int, dtype: torch.dtype, device) -> RegretState:
        return RegretState(torch.zeros(batch, space.num_sequences, dtype=dtype, device=device))

    def initial_strategy(self, space: Treeplex, st: RegretState) -> torch.Tensor:
        """Uniform: regret matching on zero regrets."""
        return space.normalize(st.regrets)

    def next_strategy(self, space: Treeplex, st: RegretState, g: torch.Tensor, sigma: torch.Tensor,
                      sc: Scalars) -> torch.Tensor:
        """Regret matching on the cumulative regrets after adding this iteration's, from
        counterfactual values g [B, S] against the strategy sigma [B, S] just played (Zinkevich,
        Johanson, Bowling and Piccione 2007), with the family's variations:
        - `plus`, regret matching+: regrets clipped at 0 after each update (Tammelin 2014, CFR+);
        - `alpha`/`beta`, discounting (Brown and Sandholm 2019, LCFR and DCFR);
        - `predictive`: matched on R + r_t, the last regret as the prediction of the next one
          (Farina, Kroer and Sandholm 2021, PCFR+)."""
        # g is this update's to overwrite: the instantaneous regrets take its memory, and each
        # temporary below is made in place where it can be (Dudo(6,2,2): 1.4 GB an array)
        if not self.regret_tolerance:  # one walk of the tree where the layout has one
            # into sigma's own memory: a new [B, S] array each update fragments a kept heap (a flop
            # spot's solver grew to 9.5 GB in 6 iterations, against 8.3 GB written in place)
            into = sigma if sigma.shape == st.regrets.shape else None
            nxt = space.regret_step(g, sigma, st.regrets, sc.positive, sc.negative, self.plus, self.predictive, out=into)
            if nxt is not None:
                return nxt
        g_scale = g.abs().amax(1, keepdim=True) if self.regret_tolerance else None  # [B, 1]
        inst = space.instantaneous_regret(g, sigma, inplace=True)  # [B, S-1]
        del g
        regret = st.regrets  # [B, S]
        if (fused.wanted(regret) and not self.predictive and not self.regret_tolerance
                and fused.disjoint(regret, inst)):
            # one pass over the regrets (eager: up to six); regret matching+ without discounting
            # keeps its regrets non-negative, so they are matched as they are
            positive = None if self.plus and sc.positive is None else torch.empty_like(regret)
            if positive is not None:
                positive[:, 0] = 0.0
            fused.regret_step(regret[0, 1:], inst[0], None if positive is None else positive[0, 1:],
                              sc.positive, sc.negative, self.plus)
            del inst
            return space.normalize(regret) if positive is None else space.normalize(positive, out=positive)
        regret[:, 1:].add_(inst)  # (not +=, which copies the slice onto itself afterwards)
        if self.plus:
            regret.clamp_(min=0)
        if sc.positive is not None:  # r+ times one factor, r- the other: no boolean mask (5x a product here)
            negative = regret.clamp(max=0)
            regret.clamp_(min=0).mul_(_like(sc.positive, regret)).addcmul_(negative, _like(sc.negative, regret))
            del negative
        if self.predictive:
            predicted = regret.clone()
            predicted[:, 1:].add_(inst)
            del inst
            positive = predicted.clamp_(min=0)
        else:
            del inst
            # regret matching+ keeps its regrets non-negative: no second clamp
            positive = regret if self.plus and sc.positive is None else regret.clamp(min=0)
        matched = self._matched(positive, regret, g_scale)
        # into sigma's memory where it can (read for the last time above, as the walk above writes
        # it): a captured iteration then copies nothing back (a kernel a player on a GPU), and
        # sigma's column 0 holds 1 as every strategy's does (another)
        if sigma.shape == matched.shape:
            return space.normalize(matched, out=sigma, head=False)
        return space.normalize(matched, out=None if matched is regret else matched)

    def _matched(self, positive: torch.Tensor, regret: torch.Tensor, g_scale: torch.Tensor | None) -> torch.Tensor:
        """`positive` [B, S] with the entries within `regret_tolerance` of 0 set to 0. The scale
        counts the largest counterfactual value `g_scale` [B, 1] as well as the regrets: where
        every regret is 0 in exact arithmetic (a symmetric game's first iteration), the largest
        regret is rounding itself."""
        if not self.regret_tolerance:
            return positive
        scale = regret.abs().amax(1, keepdim=True) + g_scale  # [B, 1]
        return torch.where(positive > scale * self.regret_tolerance, positive, 0.0)


def _like(x: Number, t: torch.Tensor) -> torch.Tensor:
    """A scalar or [B, 1] number as a tensor of t's dtype and device (torch.where of two Python
    floats would be float32), filled where t lives (no copy from the host)."""
    return x if isinstance(x, torch.Tensor) else t.new_full((), x)


@dataclass(frozen=True)
class FTRLConfig(Schedule):
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
    and the schedule of `Schedule` (updates, averaging, delay, gamma).

    Example:
        >>> FTRLConfig("my-oftrl", optimistic=True, eta=(0.5, 1.0, 2.0)).batch_size
        3
    """

    eta: Param = 1.0
    weights: str = "unit"
    optimistic: bool = False

    BATCHED = ("eta", "gamma", "gamma_end")

    def __post_init__(self):
        super().__post_init__()
        if self.weights not in WEIGHTS:
            raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {self.weights!r}")
        if self.eta is None:
            raise TensorCFRError("eta (the step size) must be a positive number, got None")

    def init_state(self, space: Treeplex, batch: int, dtype: torch.dtype, device) -> FTRLState:
        beta = space.entropy_weights(self.weights).to(dtype)  # [I] (or a batch's members' [B, I])
        temperature = (beta[None] if beta.dim() == 1 else beta) / per_member(_batch(self.eta), dtype, device)  # [B or 1, I]
        return FTRLState(torch.zeros(batch, space.num_sequences, dtype=dtype, device=device), temperature)

    def initial_strategy(self, space: Treeplex, st: FTRLState) -> torch.Tensor:
        """The regulariser's minimiser (FTRL on no utilities). Not uniform: an action with
        infosets below it leads to more entropy, so it gets more weight."""
        return space.softmax(st.utility, st.temperature)

    def next_strategy(self, space: Treeplex, st: FTRLState, g: torch.Tensor, sigma: torch.Tensor,
                      sc: Scalars) -> torch.Tensor:
        """FTRL: the regularised best response to the cumulative values (Farina, Kroer and
        Sandholm 2021 for its optimistic form on treeplexes)."""
        st.utility += g
        return space.softmax(st.utility + g if self.optimistic else st.utility, st.temperature)


@dataclass
class MMDState:
    """Magnetic mirror descent's state of one player."""

    weight: torch.Tensor  # [1, S] beta_j of the infoset of each sequence (0 for the empty sequence)
    step: torch.Tensor  # [B or 1, 1] the step size eta
    temperature: torch.Tensor  # [B or 1, I] beta_j (1 + eta alpha): the regulariser's weight per infoset


@dataclass(frozen=True)
class MMDConfig(Schedule):
    """Magnetic mirror descent over the sequence form with the dilated entropy (Sokota, D'Orazio,
    Kolter, Loizou, Lanctot, Mitliagkas, Brown and Kroer, "A unified approach to reinforcement
    learning, quantal response equilibria, and two-player zero-sum games", ICLR 2023), as
    OpenSpiel's `mmd_dilated.py` runs it: the magnet is the regulariser's own minimiser.

    Each step is a proximal step from the last strategy x_t towards the counterfactual values g:
    x_{t+1} maximises eta <g, x> - D(x, x_t) - eta alpha psi(x), with psi the dilated entropy
    (weights beta_j) and D its Bregman divergence. On the treeplex <grad psi(x_t), x> is
    sum_j beta_j x[p_j] sum_a b(j,a) log b_t(j,a) (the other terms of the gradient sum to 0), so
    the step is the bottom-up softmax of u = eta g + beta log b_t at temperatures beta_j (1 + eta
    alpha). With alpha > 0 the last iterate converges to the alpha-regularised equilibrium (a
    quantal response equilibrium); alpha = 0 is mirror descent, whose average converges.

    eta:     step size (a tuple: one per batch member)
    alpha:   the magnet's weight, >= 0 (a tuple: one per batch member). It sets where the last
             iterate goes: the larger, the faster and the farther from a Nash equilibrium, on
             the scale of the counterfactual values, which carry the chance probabilities
             (the defaults, eta = 1 and alpha = 0.001, from a grid on Kuhn, Leduc and Liar's
             Dice: see docs/guide.md)
    weights: the dilated entropy's beta_j, as `FTRLConfig.weights` (OpenSpiel: "unit")
    and the schedule of `Schedule` (updates, averaging, delay, gamma).

    Example:
        >>> MMDConfig("my-mmd", eta=(0.5, 1.0), alpha=0.05).batch_size
        2
    """

    eta: Param = 1.0
    alpha: Param = 0.001
    weights: str = "unit"

    BATCHED = ("eta", "alpha", "gamma", "gamma_end")
    BOUNDS = {**Schedule.BOUNDS, "alpha": dict(lo=0.0, hi=DISCOUNT_MAX)}

    def __post_init__(self):
        super().__post_init__()
        if self.weights not in WEIGHTS:
            raise TensorCFRError(f"weights must be one of {', '.join(WEIGHTS)}, got {self.weights!r}")
        for k in ("eta", "alpha"):
            if getattr(self, k) is None:
                raise TensorCFRError(f"{k} must be a number, got None")

    def init_state(self, space: Treeplex, batch: int, dtype: torch.dtype, device) -> MMDState:
        beta = space.entropy_weights(self.weights).to(dtype=dtype, device=device)  # [I] (or a batch's [B, I])
        beta = beta[None] if beta.dim() == 1 else beta
        weight = space.at_sequences(beta)  # [1 (or B), S]
        step = torch.as_tensor(per_member(_batch(self.eta), dtype, device), dtype=dtype, device=device).reshape(-1, 1)
        alpha = torch.as_tensor(per_member(_batch(self.alpha), dtype, device), dtype=dtype, device=device).reshape(-1, 1)
        temperature = beta * (1 + step * alpha)  # [B or 1, I]
        # a batch of games with one setting: a strategy per member from the start
        return MMDState(weight, step, temperature.expand(max(batch, temperature.shape[0]), -1))

    def initial_strategy(self, space: Treeplex, st: MMDState) -> torch.Tensor:
        """Uniform at every infoset, as OpenSpiel starts."""
        return space.normalize(torch.zeros_like(st.weight).expand(st.temperature.shape[0], -1))

    def next_strategy(self, space: Treeplex, st: MMDState, g: torch.Tensor, sigma: torch.Tensor,
                      sc: Scalars) -> torch.Tensor:
        """The proximal step from sigma [B, S] (behavioural) along g [B, S] (see the class)."""
        # log of a probability that underflowed to 0 stays finite: the action keeps weight ~0
        u = sigma.clamp_min(torch.finfo(sigma.dtype).tiny).log_().mul_(st.weight)
        return space.softmax(u.add_(g * st.step), st.temperature)


@dataclass
class RTState:
    """RTCFR+'s state of one player."""

    regrets: torch.Tensor  # [B, S] cumulative regrets (regret matching+: >= 0); column 0 stays 0
    reference: torch.Tensor  # [B, S] the reference plan r the regulariser pulls towards
    actions: torch.Tensor  # [1, S] the number of actions at each sequence's infoset (1 at column 0)
    mu: torch.Tensor  # [B or 1, 1] the regulariser's weight, or [B or 1, S] where some infosets are
    #                   unreachable (the public-tree form's ruled-out types): 0 there, whose regulariser
    #                   is not in the game and must not reach their parents' values


@dataclass(frozen=True)
class RTConfig(Schedule):
    """Reward-transformation CFR+ (RTCFR+; Meng, Ge, Li, An and Gao, "Efficient last-iterate
    convergence in solving extensive-form games", NeurIPS 2025), as the authors' code
    (github.com/menglinjian/NeurIPS-2025-RTCFR, on LiteEFG) runs it. Its last iterate converges.

    Each update is CFR+ on a regularised game: the counterfactual values g lose
    mu (x - r), the gradient of the Euclidean distance (mu / 2) |x - r|^2 between the plan x
    just played and a reference plan r. The regrets are those of the strategy regret matching+
    proposes, sigma; the strategy played is sigma with each action's probability raised to at
    least `perturbation` at its infoset, (1 - p |A|) sigma + p. Every `period` iterations the
    reference becomes the plan played and the perturbation halves, so the regularised games'
    equilibria walk to a Nash equilibrium of the game.

    mu:           the regulariser's weight (a tuple: one per batch member), on the scale of
                  the counterfactual values, which carry the chance probabilities
    perturbation: the starting floor p (a tuple: one per batch member); p |A| must stay < 1
    period:       iterations between the reference's updates (the authors' T_u)
    floor:        an infoset whose regrets sum to less than this plays uniformly (0: off). The
                  authors' code does so through LiteEFG's normalisation, whose threshold is 1e-9;
                  without it the perturbation's regrets of order 1e-10 at infosets the
                  opponent all but never reaches make those infosets play pure strategies
    and the schedule of `Schedule` (updates, averaging, delay, gamma) for the average, which
    this rule does not need.

    Example:
        >>> RTConfig("my-rtcfr+", mu=(1e-3, 1e-2)).batch_size
        2
    """

    mu: Param = 1e-3
    perturbation: Param = 1e-10
    period: int = 100
    floor: float = 1e-9

    BATCHED = ("mu", "perturbation", "gamma", "gamma_end")
    BOUNDS = {**Schedule.BOUNDS, "mu": dict(lo=0.0, hi=ETA_MAX), "perturbation": dict(lo=0.0, hi=0.5)}

    def __post_init__(self):
        super().__post_init__()
        for k in ("mu", "perturbation"):
            if getattr(self, k) is None:
                raise TensorCFRError(f"{k} must be a number, got None")
        number("period", self.period, lo=1, integer=True)
        number("floor", self.floor, lo=0.0)

    def scalars(self, t: int) -> Scalars:
        """The perturbation halves, and the reference is renewed, at every multiple of `period`."""
        halvings = t // self.period
        return replace(super().scalars(t), perturbation=tuple(p * 0.5 ** halvings for p in _batch(self.perturbation)),
                       refresh=(1.0 if t % self.period == 0 else 0.0,))

    def init_state(self, space: Treeplex, batch: int, dtype: torch.dtype, device) -> RTState:
        zeros = torch.zeros(batch, space.num_sequences, dtype=dtype, device=device)
        actions = space.normalize(zeros[:1]).reciprocal_()  # [1, S] |A| from the uniform strategy
        widest = float(actions.max())
        for p in _batch(self.perturbation):
            if p * widest >= 1:
                raise TensorCFRError(f"perturbation must be < 1/{widest:g} (1 over the most actions at an "
                                     f"infoset) for this game, got {p!r}")
        mu = torch.as_tensor(per_member(_batch(self.mu), dtype, device), dtype=dtype, device=device).reshape(-1, 1)
        live = space.reachable(dtype)
        mu = mu if live is None else mu * live.to(device)
        return RTState(zeros.clone(), space.sequence_form(space.normalize(zeros)), actions, mu)

    def initial_strategy(self, space: Treeplex, st: RTState) -> torch.Tensor:
        """Uniform, as the reference."""
        return space.normalize(st.regrets)

    def _matched(self, space: Treeplex, regrets: torch.Tensor) -> torch.Tensor:
        """Regret matching+ on regrets [B, S] >= 0, uniform where an infoset's sum is below `floor`."""
        if not self.floor:
            return space.normalize(regrets)
        total = space.at_sequences(space.segment_sum(regrets))  # [B, S] each sequence's infoset total
        return space.normalize(torch.where(total < self.floor, 0.0, regrets))

    def next_strategy(self, space: Treeplex, st: RTState, g: torch.Tensor, sigma: torch.Tensor,
                      sc: Scalars) -> torch.Tensor:
        """One RTCFR+ update from counterfactual values g [B, S] against the perturbed strategy
        sigma [B, S] just played (see the class)."""
        x = space.sequence_form(sigma)  # [B, S] the plan played
        if isinstance(sc.refresh, torch.Tensor) or sc.refresh:  # r <- x (a captured iteration: r + 0 (x - r))
            st.reference.add_((x - st.reference).mul_(_like(sc.refresh, x)))
        g.sub_(x.sub_(st.reference).mul_(st.mu))
        del x
        proposed = self._matched(space, st.regrets)  # [B, S] sigma, what regret matching+ proposed last
        inst = space.instantaneous_regret(g, proposed, inplace=True)  # [B, S-1]
        del g, proposed
        st.regrets[:, 1:].add_(inst)
        st.regrets.clamp_(min=0)
        del inst
        nxt = self._matched(space, st.regrets)
        p = _like(sc.perturbation, nxt)
        nxt.sub_(nxt * st.actions * p).add_(p)  # (1 - p |A|) sigma + p
        nxt[:, 0] = 1.0
        return nxt


Config = Union[CFRConfig, FTRLConfig, MMDConfig, RTConfig]

PRESETS: dict[str, Config] = {
    "cfr": CFRConfig("cfr"),
    "cfr+": CFRConfig("cfr+", plus=True, updates="alternating", averaging="linear"),
    "lcfr": CFRConfig("lcfr", updates="alternating", alpha=1.0, beta=1.0, averaging="linear"),
    "dcfr": CFRConfig("dcfr", updates="alternating", alpha=1.5, beta=0.0, averaging="power", gamma=2.0),
    "pcfr+": CFRConfig("pcfr+", plus=True, updates="alternating", predictive=True, averaging="power", gamma=2.0),
    # PDCFR+ (Xu, Li, Liu, Fu, Fu, Xing and Cheng, "Minimizing weighted counterfactual regret with
    # optimistic online mirror descent", IJCAI 2024), with the defaults of the authors' code
    # (github.com/rpSebastian/PDCFRPlus: alpha = 2.3, gamma = 5). Its regrets R_t = [R_{t-1} d_t
    # + r_t]^+ with d_t = (t-1)^a / ((t-1)^a + 1), and its strategy [R_t d_{t+1} + r_t]^+, are
    # regret matching+ with DCFR's discount after each update (the stored regret is R_t d_{t+1})
    # and PCFR+'s prediction; beta is moot, as no regret stays negative
    "pdcfr+": CFRConfig("pdcfr+", plus=True, updates="alternating", predictive=True, alpha=2.3, beta=0.0,
                        averaging="power", gamma=5.0),
    # hyperparameter schedules (Zhang, McAleer and Sandholm, "Faster game solving via
    # hyperparameter schedules", arXiv 2404.09097, AAAI 2026; their "(30)" variants): over a
    # horizon of 1,000 iterations, the paper's, alpha goes from 1 to 4, beta from -1 to -3 and
    # gamma from 30 to 25 (HS-PCFR+ schedules gamma only, PCFR+'s one parameter)
    "hs-dcfr": CFRConfig("hs-dcfr", updates="alternating", alpha=1.0, alpha_end=4.0, beta=-1.0, beta_end=-3.0,
                         averaging="power", gamma=30.0, gamma_end=25.0, horizon=1000),
    "hs-pcfr+": CFRConfig("hs-pcfr+", plus=True, updates="alternating", predictive=True, averaging="power",
                          gamma=30.0, gamma_end=25.0, horizon=1000),
    "ftrl": FTRLConfig("ftrl", eta=ETA_DEFAULT),
    "oftrl": FTRLConfig("oftrl", eta=ETA_DEFAULT, optimistic=True),
    "mmd": MMDConfig("mmd"),
    # RTCFR+ with the defaults of the authors' code: mu = 1e-3, a perturbation of 1e-10, the
    # reference renewed every 100 iterations (the average, which it does not need, as CFR+'s)
    "rtcfr+": RTConfig("rtcfr+", updates="alternating", averaging="linear"),
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
    if isinstance(algo, Schedule):
        base, params = algo, {}
    else:
        name, params = parse_algorithm(algo)
        if name not in PRESETS:
            raise TensorCFRError(f"unknown algorithm {name!r}; available: {', '.join(PRESETS)}")
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
