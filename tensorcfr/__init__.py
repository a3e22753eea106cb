"""tensorcfr: solve two-player zero-sum imperfect-information games with CFR as tensor ops.

Example:
    >>> import tensorcfr
    >>> solver = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> solver.step(1000)
    >>> ev = solver.evaluate()["average"]
    >>> abs(ev.game_value.item() + 1 / 18) < 1e-3, ev.exploitability.item() < 1e-3
    (True, True)
"""

from .compiled import CompiledGame, Treeplex
from .compiler import compile
from .errors import TensorCFRError
from .evaluation import Evaluation, Policy, best_response_value, evaluate
from .solvers import PRESETS, CFRConfig, FTRLConfig, Solver, algorithms, dilated_entropy_weights, make_config
from .normal_form import RegretMatching
from .training import train

import games.dudo as _dudo  # noqa: E402
from . import continuation as _continuation  # noqa: E402

_dudo.set_value_provider(_continuation.dudo_value)  # Dudo's payoffs: smaller games solved by tensorcfr

__version__ = "0.1.0"

__all__ = [
    "CFRConfig", "CompiledGame", "Evaluation", "FTRLConfig", "PRESETS", "Policy", "RegretMatching", "Solver", "TensorCFRError",
    "Treeplex", "algorithms", "best_response_value", "compile", "dilated_entropy_weights", "evaluate",
    "make_config", "train",
]
