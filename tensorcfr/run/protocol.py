"""The interface every iterative solver offers to training, logging, the CLI and the
experiments: `Solver` (tree games) and `normal_form.RegretMatching` (matrix games) both
satisfy it, so callers need no `hasattr` to tell them apart.

Example:
    >>> import tensorcfr
    >>> isinstance(tensorcfr.Solver("kuhn", device="cpu"), IterativeSolver)
    True
    >>> isinstance(tensorcfr.RegretMatching("rps", device="cpu"), IterativeSolver)
    True
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch


@runtime_checkable
class IterativeSolver(Protocol):
    """What `train`, the CLI and the experiments use of a solver."""

    game: Any  # the game (a CompiledGame, or a matrix game); `.name` is its spec
    config: Any  # the resolved algorithm; `.name` is its name
    device: torch.device
    iteration: int
    batch_size: int

    def step(self, n: int = 1) -> None:
        """Run n iterations."""

    def check_numbers(self, iterations: int) -> None:
        """Refuse (a `TensorCFRError`) running to `iterations` in all where a number could leave the dtype."""

    def non_finite(self) -> str | None:
        """The name of the first state tensor holding a NaN or an infinity, or None."""

    def evaluate(self, infoset_gaps: bool = False) -> dict:
        """{"average" | "current": evaluation.Evaluation}: exact figures of both strategies
        (`infoset_gaps`: a hint that `histograms` will follow with this evaluation)."""

    def regret_summary(self) -> dict[str, torch.Tensor]:
        """{name: [B]} the regret figures logged at each evaluation (may be empty)."""

    def histograms(self, member: int = 0, evaluation: dict | None = None,
                   quotients: bool = False) -> dict[str, torch.Tensor]:
        """{name: values} distributions logged as TensorBoard histograms (may be empty), reusing
        what `evaluation` (this iteration's `evaluate`) holds; with `quotients`, values may be
        `histograms.Quotient`s (an array and its divisor, not divided: the training loop's)."""

    def infoset_keys(self) -> list[str]:
        """Every infoset's key."""

    def strategies(self, keys, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
        """{key: {"average" | "current": {action: probability}}} at the infosets `keys`."""

    def policy_tables(self, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
        """{"average" | "current": {infoset key: {action: probability}}}."""

    def infoset_players(self) -> dict[str, int]:
        """{infoset key: the player who moves there}."""

    def member_names(self) -> list[str]:
        """A label per batch member."""

    def describe(self) -> dict:
        """The resolved configuration."""

    def state_dict(self, copy: bool = True) -> dict:
        """Everything the next iterations depend on (`copy=False`: not a snapshot, for saving)."""

    def load_state_dict(self, d: dict) -> None:
        """Continue from `state_dict()`."""
