"""The compiled forms: one interface, two tensor layouts of a game.

A *form* is how a compiled game lays out its two decision spaces (treeplexes) and its payoff
in tensors. tensorcfr has two, and both implement the interface below, so the update rules,
the iteration skeleton, evaluation, sampling, checkpoints, the distributed operator and the
CLI work on either without asking which one they have:

- ``generic`` (`forms.generic.CompiledGame`, `spaces.treeplex.Treeplex`,
  `operators.payoff.PayoffOperator`): any game. One sequence per (infoset, action); the payoff
  is one sparse matrix whose nonzeros are the terminal histories' (player 0's sequence,
  player 1's sequence, chance × utility).
- ``public`` (`forms.public.PublicCompiledGame`, `spaces.public.PublicTreeplex`,
  `operators.public.PublicPayoffOperator`): games whose private information is dealt once at
  the start (Kuhn, OCP, Leduc, Dudo, Liar's Dice). Every per-sequence tensor is [public sequence ×
  private type]; the payoff is a small [T0, T1] matrix per payoff class of terminal public
  nodes, so memory grows with public nodes × types, not with histories.

Both compile through the same checks (`games/checks.py`: chance sums, zero-sum, legal actions,
perfect recall), and a conformance suite (tests/test_forms.py) holds them equal on every
shipped game with a public form and on random games dealt once: sizes; best responses to
1e-12; every preset's first 25 iterations, their evaluations to 1e-12 and their iterates to
1e-11 of their scale (1e-10 for strategies: each form sums in its own order, and the rules
amplify that rounding).

Each form's compile walk (`CompileWalk`) lives in `tensorcfr.compiler` (`generic.py`,
`public.py`); which form `form="auto"` takes — the same rule for `tensorcfr.compile`,
`tensorcfr.Solver` and `tensorcfr solve` — is `tensorcfr.compiler.choose` (its docstring has the
rule and the measurements behind it, experiments/form_rule.py).

Example:
    >>> import tensorcfr
    >>> isinstance(tensorcfr.compile("kuhn", form="public"), CompiledForm)
    True
    >>> [isinstance(w, CompileWalk) for w in tensorcfr.compiler.FORMS.values()]
    [True, True]
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

import torch

from tensorcfr.games import Game


@runtime_checkable
class DecisionSpace(Protocol):
    """One player's sequence-form decision space (a treeplex), as the solvers use it.

    Per-sequence tensors are [B, S] (B batch members, S sequences, column 0 the empty
    sequence); per-infoset ones [B, I]. Every pass runs level by level with a few tensor calls
    per level, never a Python loop over infosets or sequences.
    """

    player: int
    num_infosets: int
    num_sequences: int

    def normalize(self, weights: torch.Tensor, out: torch.Tensor | None = None, head: bool = True) -> torch.Tensor:
        """[B, S] -> [B, S]: each infoset's weights divided by their sum (uniform where it is 0);
        column 0 is 1, written unless `head` is False (`out` holds a strategy already)."""

    def sequence_form(self, sigma: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Behavioural strategy [B, S] -> realisation plan [B, S] (top-down products)."""

    def averaged_plan(self, sigma: torch.Tensor, average: torch.Tensor, weight, discount=None,
                      out: torch.Tensor | None = None) -> torch.Tensor | None:
        """The realisation plan [B, S] of sigma (in `out` where given), with `average` [B, S] times
        `discount` (where not None) plus the plan times `weight`, in one fused walk; None where
        the space has none."""

    def bottom_up(self, g: torch.Tensor, sigma: torch.Tensor | None = None, inplace: bool = False,
                  root: bool = True, infosets: bool = True):
        """Counterfactual values [B, S] -> (values of the infosets under `sigma`, or their best
        responses with sigma=None) pushed into their parent sequences, bottom-up; with `infosets`
        False the infosets' values may be left out (None) where nothing reads them."""

    def instantaneous_regret(self, g: torch.Tensor, sigma: torch.Tensor, inplace: bool = False) -> torch.Tensor:
        """[B, S]: each sequence's counterfactual value less its infoset's value under `sigma`."""

    def infoset_gaps(self, q: torch.Tensor, v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """[B, I]: x[parent(j)] v_j - sum_a x(j, a) q(j, a) at each infoset j, from a best
        response's `bottom_up` (q [B, S], v [B, I], both the call's to overwrite) and the plan x
        [B, S]: what the best response gains at j, times `infoset_weights` (j's twins' too)."""

    def regret_step(self, g: torch.Tensor, sigma: torch.Tensor, regret: torch.Tensor, positive, negative,
                    plus: bool, predictive: bool, out: torch.Tensor | None = None) -> torch.Tensor | None:
        """The regret-matching family's next strategy [B, S] from values g against sigma, the
        regrets [B, S] updated in place, in one fused walk (into `out`, which may be sigma);
        None where the space has none."""

    def softmax(self, u: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
        """[B, S]: the dilated-entropy regularised best response to utilities `u` (FTRL)."""

    def entropy_weights(self, scheme: str = "unit") -> torch.Tensor:
        """[I]: the dilated entropy's per-infoset weights (`treeplex.WEIGHTS`)."""

    def at_sequences(self, values: torch.Tensor) -> torch.Tensor:
        """[B, S]: per-infoset `values` [B, I] given to each infoset's sequences (the empty
        sequence gets 0)."""

    def uniform(self, dtype: torch.dtype) -> torch.Tensor:
        """[1, S]: the uniform behavioural strategy."""

    def segment_sum(self, values: torch.Tensor) -> torch.Tensor:
        """[B, S] -> [B, I]: each infoset's sum of its sequences' entries."""

    def reachable(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1, S]: 1 at the sequences of infosets chance can reach, 0 at the others (the
        public-tree form's types that a deal rules out); None where all are reachable."""

    def sequence_weights(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1, S]: how many sequences of the game each stands for, where the space deals one
        card of each class of symmetric ones (hold'em's suit isomorphism); None: one each."""

    def infoset_weights(self, dtype: torch.dtype) -> torch.Tensor | None:
        """[1, I]: `sequence_weights` by infoset (an infoset's sequences share its weight); None:
        one each."""

    def path_table_bytes(self, batch: int, dtype_bytes: int) -> int:
        """Bytes a GPU's launch-bound passes keep and take for a table of each sequence's path
        (what the device estimate adds); 0 where the space has none."""

    def weighted_dot(self, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        """[B]: the sum over sequences of x [B, S] times g [B, S] times `sequence_weights`,
        without a [B, S] temporary (a game value: x a plan, g its counterfactual values)."""

    def infosets(self):
        """(index, key, action names) of every infoset."""

    def tensors(self) -> dict[str, torch.Tensor]:
        """The index tensors (what a checkpoint's identity and the memory estimate read)."""

    def to(self, device) -> "DecisionSpace":
        """A copy on `device`."""


@runtime_checkable
class Operator(Protocol):
    """The payoff as a bilinear operator: player 0's payoff is x0ᵀ A x1, player 1's its negation."""

    def cfv(self, player: int, x_other: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """[B, S_player]: counterfactual values of `player`'s sequences against the other's plan
        [B, S_other]. `out`, where given, is a [B, S_player] array the values may be written into
        (the iteration's workspace on the CPU, so that no large array is freed and made again each
        iteration): the caller takes the returned tensor, which may be `out` or a new one."""

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """[B]: player 0's expected payoff of plans x [B, S0] and y [B, S1]."""


class PayoffExtent:
    """How large the payoff's numbers are, what `run.numbers` checks against a dtype.

    total:    the largest sum of absolute payoff entries over the batch members (no
              counterfactual value can exceed it: plans and chance weigh each entry by at most 1);
              given as a number, or as a function that computes it, called once, when `total`
              is first read
    largest:  the largest absolute entry; smallest: the smallest nonzero one (0 if none)
    where:    names the place of the "largest" or "smallest" entry in the game (called only
              for an error message: naming costs a pass over the sequence names)
    bound:    an upper bound of total, cheap to know (None: total itself). The checks read it
              first and the exact total only where the bound alone would refuse: a flop spot's
              exact total takes 2-3 s of its solver's start, its bound milliseconds

    Example:
        >>> import tensorcfr
        >>> e = tensorcfr.compile("kuhn").payoff_extent()
        >>> e.total, round(e.largest * 6, 12)  # the largest: a deal's chance 1/6 times a payoff of 2
        (7.0, 2.0)
        >>> lazy = PayoffExtent(lambda: 7.0, 2.0, 1.0, bound=9.0)
        >>> lazy.upper, lazy.total, lazy.upper
        (9.0, 7.0, 7.0)
    """

    def __init__(self, total: float | Callable[[], float], largest: float, smallest: float,
                 where: Callable[[str], str] | None = None, bound: float | None = None):
        self._total, self.largest, self.smallest, self.where, self.bound = total, largest, smallest, where, bound

    @property
    def total(self) -> float:
        """The exact total (counted at the first read where it was given as a function)."""
        if callable(self._total):
            self._total = float(self._total())
        return self._total

    @property
    def upper(self) -> float:
        """At least total: total where it is known (given, or read once), else the bound."""
        return self.bound if callable(self._total) and self.bound is not None else self.total

    def __repr__(self) -> str:
        total = "(not yet counted)" if callable(self._total) else self._total
        return f"PayoffExtent(total={total}, largest={self.largest}, smallest={self.smallest}, bound={self.bound})"

    def at(self, which: str) -> str:
        """"(at PLACE) " of the `which` entry, for a message ("(the largest) " without `where`)."""
        return f"(at {self.where(which)}) " if self.where is not None else f"({'the ' + which}) "


@runtime_checkable
class CompiledForm(Protocol):
    """A compiled game in one form: frozen, on one device, a batch of payoff vectors over one tree."""

    form: str  # "generic" or "public": for display, files and run identities only
    smaller_form: str  # what an error for want of memory suggests instead ("" where nothing smaller exists)
    name: str
    batch_names: tuple[str, ...]
    treeplexes: tuple  # (DecisionSpace, DecisionSpace)

    @property
    def batch_size(self) -> int: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def num_histories(self) -> int: ...

    def sizes(self) -> dict:
        """What `tensorcfr info --json` reports (the same keys in every form, plus the form's own)."""

    def infoset_players(self) -> dict[str, int]:
        """{infoset key: the player who moves there}."""

    def operator(self, dtype: torch.dtype, gather: bool = False) -> Operator:
        """The payoff operator in `dtype` (`gather`: the index form a captured iteration wants)."""

    def estimator(self, scheme: str, samples: int, dtype: torch.dtype, epsilon: float):
        """The Monte-Carlo estimator of counterfactual values for sampling `scheme`
        ("chance", "external", "outcome"; `sampling.Estimator`'s interface)."""

    def default_samples(self, update_scope: str) -> int:
        """The samples per estimate a sampled run draws when none are asked for."""

    def block(self, rank: int, world: int) -> "CompiledForm":
        """A copy holding only rank's block of the payoff of `world` ranks (`operators/distributed.py`)."""

    @property
    def payoff_entries(self) -> int:
        """The payoff's size a batch member (nonzeros, or entries of the class matrices): what
        the capture code sizes its choices by."""
        ...

    def payoff_bytes(self, dtype: torch.dtype) -> int:
        """Bytes the payoff operator takes in `dtype` on the device (`sizes.device_estimate_bytes`)."""

    def payoff_extent(self) -> PayoffExtent:
        """The payoff's magnitude (what `run.numbers` checks against the solver's dtype)."""

    def to(self, device) -> "CompiledForm":
        """A copy on `device`."""


@runtime_checkable
class CompileWalk(Protocol):
    """A form's compile walk: which games it takes and how it compiles them (`tensorcfr.compiler.FORMS`)."""

    name: str

    def takes(self, game: Game) -> bool:
        """Whether `game` has this form."""

    def compile(self, members: list[Game], **options) -> CompiledForm:
        """Compile made, checked games (a batch over one tree) with `tensorcfr.compile`'s options."""
