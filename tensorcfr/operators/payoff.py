"""The sparse payoff matrix as an operator: each player's counterfactual values against the
other's realisation plan, in a chosen dtype (docs/concepts.md).

Example:
    >>> import torch, tensorcfr
    >>> from tensorcfr.operators.payoff import PayoffOperator
    >>> cg = tensorcfr.compile("kuhn")
    >>> y = torch.zeros(1, cg.treeplexes[1].num_sequences, dtype=torch.float64)
    >>> PayoffOperator.of(cg, torch.float64).cfv(0, y).abs().sum().item()
    0.0
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from tensorcfr.spaces import segments

if TYPE_CHECKING:
    from tensorcfr.forms.generic import CompiledGame

CSR_MAX_BATCH = 64  # payoff vectors up to which each member gets its own CSR product


def values_array(out: torch.Tensor | None, like: torch.Tensor, rows: int, cols: int,
                 zero: bool = False) -> torch.Tensor:
    """A [rows, cols] array of `like`'s dtype and device for an operator's values: `out` (the
    caller's, `Operator.cfv`) where it is one, contiguous (made 0 where `zero`), else a new one.

    Example:
        >>> buf = torch.ones(2, 3)
        >>> values_array(buf, buf, 2, 3, zero=True) is buf, values_array(buf, buf, 3, 2).shape
        (True, torch.Size([3, 2]))
    """
    if out is not None and out.shape == (rows, cols) and out.dtype == like.dtype and out.device == like.device \
            and out.is_contiguous():
        return out.zero_() if zero else out
    return like.new_zeros(rows, cols) if zero else like.new_empty(rows, cols)


@dataclass(frozen=True, eq=False)
class PayoffOperator:
    """The sparse payoff matrix in the orientation of each player, in a chosen dtype.

    `cfv(p, x_other)` [B, S_p] is player p's counterfactual value of each of its sequences
    against the other player's realisation plan: A @ y for player 0, -A^T @ x for player 1.
    The matrix is kept as CSR in each orientation, one per payoff vector (a multi-threaded
    sparse mat-mul on the CPU, cuSPARSE on a GPU, each row summed in a fixed order, so a batch
    member's values equal its solo run's bit for bit); `gather=True`, or a batch of more than
    `CSR_MAX_BATCH` payoff vectors (one product per member would be launch-bound), uses gathers
    and an `index_add_` over the nonzeros (the form `torch.compile` can fuse into the rest of
    an iteration; sparse tensors it cannot), whose sums may round differently from the CSR
    product's (the CPU's CSR kernel may fuse multiply-adds: measured 5.6e-17 apart on Kuhn).

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("kuhn")
        >>> op = PayoffOperator.of(cg, torch.float64)
        >>> y = torch.zeros(1, cg.treeplexes[1].num_sequences, dtype=torch.float64)
        >>> op.cfv(0, y).abs().sum().item()
        0.0
    """

    sizes: tuple[int, int]  # S_0, S_1
    # per player, one [S_p, S_other] sparse CSR matrix per payoff vector (they share their
    # index arrays), or None in the gather form:
    csr: tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]] | None = None
    # the gather form (None with CSR, to keep one copy of the matrix):
    rows: tuple[torch.Tensor, torch.Tensor] | None = None  # [Z] int64: own sequence of each nonzero
    cols: tuple[torch.Tensor, torch.Tensor] | None = None  # [Z] int64: the other player's sequence
    vals: tuple[torch.Tensor, torch.Tensor] | None = None  # [B, Z] payoff in each player's own sign

    @staticmethod
    def of(cg: "CompiledGame", dtype: torch.dtype, gather: bool = False) -> "PayoffOperator":
        """The operator of `cg` in `dtype`: CSR, unless `gather` or a batch of more than
        `CSR_MAX_BATCH` payoff vectors asks for the gather form. Any form's game gives its own
        operator (`cg.operator`, `forms.Operator`): this is kept for the callers of old."""
        return cg.operator(dtype, gather)

    @staticmethod
    def build(cg: "CompiledGame", dtype: torch.dtype, gather: bool = False) -> "PayoffOperator":
        """The generic form's operator (`CompiledGame.operator`)."""
        a = cg.payoff.to(dtype)  # [B, Z]
        s0, s1 = cg.payoff_seq[0], cg.payoff_seq[1]
        sizes = (cg.treeplexes[0].num_sequences, cg.treeplexes[1].num_sequences)
        if a.shape[0] <= CSR_MAX_BATCH and not gather:
            # the compiler sorts the nonzeros by (s0, s1): player 0's CSR shares its arrays, and a
            # stable sort by s1 alone orders them for player 1
            by_s1 = torch.argsort(s1, stable=True)  # [Z]
            csr1 = tuple(_csr(s1[by_s1], s0[by_s1], a[b][by_s1].neg_(), sizes[::-1]) for b in range(a.shape[0]))
            del by_s1
            return PayoffOperator(sizes, csr=(tuple(_csr(s0, s1, a[b], sizes) for b in range(a.shape[0])), csr1))
        s0, s1 = s0.long(), s1.long()  # index_add_ is slow with int32 indices on the CPU
        return PayoffOperator(sizes, rows=(s0, s1), cols=(s1, s0), vals=(a, -a))

    def cfv(self, player: int, x_other: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        """Player `player`'s counterfactual values [B, S_p] against x_other [B, S_other] (`out`:
        an array the result may be written into, `Operator.cfv`)."""
        if self.csr is not None:
            mats = self.csr[player]  # one matrix, or one per batch member
            # a plan of one member against a batch's matrices gives each member's values, as the
            # gathered products' broadcast does (it gave member 0's alone: a policy of one
            # member evaluated on a batch of games read only the first game)
            batch = max(x_other.shape[0], len(mats))
            out = values_array(out, x_other, batch, self.sizes[player])  # [B, S_p]
            for b in range(batch):  # per batch member: a column is a view, x_other.T a copy
                a, x = mats[b if len(mats) > 1 else 0], x_other[b if x_other.shape[0] > 1 else 0]
                torch.mm(a, x.reshape(-1, 1), out=out[b].view(-1, 1))  # (2x faster on the CPU)
            return out
        vals = self.vals[player] * x_other.index_select(1, self.cols[player])  # [B, Z]
        return segments.sum(self.rows[player], vals, self.sizes[player])  # (no atomics in a deterministic GPU run)

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
