"""Compile a game (the protocol of `games/`) into a `CompiledGame`.

This module knows games and tensors, nothing of algorithms. It walks the tree breadth-first
with one Python call per node, which suits games up to a few million histories, and checks
the game while it walks: chance probabilities sum to 1, utilities are zero-sum, the histories
of an infoset agree on player and legal actions, and perfect recall holds (every history of
an infoset has the same parent sequence).

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("kuhn")
    >>> cg.num_histories, cg.num_terminals
    (58, 30)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

import games as games_pkg
from games import CHANCE, TERMINAL, Game, GameError

from .compiled import CompiledGame, Treeplex
from .errors import TensorCFRError

_TOL = 1e-9


class _Walk:
    """The raw tree: per-node lists and per-player infoset tables in discovery order."""

    def __init__(self, game: Game):
        self.game = game
        self.parent: list[int] = []
        self.player: list[int] = []
        self.infoset: list[int] = []  # discovery id within the mover's table
        self.action: list[int] = []
        self.label: list[str] = []
        self.prob: list[float] = []
        self.level_offsets = [0]
        # per player: key -> discovery id; id -> (actions, parent tmp sequence, node)
        self.ids: list[dict[str, int]] = [{}, {}]
        self.info: list[list[tuple[tuple[str, ...], int, int]]] = [[], []]
        self.first_slot: list[list[int]] = [[], []]  # tmp slot of each infoset's first action
        self.num_slots = [0, 0]
        self.terminals: list[tuple[int, int, float, float]] = []  # (tmp seq0, tmp seq1, reach, u0)

    def history(self, node: int) -> list[str]:
        path = []
        while node > 0:
            path.append(self.label[node])
            node = self.parent[node]
        return path[::-1]

    def where(self, node: int) -> str:
        return f"{self.game.name}: history {self.history(node)}"

    def run(self) -> "_Walk":
        g = self.game
        # frontier entries: (state, node id, tmp seq of player 0, of player 1, chance reach)
        self._add(-1, -1, "", 1.0)
        frontier = [(g.initial_state(), 0, 0, 0, 1.0)]
        while frontier:
            self.level_offsets.append(len(self.parent))  # the frontier is one whole level
            nxt = []
            for state, node, s0, s1, reach in frontier:
                p = g.player(state)
                if p == TERMINAL:
                    self._terminal(state, node, s0, s1, reach)
                elif p == CHANCE:
                    self.player[node] = CHANCE
                    outcomes = list(g.chance_outcomes(state))
                    total = sum(pr for _, pr in outcomes)
                    if not outcomes or abs(total - 1.0) > _TOL or any(pr < 0 for _, pr in outcomes):
                        raise TensorCFRError(f"{self.where(node)}: chance probabilities "
                                             f"{[pr for _, pr in outcomes]} do not sum to 1")
                    for k, (a, pr) in enumerate(outcomes):
                        child = self._add(node, k, a, pr)
                        nxt.append((g.next_state(state, a), child, s0, s1, reach * pr))
                elif p in (0, 1):
                    actions, first = self._decision(state, node, p, (s0, s1)[p])
                    for k, a in enumerate(actions):
                        child = self._add(node, k, a, 1.0)
                        seq = first + k + 1  # tmp sequence ids: slot + 1, 0 = empty
                        nxt.append((g.next_state(state, a), child,
                                    seq if p == 0 else s0, seq if p == 1 else s1, reach))
                else:
                    raise TensorCFRError(f"{self.where(node)}: player {p} is not 0, 1, chance or terminal")
            frontier = nxt
        return self

    def _add(self, parent: int, action: int, label: str, prob: float) -> int:
        self.parent.append(parent)
        self.player.append(TERMINAL)
        self.infoset.append(-1)
        self.action.append(action)
        self.label.append(label)
        self.prob.append(prob)
        return len(self.parent) - 1

    def _terminal(self, state, node, s0, s1, reach):
        u = self.game.utilities(state)
        if not all(np.isfinite(u)) or abs(u[0] + u[1]) > _TOL * max(1.0, abs(u[0])):
            raise TensorCFRError(f"{self.where(node)}: utilities {tuple(u)} are not zero-sum")
        self.terminals.append((s0, s1, reach, float(u[0])))

    def _decision(self, state, node, p, parent_seq):
        g = self.game
        key = g.infoset_key(state)
        actions = tuple(g.legal_actions(state))
        if not actions or len(set(actions)) != len(actions):
            raise TensorCFRError(f"{self.where(node)}: legal actions {list(actions)} are empty or repeat")
        other = 1 - p
        if key in self.ids[other]:
            first = self.info[other][self.ids[other][key]][2]
            raise TensorCFRError(f"{g.name}: infoset {key!r} holds histories of both players: "
                                 f"{self.history(first)} (player {other}) and {self.history(node)} (player {p})")
        j = self.ids[p].get(key)
        if j is None:
            j = self.ids[p][key] = len(self.info[p])
            self.info[p].append((actions, parent_seq, node))
            self.first_slot[p].append(self.num_slots[p])
            self.num_slots[p] += len(actions)
        else:
            acts0, parent0, node0 = self.info[p][j]
            if acts0 != actions:
                raise TensorCFRError(f"{g.name}: infoset {key!r} has legal actions {list(acts0)} at history "
                                     f"{self.history(node0)} but {list(actions)} at history {self.history(node)}")
            if parent0 != parent_seq:
                raise TensorCFRError(f"{g.name}: perfect recall fails at infoset {key!r}: histories "
                                     f"{self.history(node0)} and {self.history(node)} differ in player {p}'s "
                                     f"earlier infosets or actions")
        self.player[node] = p
        self.infoset[node] = j
        return actions, self.first_slot[p][j]


def _treeplex(walk: _Walk, p: int):
    """Order player p's infosets by treeplex depth; return the Treeplex and tmp->final maps."""
    info = walk.info[p]
    n = len(info)
    first = np.array(walk.first_slot[p] + [walk.num_slots[p]], dtype=np.int64)
    slot_owner = np.repeat(np.arange(n), np.diff(first))  # tmp slot -> tmp infoset
    depth = np.zeros(n, dtype=np.int64)
    for j, (_, parent_seq, _) in enumerate(info):  # parents are discovered before children
        depth[j] = 0 if parent_seq == 0 else depth[slot_owner[parent_seq - 1]] + 1
    order = np.argsort(depth, kind="stable")  # final -> tmp infoset
    num_actions = np.diff(first)[order]
    offsets = np.concatenate([[1], 1 + np.cumsum(num_actions)])  # final infoset -> first seq
    seq_map = np.zeros(walk.num_slots[p] + 1, dtype=np.int64)  # tmp seq -> final seq
    for jf, jt in enumerate(order):
        seq_map[1 + first[jt]:1 + first[jt + 1]] = np.arange(offsets[jf], offsets[jf + 1])
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.arange(n)  # tmp -> final infoset
    keys = {j: k for k, j in walk.ids[p].items()}
    parent = seq_map[np.array([info[j][1] for j in order], dtype=np.int64)] if n else np.zeros(0, np.int64)
    seq_infoset = np.concatenate([[-1], np.repeat(np.arange(n), num_actions)])
    levels = np.searchsorted(depth[order], np.arange(depth.max() + 2 if n else 1))
    tp = Treeplex(
        player=p,
        infoset_keys=tuple(keys[j] for j in order),
        action_names=tuple(info[j][0] for j in order),
        infoset_parent=torch.from_numpy(parent),
        infoset_offsets=torch.from_numpy(offsets),
        seq_infoset=torch.from_numpy(seq_infoset),
        level_offsets=torch.from_numpy(levels.astype(np.int64)),
    )
    return tp, seq_map, inv


def _structure(walk: _Walk):
    tps, seq_maps, infoset_maps = zip(*(_treeplex(walk, p) for p in (0, 1)))
    term = np.array(walk.terminals, dtype=np.float64).reshape(-1, 4)
    s0 = seq_maps[0][term[:, 0].astype(np.int64)]
    s1 = seq_maps[1][term[:, 1].astype(np.int64)]
    pairs, where = np.unique(s0 * tps[1].num_sequences + s1, return_inverse=True)
    player = np.array(walk.player, dtype=np.int8)
    infoset = np.array(walk.infoset, dtype=np.int64)
    for p in (0, 1):
        infoset[player == p] = infoset_maps[p][infoset[player == p]]
    nodes = dict(
        node_level_offsets=torch.tensor(walk.level_offsets, dtype=torch.int64),
        node_parent=torch.tensor(walk.parent, dtype=torch.int64),
        node_player=torch.from_numpy(player),
        node_infoset=torch.from_numpy(infoset),
        node_action=torch.tensor(walk.action, dtype=torch.int64),
        node_chance_prob=torch.tensor(walk.prob, dtype=torch.float64),
    )
    seqs = np.stack([pairs // tps[1].num_sequences, pairs % tps[1].num_sequences])
    payoff = np.bincount(where.ravel(), weights=term[:, 2] * term[:, 3], minlength=len(pairs))
    return tps, torch.from_numpy(seqs), torch.from_numpy(payoff), nodes


def compile(game: str | Game | Sequence[str | Game]) -> CompiledGame:  # noqa: A001
    """Compile a game, or a list of games over one tree (a batch of payoff vectors).

    Accepts a spec string, a `games.Game`, or a list of them that differ only in payoffs
    (e.g. Kuhn with several antes): the result's `payoff` is then [B, Z], one row each.
    Raises `TensorCFRError` naming the offending history or infoset on an invalid game.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile(["kuhn(ante=1)", "kuhn(ante=2)"])
        >>> cg.payoff.shape[0]
        2
    """
    members = list(game) if isinstance(game, (list, tuple)) else [game]
    if not members:
        raise TensorCFRError("compile: empty list of games")
    try:
        members = [games_pkg.make(g) for g in members]
    except GameError as e:
        raise TensorCFRError(str(e)) from None
    for g in members:
        if not getattr(g, "zero_sum", True):
            raise TensorCFRError(f"{g.name} is general-sum: the tree solvers need a zero-sum game; the "
                                 "normal-form procedures (tensorcfr.normal_form: rm, rm+, sampled-rm, "
                                 "conditional-rm, invariant-rm) take it")
    compiled = [_structure(_Walk(g).run()) for g in members]
    tps, seqs, _, nodes = compiled[0]
    for g, (tps_b, seqs_b, _, nodes_b) in zip(members[1:], compiled[1:]):
        same = (torch.equal(seqs, seqs_b) and all(torch.equal(nodes[k], nodes_b[k]) for k in nodes)
                and all(a.infoset_keys == b.infoset_keys and a.action_names == b.action_names
                        for a, b in zip(tps, tps_b)))
        if not same:
            raise TensorCFRError(f"compile: {g.name} does not have the tree of {members[0].name}; "
                                 "a batch must differ in payoffs only")
    return CompiledGame(
        name=members[0].name,
        batch_names=tuple(g.name for g in members),
        treeplexes=tps,
        payoff_seq=seqs,
        payoff=torch.stack([c[2] for c in compiled]),
        **nodes,
    )
