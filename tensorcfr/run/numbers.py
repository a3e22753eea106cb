"""Numbers the solver's floating type can hold: a game or a setting whose numbers would leave
the dtype's range is refused before the solve, and a solve that meets a NaN or an infinity
anyway stops, naming the iteration and the tensor.

The bounds, per batch member, with L the sum of the payoff's absolute entries (`PayoffExtent`:
no plan can make a counterfactual value larger, since plans and chance weigh each entry by at
most 1) and T the iterations to run:

- counterfactual values, game values and best responses: at most L;
- cumulative regrets (the CFR family): at most 2 (T + 1) L (each iteration adds at most 2L;
  discounting only shrinks them; the 1: a predictive rule's prediction);
- FTRL's cumulative utilities: at most T L, and its softmax reads them times eta / beta_j
  (beta_j >= 1), so T L eta;
- the average strategy's sums: at most sum_{t <= T} w_t <= T w_T (w_t = 1, t or t^gamma);
  at most T for a scheduled gamma, whose sums are discounted before each weight-1 plan.

Each must stay below the dtype's largest number by `HEADROOM`; a payoff entry must also not
round to 0 or to an infinity in the dtype. float64 is what every game compiles to, so the
checks matter for float32 (largest 3.4e38, smallest 1.4e-45) and for payoffs near float64's
own range.

Example:
    >>> import torch
    >>> from tensorcfr.forms import PayoffExtent
    >>> from tensorcfr.updates.rules import make_config
    >>> huge = PayoffExtent(total=1e300, largest=1e300, smallest=1e300)
    >>> payoff_problem(huge, torch.float32)
    'a payoff entry of 1e+300 (the largest) is out of float32 range (at most 3.4e+38)'
    >>> why = horizon_problem(make_config("cfr+"), PayoffExtent(1e30, 1e30, 1.0), torch.float32, 10**8)
    >>> why[:63]
    'cumulative regrets of cfr+ reach up to 2e+38 within 100000000 i'
    >>> horizon_problem(make_config("cfr+"), PayoffExtent(1e30, 1e30, 1.0), torch.float32, 10**5) is None
    True
"""

from __future__ import annotations

import math

import torch

from tensorcfr.errors import TensorCFRError
from tensorcfr.memory import all_finite

HEADROOM = 16.0  # a factor kept free: sums taken in another order, an evaluation's differences


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def payoff_problem(extent, dtype: torch.dtype) -> str | None:
    """Why the payoff entries (`forms.PayoffExtent`) do not fit `dtype`, or None."""
    info = torch.finfo(dtype)
    if extent.largest > info.max:
        return (f"a payoff entry of {extent.largest:.3g} {extent.at('largest')}is out of {_name(dtype)} range "
                f"(at most {info.max:.2g})")
    if extent.upper > info.max / HEADROOM and extent.total > info.max / HEADROOM:  # (the bound first: cheap)
        return (f"the payoff entries sum to {extent.total:.3g} in absolute value, past {_name(dtype)} range "
                f"({info.max:.2g} / {HEADROOM:g}): counterfactual values would overflow")
    if 0 < extent.smallest < info.tiny * info.eps:  # below the smallest subnormal number
        return (f"a payoff entry of {extent.smallest:.3g} {extent.at('smallest')}rounds to 0 in {_name(dtype)} "
                f"(its smallest number is {info.tiny * info.eps:.2g})")
    return None


def _power_sum(t: int, gamma: float) -> float:
    """An upper bound of sum_{s <= t} s^gamma: t * t^gamma (inf past float range)."""
    try:
        return t * math.exp(gamma * math.log(t)) if t > 0 else 0.0
    except OverflowError:
        return math.inf


def horizon_problem(config, extent, dtype: torch.dtype, iterations: int) -> str | None:
    """Why running `config` to `iterations` in all would overflow `dtype` (the module's bounds), or None."""
    info = torch.finfo(dtype)
    limit = info.max / HEADROOM
    t = max(int(iterations), 1)
    name, where = getattr(config, "name", "the rule"), f"within {t} iterations"
    fix = "use float64, or payoffs on a smaller scale" if dtype != torch.float64 else "payoffs on a smaller scale"
    etas = getattr(config, "eta", None)
    if etas is not None:
        eta = max(etas) if isinstance(etas, (tuple, list)) else float(etas)
        grow, what = lambda total: t * total * max(eta, 1.0), "FTRL's cumulative utilities times eta"
    else:
        grow, what = lambda total: 2.0 * (t + 1) * total, f"cumulative regrets of {name}"
    # (the extent's bound first: where it passes, so does the exact total, read only otherwise)
    if grow(extent.upper) > limit and (bound := grow(extent.total)) > limit:
        scale = f"(payoffs summing to {extent.total:.3g} in absolute value)"
        return (f"{what} reach up to {bound:.3g} {where} {scale}, past {_name(dtype)} range "
                f"({info.max:.2g} / {HEADROOM:g}); {fix}")
    averaging, delay = getattr(config, "averaging", "uniform"), getattr(config, "delay", 0)
    if getattr(config, "gamma_end", None) is not None:
        weights = float(t)
    elif averaging == "power":
        gammas = config.gamma if isinstance(config.gamma, (tuple, list)) else (config.gamma,)
        weights = max(_power_sum(t - delay, float(g)) for g in gammas)
    else:
        weights = float(t) * (t if averaging == "linear" else 1)
    if weights > limit:
        return (f"the average strategy's weights of {name} ({averaging} averaging) sum to {weights:.3g} {where}, "
                f"past {_name(dtype)} range ({info.max:.2g} / {HEADROOM:g}); fewer iterations, a smaller gamma or float64")
    return None


def check(problem: str | None) -> None:
    """Raise a problem found by `payoff_problem` or `horizon_problem` as a `TensorCFRError`."""
    if problem is not None:
        raise TensorCFRError(problem)


def non_finite(named: dict[str, torch.Tensor]) -> str | None:
    """The name of the first tensor of `named` holding a NaN or an infinity, or None.

    Example:
        >>> non_finite({"regrets of player 0": torch.zeros(3), "average of player 1": torch.tensor([1.0, float("inf")])})
        'average of player 1'
    """
    for name, t in named.items():
        if t.is_floating_point() and not all_finite(t):  # (no bool copy: Dudo(6,2,2)'s would take 2 GB)
            return name
    return None
