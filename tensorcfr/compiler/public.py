"""The public-tree form's compile walk (`compile_public`): breadth-first over the public tree, a
whole level of public nodes per step, with the checks of `games/checks.py` (and those only a
game dealt once needs: what it reads from one deal of types must hold for every pair).

Example:
    >>> cg = compile_public("dudo(4,1,1)")
    >>> cg.sizes()["histories"] == compile_public("dudo(4,1,1)").num_histories
    True
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
from typing import Sequence

import numpy as np
import torch

from tensorcfr.games import CHANCE, TERMINAL, Game
from tensorcfr.games.checks import actions_problem, chance_rows, utility_rows
from tensorcfr.games.vector import vector_form
from tensorcfr.compiler import parallel
from tensorcfr.compiler.members import members_of
from tensorcfr.compiler.sizes import MAX_LEVELS, too_deep
from tensorcfr.errors import TensorCFRError, short_name
from tensorcfr.forms.public import PublicCompiledGame
from tensorcfr.memory import small_pages
from tensorcfr.operators.cards import CardShowdown, apart_hands
from tensorcfr.spaces.public import PublicTreeplex

# From this many pairs of types (T0 T1: OCP from 256 cards) a ranked game keeps no payoff matrix.
# Below it the dense product is as cheap, and its sums round as the generic form's do, so that
# CFR+ meets its ties (regrets 0 in exact arithmetic, +-1e-17 after rounding) the same way in
# both forms (Kuhn, CFR+, iteration 20: 0.9974530 against 0.9964360 ranked).
RANKED_MIN_PAIRS = 1 << 16


def has_public_form(game: Game) -> bool:
    """Whether `game` describes a public tree (`Game.public_form`, and a vectorised form with
    `public_hands` that describes this very game: a subclass that overrides a per-node method
    has none, as in the generic walk, `games.vector.vector_form`)."""
    if not getattr(game, "public_form", False):
        return False
    vg = vector_form(game)
    return vg is not None and getattr(vg, "public_hands", None) is not None


# The checks that involve the private types (the mover, legal actions and infoset key of every
# history, not just of a public node's first deal) evaluate up to this many rows a level: every
# history of a level of up to 262,144 of them, a prefix of the level's public nodes past that.
# They cost Dudo(4,2,2)'s compile 0.32 s (0.08 -> 0.40 s) and Dudo(5,2,2)'s 0.8 s (1.18 -> 1.99 s);
# at 2^20 rows, 1.04 and 2.3 s.
CHECKED_ROWS = 1 << 18
# the walks of a batch's deals kept at once (`compile_public`); those past it are made again.
# A batch compiled here, not on workers (its members' deals add up to under `parallel`'s
# seconds), 50 river spots on boards of their own: 1 GiB kept peaked at 1,200 MB in 4.9-5.0 s,
# 256 MiB at 611 MB in 4.4 s, 128 MiB at 451 MB in 4.0 s, none at 330 MB in 5.0 s (2 cores,
# 2026-11-29); `sizes.public_estimate_bytes` counts them
KEEP_WALK_BYTES = 1 << 27
CHECKED_TYPES = 64  # of a player with more types, this many, evenly spaced, are checked
# ... and this many in a batch's members after the first, whose public tree is compared whole with
# the first's: 4,096 pairs of types a public node cost a river spot 16 of its 55 ms in a batch
# of 200 on boards of their own (2 cores, 2026-11-27)
MEMBER_CHECKED_TYPES = 16
PROGRESS_EVERY = 10.0  # seconds between a long batch compile's lines on stderr
# a member's arrays a worker process may send back (its showdown factors, the pairs chance
# reaches, its matrices): a river spot's 0.5 MB go; a full-range turn spot's 217 MB of factors
# cost more to send than to make here (4 turn spots: 8.1 s on two workers, 5.2 s without)
MAX_RESULT_BYTES = 32 << 20


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the sorted distinct values, each value's index among them) of values [n]: by counting
    where they are small non-negative integers (the hands of a deal), else `np.unique`. On a
    hold'em river spot's 1.07 million deals: 4.3 ms for both players against 46 ms for
    `np.unique` and `np.searchsorted` (measured on the 2-core CPU).

    Example:
        >>> [a.tolist() for a in _distinct(np.array([7, 3, 7, 5]))]
        [[3, 5, 7], [2, 0, 2, 1]]
    """
    if values.dtype.kind in "iu" and values.size and 0 <= values.min() and values.max() <= 4 * values.size + 4096:
        seen = np.bincount(values)
        distinct = np.flatnonzero(seen)
        index = np.zeros(len(seen), np.int64)
        index[distinct] = np.arange(len(distinct))
        return distinct.astype(values.dtype), index[values]
    distinct, index = np.unique(values, return_inverse=True)
    return distinct, index.reshape(-1)


def _set_hands(states: np.ndarray, hands: tuple[int, int], t0, t1) -> np.ndarray:
    out = states.copy()
    out[:, hands[0]] = t0
    out[:, hands[1]] = t1
    return out


class _DensePaths:
    """The chance paths of a walk as matrices: path i's P(public chance outcomes | t0, t1)
    [T0, T1] (one per path: fine while paths x types x types is small; Leduc, Dudo)."""

    def __init__(self, walk: "_PublicWalk"):
        self.walk = walk
        self.m = [np.ones((1, 1) if walk.ranked else walk.P.shape)]

    def __len__(self) -> int:
        return len(self.m)

    def nbytes(self) -> int:
        return sum(m.nbytes for m in self.m)

    def values(self, idx: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """[m, k]: path idx[i]'s probability at the pairs (t0[j], t1[j]), or where t0 and t1 are
        [m, k], at path idx[i]'s own pairs (t0[i, j], t1[i, j])."""
        if not len(idx):
            return np.zeros((0, t0.shape[-1]))
        own = t0.ndim == 2
        return np.stack([self.m[i][(t0[r], t1[r]) if own else (t0, t1)] for r, i in enumerate(idx.tolist())])

    def reach(self, i: int) -> np.ndarray:
        """[T0, T1]: the deal times path i's probability."""
        return self.walk.P * self.m[i]

    def chance(self, s: np.ndarray, path: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(state, outcome) of each child of public chance states `s` on paths `path`: an outcome
        is a child where it has positive probability for some pair of types the path still
        allows; each child gets a new path, the parent's times P(outcome | t0, t1)."""
        w = self.walk
        T0, T1 = w.P.shape
        full = w.full(s)
        pr = np.asarray(w.vg.chance(full), dtype=np.float64).reshape(len(s), T0, T1, -1)  # [n, T0, T1, C]
        live = (w.P > 0)[None] & (np.stack([self.m[k] for k in path.tolist()]) > 0)  # [n, T0, T1]
        w._check_chance(pr[live], full[live.reshape(-1)])
        pr = pr * live[..., None]
        i, c = np.nonzero(pr.any(axis=(1, 2)))
        self.m.extend(self.m[path[k]] * pr[k, :, :, o] for k, o in zip(i.tolist(), c.tolist()))
        return i, c

    def live_types(self, p: int) -> np.ndarray:
        """[paths, T_p] bool: the types of player p that some pair the path allows holds."""
        r = (self.walk.P[None] > 0) & (np.stack(self.m) > 0)
        return r.any(2) if p == 0 else r.any(1)

    def mass(self, idx: np.ndarray) -> np.ndarray:
        """[len(idx)]: the probability that chance deals and follows each path idx[i]."""
        return np.array([self.reach(i).sum() for i in idx.tolist()])

    def histories(self) -> np.ndarray:
        """[paths]: the deals (histories below a public node) each path allows."""
        r = (self.walk.P[None] > 0) & (np.stack(self.m) > 0)
        return (r * self.walk.deals[None]).sum((1, 2))

    def same(self, other, masks: bool = True) -> bool:
        """Whether `other` has the same chance paths (`masks`: also the same pairs of types on
        each; dense paths always compare them)."""
        return type(other) is type(self) and len(self) == len(other) and all(
            np.array_equal(a, b) for a, b in zip(self.m, other.m))


class _CardPaths:
    """The chance paths of a card game whose public chance deals cards (`VectorGame.card_chance`):
    path i's probability is q_i m0_i(t0) m1_i(t1), a number times whether each type holds none
    of the path's cards, so no [T0, T1] matrix is kept per path (a turn spot's 1,968 paths of
    1,128 x 1,128 hands would take 20 GB). The claim is checked against `chance` on sampled
    pairs of types at every chance node."""

    def __init__(self, walk: "_PublicWalk", cards: np.ndarray):
        self.walk = walk
        T = walk.P.shape
        # [52, T_p] whether each type holds each card
        self.holds = [np.zeros((52, T[p]), bool) for p in (0, 1)]
        for p in (0, 1):
            for j in range(cards.shape[1]):
                self.holds[p][cards[walk.type_values[p], j], np.arange(T[p])] = True
        self.q = [1.0]
        self.m = [[np.ones(T[0], bool)], [np.ones(T[1], bool)]]
        # the dealt paths each path stands for (1 + the cards whose subtree it deals too, by
        # `VectorGame.card_symmetries`, times its parent's)
        self.mult = [1]
        self.pb = (walk.P > 0).astype(np.float32)  # [T0, T1] the pairs the deal allows
        self._stacked: tuple[np.ndarray, np.ndarray] | None = None  # `masks()`, made once per count of paths
        self._live: dict = {}  # `live_types` per player, for the paths `masks()` stacked

    def __len__(self) -> int:
        return len(self.q)

    def nbytes(self) -> int:
        """Bytes of its arrays: the [T0, T1] pairs the deal allows, the cards each type holds and
        the paths' masks."""
        return int(self.pb.nbytes + sum(h.nbytes for h in self.holds) + sum(m.nbytes for ms in self.m for m in ms))

    def masks(self) -> tuple[np.ndarray, np.ndarray]:
        """[paths, T_p] per player, stacked once for as many paths as there are (the showdown's
        checks read them 4,096 classes at a time: a flop spot's 60,000 paths stacked anew for
        each took 4.4 of its 20.8 s compile)."""
        if self._stacked is None or len(self._stacked[0]) != len(self.q):
            self._stacked = (np.stack(self.m[0]), np.stack(self.m[1]))
            self._live = {}  # (`live_types` of the paths before)
        return self._stacked

    def values(self, idx: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        q = np.asarray(self.q)[idx]
        m0, m1 = (m[idx] for m in self.masks())
        if t0.ndim == 2:  # each path its own pairs
            return q[:, None] * np.take_along_axis(m0, t0, 1) * np.take_along_axis(m1, t1, 1)
        return q[:, None] * m0[:, t0] * m1[:, t1]

    def reach(self, i: int) -> np.ndarray:
        return self.walk.P * (self.q[i] * np.outer(self.m[0][i], self.m[1][i]))

    def chance(self, s: np.ndarray, path: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(state, outcome, mirror set) of each child (`_DensePaths.chance`); where the game
        names symmetries (`VectorGame.card_symmetries`), one child a class of cards, whose
        mirror set (`_PublicWalk.mirror_set`, 0: none) lists the permutations of the others."""
        w = self.walk
        card, q = (np.asarray(v) for v in w.vg.card_chance(s))  # [n, C'] each
        card, q = card.astype(np.int64), q.astype(np.float64)
        self._check(s, path, card, q)
        canon, swap = w.symmetries(s, card.shape[1])
        m0, m1 = self.masks()
        kids_i, kids_c, kids_m = [], [], []
        for k in range(len(s)):  # compile time: a chance state at a time, its outcomes at once
            dealt = (q[k] > 0) & (card[k] >= 0)
            o = np.flatnonzero(dealt & (canon[k] == np.arange(len(dealt))))  # one outcome a class
            twins = np.flatnonzero(dealt & (canon[k] != np.arange(len(dealt))))
            if len(twins) and not np.array_equal(q[k, twins], q[k, canon[k, twins]]):
                raise w._fail("its card_symmetries() pairs cards of unequal probabilities", s[k])
            a0 = m0[path[k]][None] & ~self.holds[0][card[k, o]]  # [O, T0]
            a1 = m1[path[k]][None] & ~self.holds[1][card[k, o]]  # [O, T1]
            alive = ((a0.astype(np.float32) @ self.pb) * a1).sum(1) > 0  # some pair the deal allows
            for j in np.flatnonzero(alive).tolist():
                perms = swap[k, twins[canon[k, twins] == o[j]]]
                kids_m.append(w.mirror_set(perms))
                self.q.append(self.q[path[k]] * float(q[k, o[j]]))
                self.mult.append(self.mult[path[k]] * (1 + len(perms)))
                self.m[0].append(a0[j])
                self.m[1].append(a1[j])
            kids_i.append(np.full(int(alive.sum()), k))
            kids_c.append(o[alive])
        return (np.concatenate(kids_i).astype(np.int64), np.concatenate(kids_c).astype(np.int64),
                np.array(kids_m, np.int64))

    def _check(self, s: np.ndarray, path: np.ndarray, card: np.ndarray, q: np.ndarray) -> None:
        """`card_chance` against `chance` on sampled pairs of types of up to 64 chance states."""
        w = self.walk
        k0, k1 = (np.unique(np.linspace(0, len(v) - 1, min(len(v), 16)).round().astype(np.int64))
                  for v in w.type_values)
        t0, t1 = (x.reshape(-1) for x in np.meshgrid(k0, k1, indexing="ij"))
        n = min(len(s), 64)
        live = (w.P[t0, t1] > 0)[None] & (self.values(path[:n], t0, t1) > 0)  # [n, pairs]
        row, pair = np.nonzero(live)
        if not len(row):
            return
        full = _set_hands(s[row], w.hands, w.type_values[0][t0[pair]], w.type_values[1][t1[pair]])
        pr = np.asarray(w.vg.chance(full), dtype=np.float64)  # [r, C]
        w._check_chance(pr, full)
        c = card[row]  # [r, C']
        held = np.where(c >= 0, self.holds[0][c.clip(0), t0[pair][:, None]] | self.holds[1][c.clip(0), t1[pair][:, None]],
                        True)
        # the listed cards' columns against their probabilities, and every other column against 0,
        # read in place: pr has a column for each outcome of any chance node (a flop spot's 1,326
        # deals), and a [rows, 1,326] array of the wanted numbers made beside it took 1.0 of the
        # spot's 7-s compile
        k = c.shape[1]
        off = np.abs(pr[:, :k] - np.where(held, 0.0, q[row])).max(axis=1)
        if pr.shape[1] > k:
            off = np.maximum(off, np.abs(pr[:, k:]).max(axis=1))
        bad = off > 1e-12
        if bad.any():
            i = int(np.argmax(bad))
            raise w._fail("its card_chance() does not describe its chance probabilities "
                          f"(off by {off[i]:.3g})", full[i])

    def mass(self, idx: np.ndarray) -> np.ndarray:
        m0, m1 = (m[idx].astype(np.float64) for m in self.masks())
        return np.asarray(self.q)[idx] * ((m0 @ self.walk.P) * m1).sum(1)

    def live_types(self, p: int) -> np.ndarray:
        """[paths, T_p] bool, read-only: made once per player and count of paths (three readers
        a player; each a [paths, T_o] x [T_o, T_p] product, 0.1 s on the isomorphic flop spot)."""
        m0, m1 = self.masks()  # (made anew, it drops the live types of fewer paths)
        if p not in self._live:
            got = m0 & ((m1.astype(np.float32) @ self.pb.T) > 0) if p == 0 else m1 & ((m0.astype(np.float32) @ self.pb) > 0)
            got.flags.writeable = False
            self._live[p] = got
        return self._live[p]

    def histories(self) -> np.ndarray:
        m0, m1 = self.masks()
        deals = self.walk.deals.astype(np.float64)
        return np.rint(((m0.astype(np.float64) @ deals) * m1).sum(1)).astype(np.int64) * np.asarray(self.mult)

    def same(self, other, masks: bool = True) -> bool:
        """Whether `other` has as many paths with the same probabilities (`masks`: and the same
        types holding none of each path's cards; without, turn spots on other boards match,
        whose river cards differ, each member keeping its own masks in its showdown factors)."""
        return type(other) is type(self) and len(self) == len(other) and np.array_equal(self.q, other.q) and (
            np.array_equal(self.mult, other.mult)) and (
            not masks or all(np.array_equal(np.stack(a), np.stack(b)) for a, b in zip(self.m, other.m)))


class _PublicWalk:
    """Breadth-first expansion of the public tree, a whole level of public nodes per step."""

    def __init__(self, game: Game, ranked: bool | None = None, checked_types: int = CHECKED_TYPES,
                 within: list[np.ndarray] | None = None):
        """`within`: a batch's types (per player, sorted, a superset of this game's), taken as its
        own as `widen` takes them."""
        self.game, self.checked_types = game, checked_types
        self.vg = vg = vector_form(game)
        self.widened = False  # its types a batch's union (`widen`, `within`), not its own deal's
        # the mirror sets met (`mirror_set`: 0, the empty one, for none) and the permutations of
        # the private values they list (`VectorGame.card_symmetries`; None until one is met)
        self.sets: list[tuple[int, ...]] = [()]
        self.set_ids: dict[tuple[int, ...], int] = {(): 0}
        self.perms: np.ndarray | None = None
        self.hands = vg.public_hands
        problem = actions_problem(vg.actions)
        if problem:
            raise TensorCFRError(f"{game.name}: {problem}")
        deal = vg.ranked_deal() if ranked is not False else None
        if deal is not None and ranked is None and deal[0] ** 2 < RANKED_MIN_PAIRS:
            deal = None  # small: the dense matrices, whose sums round as the generic form's do
        self.ranked = deal is not None  # see `VectorGame.ranked_deal`: no [T0, T1] table is made
        self.checked_keys: list[list[np.ndarray]] = [[], []]  # infoset keys met by `_check_level`
        if self.ranked:
            n, root, self.deal_nodes, self.deal_levels = deal
            if n * n <= CHECKED_ROWS:  # the claim checked against the deal itself
                self._deal()
                self._check_ranked(n, root)
            self.type_values = [np.arange(n), np.arange(n)]
            self.root = _set_hands(root, self.hands, 0, 0)
        else:
            if vg.dealt_by_type():
                self._typed_deal(within)
                within = None
            else:
                self._deal()
        self.paths = self._paths()
        if within is not None:
            self.widen(within)

    def _paths(self):
        """`_CardPaths` where the game's public chance deals cards (`VectorGame.card_chance`) to
        types that are sets of cards (`card_showdown`), else `_DensePaths`."""
        claim = None if self.ranked else self.vg.card_showdown()
        if claim is not None and self.vg.card_chance(self.root) is not None:
            return _CardPaths(self, np.asarray(claim[0], dtype=np.int64))
        return _DensePaths(self)

    def _deal(self):
        """Walk the deal (every chance level before the first decision): the types, their joint
        probability P [T0, T1] and the public state every deal leads to."""
        vg, name = self.vg, self.game.name
        states, probs, self.deal_nodes, self.deal_levels = vg.initial(), np.ones(1), 0, 0
        for _ in range(MAX_LEVELS):
            pl = vg.player(states)
            if not (pl == CHANCE).any():
                break
            if not (pl == CHANCE).all():
                raise TensorCFRError(f"{name}: a player moves before the deal is over; no public-tree form")
            self.deal_nodes += len(states)
            self.deal_levels += 1
            pr = np.asarray(vg.chance(states), dtype=np.float64)  # [n, C]
            self._check_chance(pr, states)
            i, c = np.nonzero(pr > 0)
            states, probs = vg.next(states[i], c), probs[i] * pr[i, c]
        else:
            raise too_deep(name)
        self._table(states[:, self.hands[0]], states[:, self.hands[1]], probs)
        # every deal must leave the same state but for the hands (compared column by column: a
        # copy of the states with the hands set, compared whole, cost about 40 ms of a river spot's walk)
        rest = [j for j in range(states.shape[1]) if j not in self.hands]
        if not all((states[:, j] == states[0, j]).all() for j in rest):
            raise TensorCFRError(f"{name}: the state after the deal depends on more than the dealt types; "
                                 "no public-tree form")
        self.root = _set_hands(states[:1], self.hands, self.type_values[0][0], self.type_values[1][0])

    def _table(self, h0: np.ndarray, h1: np.ndarray, probs: np.ndarray) -> None:
        """The types, P [T0, T1] and deals [T0, T1] of the deals whose types are h0, h1 [D] with
        probabilities probs [D]."""
        # [T_p] type index -> hand value, and [D] each deal's type index
        (self.type_values, t) = zip(*(_distinct(h) for h in (h0, h1)))
        self.type_values = list(self.type_values)
        shape = (len(self.type_values[0]), len(self.type_values[1]))
        pair = t[0] * shape[1] + t[1]  # (a bincount: np.add.at took 0.35 s of a 4-spot hold'em batch's 3.3 s)
        self.P = np.bincount(pair, weights=probs, minlength=shape[0] * shape[1]).reshape(shape)
        # [T0, T1] deals (outcome sequences) that lead to each pair of types: Liar's Dice with two
        # dice each deals (1, 2) and (2, 1), one type, two histories below every public node
        self.deals = np.bincount(pair, minlength=shape[0] * shape[1]).reshape(shape).astype(np.int64, copy=False)

    def _typed_deal(self, within: list[np.ndarray] | None = None) -> None:
        """`_deal` for a game whose deal is two chance levels, player 0's type and then player
        1's, each outcome the type's value (`VectorGame.dealt_by_type`): the same products and
        sums, without making the million states after the deal (a hold'em spot: 1.07 million);
        the claim is checked on the states below `checked_types` evenly spaced hands of player 0,
        or all of them where they are at most `CHECKED_ROWS`. `within`: as `widen(within)` after
        it, without making the narrower tables first."""
        vg = self.vg
        fail = _typed_fail(self.game)
        s0, pr0, c0, s1, pr = _typed_levels(vg, self.hands, fail, self._check_chance)
        # `_table` of the deals (c0[i], c) with probabilities pr0 pr, i, c = np.nonzero(pr > 0),
        # made densely: each pair is dealt once, so its cell of the bincount is that one product,
        # the same bits as pr0[t0] pr[t0, t1] here (and 0 where pr is 0); the million deals are
        # neither listed nor counted (70 of a spot's 140 ms in a batch of river spots on boards
        # of their own)
        live = pr > 0  # [T0, C]
        cols = np.flatnonzero(live.any(0))  # [T1] player 1's types
        self.type_values = [c0, cols]
        self.deal_nodes, self.deal_levels = 1 + len(c0), 2
        if within is None:
            self.P = pr0[0, c0][:, None] * pr[:, cols]  # [T0, T1]
            self.deals = live[:, cols].astype(np.uint8)  # (0 or 1: a byte a pair, not 8, for the walks a batch keeps)
        else:  # `widen(within)` made at once: the same products, written where the wider types put them
            at = np.searchsorted(within[0], c0)
            if not (np.array_equal(within[0][np.minimum(at, len(within[0]) - 1)], c0)
                    and np.isin(cols, within[1]).all()):
                raise TensorCFRError(f"{self.game.name}: its types are not among the batch's")
            self.P = np.zeros((len(within[0]), len(within[1])))
            self.P[at] = pr0[0, c0][:, None] * np.take(pr, within[1], axis=1)  # (0 where pr is: never dealt)
            self.deals = np.zeros(self.P.shape, np.uint8)
            self.deals[at] = live[:, within[1]]
        # the states after the deal below some or all of player 0's types: decisions, with the
        # two types set and the rest one public state
        rows = np.arange(len(c0)) if int(live.sum()) <= CHECKED_ROWS else self._sampled_types()[0]
        i, c = np.nonzero(live[rows])
        i = rows[i]
        s2 = vg.next(s1[i], c)
        rest = [j for j in range(s2.shape[1]) if j not in self.hands]
        if not ((vg.player(s2) != CHANCE).all() and np.array_equal(s2[:, self.hands[0]], c0[i])
                and np.array_equal(s2[:, self.hands[1]], c) and (s2[:, rest] == s2[:1, rest]).all()):
            raise fail
        if within is not None:
            self.type_values = [np.asarray(t) for t in within]
            self.widened = True
        self.root = _set_hands(s2[:1], self.hands, self.type_values[0][0], self.type_values[1][0])

    @staticmethod
    def types_of(game: Game, ranked: bool | None = None) -> list[np.ndarray]:
        """Its `type_values` (per player, the sorted hand values it deals), made without the rest
        of the walk where the game deals by type (`VectorGame.dealt_by_type`): the first pass
        over a batch's members that are not kept (past `KEEP_WALK_BYTES`, or walked by worker
        processes), whose walks are made whole in their turn (which checks what this reads).

        Example:
            >>> [len(t) for t in _PublicWalk.types_of(members_of("holdem_river(board=Ks7d2c9h4s)")[0])]
            [1081, 1081]
        """
        vg = vector_form(game)
        if not vg.dealt_by_type() or (ranked is not False and vg.ranked_deal() is not None):
            return _PublicWalk(game, ranked).type_values
        _, _, c0, _, pr = _typed_levels(vg, vg.public_hands, _typed_fail(game))
        return [c0, np.flatnonzero((pr > 0).any(0))]

    def nbytes(self) -> int:
        """Bytes of its [T0, T1] tables (the deal's probabilities and counts, its chance paths'; a
        ranked deal has none)."""
        if self.ranked and not hasattr(self, "P"):
            return 0
        paths = getattr(self, "paths", None)
        return int(self.P.nbytes + self.deals.nbytes + (paths.nbytes() if paths is not None else 0))

    def widen(self, types: list[np.ndarray]) -> None:
        """Take the types `types` (per player, sorted hand values, a superset of this deal's) as
        its own, those it never deals with probability 0: batch members whose supports differ
        (hold'em spots on other boards, whose hands holding a board card are not dealt) then
        share one set of types."""
        at = [np.searchsorted(types[p], self.type_values[p]) for p in (0, 1)]
        P = np.zeros((len(types[0]), len(types[1])))
        P[np.ix_(at[0], at[1])] = self.P
        deals = np.zeros(P.shape, self.deals.dtype)
        deals[np.ix_(at[0], at[1])] = self.deals
        self.type_values, self.P, self.deals = [np.asarray(t) for t in types], P, deals
        self.widened = True
        self.root = _set_hands(self.root, self.hands, self.type_values[0][0], self.type_values[1][0])
        self.__dict__.pop("pairs", None)
        self.paths = self._paths()

    def _check_ranked(self, n: int, root: np.ndarray) -> None:
        """`VectorGame.ranked_deal` promises ranks 0..n-1 to each player, every ordered pair of
        distinct ranks with probability 1/(n(n-1)), and one public state after the deal."""
        want = np.full((n, n), 1.0 / (n * (n - 1)))
        np.fill_diagonal(want, 0.0)
        ranks = all(np.array_equal(v, np.arange(n)) for v in self.type_values)
        cols = [c for c in range(root.shape[1]) if c not in self.hands]
        if not (ranks and np.allclose(self.P, want, rtol=0, atol=1e-12)
                and np.array_equal(self.root[:, cols], np.asarray(root)[:, cols])):
            raise TensorCFRError(f"{self.game.name}: its ranked_deal() does not describe its deal (every ordered "
                                 f"pair of distinct ranks 0..{n - 1} equally likely, then one public state)")

    def _fail(self, what: str, state: np.ndarray) -> TensorCFRError:
        return TensorCFRError(f"{self.game.name}: state {np.asarray(state).tolist()}: {what}")

    def _check_chance(self, pr: np.ndarray, states: np.ndarray) -> None:
        """Chance probabilities of chance states `states` [n, width]: pr [n, C] (`games.checks`)."""
        bad = chance_rows(pr)
        if bad.any():
            i = int(np.argmax(bad))
            raise self._fail(f"chance probabilities {pr[i][pr[i] != 0].tolist()} do not sum to 1", states[i])

    def _sampled_types(self) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the types `_check_level` evaluates, per player: all, or `checked_types`
        evenly spaced ones (the first and last included)."""
        return tuple(np.unique(np.linspace(0, len(v) - 1, min(len(v), self.checked_types)).round().astype(np.int64))
                     for v in self.type_values)

    def _check_level(self, states: np.ndarray, pl: np.ndarray, legal: dict, path: np.ndarray) -> None:
        """What the walk reads from one deal of types (the mover, the legal actions) must hold for
        every pair of types the level's chance paths allow, and the mover's infoset key must be
        the same for every type of the other player (else the game is not dealt once: a player
        would see the other's type) — the checks the generic walk makes history by history, on
        up to `CHECKED_ROWS` rows a level. The keys met are kept for `check_keys`."""
        k0, k1 = self._sampled_types()
        pairs = len(k0) * len(k1)
        m = min(len(states), max(1, CHECKED_ROWS // pairs))
        if not m:
            return
        s, pl, path = states[:m], pl[:m], path[:m]
        t0, t1 = np.meshgrid(k0, k1, indexing="ij")
        t0, t1 = t0.reshape(-1), t1.reshape(-1)
        if self.ranked:
            live = np.broadcast_to(t0 != t1, (m, pairs))
        else:
            live = ((self.P[t0, t1] > 0)[None] & (self.paths.values(path, t0, t1) > 0))  # [m, pairs]
        full = _set_hands(np.repeat(s, pairs, axis=0), self.hands, np.tile(self.type_values[0][t0], m),
                          np.tile(self.type_values[1][t1], m))  # [m pairs, width]
        row, pair = np.nonzero(live)
        flat = row * pairs + pair
        got = np.asarray(self.vg.player(full[flat]), dtype=np.int64)
        bad = got != pl[row]
        if bad.any():
            i = int(np.argmax(bad))
            raise self._fail(f"player {got[i]} moves here but {pl[row[i]]} at the same public state with other "
                             "private types; no public-tree form", full[flat[i]])
        for p in (0, 1):
            mine = pl[row] == p
            if not mine.any():
                continue
            r, f = row[mine], flat[mine]
            g = np.asarray(self.vg.legal(full[f]), dtype=bool)
            differ = (g != legal[p][r]).any(axis=1)
            if differ.any():
                i = int(np.argmax(differ))
                acts = lambda x: [self.vg.actions[a] for a in np.flatnonzero(x)]  # noqa: E731
                raise self._fail(f"legal actions {acts(g[i])} here but {acts(legal[p][r[i]])} at the same public "
                                 "state with other private types; no public-tree form", full[f[i]])
            keys = np.asarray(self.vg.infoset(full[f]), dtype=np.int64)
            own = (t0 if p == 0 else t1)[pair[mine]]
            # one key per (public node, own type): sort by that pair, compare neighbours
            order = np.lexsort((own, r))
            same = (r[order][1:] == r[order][:-1]) & (own[order][1:] == own[order][:-1])
            clash = same & (keys[order][1:] != keys[order][:-1])
            if clash.any():
                i = order[1:][int(np.argmax(clash))]
                raise self._fail(f"player {p}'s infoset key here depends on the other player's private type "
                                 f"({self.vg.infoset_names(keys[i:i + 1])[0]!r} for one of them); no public-tree form",
                                 full[f[i]])
            first = np.concatenate([[True], ~same])
            self.checked_keys[p].append(keys[order][first])

    def check_keys(self) -> None:
        """Every public infoset (public node, own type) met by `_check_level` has a key of its
        own: two with one key would be one infoset to the game (perfect recall fails, or both
        players move at it), two to the public-tree form."""
        keys = [np.concatenate(k) if k else np.zeros(0, np.int64) for k in self.checked_keys]
        self.checked_keys = [[], []]
        names = self.vg.infoset_names
        both = np.intersect1d(*keys)
        if len(both):
            raise TensorCFRError(f"{self.game.name}: infoset {names(both[:1])[0]!r} holds histories of both players")
        for p in (0, 1):
            u, count = np.unique(keys[p], return_counts=True)
            if (count > 1).any():
                raise TensorCFRError(f"{self.game.name}: perfect recall fails at infoset "
                                     f"{names(u[count > 1][:1])[0]!r}: it spans two public states of player {p}")

    @functools.cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """[T0 T1] hand values of every pair of types, player 0's major (made when first asked
        for: a walk that keeps no dense matrix never needs them)."""
        t0, t1 = np.meshgrid(self.type_values[0], self.type_values[1], indexing="ij")
        return t0.reshape(-1), t1.reshape(-1)

    def full(self, states: np.ndarray) -> np.ndarray:
        """[n T0 T1, width]: every public state with every pair of types. Written in place by
        broadcasting (a river spot's 22 x 1.17 million rows: np.repeat, np.tile and a copy took
        4.6 of its 6.8 s compile)."""
        k, n = len(states), len(self.pairs[0])
        out = np.empty((k, n, states.shape[1]), dtype=states.dtype)  # [k, T0 T1, width]
        out[:] = states[:, None, :]
        out[:, :, self.hands[0]] = self.pairs[0]
        out[:, :, self.hands[1]] = self.pairs[1]
        return out.reshape(k * n, -1)

    def run(self) -> dict:
        vg, name = self.vg, self.game.name
        states = self.root
        e = np.zeros((1, 2), np.int64)  # last public sequence of each player (0: the empty one)
        d = np.zeros((1, 2), np.int64)  # own depth (treeplex level) of each player
        path = np.zeros(1, np.int64)
        # per player, the mirror set (`mirror_set`) of the card classes dealt since the player's
        # last decision: its values reach its last sequence through each permutation the set
        # lists too (recorded at its next infoset; 0: none)
        mir = np.zeros((1, 2), np.int64)
        info = [{"parent": [], "level": [], "count": [], "path": [], "state": [], "action": [], "mirror": []}
                for _ in (0, 1)]
        nseq = [1, 1]
        terms = {"e": [], "path": [], "state": []}
        node_paths = {"decision": [], "chance": [], "terminal": []}
        levels = 0
        for _ in range(MAX_LEVELS):
            if not len(states):
                break
            levels += 1
            pl = np.asarray(vg.player(states), dtype=np.int64)
            bad = ~np.isin(pl, (0, 1, CHANCE, TERMINAL))
            if bad.any():
                i = int(np.argmax(bad))
                raise self._fail(f"player {pl[i]} is not 0, 1, chance or terminal", states[i])
            legal_of: dict[int, np.ndarray] = {p: np.zeros((len(states), len(vg.actions)), bool) for p in (0, 1)}
            children = []
            term = pl == TERMINAL
            if (mir[term] > 0).any():
                k = int(np.flatnonzero(term)[np.argmax((mir[term] > 0).any(1))])
                raise self._fail("its card_symmetries() names a class of cards below which some player "
                                 "reaches a terminal without acting", states[k])
            terms["e"].append(e[term])
            terms["path"].append(path[term])
            terms["state"].append(_compact(states[term]))  # kept for the payoff classes
            node_paths["terminal"].append(path[term])
            for p in (0, 1):
                mine = np.flatnonzero(pl == p)
                if not len(mine):
                    continue
                s = states[mine]
                legal = np.asarray(vg.legal(s), dtype=bool)  # [m, A]
                if not legal.any(axis=1).all():
                    raise self._fail("no legal actions", s[int(np.argmin(legal.any(axis=1)))])
                legal_of[p][mine] = legal
                row, a = np.nonzero(legal)  # grouped by node, actions in alphabet order
                ids = nseq[p] + np.arange(len(row))
                nseq[p] += len(row)
                I = info[p]
                I["parent"].append(e[mine, p])
                I["level"].append(d[mine, p])
                I["count"].append(legal.sum(1))
                I["path"].append(path[mine])
                I["state"].append(_compact(s))  # kept for naming
                I["action"].append(a)
                I["mirror"].append(mir[mine, p])
                node_paths["decision"].append(path[mine])
                ce, cd, cm = e[mine][row], d[mine][row], mir[mine][row]
                ce[:, p] = ids
                cd[:, p] += 1
                cm[:, p] = 0
                children.append((vg.next(s[row], a), ce, cd, path[mine][row], cm))
            self._check_level(states, pl, legal_of, path)
            ch = np.flatnonzero(pl == CHANCE)
            if len(ch):
                children.append(self._chance(states[ch], e[ch], d[ch], path[ch], mir[ch]))
                node_paths["chance"].append(path[ch])
            if children:
                states = np.concatenate([c[0] for c in children])
                e = np.concatenate([c[1] for c in children])
                d = np.concatenate([c[2] for c in children])
                path = np.concatenate([c[3] for c in children])
                mir = np.concatenate([c[4] for c in children])
            else:
                states = states[:0]
        else:
            raise too_deep(name)
        self.check_keys()
        cat = lambda xs, dt=np.int64: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)  # noqa: E731
        return {"info": [{k: (np.concatenate(v) if v else np.zeros((0, states.shape[1]) if k == "state" else 0, np.int64))
                          for k, v in I.items()} for I in info],
                "terms": {"e": np.concatenate(terms["e"]), "path": cat(terms["path"]),
                          "state": np.concatenate(terms["state"])},
                "node_paths": {k: cat(v) for k, v in node_paths.items()},
                "levels": self.deal_levels + levels,
                "mirrors": None if self.perms is None else (self.sets, self.type_perms())}

    def _chance(self, s, e, d, path, mir):
        """Children of public chance nodes (`_DensePaths.chance`, `_CardPaths.chance`): their
        states, sequences, depths, new chance paths and pending mirror sets (`run`)."""
        if self.ranked:
            raise TensorCFRError(f"{self.game.name}: a ranked deal (VectorGame.ranked_deal) with public chance "
                                 "after it")
        first = len(self.paths)
        i, c, *rest = self.paths.chance(s, path)
        m = mir[i].copy()
        if rest:
            new = rest[0] > 0
            clash = new & (m > 0).any(1)  # a class below a class, some player not acting between
            if clash.any():
                k = int(np.argmax(clash))
                raise self._fail("its card_symmetries() names a class of cards before some player acted "
                                 "below the previous one", s[i[k]])
            m[new] = rest[0][new, None]
        return self.vg.next(s[i], c), e[i], d[i], first + np.arange(len(i)), m

    def symmetries(self, s: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        """(canon [n, width], swap [n, width]) of `VectorGame.card_symmetries` at chance states
        `s`: every outcome its own class where the game names none."""
        got = self.vg.card_symmetries(s)
        if got is None:
            return np.broadcast_to(np.arange(width), (len(s), width)), np.zeros((len(s), width), np.int64)
        canon, swap, perms = (np.asarray(v, dtype=np.int64) for v in got)
        if self.widened:  # the union's hands: a board's card in another's hands, which no permutation of its own keeps
            raise TensorCFRError(f"{self.game.name}: a batch of spots that deal other hands (boards of their own) "
                                 "cannot deal one card of each class (suit_isomorphism=True): solve them without it, "
                                 "or one at a time")
        if self.perms is None:
            self.perms = perms
            at = self.type_perms()  # each maps each player's types onto themselves
            for k in range(len(perms)):
                if not (np.array_equal(at[0][k][at[0][k]], np.arange(len(at[0][k])))  # its own inverse
                        and np.array_equal(self.P[np.ix_(at[0][k], at[1][k])], self.P)):  # the deal's probabilities kept
                    raise self._fail(f"its card_symmetries() permutation {k} is not its own inverse or "
                                     "changes the deal's probabilities", s[0])
        elif not np.array_equal(perms, self.perms):
            raise self._fail("its card_symmetries() permutations differ between calls", s[0])
        return canon[:, :width], swap[:, :width]

    def type_perms(self) -> list[np.ndarray]:
        """Per player [K, T_p]: `perms` as permutations of the player's types (positions in
        `type_values`)."""
        out = []
        for p in (0, 1):
            values = self.type_values[p]
            pv = self.perms[:, values]  # [K, T_p] the values the types map to
            if not np.isin(pv, values).all():
                raise TensorCFRError(f"{self.game.name}: its card_symmetries() permutations map a type of "
                                     f"player {p} outside the types dealt (the ranges are not symmetric)")
            out.append(np.searchsorted(values, pv))
        return out

    def mirror_set(self, perms: np.ndarray) -> int:
        """The id of the mirror set listing the permutations `perms` (ids into `perms`; 0: none)."""
        key = tuple(sorted(int(k) for k in perms))
        if key not in self.set_ids:
            self.set_ids[key] = len(self.sets)
            self.sets.append(key)
        return self.set_ids[key]


def compile_public(game: str | Game | Sequence[str | Game], ranked: bool | None = None) -> PublicCompiledGame:
    """Compile a game dealt once (or a batch of them over one tree) into the public-tree form.
    Where the game's deal is ranked (`VectorGame.ranked_deal`: OCP, Kuhn), `ranked=True` keeps
    (a, b) per payoff class instead of [T0, T1] matrices (O(T) products), `False` the dense
    matrices, and None (the default) the ranked form from `RANKED_MIN_PAIRS` pairs of types.

    Example:
        >>> cg = compile_public("dudo(4,1,1)")
        >>> cg.sizes()["histories"] == compile_public("dudo(4,1,1)").num_histories
        True
    """
    members = members_of(game)
    for g in members:
        if not has_public_form(g):
            raise TensorCFRError(f"{g.name} has no public-tree form (its private information is not dealt once "
                                 "at the start); use form='generic'")
    with small_pages():  # (`memory.small_pages`: why; `compile` runs so too, this is for a direct call)
        return _compile_members(members, ranked)


def _typed_fail(game: Game) -> TensorCFRError:
    return TensorCFRError(f"{game.name}: its dealt_by_type() does not describe its deal (two chance "
                          "levels, player 0's type and then player 1's, then one public state)")


def _typed_levels(vg, hands, fail: TensorCFRError, check=None):
    """The two chance levels of a deal by type (`VectorGame.dealt_by_type`): the root s0 [1, width]
    and its probabilities pr0 [1, C], player 0's types c0 [T0], the states after them s1 [T0,
    width] and their probabilities pr [T0, C]; `check(pr, states)` is called on each level's."""
    s0 = vg.initial()
    if not (vg.player(s0) == CHANCE).all():
        raise fail
    pr0 = np.asarray(vg.chance(s0), dtype=np.float64)  # [1, C]
    if check is not None:
        check(pr0, s0)
    c0 = np.flatnonzero(pr0[0] > 0)  # [T0]
    s1 = vg.next(np.repeat(s0, len(c0), axis=0), c0)  # [T0, width]
    if not ((vg.player(s1) == CHANCE).all() and np.array_equal(s1[:, hands[0]], c0)):
        raise fail
    pr = np.asarray(vg.chance(s1), dtype=np.float64)  # [T0, C]
    if check is not None:
        check(pr, s1)
    return s0, pr0, c0, s1, pr


def _compile_members(members: list[Game], ranked: bool | None) -> PublicCompiledGame:
    """`compile_public`'s walks and assembly, of games known to have the public-tree form."""
    # each member's walk of its deal, kept while they hold KEEP_WALK_BYTES in all (a river
    # spot's holds 15 MB of [T0, T1] tables: a thousand spots would keep 15 GB); past that only
    # the types they deal are read (`_PublicWalk.types_of`), and the walk made in its turn.
    # Where the members' deals add up to seconds, worker processes read their types
    # (`parallel`), and no walk is kept here
    started = time.perf_counter()
    walks = [_PublicWalk(members[0], ranked)]
    deal_s = time.perf_counter() - started  # member 0's deal, the yardstick of the others'
    procs = parallel.workers(len(members) - 1, deal_s)
    types = [walks[0].type_values] + [None] * (len(members) - 1)
    kept = size = walks[0].nbytes()
    for i, g in enumerate(members[1:], 1):
        walks.append(None)
        # (the previous walk's size stands for this one's, which is not made whole past the budget)
        if procs > 1 or kept + size > KEEP_WALK_BYTES:
            continue
        w = _PublicWalk(g, ranked, MEMBER_CHECKED_TYPES)
        types[i], size = w.type_values, w.nbytes()
        if kept + size <= KEEP_WALK_BYTES:
            walks[i], kept = w, kept + size
        else:
            w.paths = None  # (its paths point back at it: a cycle only the collector would free)
        del w
    # the types of the members not walked above, read ahead (on workers where that pays)
    ahead = [i for i, t in enumerate(types) if t is None]
    for i, t in zip(ahead, parallel.ordered_map(lambda i: _PublicWalk.types_of(members[i], ranked), ahead, procs)):
        if isinstance(t, Exception):
            raise t
        types[i] = t
    walk = walks[0]
    # card games whose members deal other hands (hold'em spots on other boards): one set of
    # types, the union, each member dealing its own with the others' probability 0
    widened = (len(walks) > 1 and not walk.ranked and walk.vg.card_showdown() is not None
               and not all(np.array_equal(t[p], walk.type_values[p]) for t in types for p in (0, 1)))
    union = [np.unique(np.concatenate([t[p] for t in types])) for p in (0, 1)] if widened else None
    del types
    rest_started = time.perf_counter()
    if widened:
        walk.widen(union)
    raw = walk.run()
    T = tuple(len(v) for v in walk.type_values)
    tps, states, remap, orders = [], [], [], []
    for p in (0, 1):
        mirrors = None if raw["mirrors"] is None else (raw["mirrors"][0], raw["mirrors"][1][p])
        tp, st, rm, order_p = _public_treeplex(p, raw["info"][p], T[p], walk.vg.actions, mirrors)
        tps.append(tp)
        states.append(st)
        remap.append(rm)
        orders.append(order_p)
    # terminals: last public sequences renumbered, grouped by (chance path, payoff key)
    te = raw["terms"]["e"]
    e = np.stack([remap[0][te[:, 0]], remap[1][te[:, 1]]])  # [2, Z]
    B = len(members)
    cls, weights, first = _payoff_classes(walk, raw, factored=True, members=B)
    showdown, weights = _card_showdown(walk, raw, first, weights, members=B)
    weights = None if weights is None else [weights]
    factors = []
    # per member, the pairs (public infoset, type) chance can reach: kept per member where they
    # differ ([B, U, T]: spots on other boards deal other hands, and a turn's river cards rule out
    # others), so that a rule that reads them (dilated entropy: what passes to a parent) treats
    # each member as its spot alone
    at = [raw["info"][p]["path"][orders[p]] for p in (0, 1)]
    lives = None if walk.ranked else [[walk.paths.live_types(p)[at[p]] for p in (0, 1)]]
    own_states = [None]  # per member from 1, where members name infosets apart: its public states
    seen = {"differs": False}  # whether some member's deals differ from member 0's (in workers: as at the fork)
    # worker processes walk the members where member 0's work, times the others, comes to
    # seconds and what each sends back is small (`MAX_RESULT_BYTES`)
    sent = (0 if showdown is None else sum(x.numel() * x.element_size() for x in showdown.d)) + (
        0 if lives is None else sum(m.nbytes for m in lives[0])) + (0 if weights is None else weights[0].nbytes)
    member_s = deal_s + time.perf_counter() - rest_started
    procs = parallel.workers(B - 1, member_s, light=sent <= MAX_RESULT_BYTES)

    def part(i: int) -> dict | None:
        """Member i's walk, checked against member 0's, and what the batch takes of it (None
        where its tree or types differ); numpy and plain values only, where a worker made it."""
        other = walks[i]
        walks[i] = None  # (dropped with this turn)
        if other is None:
            other = _PublicWalk(members[i], ranked, MEMBER_CHECKED_TYPES, within=union if widened else None)
        elif widened:
            other.widen(union)
        raw_g = other.run()
        same = _same_tree(walk, raw, other, raw_g, same_support=not widened)
        c, w, first_g = _payoff_classes(other, raw_g, factored=True, members=B) if same else (None, None, None)
        if c is None or not np.array_equal(c, cls):
            return None
        sd, w = (None, w) if showdown is None else _card_showdown(other, raw_g, first_g, w, members=B)
        out = {"w": w,
               # (once one member differs the batch's deals do: no more [T0, T1] comparisons)
               "differs": seen["differs"] or not np.allclose(other.P, walk.P, rtol=0, atol=1e-15),
               # its own public states, to name its infosets (a turn's river card is its own)
               "states": [_compact(raw_g["info"][p]["state"][orders[p]]) for p in (0, 1)] if widened else None,
               "sd": None if sd is None else sd.mapped(torch.Tensor.numpy),
               "lives": None if lives is None else [other.paths.live_types(p)[at[p]] for p in (0, 1)]}
        other.paths = None  # (a cycle: freed now, not whenever the collector runs)
        return out

    said = started
    for i, got in enumerate(parallel.ordered_map(part, range(1, B), procs), 1):  # payoffs, deals, boards differ only
        g = members[i]
        if isinstance(got, Exception):
            raise got
        now = time.perf_counter()
        if now - said >= PROGRESS_EVERY:  # a long batch says how far it is, as a long solve does
            said = now
            print(f"tensorcfr: compiling a batch of {B:,} games: {i + 1:,} walked"
                  f"{f' on {procs} processes' if procs > 1 else ''}, {now - started:,.0f} s", file=sys.stderr, flush=True)
        if got is None:
            raise TensorCFRError(f"compile: batch member {i}, {short_name(g.name)}, does not have the "
                                 f"public tree and types of member 0, {short_name(members[0].name)}; "
                                 "a batch may differ in payoffs and in the probabilities of the same deals only "
                                 "(hold'em spots: one bet tree; boards, ranges, pots)")
        seen["differs"] = seen["differs"] or got["differs"]
        if widened:
            own_states.append(got["states"])
        if showdown is not None:
            sd = _same_boards(got["sd"].mapped(torch.from_numpy), showdown.board)
            if not (sd.strength.shape == showdown.strength.shape and torch.equal(sd.board, showdown.board)):
                raise TensorCFRError(f"compile: batch member {i}, {short_name(g.name)}, does not show down "
                                     f"on as many boards as member 0, {short_name(members[0].name)}, in its order")
            factors.append(sd)
        if weights is not None:
            weights.append(got["w"])
        if lives is not None:
            lives.append(got["lives"])
        del got
    order = np.argsort(cls, kind="stable")
    offsets = np.searchsorted(cls[order], np.arange(len(first) + 1))
    namer = _Namer(walk, states, members if widened else None, own_states if widened else None)
    tps = [dataclasses.replace(tp, namer=namer, live=_live(None if lives is None else [m[p] for m in lives]))
           for p, tp in enumerate(tps)]
    if weights is None:  # a card game too large for its dense matrices: its showdown factors only
        stacked = None
    else:
        stacked = torch.from_numpy(np.stack(weights))
    if factors:  # every member's factors, over the same boards and hands
        every = [showdown] + factors
        # rows of the batch: a row per combination of the members' rows that some class takes
        # (members on boards of their own, or with other ranges, number their rows apart)
        idx = torch.stack([sd.rows(torch.arange(len(sd.ab))) for sd in every], 1)  # [K, B]
        combos, at = torch.unique(idx, dim=0, return_inverse=True)  # [P, B], [K]
        every = [dataclasses.replace(sd, d=(sd.d[0][combos[:, b]], sd.d[1][combos[:, b]]), d_index=at)
                 for b, sd in enumerate(every)]
        showdown = every[0]
        d = tuple(torch.stack([sd.d[p] for sd in every]) for p in (0, 1))  # [B, P, T_p]
        ab = torch.stack([sd.ab for sd in every])  # [B, K, 2]
        boards = all(torch.equal(sd.strength, showdown.strength) for sd in every)
        strength = None if boards else torch.stack([sd.strength for sd in every])  # [B, G, H]: boards of their own
        # member 0's `d` and `ab` are views of the batch's, not a second copy
        showdown = dataclasses.replace(showdown, d=(d[0][0], d[1][0]), ab=ab[0], d_batch=d, ab_batch=ab,
                                       strength_batch=strength)
    return PublicCompiledGame(
        name=members[0].name, batch_names=tuple(g.name for g in members), treeplexes=tuple(tps),
        terminal_seq=torch.from_numpy(e[:, order].copy()), class_offsets=torch.from_numpy(offsets.astype(np.int64)),
        payoff_weights=stacked, counts=_counts(walk, raw), ranked=walk.ranked,
        deal=None if walk.ranked else torch.from_numpy(walk.P), showdown=showdown, deals_differ=seen["differs"])


def _live(masks: list[np.ndarray] | None) -> torch.Tensor | None:
    """A treeplex's `live` from each member's [U, T] mask: None where every pair is live, [U, T]
    where the members agree, else [B, U, T].

    Example:
        >>> a, b = np.array([[True, False]]), np.array([[True, True]])
        >>> _live([a, a]).shape, _live([a, b]).shape, _live([b, b])
        (torch.Size([1, 2]), torch.Size([2, 1, 2]), None)
    """
    if masks is None or all(m.all() for m in masks):
        return None
    if all(np.array_equal(m, masks[0]) for m in masks[1:]):
        return torch.from_numpy(np.ascontiguousarray(masks[0]))
    return torch.from_numpy(np.stack(masks))


def _same_boards(sd: CardShowdown, board: torch.Tensor) -> CardShowdown:
    """`sd` with its boards numbered as `board` [K] numbers them (member 0's), where its classes'
    boards map one to one onto those (turn spots on other boards: the k-th river card of each
    board, numbered by its card, falls in another place); else `sd` as it is.

    Example:
        >>> sd = CardShowdown(hands=(None, None), cards=None, d=(None, None), ab=None,
        ...                   strength=torch.tensor([[1], [2], [3]]), board=torch.tensor([0, 2, 1, 1]))
        >>> _same_boards(sd, torch.tensor([0, 1, 2, 2])).strength.view(-1).tolist()
        [1, 3, 2]
    """
    if sd.board.shape != board.shape or torch.equal(sd.board, board):
        return sd
    pairs = torch.unique(torch.stack([board, sd.board]), dim=1)  # [2, n] (member 0's board, its own)
    G = sd.strength.shape[0]
    if not (len(torch.unique(pairs[0])) == len(torch.unique(pairs[1])) == pairs.shape[1] == G):
        return sd
    own = torch.empty(G, dtype=torch.int64)
    own[pairs[0]] = pairs[1]  # member 0's board g is this member's own[g]
    return dataclasses.replace(sd, strength=sd.strength[own], board=board.clone())


def _same_tree(a: _PublicWalk, raw_a: dict, b: _PublicWalk, raw_b: dict, same_support: bool = True) -> bool:
    """Whether two walks found the same public tree: deal, actions, infosets and terminals
    (`same_support`: and the same pairs of types dealt)."""
    if type(a.vg) is not type(b.vg) or a.vg.actions != b.vg.actions or a.ranked != b.ranked:
        return False
    if not all(np.array_equal(x, y) for x, y in zip(a.type_values, b.type_values)):
        return False
    # the same deals, with probabilities of their own (hold'em ranges over the same hands)
    if same_support and not a.ranked and not np.array_equal(a.P > 0, b.P > 0):
        return False
    if not (np.array_equal(a.root, b.root) and a.paths.same(b.paths, masks=same_support)):
        return False
    keys = ("parent", "count", "action", "mirror")
    same_perms = a.perms is None if b.perms is None else (a.perms is not None and np.array_equal(a.perms, b.perms))
    return np.array_equal(raw_a["terms"]["e"], raw_b["terms"]["e"]) and a.sets == b.sets and same_perms and all(
        np.array_equal(ia[k], ib[k]) for ia, ib in zip(raw_a["info"], raw_b["info"]) for k in keys)


def _public_treeplex(p: int, I: dict, T: int, alphabet, mirrors=None):
    """Number one player's public infosets by (level, discovery) and their sequences after them;
    returns the treeplex, the infosets' public states in that order, and old -> new sequence ids.
    `mirrors`: (the walk's mirror sets, the permutations [K, T] of this player's types) where
    the game deals one card of each class (`VectorGame.card_symmetries`)."""
    level, count = I["level"], I["count"]
    U = len(level)
    order = np.lexsort((np.arange(U), level))  # new position -> old infoset
    # (exclusive prefix sums: a player who never moves has U = 0 infosets)
    first_old = 1 + (np.cumsum(count) - count).astype(np.int64)  # [U] old first sequence
    new_first = 1 + (np.cumsum(count[order]) - count[order]).astype(np.int64)  # [U] by new position
    remap = np.zeros(1 + int(count.sum()), np.int64)  # old sequence -> new (0 -> 0)
    # sequences of old infoset order[k] move to new_first[k] + their rank within the infoset
    src = np.repeat(first_old[order], count[order]) + _ranks(count[order])
    remap[src] = np.repeat(new_first, count[order]) + _ranks(count[order])
    actions = np.zeros(int(count.sum()), np.int64)
    actions[remap[1:] - 1] = I["action"]
    parent = remap[I["parent"][order]]
    levels = level[order]
    lo = np.searchsorted(levels, np.arange((levels.max() + 2) if U else 1))
    mirror = {}
    sets = I["mirror"][order] if mirrors is not None else np.zeros(0, np.int64)
    if (sets > 0).any():  # each (infoset, permutation) whose values also reach the parent permuted
        pairs = [(u, k) for u, sid in zip(np.flatnonzero(sets).tolist(), sets[sets > 0].tolist()) for k in mirrors[0][sid]]
        u, k = (np.array(v, np.int64) for v in zip(*pairs))
        mirror = {"mirror_u": torch.from_numpy(u), "mirror_perm": torch.from_numpy(np.ascontiguousarray(mirrors[1][k]))}
    tp = PublicTreeplex(p, T, tuple(alphabet), **mirror,
                        infoset_parent_pub=torch.from_numpy(parent),
                        infoset_offsets_pub=torch.from_numpy(np.concatenate([new_first, [1 + int(count.sum())]])
                                                             .astype(np.int64)),
                        action_pub=torch.from_numpy(actions), level_offsets_pub=torch.from_numpy(lo.astype(np.int64)))
    return tp, I["state"][order], remap, order


def _ranks(count: np.ndarray) -> np.ndarray:
    """[sum count]: 0..count[k]-1 for each k in turn."""
    starts = np.repeat(np.cumsum(count) - count, count)
    return np.arange(int(count.sum())) - starts


def _payoff_classes(walk: _PublicWalk, raw: dict, factored: bool = False, members: int = 1):
    """Per terminal its class (chance path, payoff key) [Z], per class W [K, T0, T1] and the first
    terminal of each class. `factored`: a card game (`VectorGame.card_showdown`) past
    `CHECKED_ENTRIES` entries, or past `DENSE_ENTRIES` in all `members` of a batch, returns None
    for W (its showdown factors, checked on sampled pairs, stand for it; `_card_showdown` makes W
    from them up to `DENSE_ENTRIES`)."""
    vg, st, path = walk.vg, raw["terms"]["state"].astype(np.int64), raw["terms"]["path"]
    key = vg.payoff_key(st)
    if key is None:
        _, key = np.unique(st, axis=0, return_inverse=True)
    key = np.asarray(key).reshape(-1)
    cls, first = _unique_pairs(path, key)
    if walk.ranked:  # (a, b) of each class, times the probability 1 / (n (n - 1)) of each pair
        n = len(walk.type_values[0])
        a, b = walk.vg.ranked_payoff(st[first])
        ab = np.stack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)], 1)  # [K, 2]
        bad = utility_rows(ab).any(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise walk._fail(f"payoff (fold {ab[i, 0]}, showdown {ab[i, 1]}) is not finite", st[first[i]])
        return cls, ab / (n * (n - 1)), first
    T0, T1 = walk.P.shape
    entries = len(first) * T0 * T1
    if factored and (members * entries > DENSE_ENTRIES or entries > CHECKED_ENTRIES) \
            and walk.vg.card_showdown() is not None:
        return cls, None, first
    weights = np.empty((len(first), T0, T1))  # [K, T0, T1]
    step = max(1, UTILITY_ENTRIES // max(1, T0 * T1))
    for k0 in range(0, len(first), step):  # blocks of classes, not nodes: their states and utilities
        k1 = min(k0 + step, len(first))
        full = walk.full(st[first[k0:k1]])
        u = np.asarray(vg.utility(full), dtype=np.float64).reshape(k1 - k0, T0, T1)
        reach = np.stack([walk.paths.reach(i) for i in path[first[k0:k1]].tolist()])  # [k, T0, T1]
        bad = utility_rows(u) & (reach > 0)  # a pair of types chance never deals there may pay anything
        if bad.any():
            i = int(np.argmax(bad.reshape(-1)))
            raise walk._fail(f"utility {u.reshape(-1)[i]} is not finite", full[i])
        np.multiply(reach, u, out=weights[k0:k1])
        weights[k0:k1][reach <= 0] = 0.0
    return cls, weights, first


def _card_showdown(walk: _PublicWalk, raw: dict, first: np.ndarray, weights: np.ndarray | None,
                   members: int = 1) -> tuple[CardShowdown | None, np.ndarray | None]:
    """(showdown, weights): the payoff classes of a card game (`VectorGame.card_showdown`) as
    factors (`operators.cards`), each checked against its dense matrix in `weights` [K, T0, T1],
    or where there is none (`CHECKED_ENTRIES`) against the game's utilities on sampled pairs of
    types: the deal and chance path's probability as kappa u0(t0) u1(t1) over the pairs sharing
    no card (u_p the type's weight where the path still allows it), the utility a + b sign(s(t0)
    - s(t1)). Where `weights` is None and the `members` of a batch keep their dense matrices
    (`DENSE_ENTRIES`), the weights returned are made from the factors; else `weights` as given
    (None: not a card game, or the factors only)."""
    if walk.ranked:
        return None, weights
    claim = walk.vg.card_showdown()
    if claim is None:
        return None, weights
    cards, w = np.asarray(claim[0], dtype=np.int64), (np.asarray(claim[1], np.float64), np.asarray(claim[2], np.float64))
    st, path = raw["terms"]["state"].astype(np.int64), raw["terms"]["path"]
    a, b, board, boards = (np.asarray(v) for v in walk.vg.card_boards(st[first]))  # [K], [K], [K], [G, H]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        i = int(np.argmax(~(np.isfinite(a) & np.isfinite(b))))
        raise walk._fail(f"payoff (fold {a[i]}, showdown {b[i]}) is not finite", st[first[i]])
    hands = walk.type_values
    c0, c1 = cards[hands[0]], cards[hands[1]]
    apart = apart_hands(c0, c1)  # [T0, T1] no shared card
    # per chance path: each player's weights where the path allows the type, and kappa, the
    # path's probability mass over that of the product (the deal's normalisation and chance)
    used = np.unique(path[first])
    u = [w[p][hands[p]][None] * walk.paths.live_types(p)[used] for p in (0, 1)]  # [paths used, T_p]
    mass = walk.paths.mass(used)  # [paths used]
    base = ((u[0] @ apart.astype(np.float64)) * u[1]).sum(1)
    kappa = np.where(base > 0, mass / np.where(base > 0, base, 1.0), 0.0)
    # a row of factors per distinct pair of rows: paths that deal the same cards after other
    # bets share theirs (a flop spot's 183,403 classes keep 1,136 rows, not 1 GB of them)
    first_row, row = _distinct_rows(np.concatenate([kappa[:, None] * u[0], u[1]], 1))
    d = [(kappa[:, None] * u[0])[first_row], u[1][first_row]]  # [P, T_p]
    at = row[np.searchsorted(used, path[first])]  # [K] the row of each class's factors
    if weights is not None:
        _check_dense(walk, st[first], weights, d, at, apart, a, b, boards, board)
    else:
        _check_sampled(walk, st[first], path[first], d, at, apart, a, b, boards, board)
        if members * len(first) * apart.size <= DENSE_ENTRIES:
            weights = _dense_from_factors(walk, d, at, apart, a, b, boards, board)
    t = torch.from_numpy
    return CardShowdown(hands=(t(hands[0].astype(np.int64)), t(hands[1].astype(np.int64))), cards=t(cards),
                        d=(t(d[0]), t(d[1])), ab=t(np.stack([a, b], 1).astype(np.float64)),
                        strength=t(boards.astype(np.int64)), board=t(board.reshape(-1).astype(np.int64)),
                        d_index=t(at.astype(np.int64))), weights


def _dense_from_factors(walk, d, at, apart, a, b, boards, board) -> np.ndarray:
    """[K, T0, T1]: each class's dense matrix from its factors (row at[k] of d), a block of
    classes at a time (`UTILITY_ENTRIES` entries): kappa u0(t0) u1(t1)
    apart(t0, t1) (a + b sign(s(t0) - s(t1))), class k showing down on row board[k] of boards."""
    hands = walk.type_values
    K, (T0, T1) = len(at), apart.shape
    out = np.empty((K, T0, T1))
    step = max(1, UTILITY_ENTRIES // max(1, T0 * T1))
    for k0 in range(0, K, step):  # (blocks of classes: the river spot's 22 one at a time)
        ks = np.arange(k0, min(k0 + step, K))
        s = boards[board[ks]]  # [k, H] strengths on each class's board
        sign = np.sign(s[:, hands[0]][:, :, None] - s[:, hands[1]][:, None, :])  # [k, T0, T1]
        np.multiply(d[0][at[ks]][:, :, None] * d[1][at[ks]][:, None, :] * apart[None],
                    a[ks, None, None] + b[ks, None, None] * sign, out=out[k0:k0 + len(ks)])
    return out


def _distinct_rows(x: np.ndarray, chunk: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """(first [P]: the first row of each distinct row of x [n, m] float64, row [n]: the
    distinct row of each), found by a hash of each row's bits (exact, in any order), then
    checked entry by entry; a collision keeps every row its own.

    Example:
        >>> first, row = _distinct_rows(np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]))
        >>> len(first), bool(row[0] == row[2] != row[1])
        (2, True)
    """
    r = np.random.default_rng(0).integers(-(1 << 62), 1 << 62, size=x.shape[1], dtype=np.int64)
    key = np.concatenate([(x[lo:lo + chunk].view(np.int64) * r).sum(1) for lo in range(0, len(x), chunk)]
                         or [np.zeros(0, np.int64)])
    _, first, row = np.unique(key, return_index=True, return_inverse=True)
    row = row.reshape(-1)
    for lo in range(0, len(x), chunk):
        if not np.array_equal(x[lo:lo + chunk], x[first[row[lo:lo + chunk]]]):
            return np.arange(len(x)), np.arange(len(x))
    return first, row


def _claim_error(walk: _PublicWalk, k: int, state: np.ndarray, off: float) -> TensorCFRError:
    return TensorCFRError(f"{walk.game.name}: its card_showdown() does not describe payoff class {k} "
                          f"(state {state.tolist()}): off by {off:.3g}")


def _check_dense(walk, states, weights, d, at, apart, a, b, boards, board) -> None:
    """Every class's factors (row at[k] of d) against its dense matrix in weights [K, T0, T1]:
    the matrices the factors make (`_dense_from_factors`; at most `CHECKED_ENTRIES` entries, as
    many as `weights`) equal to 1e-12 of each class's largest entry (or of 1)."""
    want = _dense_from_factors(walk, d, at, apart, a, b, boards, board)
    axes = (1, 2)
    scale = np.maximum(1.0, np.abs(weights).max(axis=axes, initial=0.0))  # [K]
    off = np.abs(want - weights).max(axis=axes, initial=0.0)
    if not (off <= 1e-12 * scale).all():
        k = int(np.argmax(off > 1e-12 * scale))
        raise _claim_error(walk, k, states[k], float(off[k]))


# a card game keeps its dense payoff matrices (the exact check of its factors, the dense
# operator of `PublicPayoffOperator.of(showdown=False)`, Monte-Carlo sampling) up to this many
# entries, classes x T0 x T1: the river spot of the docs (22 classes of 1,081 x 1,081 hands,
# 26M entries, 206 MB) keeps them; a turn spot (some 20,000 classes) keeps its factors only
DENSE_ENTRIES = 1 << 26
# ... and makes them from the game's utilities, its factors checked against them on every pair,
# up to this many entries a member; past it the factors are checked on sampled pairs
# (`_check_sampled`) and the dense matrices made from them: the river spot's 26M entries from its
# utilities took 2.3 s of its 3.1-s compile (2 cores, 2026-11-28)
CHECKED_ENTRIES = 1 << 22
# the dense matrices are made from the game's utilities a block of classes of about this many
# pairs of types at a time: the river spot's 22 x 1.17 million full states and their utilities
# at once peaked at 3.1 GB
UTILITY_ENTRIES = 1 << 21
# a class checked on sampled pairs is checked on this many pairs of types drawn at random (seeded),
# each class its own, and on more where the classes are few, SAMPLED_TOTAL pairs at least in all
# (a river spot's 22 classes: 2,979 each): so the check meets every hand of a spot in all
# likelihood. 16 x 16 evenly spaced types, the same 256 pairs in every class, checked 16 hands a
# player only and took 4.9 s of the isomorphic flop spot's 10-s compile (183,403 classes; 2 cores)
SAMPLED_PAIRS = 64
SAMPLED_TOTAL = 1 << 16


def _check_sampled(walk, states, paths, d, at, apart, a, b, boards, board) -> None:
    """Every class's factors (row at[k] of d) against the game's utility times the deal and
    chance path on pairs of types of its own, drawn at random (seeded): `SAMPLED_PAIRS` a class,
    or more where the classes are few (`SAMPLED_TOTAL`), some 4,096 classes at a time."""
    hands = walk.type_values
    rng = np.random.default_rng(0)
    n = max(SAMPLED_PAIRS, -(-SAMPLED_TOTAL // max(len(states), 1)))  # pairs a class
    for lo in range(0, len(states), 4096):
        ks = np.arange(lo, min(lo + 4096, len(states)))
        t0, t1 = (rng.integers(0, len(h), size=(len(ks), n)) for h in hands)  # [k, n]
        full = _set_hands(np.repeat(states[ks], n, axis=0), walk.hands, hands[0][t0.reshape(-1)],
                          hands[1][t1.reshape(-1)])
        u = np.asarray(walk.vg.utility(full), dtype=np.float64).reshape(len(ks), n)
        reach = walk.P[t0, t1] * walk.paths.values(paths[ks], t0, t1)  # [k, pairs]
        bad = utility_rows(u) & (reach > 0)
        if bad.any():
            i = int(np.argmax(bad.reshape(-1)))
            raise walk._fail(f"utility {u.reshape(-1)[i]} is not finite", full[i])
        got = np.where(reach > 0, reach * u, 0.0)
        g = board[ks][:, None]  # (each entry gathered alone: no [k, H] or [k, T_p] rows copied first)
        sign = np.sign(boards[g, hands[0][t0]] - boards[g, hands[1][t1]])
        want = d[0][at[ks][:, None], t0] * d[1][at[ks][:, None], t1] * apart[t0, t1] * (
            a[ks][:, None] + b[ks][:, None] * sign)
        scale = np.maximum(1.0, np.abs(got).max(axis=1))
        off = np.abs(want - got).max(axis=1)
        if not (off <= 1e-12 * scale).all():
            i = int(np.argmax(off > 1e-12 * scale))
            raise _claim_error(walk, int(ks[i]), states[ks[i]], float(off[i]))


def _unique_pairs(a: np.ndarray, b: np.ndarray):
    """(class id of each element [n], first element of each class [K]) for the pairs (a, b)."""
    _, first, cls = np.unique(np.stack([a, b], 1), axis=0, return_index=True, return_inverse=True)
    return cls.reshape(-1), first


def _counts(walk: _PublicWalk, raw: dict) -> dict:
    """Sizes as the generic form counts them: each public node stands for the deals of the pairs
    of types its chance path allows; an infoset (u, t) exists where some pair with t is possible."""
    if walk.ranked:  # a ranked deal: every ordered pair of distinct ranks, one history each
        n = len(walk.type_values[0])
        pairs, rows = np.array([n * (n - 1)]), [np.array([n]), np.array([n])]
    else:
        pairs = walk.paths.histories()  # [paths] histories per public node
        mult = np.asarray(getattr(walk.paths, "mult", 1))  # [paths] the paths each stands for (card classes)
        rows = [walk.paths.live_types(p).sum(1) * mult for p in (0, 1)]  # [paths] types of each player still possible
    np_ = raw["node_paths"]
    decision, chance, terminal = (int(pairs[np_[k]].sum()) for k in ("decision", "chance", "terminal"))
    chance += walk.deal_nodes
    infosets, sequences, with_choice = [], [], 0
    for p in (0, 1):
        I = raw["info"][p]
        n = rows[p][I["path"]]
        infosets.append(int(n.sum()))
        sequences.append(int((n * I["count"]).sum()))
        with_choice += int(n[I["count"] >= 2].sum())
    public_nodes = sum(len(v) for v in np_.values())
    return {"histories": decision + chance + terminal, "terminals": terminal, "chance_nodes": chance,
            "decision_nodes": decision, "infosets": infosets, "sequences": sequences,
            "infosets_with_choice": with_choice, "public_nodes": public_nodes, "levels": raw["levels"]}


class _Namer:
    """Infoset key strings from (public infoset, type), through the game's own naming; with
    `members` (a batch whose members name infosets apart: hold'em spots on boards of their own),
    batch member b's through member b's game, from its own public states where `own_states`
    holds them (a turn spot's river card)."""

    def __init__(self, walk: _PublicWalk, states, members: list[Game] | None = None, own_states: list | None = None):
        self.vg, self.hands, self.values = walk.vg, walk.hands, walk.type_values
        self.members = members
        # [U_p, width] per player in the narrowest integer type that holds them (Dudo(6,2,2):
        # 8.4M public infosets a player, 336 MB each as int64)
        self.states = [_compact(s) for s in states]
        # per member from 1, its own public states (None: member 0's serve every member)
        self.own_states = own_states

    def __call__(self, player: int, u: np.ndarray, t: np.ndarray, member: int = 0) -> list[str]:
        states = self.states if not member or self.own_states is None else self.own_states[member]
        s = states[player][u].astype(np.int64)
        s[:, self.hands[player]] = self.values[player][t]
        vg = self.vg if not member or self.members is None else vector_form(self.members[member])
        return vg.infoset_names(vg.infoset(s))


def _compact(a: np.ndarray) -> np.ndarray:
    """`a` in the narrowest integer type that holds it: the walk keeps a state per public
    infoset and terminal (Dudo(6,2,2): 34M of them, 40 bytes each as int64, 5 as int8)."""
    return a.astype(_narrow(a), copy=False)


def _narrow(a: np.ndarray) -> np.dtype:
    """The narrowest signed integer type that holds every entry of `a`."""
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    return next(t for t in (np.int8, np.int16, np.int32, np.int64) if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max)
