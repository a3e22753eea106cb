"""The chance tree of a compiled game: what Monte-Carlo sampling needs to draw chance outcomes
and to touch only the payoff entries of the outcomes drawn (`sampling/generic.py`).

A *chance class* is a set of histories that share every chance outcome above them: class 0
holds the histories with no chance edge above them, and every chance edge opens a new class
(the histories below it, up to the next chance edges). Classes are numbered in breadth-first
order of their chance edges, so a class's parent has a smaller number, and the outcome
classes of one chance node are consecutive. Chance nodes of one class never lie on one path
(a chance node below another one belongs to one of its outcome classes), so one uniform per
class can pick every one of its chance nodes' outcomes at once (a "deal": in Leduc, one board
card for every betting line) while each terminal is still reached with its chance probability.

The payoff entries are kept per class: `payoff[b, k]` is the sum over the terminals z of class
`cls` with last sequences (s0, s1) of u0_b(z), the utility *without* its chance weight (the
sampler draws that weight), sorted by (class, s0, s1).

Example:
    >>> import tensorcfr
    >>> ct = tensorcfr.compile("kuhn", chance=True).chance
    >>> ct.num_classes, ct.num_chance_nodes  # the root, 3 cards for player 0, 2 for player 1 each
    (10, 4)
    >>> [round(r, 4) for r in ct.reach[4:].tolist()]  # every deal has probability 1/6
    [0.1667, 0.1667, 0.1667, 0.1667, 0.1667, 0.1667]
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True, eq=False)
class ChanceTree:
    """Classes C, chance nodes J, chance outcomes O (= C - 1), payoff entries Z' (>= Z)."""

    class_parent: torch.Tensor  # [C] int64: the class of the chance node the class comes out of (-1 for 0)
    class_prob: torch.Tensor  # [C] float64: probability of the chance edge into the class (1 for class 0)
    reach: torch.Tensor  # [C] float64: product of the chance probabilities above the class
    class_nodes: torch.Tensor  # [C+1] int64: class c holds chance nodes class_nodes[c]:[c+1]
    node_class: torch.Tensor  # [J] int64: the class a chance node lies in (sorted)
    node_first: torch.Tensor  # [J] int64: its first outcome class (outcomes are consecutive)
    node_count: torch.Tensor  # [J] int64: its number of outcomes
    cum_prob: torch.Tensor  # [C] float64: for an outcome class, the probability of its own and of
    #   the earlier outcomes of its chance node (inclusive, summed in order; 1 for class 0)
    class_entries: torch.Tensor  # [C+1] int64: class c's payoff entries are class_entries[c]:[c+1]
    payoff_seq: torch.Tensor  # [2, Z'] int64: (s0, s1) of each entry
    payoff: torch.Tensor  # [B, Z'] float64: summed utility of player 0, no chance weight

    @property
    def num_classes(self) -> int:
        return int(self.class_parent.numel())

    @property
    def num_chance_nodes(self) -> int:
        return int(self.node_class.numel())

    @property
    def num_entries(self) -> int:
        return int(self.payoff.shape[1])

    def to(self, device) -> "ChanceTree":
        """A copy on `device`."""
        return dataclasses.replace(self, **{f.name: getattr(self, f.name).to(device) for f in dataclasses.fields(self)})


def build(classes: tuple[np.ndarray, np.ndarray], nodes: tuple[np.ndarray, np.ndarray, np.ndarray],
          terminals: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], seq_maps, s1_count: int) -> ChanceTree:
    """The chance tree from a walk's records.

    classes: (parent class [C], edge probability [C]) in breadth-first order, class 0 first;
    nodes: (class [J], first outcome class [J], outcome count [J]) of each chance node, in walk order;
    terminals: (tmp seq 0 [T], tmp seq 1 [T], chance reach * u0 [T], class [T]).
    """
    parent = np.asarray(classes[0], np.int64)
    prob = np.asarray(classes[1], np.float64)
    reach = prob.copy()
    while True:  # one round per depth of the chance tree: a class's reach is its parent's times its edge
        new = prob * np.where(parent >= 0, reach[np.maximum(parent, 0)], 1.0)
        if np.array_equal(new, reach):
            break
        reach = new
    node_class, node_first, node_count = (np.asarray(a, np.int64) for a in nodes)
    order = np.argsort(node_class, kind="stable")
    node_class, node_first, node_count = node_class[order], node_first[order], node_count[order]
    cum = np.ones(len(parent))
    if len(node_first):  # each node's outcomes padded to the widest, summed along the row in order
        a = np.arange(node_count.max())
        valid = a < node_count[:, None]  # [J, A]
        idx = np.where(valid, node_first[:, None] + a, 0)
        cum[idx[valid]] = np.cumsum(np.where(valid, prob[idx], 0.0), axis=1)[valid]
    t0, t1, w, cls = terminals
    cls = np.asarray(cls, np.int64)
    s0, s1 = seq_maps[0][t0], seq_maps[1][t1]
    key = (cls * (seq_maps[0].max() + 1) + s0) * s1_count + s1  # [T] sorts by (class, s0, s1)
    order = np.argsort(key, kind="stable")
    key = key[order]
    u = np.asarray(w, np.float64)[order] / reach[cls[order]]  # the chance weight taken out again
    head = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]])) if len(key) else np.zeros(0, np.int64)
    seg = np.zeros(len(key), np.int64)
    seg[head[1:]] = 1
    u = np.bincount(np.cumsum(seg), weights=u, minlength=len(head)) if len(key) else u
    keep = order[head]
    entry_cls = cls[keep]
    return ChanceTree(
        class_parent=torch.from_numpy(parent), class_prob=torch.from_numpy(prob), reach=torch.from_numpy(reach),
        class_nodes=torch.from_numpy(np.searchsorted(node_class, np.arange(len(parent) + 1)).astype(np.int64)),
        node_class=torch.from_numpy(node_class), node_first=torch.from_numpy(node_first),
        node_count=torch.from_numpy(node_count), cum_prob=torch.from_numpy(cum),
        class_entries=torch.from_numpy(np.searchsorted(entry_cls, np.arange(len(parent) + 1)).astype(np.int64)),
        payoff_seq=torch.from_numpy(np.stack([s0[keep], s1[keep]]).astype(np.int64)),
        payoff=torch.from_numpy(u)[None])
