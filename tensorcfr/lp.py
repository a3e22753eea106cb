"""The exact value and an equilibrium of an extensive-form game by the sequence-form linear
program (Koller, Megiddo and von Stengel 1996), solved by scipy's HiGHS on sparse matrices.

With realisation plans x [S0] and y [S1] constrained by E x = e, F y = f (x[0] = 1, and at
every infoset the sequences below it sum to its parent sequence's weight), x, y >= 0, and the
payoff matrix A (player 0's chance-weighted payoffs), player 0's equilibrium plan solves

    max_{x, v}  v[0]   s.t.   E x = e,  F^T v <= A^T x,  x >= 0,  v free

(v the values of player 1's infosets under a best response, v[0] the game value), and the
multipliers of the constraints F^T v <= A^T x are player 1's equilibrium plan y.
For games up to about 10^5 sequences (`MAX_SEQUENCES`).

Example:
    >>> r = solve_lp("kuhn")
    >>> round(r.value, 9), r.nash_conv < 1e-9
    (-0.055555556, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from tensorcfr.forms.generic import CompiledGame
from tensorcfr.compiler import compile as compile_game
from tensorcfr.errors import TensorCFRError
from tensorcfr.evaluation import Evaluation, Policy, evaluate
from tensorcfr.spaces.treeplex import Treeplex, normalize

MAX_SEQUENCES = 200_000  # both players' sequences together; past this HiGHS takes minutes to hours


@dataclass(frozen=True)
class LPResult:
    """The LP's game value (player 0's), the equilibrium as a `Policy`, its exact evaluation
    (`nash_conv` should be ~0: the LP's rounding) and the seconds HiGHS took."""

    value: float
    policy: Policy
    evaluation: Evaluation
    seconds: float

    @property
    def nash_conv(self) -> float:
        return float(self.evaluation.nash_conv[0])


def _constraints(tp: Treeplex):
    """E [I+1, S] (scipy sparse) of one treeplex: row 0 is x[0] = 1, row j+1 says the sequences
    of infoset j sum to its parent sequence's weight."""
    from scipy.sparse import coo_matrix

    n_seq, n_inf = tp.num_sequences, tp.num_infosets
    own = np.arange(1, n_seq)  # every sequence but the empty one belongs to one infoset
    rows = np.concatenate([[0], tp.slot_infoset.cpu().numpy() + 1, np.arange(1, n_inf + 1)])
    cols = np.concatenate([[0], own, tp.infoset_parent.cpu().numpy()])
    vals = np.concatenate([[1.0], np.ones(n_seq - 1), -np.ones(n_inf)])
    return coo_matrix((vals, (rows, cols)), shape=(n_inf + 1, n_seq)).tocsr()


def solve_lp(game: str | CompiledGame, max_sequences: int = MAX_SEQUENCES) -> LPResult:
    """Solve the sequence-form LP of `game` (one payoff vector); see the module docstring."""
    try:
        from scipy.optimize import linprog
        from scipy.sparse import coo_matrix, hstack
    except ImportError:
        raise TensorCFRError("the sequence-form LP needs scipy: pip install scipy") from None
    cg = game if isinstance(game, CompiledGame) else compile_game(game)
    if cg.batch_size != 1:
        raise TensorCFRError("the LP solves one game at a time, not a batch of payoff vectors")
    cg = cg.to("cpu")
    t0, t1 = cg.treeplexes
    s0, s1 = t0.num_sequences, t1.num_sequences
    if s0 + s1 > max_sequences:
        raise TensorCFRError(f"{cg.name}: {s0 + s1:,} sequences, more than the LP's {max_sequences:,}; "
                             "solve it with tensorcfr solve instead")
    rows, cols = (cg.payoff_seq[p].long().numpy() for p in (0, 1))
    a = coo_matrix((cg.payoff[0].numpy(), (rows, cols)), shape=(s0, s1)).tocsr()  # [S0, S1], duplicates summed
    e, f = _constraints(t0), _constraints(t1)  # [I0+1, S0], [I1+1, S1]
    n_v = f.shape[0]
    # variables (x [S0], v [I1+1]); minimise -v[0]
    c = np.zeros(s0 + n_v)
    c[s0] = -1.0
    a_ub = hstack([-a.T, f.T]).tocsr()  # F^T v - A^T x <= 0: [S1, S0 + I1+1]
    a_eq = hstack([e, coo_matrix((e.shape[0], n_v))]).tocsr()
    b_eq = np.zeros(e.shape[0])
    b_eq[0] = 1.0
    bounds = [(0, None)] * s0 + [(None, None)] * n_v
    start = time.perf_counter()
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(s1), A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    seconds = time.perf_counter() - start
    if res.status != 0:
        raise TensorCFRError(f"{cg.name}: the LP did not solve: {res.message}")
    x = torch.tensor(np.maximum(res.x[:s0], 0.0))[None, :]  # [1, S0]
    y = torch.tensor(np.maximum(-res.ineqlin.marginals, 0.0))[None, :]  # [1, S1]: HiGHS's multipliers are <= 0
    policy = Policy(cg, (normalize(t0, x), normalize(t1, y)))  # realisation plans -> behavioural strategies
    return LPResult(float(-res.fun) + 0.0, policy, evaluate(cg, policy), seconds)
