"""The generic form's compile walk (`compile_generic`; use `tensorcfr.compile`): two walks build
the same tree. `_Walk` calls the game once per node (any game; 4 to 12 µs a node), `_LevelWalk`
expands a whole level of a `games.vector.VectorGame` with a few numpy calls (games of 10^8
histories). Both check the game while they walk (`games/checks.py`): chance probabilities sum
to 1, utilities are zero-sum, the histories of an infoset agree on player and legal actions,
and perfect recall holds (every history of an infoset has the same parent sequence). Both hand
a `RawTree` (infosets and sequences in discovery order) to `_structure`, which orders the
treeplexes and builds the payoff matrix, so their results are identical tensor for tensor.

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("kuhn", form="generic")
    >>> cg.num_histories, cg.num_terminals
    (58, 30)
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sys

import numpy as np
import torch

from tensorcfr.games import Game
from tensorcfr.games.vector import vector_form
from tensorcfr.compiler.chance import build as chance_tree
from tensorcfr.compiler import walks
from tensorcfr.compiler.walks import RawTree, _index_dtype, _LevelWalk, _Walk
from tensorcfr.compiler.sizes import walk_limit
from tensorcfr.errors import TensorCFRError, short_name
from tensorcfr.forms.generic import CompiledGame
from tensorcfr.paths import compiled_dir
from tensorcfr.spaces.treeplex import Treeplex


def _treeplex(raw: RawTree, p: int):
    """Order player p's infosets by treeplex depth; return the Treeplex and tmp->final maps."""
    first = np.asarray(raw.first_slot[p], dtype=np.int64)  # [I+1]
    n = len(first) - 1
    counts = np.diff(first)  # [I] actions per infoset, discovery order
    slot_owner = np.repeat(np.arange(n), counts)  # [slots] tmp slot -> tmp infoset
    parent_seq = np.asarray(raw.info_parent[p], dtype=np.int64)  # [I]
    parent_info = np.where(parent_seq > 0, slot_owner[np.maximum(parent_seq - 1, 0)] if n else 0, -1)
    depth = np.zeros(n, dtype=np.int64)
    while True:  # parents have smaller depth; converges in (treeplex depth) rounds
        new = np.where(parent_info >= 0, depth[np.maximum(parent_info, 0)] + 1, 0)
        if np.array_equal(new, depth):
            break
        depth = new
    order = np.argsort(depth, kind="stable")  # final -> tmp infoset
    inv = np.empty(n, dtype=np.int64)
    inv[order] = np.arange(n)  # tmp -> final infoset
    num_actions = counts[order]
    offsets = np.concatenate([[1], 1 + np.cumsum(num_actions)]).astype(np.int64)  # final infoset -> first seq
    rank = np.arange(len(slot_owner)) - first[slot_owner]  # position of a slot in its infoset
    seq_map = np.concatenate([[0], offsets[inv[slot_owner]] + rank]).astype(np.int64)  # tmp seq -> final seq
    keys, actions = raw.keys[p], raw.actions[p]
    tp = Treeplex(
        player=p,
        infoset_keys=tuple(keys[j] for j in order.tolist()),
        action_names=tuple(actions[j] for j in order.tolist()),
        infoset_parent=torch.from_numpy(seq_map[parent_seq[order]]),
        infoset_offsets=torch.from_numpy(offsets),
        seq_infoset=torch.from_numpy(np.concatenate([[-1], np.repeat(np.arange(n), num_actions)]).astype(np.int64)),
        level_offsets=torch.from_numpy(
            np.searchsorted(depth[order], np.arange(depth.max() + 2 if n else 1)).astype(np.int64)),
    )
    return tp, seq_map, inv


def _payoff_entries(raw: RawTree, seq_maps, s1_count: int, idx, shard: tuple[int, int] | None = None):
    """The payoff matrix's nonzeros from the terminals: (seq 0 [Z], seq 1 [Z], payoff [Z]) sorted
    by (seq 0, seq 1), terminals of one pair summed in walk order. A stable sort (not np.unique
    with its inverse) keeps the peak near four arrays of the terminals' length; `raw.terminals`
    is released on the way. With `shard` (rank, world), only rank's block (`_block`)."""
    t0, t1, w = raw.terminals
    raw.terminals = None
    if shard is not None:
        t0, t1, w = _block(t0, t1, w, seq_maps[0], shard)
    pair = np.empty(len(w), np.int64)  # [T] final seq 0 * S_1 + final seq 1
    for k in range(0, len(w), walks.CHUNK):
        sl = slice(k, k + walks.CHUNK)
        pair[sl] = seq_maps[0][t0[sl]] * s1_count + seq_maps[1][t1[sl]]
    del t0, t1
    order = np.argsort(pair, kind="stable")  # [T]
    pair, w = pair[order], w[order]
    del order
    if len(pair) > 1 and not (pair[1:] != pair[:-1]).all():
        head = np.flatnonzero(np.concatenate([[True], pair[1:] != pair[:-1]]))  # [Z] first terminal of each pair
        seg = np.zeros(len(pair), np.int64)
        seg[head[1:]] = 1
        w = np.bincount(np.cumsum(seg, out=seg), weights=w, minlength=len(head))  # sums in walk order
        pair = pair[head]
    seqs = np.empty((2, len(pair)), idx)
    for k in range(0, len(pair), walks.CHUNK):
        seqs[0, k:k + walks.CHUNK], seqs[1, k:k + walks.CHUNK] = np.divmod(pair[k:k + walks.CHUNK], s1_count)
    return seqs, w


def _block(t0: np.ndarray, t1: np.ndarray, w: np.ndarray, seq_map0: np.ndarray, shard: tuple[int, int]):
    """The terminals (t0, t1, w) whose final sequence of player 0 lies in rank's rows
    [lo, hi) of the payoff matrix: rows split into `world` contiguous blocks of about equal
    terminal counts, so the ranks' blocks, in rank order, are the whole sorted payoff. Two
    chunked passes (a count per row, then the filter): no array of the terminals' length."""
    rank, world = shard
    rows = int(seq_map0.max()) + 1 if len(seq_map0) else 1
    counts = np.zeros(rows, np.int64)  # [S_0] terminals ending in each sequence of player 0
    for k in range(0, len(w), walks.CHUNK):
        counts += np.bincount(seq_map0[t0[k:k + walks.CHUNK]], minlength=rows)
    cum = np.cumsum(counts)
    lo, hi = (int(np.searchsorted(cum, r * int(cum[-1]) // world, side="right")) if r < world else rows
              for r in (rank, rank + 1))
    keep = []
    for k in range(0, len(w), walks.CHUNK):
        s0 = seq_map0[t0[k:k + walks.CHUNK]]
        keep.append(k + np.flatnonzero((s0 >= lo) & (s0 < hi)))
    keep = np.concatenate(keep) if keep else np.zeros(0, np.int64)
    return t0[keep], t1[keep], w[keep]


def _structure(raw: RawTree, shard: tuple[int, int] | None = None):
    tps, seq_maps, infoset_maps = zip(*(_treeplex(raw, p) for p in (0, 1)))
    s1_count = tps[1].num_sequences
    tree = None
    if raw.chance is not None:  # before `_payoff_entries` releases the terminals
        classes, chance_nodes, terminal_class = raw.chance
        tree = chance_tree(classes, chance_nodes, (*raw.terminals, terminal_class), seq_maps, s1_count)
    seqs, payoff = _payoff_entries(raw, seq_maps, s1_count, _index_dtype(max(tps[0].num_sequences, s1_count)),
                                   shard)
    nodes = {"node_counts": torch.tensor(raw.counts, dtype=torch.int64),
             "node_level_offsets": torch.from_numpy(raw.level_offsets)}
    if raw.nodes is not None:
        nd = raw.nodes
        n = len(nd["parent"])
        idx = _index_dtype(n)
        player = np.asarray(nd["player"], dtype=np.int8)
        infoset = np.asarray(nd["infoset"], dtype=np.int64)
        for p in (0, 1):
            infoset[player == p] = infoset_maps[p][infoset[player == p]]
        nodes.update(
            node_parent=torch.from_numpy(np.asarray(nd["parent"]).astype(idx)),
            node_player=torch.from_numpy(player),
            node_infoset=torch.from_numpy(infoset.astype(idx)),
            node_action=torch.from_numpy(np.asarray(nd["action"]).astype(idx)),
            node_chance_prob=torch.from_numpy(np.asarray(nd["prob"], dtype=np.float64)),
        )
    if tree is not None:
        nodes["chance"] = tree
    return tps, torch.from_numpy(seqs), torch.from_numpy(payoff), nodes


CACHE_MIN_HISTORIES = 1_000_000  # smaller games compile faster than a file loads
# OpenSpiel games have no closed-form size and cost a clone per history: without a limit of
# the caller's, a walk stops once it passes this many (a 10^8-history walk would take hours)
OPENSPIEL_MAX_HISTORIES = 50_000_000


def _walk(g: Game, method: str, nodes: bool | None, max_histories: int | None = None,
          max_memory: int | str | None = None, chance: bool = False) -> RawTree:
    vg = vector_form(g) if method != "per-node" else None
    if vg is None and method == "vectorized":
        raise TensorCFRError(f"{g.name} has no vectorised form (Game.vectorized, defined by the class that "
                             "defines the per-node methods); use method='per-node'")
    walker = "per-node" if vg is None else "vectorized"
    limit = walk_limit(g.name, g.size_hint(), walker, max_histories, max_memory)
    if vg is None:
        return _Walk(g, limit, chance=chance).run().raw(keep_nodes=nodes is not False)
    return _LevelWalk(vg, nodes, limit=limit, chance=chance).run().raw()


def _source_digest(g: Game) -> str:
    """Hash of the code that defines the compiled tree: a changed game or compiler misses the cache."""
    h = hashlib.sha256()
    for mod in sorted({type(g).__module__, "games.vector", "games.base", __name__, walks.__name__, CompiledGame.__module__,
                       Treeplex.__module__}):  # sorted: a set's order changes per process
        path = getattr(sys.modules.get(mod), "__file__", None)
        if path:
            with open(path, "rb") as f:
                h.update(f.read())
    h.update(repr(g.cache_token()).encode())
    return h.hexdigest()[:16]


def cache_file(g: Game) -> str:
    """Where the compiled form of `g` is cached (`paths.compiled_dir`)."""
    safe = re.sub(r"[^A-Za-z0-9_.,=()-]", "_", g.name)
    return os.path.join(compiled_dir(), f"{safe}-{_source_digest(g)}.pt")


def compile_generic(members: list[Game], method: str = "auto", nodes: bool | None = None, cache: bool | None = None,
                    max_histories: int | None = None, max_memory: int | str | None = "auto", chance: bool = False,
                    shard: tuple[int, int] | None = None) -> CompiledGame:
    """The generic form's compile walk (`forms.FORMS["generic"]`): made, checked members in;
    `compile`'s keywords. Use `compile(..., form="generic")`."""
    if max_histories is None and any(g.name.startswith("openspiel:") for g in members):
        max_histories = OPENSPIEL_MAX_HISTORIES
    for g in members:  # a game too large is refused here, before its payoffs or its tree are made
        walk_limit(g.name, g.size_hint(), "vectorized", max_histories, max_memory)
    # the cache holds what the default (nodes=None) keeps; an explicit choice compiles afresh
    if shard is not None:
        rank, world = shard
        if not (isinstance(world, int) and isinstance(rank, int) and 0 <= rank < world):
            raise TensorCFRError(f"compile: shard must be (rank, world) with 0 <= rank < world, got {shard!r}")
        if chance:
            raise TensorCFRError("compile: chance=True (Monte-Carlo sampling) runs on one process, not with shard=")
        if nodes is None:  # a rank solves: it keeps no per-node arrays (Dudo(4,2,2): 1.49 -> 0.91 GB peak)
            nodes = False
    path = cache_file(members[0]) if (cache is not False and len(members) == 1 and nodes is None and not chance
                                      and shard is None) else None
    identity = {"game": members[0].name, "digest": _source_digest(members[0])} if path else None
    if path and os.path.exists(path):
        try:
            return CompiledGame.load(path, expect=identity)
        except TensorCFRError as e:  # another game's file, damaged, edited: compile afresh and overwrite
            print(f"tensorcfr: cached compiled game not used ({e}); compiling afresh", file=sys.stderr)
    compiled = [_structure(_walk(g, method, nodes, max_histories, max_memory, chance), shard) for g in members]
    trees = [c[3].pop("chance", None) for c in compiled]
    tps, seqs, _, nodes_a = compiled[0]
    for g, (tps_b, seqs_b, _, nodes_b) in zip(members[1:], compiled[1:]):
        same = (torch.equal(seqs, seqs_b) and nodes_a.keys() == nodes_b.keys()
                and all(torch.equal(nodes_a[k], nodes_b[k]) for k in nodes_a)
                and all(a.infoset_keys == b.infoset_keys and a.action_names == b.action_names
                        for a, b in zip(tps, tps_b)))
        if not same:
            raise TensorCFRError(f"compile: {short_name(g.name)} does not have the tree of "
                                 f"{short_name(members[0].name)}; "
                                 "a batch must differ in payoffs only")
    if chance:
        nodes_a["chance"] = dataclasses.replace(trees[0], payoff=torch.cat([t.payoff for t in trees]))
    cg = CompiledGame(
        name=members[0].name,
        batch_names=tuple(g.name for g in members),
        treeplexes=tps,
        payoff_seq=seqs,
        payoff=torch.stack([c[2] for c in compiled]),
        shard=None if shard is None else tuple(shard),
        **nodes_a,
    )
    if path and (cache or cg.num_histories >= CACHE_MIN_HISTORIES):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            cg.save(path, identity=identity)
            stale = path[:path.rindex("-")] + "-"  # the same game compiled by older code: gigabytes each
            for f in os.listdir(os.path.dirname(path)):
                full = os.path.join(os.path.dirname(path), f)
                if full.startswith(stale) and full != path and re.fullmatch(r"[0-9a-f]{16}\.pt", full[len(stale):]):
                    os.remove(full)
        except OSError:
            pass  # a read-only cache only costs a recompile
    return cg
