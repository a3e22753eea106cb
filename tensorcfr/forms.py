"""The compiled forms: one interface, two tensor layouts of a game.

A *form* is how a compiled game lays out its two decision spaces (treeplexes) and its payoff
in tensors. tensorcfr has two, and both implement the interface below, so the update rules,
the iteration skeleton, evaluation, sampling, checkpoints, the distributed operator and the
CLI work on either without asking which one they have:

- ``generic`` (`compiled.CompiledGame`, `treeplex.Treeplex`, `payoff.PayoffOperator`): any
  game. One sequence per (infoset, action); the payoff is one sparse matrix whose nonzeros are
  the terminal histories' (player 0's sequence, player 1's sequence, chance × utility).
- ``public`` (`public.PublicCompiledGame`, `public.PublicTreeplex`,
  `public.PublicPayoffOperator`): games whose private information is dealt once at the start
  (Kuhn, OCP, Leduc, Dudo, Liar's Dice). Every per-sequence tensor is [public sequence ×
  private type]; the payoff is a small [T0, T1] matrix per payoff class of terminal public
  nodes, so memory grows with public nodes × types, not with histories.

Both compile through the same checks (`games/checks.py`: chance sums, zero-sum, legal actions,
perfect recall), and a conformance suite (tests/test_forms.py) holds them equal: sizes, best
responses and every preset's first 25 iterations to 1e-12.

Which form `form="auto"` takes — the same rule for `tensorcfr.compile`, `tensorcfr.Solver`
and `tensorcfr solve` — is `choose`: see its docstring for the rule and the measurements
behind it (experiments/form_rule.py).

Example:
    >>> import tensorcfr
    >>> choose(["leduc"]).name, choose(["dudo(4,2,2)"]).name, choose(["random(seed=1)"]).name
    ('generic', 'public', 'generic')
    >>> isinstance(tensorcfr.compile("kuhn", form="public"), CompiledForm)
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import torch

import games as games_pkg
from games import Game, GameError

from .errors import TensorCFRError

NAMES = ("generic", "public", "auto")  # what `form=` accepts


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

    def normalize(self, weights: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """[B, S] -> [B, S]: each infoset's weights divided by their sum (uniform where it is 0)."""

    def sequence_form(self, sigma: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Behavioural strategy [B, S] -> realisation plan [B, S] (top-down products)."""

    def bottom_up(self, g: torch.Tensor, sigma: torch.Tensor | None = None, inplace: bool = False):
        """Counterfactual values [B, S] -> (values of the infosets under `sigma`, or their best
        responses with sigma=None) pushed into their parent sequences, bottom-up."""

    def instantaneous_regret(self, g: torch.Tensor, sigma: torch.Tensor, inplace: bool = False) -> torch.Tensor:
        """[B, S]: each sequence's counterfactual value less its infoset's value under `sigma`."""

    def softmax(self, u: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
        """[B, S]: the dilated-entropy regularised best response to utilities `u` (FTRL)."""

    def entropy_weights(self, scheme: str = "unit") -> torch.Tensor:
        """[I]: the dilated entropy's per-infoset weights (`treeplex.WEIGHTS`)."""

    def uniform(self, dtype: torch.dtype) -> torch.Tensor:
        """[1, S]: the uniform behavioural strategy."""

    def infosets(self):
        """(index, key, action names) of every infoset."""

    def tensors(self) -> dict[str, torch.Tensor]:
        """The index tensors (what a checkpoint's identity and the memory estimate read)."""

    def to(self, device) -> "DecisionSpace":
        """A copy on `device`."""


@runtime_checkable
class Operator(Protocol):
    """The payoff as a bilinear operator: player 0's payoff is x0ᵀ A x1, player 1's its negation."""

    def cfv(self, player: int, x_other: torch.Tensor) -> torch.Tensor:
        """[B, S_player]: counterfactual values of `player`'s sequences against the other's plan [B, S_other]."""

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """[B]: player 0's expected payoff of plans x [B, S0] and y [B, S1]."""


@runtime_checkable
class CompiledForm(Protocol):
    """A compiled game in one form: frozen, on one device, a batch of payoff vectors over one tree."""

    form: str  # "generic" or "public": for display, files and run identities only
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

    def block(self, rank: int, world: int) -> "CompiledForm":
        """A copy holding only rank's block of the payoff of `world` ranks (`distributed.py`)."""

    def payoff_bytes(self, dtype: torch.dtype) -> int:
        """Bytes the payoff operator takes in `dtype` on the device (`sizes.device_estimate_bytes`)."""

    def to(self, device) -> "CompiledForm":
        """A copy on `device`."""


@dataclass(frozen=True)
class Form:
    """A layout: its name, which games it takes, and its compile walk."""

    name: str
    summary: str
    takes: Callable[[Game], bool]  # whether a game has this form
    compile: Callable[..., Any]  # (members, **keywords) -> CompiledForm

    def __repr__(self) -> str:
        return f"<form {self.name}>"


def _takes_any(game: Game) -> bool:
    return True


def _takes_public(game: Game) -> bool:
    from .public import has_public_form
    return has_public_form(game)


def _compile_public(members, **_):
    from .public import compile_public
    return compile_public(members)


def _compile_generic(members, **kw):
    from .compiler import compile_generic
    return compile_generic(members, **kw)


FORMS: dict[str, Form] = {
    "generic": Form("generic", "one sparse payoff matrix over sequences; any game", _takes_any, _compile_generic),
    "public": Form("public", "[public sequence x private type] tensors; games dealt once", _takes_public,
                   _compile_public),
}

# `choose`'s threshold: the public-tree form from this many histories (experiments/form_rule.py)
PUBLIC_FROM_HISTORIES = 1_000_000


def members_of(game) -> list[Game]:
    """The games of a spec, a `Game`, or a list of them, made (a `TensorCFRError` for a bad spec)."""
    members = list(game) if isinstance(game, (list, tuple)) else [game]
    if not members:
        raise TensorCFRError("compile: empty list of games")
    try:
        return [games_pkg.make(g) for g in members]
    except GameError as e:
        raise TensorCFRError(str(e)) from None


def choose(game: str | Game | Sequence[str | Game], form: str = "auto", sampling: bool = False,
           max_histories: int | None = None, max_memory: int | str | None = "auto", generic_only: bool = False) -> Form:
    """The form a game (or a batch over one tree) is compiled in: `form` itself when it names
    one, else the rule of `form="auto"`, which `tensorcfr.compile`, `tensorcfr.Solver` and
    `tensorcfr solve` share:

    - the generic form for a game without a public-tree form, for Monte-Carlo sampling
      (`sampling=True`: the chance tree it draws from exists in the generic form; ask for
      `form="public"` to sample deals of private types instead), and where the caller asks
      for what only the generic form has (`generic_only`: `compile`'s method, nodes, cache);
    - the public-tree form where the generic one would pass `max_histories` or `max_memory`
      (by the game's closed-form size, `sizes.walk_limit`); where the public form would pass
      them too, its own limit's error (`sizes.public_limit`);
    - the public-tree form from `PUBLIC_FROM_HISTORIES` histories (`Game.size_hint`; a game
      without a closed-form size is small) and where its deal is ranked (OCP from 256 cards:
      no table of pairs of types, `public.RANKED_MIN_PAIRS`);
    - the generic form otherwise.

    Measured (experiments/form_rule.py: one thread, CFR+, float64, ms an iteration, generic /
    public): Kuhn 0.13 / 0.25, Leduc 0.24 / 0.43, Dudo(4,1,2) 1.09 / 1.29, Liar's Dice with two
    3-faced dice each (663,511 histories) 1.00 / 1.27; Dudo(5,1,2) (4.9M) 14.8 / 8.0, Liar's
    Dice with 8 faces (8.4M) 23.3 / 12.9, Dudo(4,2,2) 31.2 / 17.4; OCP(256), ranked, 0.57 / 0.29.

    Example:
        >>> choose("kuhn").name, choose("kuhn", form="public").name, choose("dudo(5,2,2)").name
        ('generic', 'public', 'public')
    """
    if form not in NAMES:
        raise TensorCFRError(f"form must be one of {', '.join(NAMES)}, got {form!r}")
    if form != "auto":
        return FORMS[form]
    members = members_of(game)
    # `public_form` first: it is read without building the vectorised form, which for a game
    # past every limit may itself be past them (dudo(100,5,5)'s would enumerate 8e15 deals)
    if sampling or generic_only or not all(getattr(g, "public_form", False) for g in members):
        return FORMS["generic"]
    from .sizes import public_limit, walk_limit

    try:
        for g in members:
            walk_limit(g.name, g.size_hint(), "vectorized", max_histories, max_memory)
    except TensorCFRError:
        for g in members:  # past the limits in the public form too: say so, in its terms
            public_limit(g.name, g.public_size_hint(), g.size_hint(), max_histories, max_memory)
        if all(_takes_public(g) for g in members):
            return FORMS["public"]
        raise
    if not all(_takes_public(g) for g in members):
        return FORMS["generic"]
    hint = members[0].size_hint()
    return FORMS["public"] if (hint is not None and hint[0] >= PUBLIC_FROM_HISTORIES) or _ranked(members[0]) \
        else FORMS["generic"]


def _ranked(game: Game) -> bool:
    """Whether the public form of `game` takes its ranked deal (`VectorGame.ranked_deal`)."""
    from .public import RANKED_MIN_PAIRS
    from games.vector import vector_form

    deal = vector_form(game).ranked_deal()
    return deal is not None and deal[0] ** 2 >= RANKED_MIN_PAIRS
