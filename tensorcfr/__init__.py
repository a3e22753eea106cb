"""tensorcfr: solve two-player zero-sum imperfect-information games with CFR as tensor ops.

Example:
    >>> import tensorcfr
    >>> solver = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> solver.step(1000)
    >>> ev = solver.evaluate()["average"]
    >>> abs(ev.game_value.item() + 1 / 18) < 1e-3, ev.exploitability.item() < 1e-3
    (True, True)
"""

from . import continuation  # noqa: F401  (registers Dudo's factory with games.make)
from .compiled import CompiledGame
from .compiler import compile
from .errors import TensorCFRError
from .evaluation import Evaluation, Policy, best_response_value, evaluate
from .iteration import IterationState, iterate
from .memory import keep_freed_memory
from .normal_form import RegretMatching
from .payoff import PayoffOperator
from .protocol import IterativeSolver
from .rules import PRESETS, CFRConfig, FTRLConfig, Scalars, algorithms, make_config
from .solvers import Solver
from .training import TrainOptions, train
from .treeplex import Treeplex, dilated_entropy_weights

__version__ = "0.1.0"

__all__ = [
    "CFRConfig", "CompiledGame", "Evaluation", "FTRLConfig", "IterationState", "IterativeSolver", "PRESETS",
    "PayoffOperator", "Policy", "RegretMatching", "Scalars", "Solver", "TensorCFRError", "TrainOptions", "Treeplex",
    "algorithms", "best_response_value", "compile", "dilated_entropy_weights", "evaluate", "iterate",
    "keep_freed_memory", "make_config", "train",
]
