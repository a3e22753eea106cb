"""Monte-Carlo counterfactual values in the public-tree form: a sample is a deal of private
types, so it touches one type column of each player's [public sequence × type] tensors.

In a game dealt once (`forms/public.py`) chance deals the pair of types (t0, t1) with probability
P(t0, t1) (`PublicCompiledGame.deal`), and everything afterwards is public. A terminal public
node z pays player 0 W_z[t0, t1] = P(t0, t1) · P(public chance on z's path | t0, t1) ·
u0(z, t0, t1), so for a pair drawn with probability P(t0, t1) the estimate

    g~0[e, t0] = sum over z with e0(z) = e of  W_z[t0, t1] / P(t0, t1) · y[e1(z), t1]

(0 on every other column; player 1's likewise, negated, on column t1) is unbiased. The schemes
of `sampling/generic.py`, with the deal as chance's sample:

- **chance**: y is the other player's exact plan on column t1.
- **external**: y is the 0/1 plan of a pure strategy of the other player, one action per public
  infoset of column t1 drawn from its current strategy (its actions on other columns never
  meet this deal, so drawing them would change nothing).
- **outcome**: player p's own pure strategy on column t0 is drawn too, from the exploring
  strategy eps/|A| + (1 - eps) sigma whose plan is x'; each term is divided by x'(e0(z), t0),
  and the average adds the stochastically weighted plan x~ x / (x' P(t0)) on column t0 (P(t0):
  the chance of dealing t0; unbiased for x).

Public chance after the deal (Leduc's board) is not drawn: it stays in W_z as its expectation,
so this estimate varies less than the generic form's chance sampling, which draws the board
too; in games without it (Kuhn, OCP, Dudo, Liar's Dice) the two draw the same estimates.

Cost of one sample: one pass over the Z terminal public nodes and a top-down pass over one
type column of each player (M public sequences), i.e. 1/T_p of player p's sequences and
1/(T0 T1) of the payoff entries (Dudo(4,2,2): 1/10 and 1/100). `update_scope="touched"` then
updates only the columns drawn (`PublicEstimator.touched_values`); "all" updates every sequence
with 0 on the columns not drawn.

Example:
    >>> import torch, tensorcfr
    >>> from tensorcfr.sampling.generic import RandomDraws
    >>> cg = tensorcfr.compile("kuhn", form="public")
    >>> est = PublicEstimator(cg, "chance", samples=1)
    >>> sigma = [tp.normalize(torch.ones(1, tp.num_sequences, dtype=torch.float64)) for tp in cg.treeplexes]
    >>> xs = [tp.sequence_form(s) for tp, s in zip(cg.treeplexes, sigma)]
    >>> g, _ = est.values(0, sigma, xs, RandomDraws(seed=0))
    >>> int((g[:, 1:] != 0).sum())  # one deal: player 0 holds one card, 4 of its 12 sequences see a payoff
    4
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from tensorcfr.errors import TensorCFRError

from tensorcfr.sampling.generic import BY_NAME, EPSILON_DEFAULT, Draws, Touched, check_settings
from tensorcfr.spaces.public import PublicTreeplex

if TYPE_CHECKING:
    from tensorcfr.forms.public import PublicCompiledGame


def _padded(tp: PublicTreeplex):
    """Each public infoset's public sequences padded to the widest: (rows of the [M, T] view
    [U, A], valid [U, A], below the last action [U, A], each sequence's action count [M])."""
    off = tp.infoset_offsets_pub
    n = off.diff()  # [U]
    width = int(n.max()) if len(n) else 1
    a = torch.arange(width, device=off.device)
    rows = (off[:-1, None] - 1 + a).clamp(max=max(tp.num_public_sequences - 1, 0))  # [U, A]
    return rows, a < n[:, None], a < n[:, None] - 1, n[tp.slot_pub]


class PublicEstimator:
    """Sampled counterfactual values of one scheme over a game in the public-tree form; the
    interface of `sampling.Estimator` (`values`, `touched_values`, `entries`).

    Example:
        >>> import torch, tensorcfr
        >>> est = PublicEstimator(tensorcfr.compile("dudo(4,1,1)", form="public"), "external", samples=2)
        >>> est.num_entries  # terminal public nodes times pairs of types
        4080
    """

    def __init__(self, cg: PublicCompiledGame, scheme: str, samples: int = 1, dtype: torch.dtype = torch.float64,
                 epsilon: float = EPSILON_DEFAULT):
        check_settings(scheme, samples, epsilon)
        self.scheme, self.samples, self.epsilon = BY_NAME[scheme], samples, float(epsilon)
        self.spaces = cg.treeplexes
        self.types = tuple(tp.types for tp in self.spaces)
        self.ranked = cg.ranked
        if cg.payoff_weights is None:
            raise TensorCFRError(f"{cg.name}: Monte-Carlo sampling reads the dense payoff matrices, which a card game "
                                 "this large does not keep; solve it exactly (no --sampling)")
        self.weights = cg.payoff_weights.to(dtype)  # [B, K, T0, T1], or [B, K, 2] ranked
        counts = cg.class_offsets.diff()
        self.cls = torch.repeat_interleave(torch.arange(len(counts), device=counts.device), counts)  # [Z] class
        self.seq = cg.terminal_seq  # [2, Z] each terminal's last public sequence per player (0: empty)
        if not self.ranked:
            prob = cg.deal.double().cpu().numpy().reshape(-1)
            self._pairs = np.flatnonzero(prob > 0)  # the pairs t0 T1 + t1 chance deals
            self._cum = np.cumsum(prob[self._pairs])
            self._prob = cg.deal.to(cg.device, dtype)  # [T0, T1]
            self._marginal = (self._prob.sum(1), self._prob.sum(0))  # [T_p] each player's own type
        else:
            n = self.types[0]
            self._marginal = (torch.full((n,), 1 / n, dtype=dtype, device=cg.device),) * 2
        self.entries = 0
        self._pad = [_padded(tp) for tp in self.spaces]
        self._parts: dict = {}

    @property
    def num_entries(self) -> int:
        """The game's payoff entries: terminal public nodes times pairs of types."""
        return int(self.seq.shape[1]) * self.types[0] * self.types[1]

    # -- the draws ------------------------------------------------------------------------------
    def deals(self, draws: Draws) -> tuple[torch.Tensor, torch.Tensor]:
        """The pairs of types (t0 [K], t1 [K]) of the samples, by inverse CDF: one uniform per
        sample (`draws.chance(k, 0)`), or two for a ranked deal (rank t0 uniform among n, t1
        among the n - 1 others: `draws.chance(k, 0)` and `draws.chance(k, 1)`)."""
        K = self.samples
        k = torch.arange(K)
        if self.ranked:
            n = self.types[0]
            u = draws.chance(torch.cat([k, k]), torch.cat([k * 0, k * 0 + 1])).cpu().double().numpy()
            t0 = np.minimum((u[:K] * n).astype(np.int64), n - 1)
            t1 = np.minimum((u[K:] * (n - 1)).astype(np.int64), n - 2)
            t1 = t1 + (t1 >= t0)
        else:
            u = draws.chance(k, k * 0).cpu().double().numpy()
            # the number of pairs (all but the last) whose cumulative probability is at most u
            j = self._pairs[np.minimum(np.searchsorted(self._cum, u, side="right"), len(self._pairs) - 1)]
            t0, t1 = np.divmod(j, self.types[1])
        dev = self.seq.device
        return torch.from_numpy(t0).to(dev), torch.from_numpy(t1).to(dev)

    # -- the estimate ---------------------------------------------------------------------------
    def values(self, p: int, sigma: list[torch.Tensor], xs: list[torch.Tensor], draws: Draws):
        """Player p's sampled values g~ [B, S_p] (0 off the columns drawn) against sigma[1-p]
        (plan xs[1-p]), the mean of `samples` estimates, and the plan [B, S_p] it adds to its
        average (the exact xs[p]; outcome sampling: the stochastically weighted one)."""
        own, g, avg = self._estimate(p, sigma, draws, xs)
        sp = self.spaces[p]
        full = g.new_zeros(g.shape[0], sp.num_sequences)
        full[:, 0] = g[:, 0].sum(-1)
        sp.rows(full).index_copy_(2, own, g[:, 1:])
        if avg is None:
            return full, xs[p]
        plan = torch.zeros_like(full)
        plan[:, 0] = 1
        sp.rows(plan).index_copy_(2, own, avg)
        return full, plan

    def touched_values(self, p: int, sigma: list[torch.Tensor], draws: Draws) -> Touched:
        """Player p's sampled values on the columns drawn only (a treeplex of those types,
        `PublicTreeplex.with_types`), and the plan to average there: no pass over the rest.
        Draws what `values` draws, and the values there are those `values` gives."""
        own, g, avg = self._estimate(p, sigma, draws)
        sp = self.spaces[p]
        part = self._part(sp, own)
        b = g.shape[0]
        values = torch.cat([g[:, 0].sum(-1, keepdim=True), g[:, 1:].reshape(b, -1)], 1)  # [B, 1 + M K']
        plan = None if avg is None else torch.cat([avg.new_ones(avg.shape[0], 1), avg.reshape(avg.shape[0], -1)], 1)
        return Touched(part, None, values, plan, columns=own)

    def _estimate(self, p, sigma, draws, xs=None):
        """(player p's types drawn [K'] sorted, the values on their columns [B, 1 + M_p, K']
        (row 0: the empty sequence, to be summed over the columns), the plan to average there
        [B, M_p, K'] or None where it is the exact plan)."""
        t0, t1 = self.deals(draws)
        g, avg = self._terms(p, sigma, draws, xs, t0, t1)
        own, pos = torch.unique((t0, t1)[p], sorted=True, return_inverse=True)  # [K'], [K]
        b, K = g.shape[0], self.samples
        # the samples' columns summed into the distinct types': [B, 1 + M, K] -> [B, 1 + M, K']
        summed = g.new_zeros(b, g.shape[1], len(own)).index_add_(2, pos, g)
        if K > 1:
            summed /= K
        if avg is not None:
            avg = avg.new_zeros(avg.shape[0], avg.shape[1], len(own)).index_add_(2, pos, avg) / K
        return own, summed, avg

    def _terms(self, p, sigma, draws, xs, t0, t1):
        """Each sample's estimate on its own column, [B, 1 + M_p, K] (row 0: the empty
        sequence), and outcome sampling's weighted plan [B, M_p, K] (else None). With the plans
        `xs`, chance sampling reads the other player's reach from them; without, it makes it on
        the columns drawn."""
        q, K = 1 - p, self.samples
        sp, sq = self.spaces[p], self.spaces[q]
        tp_, tq_ = (t0, t1) if p == 0 else (t1, t0)
        B = sigma[p].shape[0]
        self.entries += int(self.seq.shape[1]) * K
        if not self.scheme.draws_opponent:  # chance sampling: the other's exact reach
            reach = sq.rows(xs[q]).index_select(2, tq_) if xs is not None else self._plan(sq, sigma[q], tq_)
        else:
            u = draws.player(q, B, K, sq.num_public_infosets)  # [B, K, U_q]
            reach = self._plan(sq, self._pure(q, sigma[q], tq_, u), None)
        reach = _with_empty(reach)  # [B, 1 + M_q, K]
        w = self._weights(p, t0, t1)  # [B', Z, K]
        contrib = w * reach.index_select(1, self.seq[q])  # [B, Z, K]
        avg = None
        if self.scheme.draws_own:  # outcome sampling: the own path drawn and reweighted
            own = sp.rows(sigma[p]).index_select(2, tp_)  # [B, M_p, K] the own columns
            pad = self._pad[p]
            mixed = self.epsilon / pad[3].to(own.dtype)[:, None] + (1 - self.epsilon) * own
            u = draws.player(p, B, K, sp.num_public_infosets)
            pure = self._pure_of(p, mixed, u)
            weight = self._plan(sp, pure, None) / self._plan(sp, mixed, None)  # [B, M_p, K]: 1/x' on the path
            contrib = contrib * _with_empty(weight).index_select(1, self.seq[p])
            # over the marginal P(t0) of the column too: only a sample that deals t0 adds to it
            avg = weight * self._plan(sp, own, None) / self._marginal[p][tp_]
        b = contrib.shape[0]
        m = 1 + sp.num_public_sequences
        g = contrib.new_zeros(b, m * K)  # [B, (1 + M_p) K]
        idx = (self.seq[p][:, None] * K + torch.arange(K, device=contrib.device)).reshape(-1)  # [Z K]
        g.index_add_(1, idx, contrib.reshape(b, -1))
        return g.view(b, m, K), avg

    def _weights(self, p: int, t0: torch.Tensor, t1: torch.Tensor) -> torch.Tensor:
        """[B, Z, K]: each terminal's payoff to player p for each sample's pair of types, over
        the pair's probability."""
        if self.ranked:  # W = (a + b sign(t0 - t1)) / (n (n - 1)) off the diagonal, P = 1 / (n (n - 1))
            n = self.types[0]
            s = torch.sign((t0 - t1).to(self.weights.dtype))  # [K]
            w = (self.weights[..., :1] + self.weights[..., 1:] * s) * (n * (n - 1))  # [B, Kc, K]
        else:
            w = self.weights[:, :, t0, t1] / self._prob[t0, t1]  # [B, Kc, K]
        w = w.index_select(1, self.cls)
        return w if p == 0 else w.neg_()

    # -- columns of a treeplex ------------------------------------------------------------------
    def _part(self, tp: PublicTreeplex, types: torch.Tensor) -> PublicTreeplex:
        """tp on the columns `types` [k] (`PublicTreeplex.with_types`; made once per k where every
        type is live)."""
        if tp.live is not None:
            return tp.with_types(len(types), tp.live.index_select(-1, types))
        return self._free(tp, len(types))

    def _free(self, tp: PublicTreeplex, k: int) -> PublicTreeplex:
        """tp with k types, every one live (what a top-down pass needs), made once per k."""
        key = (tp.player, k)
        if key not in self._parts:
            self._parts[key] = tp.with_types(k)
        return self._parts[key]

    def _plan(self, tp: PublicTreeplex, sigma: torch.Tensor, types: torch.Tensor | None) -> torch.Tensor:
        """The realisation plan [B, M, k] of a strategy on k columns: sigma [B, S] read at the
        columns `types` [k], or (types None) sigma already [B, M, k]."""
        cols = tp.rows(sigma).index_select(2, types) if types is not None else sigma
        b, k = cols.shape[0], cols.shape[2]
        part = self._free(tp, k)
        flat = torch.cat([cols.new_ones(b, 1), cols.reshape(b, -1)], 1)  # [B, 1 + M k]
        return part.rows(part.sequence_form(flat, out=flat))

    def _pure(self, player: int, sigma: torch.Tensor, types: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        """A pure strategy [B, M, K] (0/1) per sample on its column `types` [K], drawn from sigma [B, S]."""
        return self._pure_of(player, self.spaces[player].rows(sigma).index_select(2, types), u)

    def _pure_of(self, player: int, cols: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        """At each public infoset and column the action whose cumulative probability under
        cols [B, M, K] first exceeds the uniform u [B, K, U] (the last where rounding leaves none)."""
        rows, valid, below_last, _ = self._pad[player]
        cum = torch.cumsum(cols[:, rows] * valid[..., None], 2)  # [B, U, A, K] within each public infoset
        u = u.to(cols.device, cols.dtype).transpose(1, 2)[:, :, None]  # [B, U, 1, K]
        chosen = ((cum <= u) & below_last[..., None]).sum(2)  # [B, U, K]
        pure = torch.zeros_like(cols).expand(chosen.shape[0], -1, -1).contiguous()
        first = self.spaces[player].infoset_offsets_pub[:-1] - 1  # [U] row of each infoset's first action
        return pure.scatter_(1, first[None, :, None] + chosen, 1.0)


def _with_empty(rows: torch.Tensor) -> torch.Tensor:
    """[B, 1 + M, K]: rows [B, M, K] below a row of ones (the empty sequence's plan)."""
    return torch.cat([rows.new_ones(rows.shape[0], 1, rows.shape[2]), rows], 1)
