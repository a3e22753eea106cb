"""tensorcfr: solve two-player zero-sum imperfect-information games with CFR as tensor ops.

The package, by role (each role one interface and its implementations; a role imports only
those listed before it):

    errors, paths, devices, memory   the shared base: errors, cache paths, devices, memory
    forms/        the compiled-form interface (DecisionSpace, Operator, CompiledForm,
                  CompileWalk) and the two compiled games: generic.CompiledGame,
                  public.PublicCompiledGame
    spaces/       decision spaces: treeplex.Treeplex, public.PublicTreeplex; fused kernels
    operators/    payoff operators: payoff.PayoffOperator, public.PublicPayoffOperator,
                  distributed.ShardedOperator; cards.py, hold'em's card-removal showdown
    compiler/     games -> compiled forms: compile and choose (the rule of form="auto"),
                  generic.py and public.py (the walks, with the checks of games/checks.py),
                  chance.py (the chance tree of sampling), sizes.py (limits, estimates)
    updates/      the update rules (rules.py) and their one iteration skeleton (iteration.py),
                  captured (capture.py); specs and setting checks
    sampling/     Monte-Carlo estimators: generic.Estimator, public.PublicEstimator
    evaluation    exact best responses, NashConv, policies; needs no solver
    lp            the exact value by the sequence-form LP
    normal_form   regret-matching procedures on matrix games
    run/          spec.RunSpec (a run's settings, checked once), solver.Solver, training.train,
                  checkpoints, protocol, continuation values
    io/           policy files, Gambit and OpenSpiel interop
    cli/          the command line

Example:
    >>> import tensorcfr
    >>> solver = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> solver.step(1000)
    >>> ev = solver.evaluate()["average"]
    >>> abs(ev.game_value.item() + 1 / 18) < 1e-3, ev.exploitability.item() < 1e-3
    (True, True)
"""

import importlib
import importlib.abc
import importlib.machinery
import os
import sys

from tensorcfr.run import continuation  # noqa: F401  (registers Dudo's factory with games.make)
from tensorcfr.forms.generic import CompiledGame
from tensorcfr.compiler import compile
from tensorcfr.errors import TensorCFRError
from tensorcfr.evaluation import Evaluation, Policy, best_response_value, evaluate
from tensorcfr.updates.iteration import IterationState, iterate
from tensorcfr.memory import keep_freed_memory
from tensorcfr.normal_form import RegretMatching
from tensorcfr.operators.payoff import PayoffOperator
from tensorcfr.run.protocol import IterativeSolver
from tensorcfr.updates.rules import PRESETS, CFRConfig, FTRLConfig, MMDConfig, RTConfig, Scalars, algorithms, make_config
from tensorcfr.run.solver import Solver
from tensorcfr.run.training import TrainOptions, train
from tensorcfr.spaces.treeplex import Treeplex, dilated_entropy_weights

__version__ = "0.1.0"


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A module name that imports as another module: `target(name)` names it, or None."""

    def target(self, name: str) -> str | None:
        raise NotImplementedError

    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self) if self.target(name) else None

    def create_module(self, spec):
        return importlib.import_module(self.target(spec.name))

    def exec_module(self, module):
        pass


class _MovedModules(_Alias):
    """The flat module names of before the package tree (`tensorcfr.solvers`,
    `tensorcfr.interop`, ...) still import: each is the module at its new place."""

    MOVED = {"compiled": "forms.generic", "treeplex": "spaces.treeplex", "fused": "spaces.fused",
             "payoff": "operators.payoff", "distributed": "operators.distributed", "chance": "compiler.chance",
             "sizes": "compiler.sizes", "rules": "updates.rules", "iteration": "updates.iteration",
             "capture": "updates.capture", "specs": "updates.specs", "validate": "updates.validate",
             "public_sampling": "sampling.public", "solvers": "run.solver", "training": "run.training",
             "runs": "run.checkpoints", "protocol": "run.protocol", "continuation": "run.continuation",
             "policy_io": "io.policies", "interop": "io.interop", "play": "cli.play"}

    def target(self, name):
        old = name.partition("tensorcfr.")[2]
        return "tensorcfr." + self.MOVED[old] if name.startswith("tensorcfr.") and old in self.MOVED else None


sys.meta_path.append(_MovedModules())


class _OldGamesName(_Alias):
    """`import games`, the name from before the wheel installed the games as `tensorcfr.games`,
    still imports after `import tensorcfr` (and from a checkout, where the folder sits at the
    top level) and gives the very modules of `tensorcfr.games`: one registry, one `Game` class.
    A user's own package named `games` elsewhere on the path is left alone."""

    def target(self, name):
        if name == "games":
            found = importlib.machinery.PathFinder.find_spec("games")
            ours = os.path.realpath(sys.modules["tensorcfr.games"].__path__[0])
            if found is not None and [os.path.realpath(p) for p in found.submodule_search_locations or []] != [ours]:
                return None
        elif not (name.startswith("games.") and sys.modules.get("games") is sys.modules["tensorcfr.games"]):
            return None
        return "tensorcfr." + name


# first, so that a checkout's top-level games/ folder is not imported a second time under its old name
sys.meta_path.insert(0, _OldGamesName())

__all__ = [
    "CFRConfig", "CompiledGame", "Evaluation", "FTRLConfig", "MMDConfig", "RTConfig", "IterationState",
    "IterativeSolver", "PRESETS", "PayoffOperator", "Policy", "RegretMatching", "Scalars", "Solver",
    "TensorCFRError", "TrainOptions", "Treeplex",
    "algorithms", "best_response_value", "compile", "dilated_entropy_weights", "evaluate", "iterate",
    "keep_freed_memory", "make_config", "train",
]
