"""Monte-Carlo counterfactual values on tensors: chance, external and outcome sampling.

Each scheme replaces a player's exact counterfactual values g_p = A y [B, S_p] by an unbiased
estimate, which the unchanged update rule (`updates/rules.py`) consumes, so every CFR-family preset and
FTRL gets a sampled form. A sample is a 0/1 realisation over the compiled game, not a walk:

- **chance**: one outcome per chance class (`compiler/chance.py`: a uniform per class picks an outcome
  at each of its chance nodes, so a sample is one deal, Leduc's board included). Only the
  payoff entries of the classes drawn are gathered, each with its utility u(z) and no chance
  weight (a class is drawn with exactly its chance probability): g~_p = A_drawn y. The thesis'
  method (chance-sampled CFR; Zinkevich et al. 2007, Lanctot et al. 2009).
- **external**: chance as above, and the other player's pure strategy, one action per infoset
  drawn from its current strategy, so its realisation plan y~ is 0/1: g~_p = A_drawn y~.
  Player p's own actions are all evaluated (Lanctot et al. 2009, external sampling, with the
  opponent's sample a pure strategy as in their definition).
- **outcome**: chance and the other player as above, and player p's own pure strategy drawn
  from the exploring strategy s' = eps/|A(I)| + (1 - eps) sigma, whose plan is x'. One terminal
  is reached; its entry is divided by x'(s) at player p's last sequence s:
  g~_p = (x~_p / x'_p) * (A_drawn y~) (Lanctot et al. 2009, outcome sampling). The average
  strategy is stochastically weighted: player p adds x~_p * x_p / x'_p, its own reach over its
  own sampling probability on the sampled path and 0 elsewhere (unbiased: its mean is x_p).
  The other schemes add the exact plan x_p (an O(S) product, cheaper than any payoff work).

`samples=K` draws K samples for each estimate (K = 1 is the textbook algorithm); the chance
draws are shared by the members of a batch, the players' draws are per member. With K > 1 the
samples are pooled (`pooled=False`: drawn one by one and averaged): the K deals are drawn as
counts down the chance tree (`Estimator.pooled_classes`) and the K pure strategies as counts
down each treeplex (`_count_plans`), each drawn class is gathered once, weighted by its count,
against the mean of the K strategies: the mean of all K^2 (deal, strategy) pairs, at about one
sample's cost for any K. Cost of one estimate: the payoff entries of the drawn classes (one
deal of Dudo(4,2,2) gathers 1/441 of them) plus, for external and outcome sampling, a top-down
pass over each sampled player's treeplex (one by one: one per sample, O(K S); pooled: one, over
the infosets some sample reaches); the rule's update stays O(S), or, with
`update_scope="touched"`, the size of the parts above the entries drawn (`treeplex.touched`),
which are kept by the sequences they lie above (`PartCache`): a hand dealt before costs no
walk of the whole treeplex.
`perf/sampled_fraction` reports the entries gathered over the game's entries.

Every uniform and binomial draw comes from a `Draws` object: `RandomDraws` (a seeded CPU
generator, whose state a checkpoint saves) or, in tests, fixed tables.

Example:
    >>> import torch, tensorcfr
    >>> cg = tensorcfr.compile("kuhn", chance=True)
    >>> est = Estimator(cg, "chance", samples=1, dtype=torch.float64)
    >>> s = tensorcfr.Solver("kuhn", "cfr", device="cpu")
    >>> xs = [tp.sequence_form(sg) for tp, sg in zip(cg.treeplexes, s.sigma)]
    >>> g, _ = est.values(0, s.sigma, xs, RandomDraws(seed=0))
    >>> int((g != 0).sum())  # one deal: player 0 holds one card, so 4 of its 12 sequences see a payoff
    4
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from tensorcfr.errors import TensorCFRError
from tensorcfr.spaces.treeplex import Treeplex, touched

class Scheme(NamedTuple):
    """A Monte-Carlo scheme, named by what it draws besides chance (every scheme draws chance's
    outcomes: a deal, a board): both estimators (`Estimator`, `sampling.public.PublicEstimator`)
    read these two fields, and nothing else of the scheme."""

    name: str
    draws_opponent: bool  # the other player's pure strategy is drawn: its reach y~ is 0/1
    draws_own: bool  # player p's own path is drawn too, from an exploring strategy, and reweighted


CHANCE_SAMPLING = Scheme("chance", draws_opponent=False, draws_own=False)  # the other's exact reach
EXTERNAL_SAMPLING = Scheme("external", draws_opponent=True, draws_own=False)  # all own actions evaluated
OUTCOME_SAMPLING = Scheme("outcome", draws_opponent=True, draws_own=True)  # one terminal per sample
BY_NAME = {sc.name: sc for sc in (CHANCE_SAMPLING, EXTERNAL_SAMPLING, OUTCOME_SAMPLING)}
SCHEMES = ("none", *BY_NAME)  # what `sampling=` accepts ("none": exact iterations)
UPDATE_SCOPES = ("all", "touched")  # what a sampled iteration updates (`Solver(update_scope=...)`)
EPSILON_DEFAULT = 0.6  # outcome sampling's exploration (OpenSpiel's default too)
POOLED_SAMPLES = 65536  # samples per estimate by default in the generic form's full update (`default_samples`)


def ranges(start: torch.Tensor, count: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The indices start[i], ..., start[i] + count[i] - 1 of every i, concatenated [sum count],
    and the i each comes from [sum count].

    Example:
        >>> idx, owner = ranges(torch.tensor([5, 0]), torch.tensor([2, 3]))
        >>> idx.tolist(), owner.tolist()
        ([5, 6, 0, 1, 2], [0, 0, 1, 1, 1])
    """
    owner = torch.repeat_interleave(torch.arange(len(count), device=count.device), count)
    first = torch.cumsum(count, 0) - count  # [M] position of each range in the output
    return start[owner] + torch.arange(len(owner), device=count.device) - first[owner], owner


def _np_ranges(start: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ranges` in numpy."""
    owner = np.repeat(np.arange(len(count)), count)
    first = np.cumsum(count) - count
    return start[owner] + np.arange(len(owner)) - first[owner], owner


def check_settings(scheme: str, samples, epsilon) -> None:
    """Refuse a scheme, sample count or exploration that is not one, naming it.

    Example:
        >>> check_settings("chance", 0, 0.6)
        Traceback (most recent call last):
        ...
        tensorcfr.errors.TensorCFRError: samples must be a whole number >= 1, got 0
    """
    if scheme not in BY_NAME:
        raise TensorCFRError(f"sampling must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise TensorCFRError(f"samples must be a whole number >= 1, got {samples!r}")
    if not (isinstance(epsilon, (int, float)) and 0 < epsilon <= 1):
        raise TensorCFRError(f"epsilon (outcome sampling's exploration) must be in (0, 1], got {epsilon!r}")


class Touched(NamedTuple):
    """A sampled estimate on part of a player's treeplex (`Estimator.touched_values`)."""

    space: Treeplex  # the part, a treeplex of its own
    ids: torch.Tensor | None  # [S'] its sequences' ids in the whole treeplex (0 first); None with `columns`
    values: torch.Tensor  # [B, S'] the sampled counterfactual values there
    plan: torch.Tensor | None  # [B, S'] the plan to add to the average there (None: the part's own strategy's)
    # public-tree form: the types [K'] whose columns the part is (its sequences: 0, then (m, t) for
    # every public sequence m and t in `columns`), read as strided columns, not gathered by id
    columns: torch.Tensor | None = None
    sigma: torch.Tensor | None = None  # [B, S'] the strategy there, where already taken

    def _cols(self, x: torch.Tensor) -> torch.Tensor:
        """[B, M, T]: the non-empty sequences of x [B, S] by public sequence and type."""
        return x[:, 1:].view(x.shape[0], self.space.num_public_sequences, -1)

    def _one(self, x: torch.Tensor) -> torch.Tensor | None:
        """The one column [B, M, 1] of x [B, S] the part is, as a view (None: several columns)."""
        if len(self.columns) != 1:
            return None
        c = int(self.columns[0])
        return self._cols(x)[:, :, c:c + 1]

    def take(self, x: torch.Tensor) -> torch.Tensor:
        """x[:, ids] [B, S'] of a per-sequence tensor x [B, S] of the whole treeplex."""
        if self.columns is None:
            # one member: a flat gather, 37 us against 112 for `index_select` along dim 1 and 71
            # for x[:, ids] (a deal's 65K of Dudo(4,2,2)'s 655K sequences, measured)
            return _take(x, self.ids)
        b, m = x.shape[0], self.space.num_public_sequences
        out = x.new_empty(b, 1 + m * len(self.columns))
        out[:, 0] = x[:, 0]
        one = self._one(x)
        out[:, 1:].view(b, m, -1).copy_(self._cols(x).index_select(2, self.columns) if one is None else one)
        return out

    def put(self, x: torch.Tensor, v: torch.Tensor, add: bool = False) -> None:
        """x[:, ids] = v [B, S'] (`add`: +=), in place."""
        if self.columns is None:  # (along dim 1 as fast as flat here: 36 and 50 us, measured as above)
            (x.index_add_ if add else x.index_copy_)(1, self.ids, v)
            return
        x[:, 0] = x[:, 0] + v[:, 0] if add else v[:, 0]
        cols, one = self._cols(x), self._one(x)
        rows = v[:, 1:].view(x.shape[0], cols.shape[1], -1)  # [B, M, K']
        if one is not None:  # a strided write, no index
            one.add_(rows) if add else one.copy_(rows)
        else:
            (cols.index_add_ if add else cols.index_copy_)(2, self.columns, rows)


def _flat(x: torch.Tensor) -> bool:
    """Whether x [B, S] is one member, laid out flat."""
    return x.shape[0] == 1 and x.is_contiguous()


def _padded(tp: Treeplex):
    """Each infoset's sequences padded to the widest infoset: (sequence ids [I, A], valid
    [I, A], below the last action [I, A], actions [I])."""
    n = tp.num_actions  # [I]
    width = int(n.max()) if len(n) else 1
    a = torch.arange(width, device=n.device)
    idx = tp.infoset_offsets[:-1][:, None] + a  # [I, A]
    return idx.clamp(max=tp.num_sequences - 1), a < n[:, None], a < n[:, None] - 1, n


def _level_padded(tp: Treeplex) -> tuple:
    """Per level of tp, each infoset's sequences padded to the level's widest infoset, as
    positions within the level: ((positions [I_l, A_l], valid [I_l, A_l], actions [I_l]), ...),
    for drawing pooled samples' counts level by level (`_count_plans`)."""
    out = []
    for lv in tp.levels:
        n = tp.num_actions[lv.i0:lv.i1]
        a = torch.arange(int(n.max()), device=n.device)
        pos = (tp.infoset_offsets[lv.i0:lv.i1] - lv.s0)[:, None] + a
        out.append((pos.clamp(max=lv.s1 - lv.s0 - 1), a < n[:, None], n))
    return tuple(out)


class Draws:
    """Where the uniforms of a sample come from."""

    def chance(self, k: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """A uniform [M] for each (sample k [M], chance class c [M]) whose outcomes are drawn."""
        raise NotImplementedError

    def player(self, p: int, batch: int, samples: int, infosets: int) -> torch.Tensor:
        """Uniforms [batch, samples, infosets]: one per infoset of player p, per member and sample."""
        raise NotImplementedError

    def binomial(self, count: torch.Tensor, prob: torch.Tensor) -> torch.Tensor:
        """Binomial(count, prob) draws, elementwise ([n] float64 each): pooled samples' counts."""
        raise NotImplementedError


class RandomDraws(Draws):
    """Uniforms from a seeded CPU generator (the same draws on every device), optionally
    logged for tests: `log` collects ("chance", k, c, u) and ("player", p, u) in draw order.

    Example:
        >>> RandomDraws(seed=1).player(0, 1, 2, 3).shape
        torch.Size([1, 2, 3])
    """

    def __init__(self, seed: int = 0, log: list | None = None):
        self.generator = torch.Generator().manual_seed(int(seed))
        self.log = log

    def chance(self, k, c):
        u = torch.rand(len(k), generator=self.generator, dtype=torch.float64)
        if self.log is not None:
            self.log.append(("chance", k.cpu(), c.cpu(), u))
        return u.to(k.device)

    def player(self, p, batch, samples, infosets):
        u = torch.rand(batch, samples, infosets, generator=self.generator, dtype=torch.float64)
        if self.log is not None:
            self.log.append(("player", p, u))
        return u

    def binomial(self, count, prob):
        n = torch.binomial(count.cpu(), prob.cpu(), generator=self.generator)
        if self.log is not None:
            self.log.append(("binomial", n))
        return n.to(count.device)

    def state(self) -> torch.Tensor:
        """The generator's state (a uint8 tensor), for a checkpoint."""
        return self.generator.get_state()

    def set_state(self, s: torch.Tensor) -> None:
        self.generator.set_state(s.cpu())


class Estimator:
    """Sampled counterfactual values of one scheme over a game compiled with `chance=True`.

    `values(p, sigma, xs, draws)` returns (g~_p [B, S_p], the plan player p adds to its average
    [B, S_p]); `entries` counts the payoff entries gathered so far (for the sampled fraction).

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("kuhn", chance=True)
        >>> Estimator(cg, "outcome", samples=4, dtype=torch.float64).epsilon
        0.6
    """

    def __init__(self, cg, scheme: str, samples: int = 1, dtype: torch.dtype = torch.float64,
                 epsilon: float = EPSILON_DEFAULT, pooled: bool = True):
        check_settings(scheme, samples, epsilon)
        if getattr(cg, "chance", None) is None:
            raise TensorCFRError(f"{cg.name}: sampling needs the game's chance tree: "
                                 "tensorcfr.compile(game, chance=True) (the generic form)")
        self.scheme, self.samples, self.epsilon = BY_NAME[scheme], samples, float(epsilon)
        self.pooled = bool(pooled) and samples > 1  # (one sample: the textbook draw, whichever)
        self.spaces = cg.treeplexes
        ct = self.tree = cg.chance
        u = ct.payoff.to(dtype)  # [B', Z'] player 0's utility
        self.vals = (u, -u)  # in each player's own sign
        self.seq = ct.payoff_seq.long()  # [2, Z']
        self.entries = 0
        self._host = {f: getattr(ct, f).cpu().numpy()
                      for f in ("class_nodes", "node_first", "node_count", "cum_prob", "class_entries", "class_prob")}
        self._pad = [_padded(tp) for tp in self.spaces]  # per player, for drawing actions
        self._levels = [_level_padded(tp) for tp in self.spaces]  # per player, for pooled samples' counts
        self._parts = PartCache(padded=self.scheme.draws_opponent)  # `touched` parts by the sequences they lie above

    @property
    def num_entries(self) -> int:
        """The game's payoff entries (the denominator of the sampled fraction)."""
        return self.tree.num_entries

    # -- the draws --------------------------------------------------------------------------
    def classes(self, draws: Draws) -> tuple[np.ndarray, np.ndarray]:
        """The (sample [M], chance class [M]) pairs drawn, every depth of the chance tree: one
        class per chance node of a drawn class, starting from class 0 in every sample. (In
        numpy on the host: a few hundred classes at most per sample, where torch's per-call
        overhead would dominate.)"""
        t = self._host
        k = np.arange(self.samples)
        c = np.zeros(self.samples, np.int64)
        out_k, out_c = [k], [c]
        while True:  # one round per depth of the chance tree (a few)
            cnt = t["class_nodes"][c + 1] - t["class_nodes"][c]  # [M] chance nodes in each drawn class
            keep = cnt > 0
            if not keep.any():
                break
            k, c, cnt = k[keep], c[keep], cnt[keep]
            u = draws.chance(torch.from_numpy(k), torch.from_numpy(c)).cpu().numpy()  # [M] its nodes share it
            j, owner = _np_ranges(t["class_nodes"][c], cnt)  # [M2] the chance nodes of those classes
            first, n = t["node_first"][j], t["node_count"][j]
            o, node = _np_ranges(first, n)  # [M3] every outcome of those nodes
            # inverse CDF: the outcome is the number of outcomes (all but the last) whose
            # cumulative probability is at most u
            below = (t["cum_prob"][o] <= u[owner][node]) & (o < (first + n - 1)[node])
            k, c = k[owner], first + np.bincount(node, weights=below, minlength=len(j)).astype(np.int64)
            out_k.append(k)
            out_c.append(c)
        return np.concatenate(out_k), np.concatenate(out_c)

    def pooled_classes(self, draws: Draws) -> tuple[np.ndarray, np.ndarray]:
        """How many of the K samples reach each chance class they reach [M], every depth, and
        those classes [M] (`classes`' pairs, pooled): at each chance node of a class that m
        samples reach, the m split among the node's outcomes as a multinomial (sequential
        binomials over the outcomes' slots), so the cost follows the classes reached, not K.
        Each class's count is distributed as under `classes`' draws (the nodes of one class
        draw apart here, where there they share a uniform; the estimate reads each class's
        count alone, so its mean is the same).

        Example:
            >>> import tensorcfr
            >>> est = Estimator(tensorcfr.compile("kuhn", chance=True), "chance", samples=100)
            >>> m, c = est.pooled_classes(RandomDraws(seed=0))
            >>> int(m[0]), int(m[c > 0].sum())  # 100 in the root class; 100 deals at each depth below
            (100, 200)
        """
        t = self._host
        c, m = np.zeros(1, np.int64), np.full(1, float(self.samples))
        out_c, out_m = [c], [m]
        while True:  # one round per depth of the chance tree
            cnt = t["class_nodes"][c + 1] - t["class_nodes"][c]
            keep = cnt > 0
            if not keep.any():
                break
            j, owner = _np_ranges(t["class_nodes"][c[keep]], cnt[keep])  # [J'] the nodes reached
            first, n, left = t["node_first"][j], t["node_count"][j], m[keep][owner].copy()
            width = int(n.max())
            slot = np.arange(width)
            valid = slot < n[:, None]  # [J', W]
            prob = np.where(valid, t["class_prob"][np.where(valid, first[:, None] + slot, 0)], 0.0)
            tail = np.cumsum(prob[:, ::-1], 1)[:, ::-1]  # the mass of an outcome and those after it
            got = np.zeros((len(j), width))
            for a in range(width):  # outcome slots (the widest node's), each one draw over the nodes
                q = np.where(a >= n - 1, 1.0, np.divide(prob[:, a], tail[:, a], out=np.zeros(len(j)),
                                                        where=tail[:, a] > 0)).clip(0, 1)
                d = draws.binomial(torch.from_numpy(left), torch.from_numpy(q)).numpy()
                got[:, a], left = d, left - d
            hit = valid & (got > 0)
            c, m = (first[:, None] + slot)[hit], got[hit]
            out_c.append(c)
            out_m.append(m)
        return np.concatenate(out_m), np.concatenate(out_c)

    def _entries(self, draws: Draws):
        """The payoff entries of the drawn classes: (their indices [Zs] or, where they are one
        class's (one sample, dealt once), the slice of them; each one's sample [Zs] or that
        sample or, pooled, the number of samples that drew its class [Zs] or that number; their
        count). Pooled, a class drawn by several samples is gathered once."""
        k, c = self.pooled_classes(draws) if self.pooled else self.classes(draws)
        bounds = self._host["class_entries"]
        start, stop = bounds[c], bounds[c + 1]
        full = np.flatnonzero(stop > start)
        if self.pooled:  # k: the samples in each class; a class is gathered once
            k, c, full = k[full], c[full], np.arange(len(full))
            start, stop = bounds[c], bounds[c + 1]
        if len(full) == 1:  # a view, not a gather (and the parts' cache keys by the slice)
            i = full[0]
            return slice(int(start[i]), int(stop[i])), k[i].item(), int(stop[i] - start[i])
        dev = self.tree.class_entries.device
        e, owner = ranges(torch.from_numpy(start).to(dev), torch.from_numpy(stop - start).to(dev))
        return e, torch.from_numpy(k).to(dev, self.vals[0].dtype if self.pooled else torch.int64)[owner], len(e)

    def exploring(self, p: int, sigma: torch.Tensor) -> torch.Tensor:
        """Outcome sampling's strategy [B, S_p]: eps uniform plus (1 - eps) sigma per infoset."""
        return _exploring(sigma, self._pad[p][3], self.epsilon)

    # -- the estimate -----------------------------------------------------------------------
    def values(self, p: int, sigma: list[torch.Tensor], xs: list[torch.Tensor], draws: Draws):
        """Player p's sampled counterfactual values g~ [B, S_p] against the other player's
        strategy sigma[1-p] (plan xs[1-p]), the mean of `samples` estimates, and the plan
        [B, S_p] it adds to its average."""
        _, _, rows, _, contrib, avg, _ = self._terms(p, sigma, draws, xs)
        return self._sum(rows, contrib, avg.shape[0], self.spaces[p].num_sequences), _mean(avg)

    def touched_values(self, p: int, sigma: list[torch.Tensor], draws: Draws) -> "Touched":
        """Player p's sampled values on the part of its treeplex the drawn payoff entries lie
        under (`treeplex.touched`), and nothing outside it: no pass over the whole treeplex. The
        other player's reach (or pure plan) is likewise made on the part above the entries'
        columns only. Draws the same uniforms, in the same order, as `values`; the values on the
        part are those `values` gives there (0 elsewhere). The plan to average is player p's on
        the part (outcome sampling: its stochastically weighted one)."""
        own, ids, rows, _, contrib, avg, sigma_p = self._terms(p, sigma, draws)
        return Touched(own, ids, self._sum(rows, contrib, avg.shape[0], own.num_sequences), _mean(avg),
                       sigma=sigma_p)

    def _sum(self, rows: torch.Tensor, contrib: torch.Tensor, batch: int, size: int) -> torch.Tensor:
        """The terms contrib [B, Zs] summed into their sequences rows [Zs], over the samples: [B, size]."""
        g = contrib.new_zeros(batch, size).index_add_(1, rows, contrib)
        return g / self.samples if self.samples > 1 else g

    def _terms(self, p, sigma, draws, xs=None):
        """Every payoff entry of the drawn classes as a term of player p's estimate: (player p's
        space, its sequences' ids in the whole treeplex or None, each entry's own sequence in it
        [Zs], its sample [Zs] (None pooled), its term [B, Zs], the plan player p averages: [B, S'] or per
        sample [B, K, S'] for outcome sampling, its strategy there [B, S']). With the plans `xs` [B, S] the spaces are the
        whole treeplexes; without, the parts above the entries (`treeplex.touched`)."""
        q, K = 1 - p, self.samples
        B = sigma[p].shape[0]
        e, kz, n = self._entries(draws)  # the entries [Zs] of the drawn classes, their samples [Zs]
        self.entries += n
        rows, cols = self.seq[p][e], self.seq[q][e]
        if xs is not None:  # the whole treeplexes
            own, other, ids, other_ids, own_inf, other_inf = self.spaces[p], self.spaces[q], None, None, None, None
            sigma_p, sigma_q, pad_p, pad_q, x_p, x_q = sigma[p], sigma[q], self._pad[p], self._pad[q], xs[p], xs[q]
        else:  # the parts above the entries' rows and columns
            span = (e.start, e.stop) if isinstance(e, slice) else None
            mine, theirs = self._parts.get(self.spaces[p], rows, span), self._parts.get(self.spaces[q], cols, span)
            own, ids, own_inf, rows = mine.space, mine.ids, mine.infosets, mine.where
            other, other_ids, other_inf, cols = theirs.space, theirs.ids, theirs.infosets, theirs.where
            sigma_p, sigma_q = _take(sigma[p], ids), _take(sigma[q], other_ids)
            pad_p, pad_q = mine.pad, theirs.pad
            x_p, x_q = own.sequence_form(sigma_p), None
        contrib = self.vals[p][:, e]  # [B', Zs]
        if self.pooled:  # kz: how many samples drew each entry's class
            contrib = contrib * kz
        if not self.scheme.draws_opponent:  # chance sampling: the other's exact reach
            contrib = contrib * (x_q if x_q is not None else other.sequence_form(sigma_q))[:, cols]
        elif self.pooled:  # the mean of the other's K pure plans, drawn as counts
            contrib = contrib * self._pooled_plan(q, sigma[q], draws, other_ids)[:, cols]
        else:  # external and outcome sampling: a pure strategy of the other's per sample
            u = _among(draws.player(q, B, K, self.spaces[q].num_infosets), other_inf)
            plans = _pure_plans(other, sigma_q, u, pad_q)  # [B, K, S'_q]
            contrib = contrib * plans.reshape(B, -1)[:, kz * other.num_sequences + cols]
        avg = x_p
        if self.scheme.draws_own:  # outcome sampling: the own path drawn and reweighted
            if self.pooled:  # the mean of K exploring pure plans over the exploring plan x'
                mixed = _exploring(sigma[p], self._pad[p][3], self.epsilon)
                weight = self._pooled_plan(p, mixed, draws) / self.spaces[p].sequence_form(mixed)  # [B, S_p]
                weight = weight if ids is None else _take(weight, ids)  # [B, S'_p]
                contrib = contrib * weight[:, rows]
                avg = weight * x_p
            else:
                mixed = _exploring(sigma_p, pad_p[3], self.epsilon)
                u = _among(draws.player(p, B, K, self.spaces[p].num_infosets), own_inf)
                # [B, K, S'_p]: 1/x' on the path
                weight = _pure_plans(own, mixed, u, pad_p) / own.sequence_form(mixed)[:, None]
                contrib = contrib * weight.reshape(B, -1)[:, kz * own.num_sequences + rows]
                avg = weight * x_p[:, None]
        return own, ids, rows, None if self.pooled else kz, contrib.expand(B, -1), avg, sigma_p

    def _pooled_plan(self, p: int, sigma: torch.Tensor, draws: Draws, ids: torch.Tensor | None = None):
        """The mean [B, S_p] (on a part: [B, S'], `ids` its sequences) of K pure plans of player
        p drawn from sigma [B, S_p] as counts (`_count_plans`). Pooled, every (deal, strategy)
        pair is one textbook sample and the estimate their mean: unbiased, as the draws of
        chance, the other player and player p are independent. The counts are drawn on the
        whole treeplex (an infoset no sample reaches costs nothing) and taken on the part, so a
        touched update sees the draws of the full one."""
        mean = _count_plans(self.spaces[p], sigma, self.samples, draws, self._levels[p]) / self.samples
        return mean if ids is None else _take(mean, ids)


class Part(NamedTuple):
    """`treeplex.touched(tp, seqs)` for one array of sequences `seqs` [n]."""

    seqs: torch.Tensor  # [n] the sequences it was made for (the cache's key, compared in full)
    space: Treeplex  # the part, a treeplex of its own
    ids: torch.Tensor  # [S'] its sequences' ids in the whole treeplex (0 first)
    infosets: torch.Tensor  # [I'] its infosets' ids in the whole treeplex
    where: torch.Tensor  # [n] where each of `seqs` lies in the part
    pad: tuple | None  # `_padded(space)`, where actions are drawn on it (external, outcome)

    def nbytes(self) -> int:
        tensors = [self.seqs, self.ids, self.infosets, self.where, *(self.pad or ()),
                   *(t for t in vars(self.space).values() if isinstance(t, torch.Tensor))]
        return sum(t.numel() * t.element_size() for t in tensors)


class PartCache:
    """The parts `treeplex.touched` makes, kept by the sequences they lie above, least recently
    used first out beyond `budget` bytes. Making a part walks the whole treeplex's infosets
    (Dudo(4,2,2): 6.1 ms, 4 a sampled iteration), but a deal's rows depend only on the player's
    own hand: Dudo(4,2,2)'s 100 deals touch 10 parts a player. A key is the sequences' count
    and two sums, O(n); a hit is confirmed by comparing them in full. Once 64 misses come with
    fewer than 1 hit in 8 (K deals a sample, which seldom come again) it keeps none: kept parts'
    fresh memory then costs more than it saves (Dudo(4,1,2), K = 16: 17.3 ms an iteration kept,
    11.9 not). `padded` also keeps each part's `_padded` (for schemes that draw actions).

    Example:
        >>> import torch, tensorcfr
        >>> tp, cache = tensorcfr.compile("kuhn").treeplexes[0], PartCache()
        >>> a = cache.get(tp, torch.tensor([3, 4]))
        >>> cache.get(tp, torch.tensor([3, 4])) is a, a.space.num_sequences  # the empty sequence and 2 more
        (True, 3)
    """

    def __init__(self, padded: bool = False, budget: int = 1 << 28):
        from collections import OrderedDict

        self.padded, self.budget, self.bytes = padded, budget, 0
        self._kept = OrderedDict()  # key -> (part, its bytes, its serial number)
        # (id(tp), start, stop) of a slice of entries -> (key, serial) of the part made for the
        # same sequences: a serial is never reused, so a part that has gone is never mistaken
        self._spans = {}
        self._serial = 0
        self.hits = self.misses = 0

    def get(self, tp: Treeplex, seqs: torch.Tensor, span: tuple[int, int] | None = None) -> Part:
        """The part above `seqs` [n] of `tp`; `span`, if given, names where `seqs` come from
        (a slice of the payoff entries), so that a second call with it skips the key's sums."""
        if self.misses >= 64 and self.hits * 8 < self.misses:  # draws that seldom come again: keep none
            self._kept.clear()
            self.bytes = 0
            return self._make(tp, seqs)
        if span is not None:
            named = self._spans.get((id(tp), *span))
            kept = self._kept.get(named[0]) if named is not None else None
            if kept is not None and kept[2] == named[1]:
                self._kept.move_to_end(named[0])
                self.hits += 1
                return kept[0]
        n = len(seqs)
        # position-weighted as well as plain: the same sequences in another order are another key
        sums = torch.stack([seqs.sum(), (seqs * torch.arange(1, n + 1, device=seqs.device)).sum()]).tolist()
        key = (id(tp), n, *sums)
        kept = self._kept.get(key)
        if kept is not None and torch.equal(kept[0].seqs, seqs):
            self._kept.move_to_end(key)
            self.hits += 1
        else:
            self.misses += 1
            if kept is not None:  # the same sums, other sequences: the newer replaces it
                self.bytes -= self._kept.pop(key)[1]
            part = self._make(tp, seqs)
            self._serial += 1
            kept = self._kept[key] = (part, part.nbytes(), self._serial)
            self.bytes += kept[1]
            while self.bytes > self.budget and len(self._kept) > 1:
                self.bytes -= self._kept.popitem(last=False)[1][1]
        if span is not None:
            if len(self._spans) >= 1 << 16:  # names of slices only, but not without end
                self._spans.clear()
            self._spans[(id(tp), *span)] = (key, kept[2])
        return kept[0]

    def _make(self, tp: Treeplex, seqs: torch.Tensor) -> Part:
        sub, ids, infosets, where = touched(tp, seqs)
        return Part(seqs, sub, ids, infosets, where(seqs), _padded(sub) if self.padded else None)


def _take(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """x[:, ids] of x [B, S]: flat for one contiguous member (`Touched.take`'s measure)."""
    return x.view(-1).index_select(0, ids).view(1, -1) if _flat(x) else x.index_select(1, ids)


def _mean(avg: torch.Tensor) -> torch.Tensor:
    """A plan to average [B, S]: per-sample plans [B, K, S] averaged over the samples."""
    return avg if avg.dim() == 2 else avg.mean(1)


def _among(u: torch.Tensor, infosets: torch.Tensor | None) -> torch.Tensor:
    """The uniforms [B, K, I'] of `infosets` (None: all) among a player's [B, K, I]."""
    return u if infosets is None else u[:, :, infosets.cpu()]


def _pure_plans(tp: Treeplex, sigma: torch.Tensor, u: torch.Tensor, pad) -> torch.Tensor:
    """The realisation plans [B, K, S] (0/1) of the pure strategies that pick, at each infoset,
    the action whose cumulative probability under sigma [B, S] first exceeds the uniform
    u [B, K, I] (the last action where rounding leaves none); `pad` is `_padded(tp)`."""
    idx, valid, below_last, _ = pad
    cum = torch.cumsum(sigma[:, idx] * valid, -1)  # [B, I, A] within each infoset, in action order
    u = u.to(sigma.device, sigma.dtype)
    chosen = ((cum[:, None] <= u[..., None]) & below_last).sum(-1)  # [B, K, I]
    b, k = sigma.shape[0], u.shape[1]
    pure = sigma.new_zeros(b * k, tp.num_sequences)  # [B*K, S] 0/1 behavioural strategy
    pure[:, 0] = 1
    pure.scatter_(1, (tp.infoset_offsets[:-1].to(sigma.device) + chosen).reshape(b * k, -1), 1.0)
    return tp.sequence_form(pure).reshape(b, k, -1)


def _count_plans(tp: Treeplex, sigma: torch.Tensor, samples: int, draws: Draws, levels: tuple) -> torch.Tensor:
    """How many of `samples` pure strategies drawn from sigma [B, S] reach each sequence:
    counts [B, S], drawn level by level as multinomials (sequential binomials over an
    infoset's actions) of the count reaching each infoset; `levels` is `_level_padded(tp)`.
    The counts are distributed as the sum of `samples` independent pure plans (`_pure_plans`)
    at about the cost of one: an infoset no sample reaches draws nothing.

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> sigma = torch.cat([torch.ones(1, dtype=torch.float64), tp.uniform(torch.float64)])[None]  # [1, S]
        >>> y = _count_plans(tp, sigma, 8, RandomDraws(seed=0), _level_padded(tp))
        >>> y[0, 0].item(), y[0, 1:3].sum().item()  # 8 strategies; each plays one action at the first infoset
        (8.0, 8.0)
    """
    b = sigma.shape[0]
    y = sigma.new_zeros(b, tp.num_sequences)
    y[:, 0] = samples
    for lv, (pos, valid, n) in zip(tp.levels, levels):
        reach = y.index_select(1, lv.parent)  # [B, I_l] the count reaching each infoset
        mb, mi = (reach > 0).nonzero(as_tuple=True)  # [N] the infosets some sample reaches
        if not len(mi):
            continue  # (a deeper level may still be reached from a shallower one)
        probs = sigma[:, lv.s0:lv.s1][mb[:, None], pos[mi]] * valid[mi]  # [N, A] each one's action probabilities
        tail = probs.flip(-1).cumsum(-1).flip(-1)  # [N, A] the mass of action a and those after it
        last = n[mi] - 1
        left = reach[mb, mi]
        got = torch.zeros_like(probs)
        for a in range(pos.shape[1]):  # action slots (at most the widest infoset's), each one op on [N]
            go = (left > 0).nonzero(as_tuple=True)[0]
            if not len(go):
                break
            q = torch.where(last[go] <= a, 1.0, (probs[go, a] / tail[go, a]).nan_to_num(0.0).clamp(0, 1))
            d = draws.binomial(left[go], q)  # of those left, how many take action a
            got[go, a] = d
            left[go] -= d
        part = y.new_zeros(b, lv.s1 - lv.s0)  # padded slots carry 0, so accumulating is safe
        part.index_put_((mb[:, None].expand_as(pos[mi]), pos[mi]), got * valid[mi], accumulate=True)
        y[:, lv.s0:lv.s1] = part
    return y


def _exploring(sigma: torch.Tensor, actions: torch.Tensor, epsilon: float) -> torch.Tensor:
    """eps uniform plus (1 - eps) sigma [B, S] per infoset (`actions` [I]: each one's count)."""
    per_seq = torch.cat([actions.new_ones(1), torch.repeat_interleave(actions, actions)]).to(sigma.dtype)  # [S]
    mixed = epsilon / per_seq + (1 - epsilon) * sigma
    mixed[:, 0] = 1
    return mixed
