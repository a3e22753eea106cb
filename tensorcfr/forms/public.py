"""The public-tree form of a game dealt once: [public sequence × private type] tensors
(the layout every part of the public form shares).

In Kuhn, OCP, Leduc, Dudo and Liar's Dice chance deals each player a private type t_p once;
everything afterwards is public (Leduc's board card included). A player's infosets are then
the pairs (public node u where p acts, t_p), and the payoff of a terminal public node is a
small T0 × T1 matrix W_z[t0, t1] = P(t0, t1) · P(public chance on the path | t0, t1) · u0(z,
t0, t1), shared by every terminal of one payoff class (Dudo: the last bid and who made it).

Layout. Per-sequence tensors keep the generic shape [B, S] with column 0 the empty sequence,
so the update rules, the iteration skeleton, checkpoints and evaluation are those of the
generic form; columns 1: are [B, M, T] row-major (M public sequences, T types), column
1 + (e - 1) T + t the sequence (public edge e >= 1, type t). Infoset j = u T + t ([B, U, T]).
Index tensors are O(public edges), never O(edges × types): `PublicTreeplex` runs each
treeplex pass as the generic one with the type as a trailing dimension, and
`PublicPayoffOperator` computes counterfactual values per payoff class: gather the other
player's rows, one dense product with W_k, scatter-add.

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("ocp(12)", form="public")
    >>> cg.sizes()["public_nodes"], cg.sizes()["types"], cg.sizes()["infosets"]
    (9, [12, 12], [24, 24])
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from tensorcfr.forms import PayoffExtent
from tensorcfr.errors import TensorCFRError
from tensorcfr.operators.cards import CardShowdown, class_sums, class_totals
from tensorcfr.operators.public import CLASS_BLOCK_ENTRIES, SMALL_CLASS, PublicPayoffOperator
from tensorcfr.spaces.public import PublicTreeplex

EXTENT_ENTRIES = 1 << 21  # `payoff_extent` reads the dense matrices this many entries a member at a time


@dataclass(frozen=True, eq=False)
class PublicCompiledGame:
    """A game compiled in the public-tree form (see the module docstring).

    Terminal public nodes z are grouped by payoff class k: `payoff_weights[b, k]` is the
    matrix W_k [T0, T1] (deal and public-chance probabilities times player 0's utility, of
    batch member b), and `terminal_seq[:, z]` holds each terminal's last public sequences
    (e0, e1), 0 for the empty one, sorted by class, `class_offsets` [K+1] slicing them.
    A `ranked` game (`VectorGame.ranked_deal`) keeps (a, b) [2] instead of each W_k:
    W_k[t0, t1] = a + b sign(t0 - t1) for t0 != t1 and 0 on the diagonal, probabilities included.
    A card game past `compiler.public.DENSE_ENTRIES` entries (a hold'em turn spot) keeps no
    W_k (`payoff_weights` None): its `showdown` factors stand for them.
    """

    name: str
    batch_names: tuple[str, ...]
    treeplexes: tuple[PublicTreeplex, PublicTreeplex]
    terminal_seq: torch.Tensor  # [2, Z] int64
    class_offsets: torch.Tensor  # [K+1] int64
    payoff_weights: torch.Tensor | None  # [B, K, T0, T1] float64, [B, K, 2] when ranked, None: `showdown` only
    counts: dict  # sizes counted at compile time (histories, terminals, ... as the generic form counts them)
    ranked: bool = False
    # [T0, T1] float64: the deal's probability of each pair of types (what chance sampling draws
    # from, `sampling/public.py`); None for a ranked deal (every distinct pair, 1 / (n (n - 1)))
    deal: torch.Tensor | None = None
    # a card game's payoff classes as factors (`operators.cards`): the operator's card-removal
    # showdown, every batch member's; None for other games, which use `payoff_weights`
    showdown: CardShowdown | None = None
    # a batch whose members deal the types with different probabilities (hold'em spots with
    # different ranges): `deal` is member 0's, so chance sampling, which draws from it, is refused
    deals_differ: bool = False

    form = "public"
    smaller_form = ""  # the smallest layout already: an out-of-memory error suggests no other

    @property
    def batch_size(self) -> int:
        return len(self.batch_names)

    @property
    def device(self) -> torch.device:
        return self.terminal_seq.device

    @property
    def num_histories(self) -> int:
        return int(self.counts["histories"])

    @property
    def num_terminals(self) -> int:
        return int(self.counts["terminals"])

    @property
    def payoff(self) -> torch.Tensor:
        """[B, K·T0·T1]: the payoff matrices, flat."""
        if self.payoff_weights is None:
            raise TensorCFRError(f"{self.name}: this card game keeps its showdown factors, not its dense payoff "
                                 "matrices (too large)")
        return self.payoff_weights.reshape(self.batch_size, -1)

    @property
    def payoff_entries(self) -> int:
        """Entries of the payoff matrices a batch member, K·T0·T1 (K·2 ranked): what the capture
        code sizes its choices by (`forms.CompiledForm`), kept or not."""
        k = int(self.class_offsets.numel() - 1)
        return k * 2 if self.ranked else k * self.treeplexes[0].types * self.treeplexes[1].types

    def infoset_players(self) -> dict[str, int]:
        return {k: tp.player for tp in self.treeplexes for _, k, _ in tp.infosets()}

    def sizes(self) -> dict:
        """Sizes as `CompiledGame.sizes` reports them (counted as the generic form counts them),
        plus `form`, `public_nodes`, `public_sequences`, `types` and `payoff_classes`.

        Example:
            >>> import tensorcfr
            >>> s = tensorcfr.compile("kuhn", form="public").sizes()
            >>> s["histories"], s["infosets"], s["sequences"], s["types"]
            (58, [6, 6], [12, 12], [3, 3])
        """
        t0, t1 = self.treeplexes
        c = self.counts
        return {"form": "public", "histories": c["histories"], "terminals": c["terminals"],
                "chance_nodes": c["chance_nodes"], "decision_nodes": c["decision_nodes"],
                "infosets": c["infosets"], "infosets_with_choice": c["infosets_with_choice"],
                "sequences": c["sequences"], "levels": c["levels"], "treeplex_levels": [len(t0.levels), len(t1.levels)],
                "payoff_nonzeros": self._payoff_nonzeros(),
                "batch": self.batch_size, "public_nodes": c["public_nodes"],
                "public_sequences": [t0.num_public_sequences, t1.num_public_sequences],
                "types": [t0.types, t1.types], "payoff_classes": int(self.class_offsets.numel() - 1),
                "public_terminals": int(self.terminal_seq.shape[1])}

    def _payoff_nonzeros(self) -> int:
        """Nonzero entries of the payoff matrices of batch member 0 (a ranked class: the pairs
        above and below the diagonal where a + b and a - b are not 0)."""
        if self.payoff_weights is None:
            return int(class_totals(self.showdown.member(0))[0].sum())
        if not self.ranked:
            return int(self.payoff_weights[0].count_nonzero())
        n = self.treeplexes[0].types
        a, b = self.payoff_weights[0, :, 0], self.payoff_weights[0, :, 1]
        return int(((a + b != 0).sum() + (a - b != 0).sum()) * (n * (n - 1) // 2))

    def operator(self, dtype: torch.dtype, gather: bool = False) -> "PublicPayoffOperator":
        """The payoff operator (`forms.CompiledForm`): per payoff class, one dense product
        (gathers and scatter-adds already, so `gather` changes nothing)."""
        return PublicPayoffOperator.of(self, dtype)

    def estimator(self, scheme: str, samples: int, dtype: torch.dtype, epsilon: float):
        """Monte-Carlo counterfactual values where a sample is a deal of private types
        (`sampling.public.PublicEstimator`)."""
        from tensorcfr.sampling.public import PublicEstimator
        if any(tp.mirror_u is not None for tp in self.treeplexes):  # its permutations read every type
            raise TensorCFRError(f"{self.name}: Monte-Carlo sampling of a spot with suit_isomorphism=True is not "
                                 "supported (its twin cards' values are its types permuted); solve it exactly, "
                                 "or sample it without")
        if self.deals_differ:
            raise TensorCFRError(f"{self.name}: the members of this batch deal their types with different "
                                 "probabilities; Monte-Carlo sampling draws from one deal: solve them exactly, "
                                 "or sample each alone")
        return PublicEstimator(self, scheme, samples, dtype, epsilon)

    def default_samples(self, update_scope: str) -> int:
        """1: the public-tree form's samples are drawn one by one (a deal of types each, with its
        own pure strategies), so K samples cost K times one.

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("dudo(4,1,1)", form="public").default_samples("all")
            1
        """
        return 1

    def block(self, rank: int, world: int) -> "PublicCompiledGame":
        """Rank's block of the terminal public nodes [lo, hi) of `world` ranks, each payoff class
        keeping its matrix and its share of the terminals (`distributed.shard`)."""
        from tensorcfr.operators.distributed import bounds
        lo, hi = bounds(int(self.terminal_seq.shape[1]), rank, world)
        offsets = self.class_offsets.clamp(lo, hi) - lo  # [K+1]: each class's terminals within the block
        return dataclasses.replace(self, terminal_seq=self.terminal_seq[:, lo:hi].clone(), class_offsets=offsets)

    def payoff_bytes(self, dtype: torch.dtype) -> int:
        """The class matrices and the small classes' per-terminal ones, in `dtype`, with the large
        classes' matrices stacked again by runs and the rows and values of the largest block of
        them that torch's path holds at once (`PublicPayoffOperator._class_blocks`). A ranked game
        keeps no matrix: its (a, b) per terminal and the float64 prefix sums over the types that
        an operator call holds at once (`operators.public._ranked_values`); a card game, its
        showdown's tables and a board's rows and sums (`operators.cards`)."""
        e = torch.finfo(dtype).bits // 8
        t0, t1 = self.treeplexes[0].types, self.treeplexes[1].types
        b, z = self.batch_size, self.terminal_seq.shape[1]
        if self.ranked:  # [B, Z, 2] and three [B, Z, T] float64 arrays (rows, prefix sums, result)
            return 8 * b * z * (2 + 3 * max(t0, t1))
        if self.showdown is not None:
            sd = self.showdown
            tables = sum(t.numel() * t.element_size() for f in dataclasses.fields(sd)  # (not the caches)
                         if (v := getattr(sd, f.name)) is not None for t in (v if isinstance(v, tuple) else (v,)))
            # the rows, the two sums and the values of one board's terminals at a time
            per_board = int(torch.bincount(sd.board.cpu(), weights=self.class_offsets.diff().cpu().double()).max())
            return tables + 4 * 8 * b * per_board * max(t0, t1)
        off = self.class_offsets.tolist()
        sizes = [off[k + 1] - off[k] for k in range(len(off) - 1)]
        small = sum(n for n in sizes if n < SMALL_CLASS)
        big = [n * max(t0, t1) for n in sizes if n >= SMALL_CLASS]  # entries of each large class
        block = max([min(sum(big), CLASS_BLOCK_ENTRIES), *big]) if big else 0
        return e * b * (t0 * t1 * (len(off) - 1 + small + len(big)) + 2 * block)

    def payoff_extent(self) -> PayoffExtent:
        """The payoff's magnitude (`forms.PayoffExtent`): each class's matrix counted once per
        terminal of the class; an entry is named by its class and its pair of types."""
        counts = (self.class_offsets[1:] - self.class_offsets[:-1]).to(torch.float64)  # [K]
        if self.payoff_weights is None:
            return self._card_extent(counts)
        W = self.payoff_weights  # [B, K, T0, T1], or [B, K, 2] ranked
        if self.ranked:  # off the diagonal a + b above it, a - b below, n (n - 1) / 2 pairs each
            a, b = W[..., 0], W[..., 1]
            W = torch.stack([(a + b).abs(), (a - b).abs()], -1)  # [B, K, 2]
            n = self.treeplexes[0].types
            counts = counts * (n * (n - 1) / 2)
        per_class = W[0, 0].numel() if W.shape[1] else 1
        # a block of classes at a time: no [B, K, T0, T1] temporaries, each freshly faulted in (the
        # river spot's 22 dense matrices, 207 MB at float64: 564 ms whole on one thread)
        step = max(1, EXTENT_ENTRIES // per_class)
        total = W.new_zeros(W.shape[0])
        large, small, k_large, k_small = 0.0, math.inf, 0, 0
        for k0 in range(0, W.shape[1], step):  # (blocks of classes: the river spot's 22 one at a time)
            w = W[:, k0:k0 + step].abs()  # [B, k, T0, T1] or [B, k, 2]
            total += (w.sum(tuple(range(2, w.dim()))) * counts[k0:k0 + step]).sum(1)
            flat = (w[0] if w.shape[0] == 1 else w.amax(0)).reshape(-1)  # over the members
            i, j = int(flat.argmax()), int(torch.where(flat > 0, flat, math.inf).argmin())
            if float(flat[i]) > large:  # (strictly: the first of equal entries, as one argmax)
                large, k_large = float(flat[i]), k0 * per_class + i
            if 0 < float(flat[j]) < small:
                small, k_small = float(flat[j]), k0 * per_class + j

        def where(which: str) -> str:
            i = k_large if which == "largest" else k_small
            k, rest = divmod(i, per_class)
            if self.ranked:
                return f"payoff class {k}, a pair of types {'above' if rest == 0 else 'below'} the diagonal"
            t1 = self.treeplexes[1].types
            return f"payoff class {k}, types {rest // t1} and {rest % t1}"
        return PayoffExtent(float(total.max()) if total.numel() else 0.0, large, 0.0 if small == math.inf else small,
                            where)

    def _card_extent(self, counts: torch.Tensor) -> PayoffExtent:
        """The extent of a card game without dense matrices, from its factors: the total exact
        (`operators.cards.class_totals`), counted only where a check needs more than its bound
        (each class's factors' sum over the pairs of hands that share no card, `_pair_mass`,
        times its largest |a + b s|), the largest entry an upper bound and the
        smallest nonzero one a lower bound (each class's largest factors times its largest
        |a + b s|, and likewise the smallest), which is the safe side of each check in
        `run.numbers`; of a batch, the largest total and entry and the smallest entry over its
        members (all members at once: [B, K] below where a batch's)."""
        sd = self.showdown
        (d0, d1), ab = sd.factors()  # [(B,) P, T_p], [(B,) K, 2]
        rows = sd.rows(torch.arange(ab.shape[-2], device=ab.device))  # [K] each class's row of d
        counts = counts.to(ab.device)
        a, b = ab[..., 0], ab[..., 1]
        coef = torch.stack([a.abs(), (a + b).abs(), (a - b).abs()], -1)  # [(B,) K, 3]
        # (1 + 1e-9: room for the exact sum's rounding where the bound is tight: one |a + b s|)
        bound = (_pair_mass(sd, d0, d1)[..., rows] * coef.amax(-1) * counts).sum(-1) * (1 + 1e-9)

        def total() -> float:
            sums = (class_sums(sd) * counts).sum(-1)  # [(B,)]
            return float(sums.max()) if sums.numel() else 0.0
        hi = (d0.amax(-1)[..., rows] * d1.amax(-1)[..., rows] * coef.amax(-1)).reshape(-1)  # [(B) K]
        pos = lambda x: torch.where(x > 0, x, math.inf)  # noqa: E731
        lo = (pos(d0).amin(-1)[..., rows] * pos(d1).amin(-1)[..., rows] * pos(coef).amin(-1)).reshape(-1)
        K = max(ab.shape[-2], 1)
        b_large, k_large = divmod(int(hi.argmax()) if hi.numel() else 0, K)  # (a member's, a class of it)
        k_small = (int(lo.argmin()) if lo.numel() else 0) % K
        t_large = tuple(int(d.reshape(-1, d.shape[-2], d.shape[-1])[b_large, rows[k_large]].argmax())
                        if hi.numel() else 0 for d in (d0, d1))

        def where(which: str) -> str:
            if which == "largest":
                return f"payoff class {k_large}, at most, types {t_large[0]} and {t_large[1]}"
            return f"payoff class {k_small}, at least"
        smallest = float(lo.min()) if lo.numel() else 0.0
        return PayoffExtent(total, float(hi.max()) if hi.numel() else 0.0, 0.0 if smallest == math.inf else smallest,
                            where, bound=float(bound.max()) if bound.numel() else 0.0)

    def to(self, device) -> "PublicCompiledGame":
        return dataclasses.replace(self, treeplexes=tuple(t.to(device) for t in self.treeplexes),
                                   terminal_seq=self.terminal_seq.to(device),
                                   class_offsets=self.class_offsets.to(device),
                                   payoff_weights=None if self.payoff_weights is None
                                   else self.payoff_weights.to(device),
                                   deal=None if self.deal is None else self.deal.to(device),
                                   showdown=None if self.showdown is None else self.showdown.to(device))


def _pair_mass(sd: CardShowdown, d0: torch.Tensor, d1: torch.Tensor) -> torch.Tensor:
    """[(B,) P]: each row's sum of |d0[t0]| |d1[t1]| over the pairs of hands that share no card,
    in O(P T) by inclusion and exclusion (all pairs, less those that share a card c, plus those
    that share both: the same hand); hands of more than two cards: all pairs, a bound. A little
    over the sum, never under it: 1e-12 of all pairs' mass added for the subtractions' rounding.

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9T, suits=sh)", form="public")
        >>> sd = cg.showdown
        >>> (d0, d1), _ = sd.factors()
        >>> cards = [sd.cards[h] for h in sd.hands]  # [T_p, 2] each
        >>> apart = ~(cards[0][:, :, None, None] == cards[1][None, None]).any(3).any(1)  # [T0, T1]
        >>> slow = torch.einsum("pi,pj,ij->p", d0.abs(), d1.abs(), apart.double())
        >>> bool(torch.allclose(_pair_mass(sd, d0, d1), slow, rtol=1e-9))
        True
    """
    a0, a1 = d0.abs(), d1.abs()
    every = a0.sum(-1) * a1.sum(-1)  # [(B,) P]
    k = sd.cards.shape[1]
    if k > 2:
        return every
    n = int(sd.cards.max()) + 1
    held = []  # per player [T_p, n]: 1 at each card of each hand
    for h in sd.hands:
        m = torch.zeros(len(h), n, dtype=a0.dtype, device=a0.device)
        m.scatter_(1, sd.cards[h], 1.0)
        held.append(m)
    mass = every - ((a0 @ held[0]) * (a1 @ held[1])).sum(-1)  # less the pairs that share a card
    if k == 2:  # the same hand shares both cards: taken off twice above
        pos = torch.full((int(sd.cards.shape[0]),), -1, dtype=torch.int64, device=a0.device)
        pos[sd.hands[1]] = torch.arange(len(sd.hands[1]), device=a0.device)
        at = pos[sd.hands[0]]  # [T0] player 1's type of the same hand, -1 where none
        both = at >= 0
        mass = mass + (a0[..., both] * a1[..., at[both]]).sum(-1)
    return mass.clamp_min(0) + 1e-12 * every
