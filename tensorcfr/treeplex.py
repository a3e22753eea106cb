"""Tensor operations over one player's treeplex and the sparse payoff matrix.

These are the building blocks every solver and the evaluation share (DESIGN.md §2): a
per-infoset normalisation (regret matching), the top-down pass to the sequence form, the
sparse counterfactual-value mat-vec, and the bottom-up passes (expected value under a
strategy, or best response). Python loops run over treeplex levels only.

Per-sequence tensors are [B, S] with column 0 the empty sequence; per-infoset ones [B, I].
Reductions over an infoset's actions are ragged segment sums (`index_add_`), which on the CPU
add in a fixed order, so batch members are bit-identical to solo runs.

Example:
    >>> import torch, tensorcfr
    >>> from tensorcfr import treeplex as T
    >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
    >>> sigma = T.normalize(tp, torch.zeros(1, tp.num_sequences, dtype=torch.float64))
    >>> T.sequence_form(tp, sigma)[0, :3].tolist()
    [1.0, 0.5, 0.5]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch

from .compiled import CompiledGame, Treeplex


def segment_sum(tp: Treeplex, values: torch.Tensor) -> torch.Tensor:
    """Sum `values` [B, S] over each infoset's sequences -> [B, I]."""
    out = values.new_zeros(values.shape[0], tp.num_infosets)
    return out.index_add_(1, tp.slot_infoset, values[:, 1:])


def normalize(tp: Treeplex, weights: torch.Tensor) -> torch.Tensor:
    """Behavioural strategy proportional to `weights` [B, S] (>= 0); uniform where they sum to 0.

    Regret matching is `normalize(tp, regrets.clamp(min=0))`; the average strategy is
    `normalize(tp, cumulative sequence-form weights)`. Column 0 of the result is 1.
    """
    total = segment_sum(tp, weights)[:, tp.slot_infoset]  # [B, S-1]
    positive = total > 0
    out = torch.empty_like(weights)
    out[:, 0] = 1.0
    # where the total is 0 the quotient is 0/0, which the outer where discards
    torch.where(positive, weights[:, 1:] / total, tp.uniform(weights.dtype), out=out[:, 1:])
    return out


def sequence_form(tp: Treeplex, sigma: torch.Tensor) -> torch.Tensor:
    """Realisation plan x [B, S] of a behavioural strategy sigma [B, S]: top-down per level."""
    x = torch.empty_like(sigma)
    x[:, 0] = 1.0
    for lv in tp.levels:
        torch.mul(x.index_select(1, lv.seq_parent), sigma[:, lv.s0:lv.s1], out=x[:, lv.s0:lv.s1])
    return x


def bottom_up(tp: Treeplex, g: torch.Tensor, sigma: torch.Tensor | None = None):
    """Values of sequences and infosets from counterfactual values g [B, S], deepest level first.

    With `sigma` [B, S]: q(j,a) = g(j,a) + sum of child infoset values, v(j) = sum_a sigma q.
    With `sigma=None`: best response, v(j) = max_a q(j,a).
    Returns (q [B, S], v [B, I]); q[:, 0] is the value of the whole treeplex.
    """
    batch = max(g.shape[0], 1 if sigma is None else sigma.shape[0])
    q = g.expand(batch, -1).clone()
    # filled once, each level reduced into its own columns: two kernels a level fewer than a
    # fresh [B, n] per level copied in (what a small game's iteration is made of)
    v = q.new_full((batch, tp.num_infosets), -torch.inf) if sigma is None else q.new_zeros(batch, tp.num_infosets)
    for lv in reversed(tp.levels):
        ql, vl = q[:, lv.s0:lv.s1], v[:, lv.i0:lv.i1]
        if sigma is None:
            vl.scatter_reduce_(1, lv.segment.expand(batch, -1), ql, "amax")
        else:
            vl.index_add_(1, lv.segment, sigma[:, lv.s0:lv.s1] * ql)
        q.index_add_(1, lv.parent, vl)
    return q, v


def softmax_bottom_up(tp: Treeplex, u: torch.Tensor, temperature: torch.Tensor):
    """Maximiser of <u, x> + sum_j tau_j x[p_j] H(b_j) over the treeplex (H the entropy of the
    behavioural strategy b_j at infoset j): the best response to utilities u [B, S]
    regularised by the dilated entropy, with temperatures tau [B or 1, I] > 0.

    Deepest level first, per infoset: Q(j,a) = u(j,a) + the values of the infosets below (j,a),
    b(j,.) = softmax(Q(j,.) / tau_j) and V(j) = tau_j logsumexp(Q(j,.) / tau_j), which flows
    into the parent sequence. Shifting by the per-infoset maximum keeps it finite at any scale.
    Returns (behavioural strategy [B, S] with column 0 = 1, value [B] of the whole treeplex).

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> b, _ = softmax_bottom_up(tp, torch.zeros(1, tp.num_sequences), torch.ones(1, tp.num_infosets))
        >>> [round(v, 4) for v in b[0, :3].tolist()]  # "pass" leads to one more infoset's entropy
        [1.0, 0.6667, 0.3333]
    """
    batch = max(u.shape[0], temperature.shape[0])
    q = u.expand(batch, -1).clone()
    sigma = torch.empty_like(q)
    sigma[:, 0] = 1.0
    for lv in reversed(tp.levels):
        tau = temperature[:, lv.i0:lv.i1]  # [B, n] n = infosets of the level
        z = q[:, lv.s0:lv.s1] / tau.index_select(1, lv.segment)  # [B, m] m = sequences of the level
        top = z.new_full((batch, lv.i1 - lv.i0), -torch.inf).scatter_reduce_(1, lv.segment.expand(batch, -1), z, "amax")
        e = torch.exp(z - top.index_select(1, lv.segment))  # [B, m], in (0, 1]
        total = e.new_zeros(batch, lv.i1 - lv.i0).index_add_(1, lv.segment, e)  # [B, n], >= 1
        torch.div(e, total.index_select(1, lv.segment), out=sigma[:, lv.s0:lv.s1])
        q.index_add_(1, lv.parent, tau * (top + torch.log(total)))
    return sigma, q[:, 0]


@dataclass(frozen=True, eq=False)
class PayoffOperator:
    """The sparse payoff matrix in the orientation of each player, in a chosen dtype.

    `cfv(p, x_other)` [B, S_p] is player p's counterfactual value of each of its sequences
    against the other player's realisation plan: A @ y for player 0, -A^T @ x for player 1.
    With one payoff vector the matrix is kept as CSR in each orientation (a multi-threaded
    sparse mat-mul on the CPU, cuSPARSE on a GPU, each row summed in a fixed order); a batch of
    payoff vectors, or `gather=True`, uses gathers and an `index_add_` over the nonzeros (the
    form `torch.compile` can fuse into the rest of an iteration; sparse tensors it cannot).

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("kuhn")
        >>> op = PayoffOperator.of(cg, torch.float64)
        >>> y = torch.zeros(1, cg.treeplexes[1].num_sequences, dtype=torch.float64)
        >>> op.cfv(0, y).abs().sum().item()
        0.0
    """

    sizes: tuple[int, int]  # S_0, S_1
    csr: tuple[torch.Tensor, torch.Tensor] | None = None  # [S_p, S_other] sparse CSR, when B == 1
    # with a batch of payoff vectors instead (None with CSR, to keep one copy of the matrix):
    rows: tuple[torch.Tensor, torch.Tensor] | None = None  # [Z] int64: own sequence of each nonzero
    cols: tuple[torch.Tensor, torch.Tensor] | None = None  # [Z] int64: the other player's sequence
    vals: tuple[torch.Tensor, torch.Tensor] | None = None  # [B, Z] payoff in each player's own sign

    @staticmethod
    def of(cg: CompiledGame, dtype: torch.dtype, gather: bool = False) -> "PayoffOperator":
        a = cg.payoff.to(dtype)  # [B, Z]
        s0, s1 = cg.payoff_seq[0], cg.payoff_seq[1]
        sizes = (cg.treeplexes[0].num_sequences, cg.treeplexes[1].num_sequences)
        if a.shape[0] == 1 and not gather:
            # the compiler sorts the nonzeros by (s0, s1): player 0's CSR shares its arrays, and a
            # stable sort by s1 alone orders them for player 1
            by_s1 = torch.argsort(s1, stable=True)  # [Z]
            csr1 = _csr(s1[by_s1], s0[by_s1], a[0][by_s1].neg_(), sizes[::-1])
            del by_s1
            return PayoffOperator(sizes, csr=(_csr(s0, s1, a[0], sizes), csr1))
        s0, s1 = s0.long(), s1.long()  # index_add_ is slow with int32 indices on the CPU
        return PayoffOperator(sizes, rows=(s0, s1), cols=(s1, s0), vals=(a, -a))

    def cfv(self, player: int, x_other: torch.Tensor) -> torch.Tensor:
        if self.csr is not None:
            a = self.csr[player]
            out = x_other.new_empty(x_other.shape[0], a.shape[0])  # [B, S_p]
            for b in range(x_other.shape[0]):  # per batch member: a column is a view, x_other.T a copy
                torch.mm(a, x_other[b].reshape(-1, 1), out=out[b].view(-1, 1))  # (2x faster on the CPU)
            return out
        vals = self.vals[player] * x_other.index_select(1, self.cols[player])  # [B, Z]
        out = vals.new_zeros(vals.shape[0], self.sizes[player])
        return out.index_add_(1, self.rows[player], vals)

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x^T A y [B]: player 0's expected payoff."""
        if self.csr is not None:
            return (x * self.cfv(0, y)).sum(1)
        return (self.vals[0] * x.index_select(1, self.rows[0]) * y.index_select(1, self.cols[0])).sum(1)


def _csr(rows: torch.Tensor, cols: torch.Tensor, vals: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    """CSR matrix [shape] from COO triplets [Z] sorted by row, then column (sorted here if not)."""
    if not _row_major(rows, cols):
        order = torch.argsort(rows.long() * shape[1] + cols.long())
        rows, cols, vals = rows[order], cols[order], vals[order]
    idx = torch.int32 if max(shape[1], len(cols)) < 2 ** 31 else torch.int64  # int32: less to read per nonzero
    crow = torch.zeros(shape[0] + 1, dtype=idx, device=rows.device)
    crow[1:] = torch.cumsum(torch.bincount(rows, minlength=shape[0]), 0)
    with warnings.catch_warnings():  # "sparse CSR support is in beta": it is what we measured
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, cols.to(idx), vals, shape, check_invariants=False)


def _row_major(rows: torch.Tensor, cols: torch.Tensor, chunk: int = 1 << 24) -> bool:
    """Whether (rows, cols) [Z] are sorted by row, then column (checked in chunks: no [Z] temporaries)."""
    for k in range(0, len(rows), chunk):
        r, c = rows[k:k + chunk + 1], cols[k:k + chunk + 1]
        dr = r[1:] - r[:-1]
        if (dr < 0).any() or ((dr == 0) & (c[1:] < c[:-1])).any():
            return False
    return True
