"""The generic form's two walks, which build the same `RawTree` (infosets and sequences in
discovery order, the terminals' sequence pairs and chance-weighted payoffs): `_Walk` calls the
game once per node (any game), `_LevelWalk` expands a whole level of a
`games.vector.VectorGame` with a few numpy calls. Both check the game as they go
(`games/checks.py`); `generic.py` turns the raw tree into tensors.

Example:
    >>> from tensorcfr import games
    >>> raw = _Walk(games.make("kuhn")).run().raw()
    >>> raw.counts
    [4, 24, 30]
"""

from __future__ import annotations

import numpy as np

from tensorcfr.games import CHANCE, TERMINAL, Game
from tensorcfr.games.checks import actions_problem, chance_problem, chance_rows, utility_problem, utility_rows
from tensorcfr.games.vector import KeyTable
from tensorcfr.compiler.sizes import MAX_LEVELS, NODES_KEPT, too_deep, too_many
from tensorcfr.errors import TensorCFRError

class _Walk:
    """The raw tree: per-node lists and per-player infoset tables in discovery order."""

    def __init__(self, game: Game, limit: int | None = None, chance: bool = False):
        self.game, self.limit, self.track = game, limit, chance
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
        # the chance tree (`compiler/chance.py`), with chance=True: per class (parent class, edge
        # probability), per chance node (class, first outcome class, outcomes), per terminal its class
        self.classes: list[tuple[int, float]] = [(-1, 1.0)]
        self.chance_nodes: list[tuple[int, int, int]] = []
        self.terminal_class: list[int] = []

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
        # frontier entries: (state, node id, tmp seq of player 0, of player 1, chance reach, chance class)
        self._add(-1, -1, "", 1.0)
        frontier = [(g.initial_state(), 0, 0, 0, 1.0, 0)]
        while frontier:
            self.level_offsets.append(len(self.parent))  # the frontier is one whole level
            if len(self.level_offsets) > MAX_LEVELS:
                raise too_deep(g.name)
            nxt = []
            for state, node, s0, s1, reach, cls in frontier:
                p = g.player(state)
                if p == TERMINAL:
                    self._terminal(state, node, s0, s1, reach)
                    self.terminal_class.append(cls)
                elif p == CHANCE:
                    self.player[node] = CHANCE
                    outcomes = list(g.chance_outcomes(state))
                    problem = chance_problem([pr for _, pr in outcomes])
                    if problem:
                        raise TensorCFRError(f"{self.where(node)}: {problem}")
                    if self.track:
                        self.chance_nodes.append((cls, len(self.classes), len(outcomes)))
                    for k, (a, pr) in enumerate(outcomes):
                        child = self._add(node, k, a, pr)
                        if self.track:
                            self.classes.append((cls, pr))
                        nxt.append((g.next_state(state, a), child, s0, s1, reach * pr,
                                    len(self.classes) - 1 if self.track else 0))
                elif p in (0, 1):
                    actions, first = self._decision(state, node, p, (s0, s1)[p])
                    for k, a in enumerate(actions):
                        child = self._add(node, k, a, 1.0)
                        seq = first + k + 1  # tmp sequence ids: slot + 1, 0 = empty
                        nxt.append((g.next_state(state, a), child,
                                    seq if p == 0 else s0, seq if p == 1 else s1, reach, cls))
                else:
                    raise TensorCFRError(f"{self.where(node)}: player {p} is not 0, 1, chance or terminal")
            frontier = nxt
        return self

    def raw(self, keep_nodes: bool = True) -> "RawTree":
        player = np.array(self.player, dtype=np.int8)
        counts = [int((player == CHANCE).sum()), int((player >= 0).sum()), int((player == TERMINAL).sum())]
        nodes = dict(parent=np.array(self.parent, dtype=np.int64), player=player,
                     infoset=np.array(self.infoset, dtype=np.int64), action=np.array(self.action, dtype=np.int64),
                     prob=np.array(self.prob, dtype=np.float64)) if keep_nodes else None
        term = np.array(self.terminals, dtype=np.float64).reshape(-1, 4)
        keys = [[None] * len(self.info[p]) for p in (0, 1)]
        for p in (0, 1):
            for k, j in self.ids[p].items():
                keys[p][j] = k
        chance = None
        if self.track:
            chance = (tuple(np.array(x) for x in zip(*self.classes)),
                      tuple(np.array(x, dtype=np.int64).reshape(-1) for x in zip(*self.chance_nodes))
                      if self.chance_nodes else (np.zeros(0, np.int64),) * 3,
                      np.array(self.terminal_class, dtype=np.int64))
        return RawTree(self.level_offsets, counts, nodes, keys, chance=chance,
                       actions=[[a for a, _, _ in self.info[p]] for p in (0, 1)],
                       info_parent=[np.array([par for _, par, _ in self.info[p]], dtype=np.int64) for p in (0, 1)],
                       first_slot=[np.array(self.first_slot[p] + [self.num_slots[p]], dtype=np.int64) for p in (0, 1)],
                       terminals=(term[:, 0].astype(np.int64), term[:, 1].astype(np.int64), term[:, 2] * term[:, 3]))

    def _add(self, parent: int, action: int, label: str, prob: float) -> int:
        if self.limit is not None and len(self.parent) >= self.limit:
            raise too_many(self.game.name, self.limit, "per-node")
        self.parent.append(parent)
        self.player.append(TERMINAL)
        self.infoset.append(-1)
        self.action.append(action)
        self.label.append(label)
        self.prob.append(prob)
        return len(self.parent) - 1

    def _terminal(self, state, node, s0, s1, reach):
        u = tuple(self.game.utilities(state))
        problem = utility_problem(u)
        if problem:
            raise TensorCFRError(f"{self.where(node)}: {problem}")
        self.terminals.append((s0, s1, reach, float(u[0])))

    def _decision(self, state, node, p, parent_seq):
        g = self.game
        key = g.infoset_key(state)
        actions = tuple(g.legal_actions(state))
        problem = actions_problem(actions)
        if problem:
            raise TensorCFRError(f"{self.where(node)}: {problem}")
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


class _Grow:
    """An array that grows along axis 0 by amortised doubling (appending chunk after chunk
    costs O(total), not O(total x chunks))."""

    def __init__(self, dtype, tail=()):
        self.buf, self.n = np.zeros((16, *tail), dtype), 0

    def extend(self, rows: np.ndarray) -> None:
        if self.n + len(rows) > len(self.buf):
            bigger = np.zeros((max(2 * len(self.buf), self.n + len(rows)), *self.buf.shape[1:]), self.buf.dtype)
            bigger[:self.n] = self.buf[:self.n]
            self.buf = bigger
        self.buf[self.n:self.n + len(rows)] = rows
        self.n += len(rows)

    @property
    def view(self) -> np.ndarray:
        return self.buf[:self.n]


CHUNK = 1 << 21  # frontier rows (and child edges) expanded at once: bounds the walk's temporaries


class _LevelWalk:
    """The level-by-level walk of a `games.vector.VectorGame`: every step expands one whole
    level of the tree with a few numpy calls (no Python call per node), with the checks of
    `_Walk`, and yields the same `RawTree`.

    A level is held as chunks of at most `CHUNK` rows, expanded in order and freed as they go,
    so memory is about one level's states plus the terminals' (tmp seq 0, tmp seq 1, reach x u):
    16 bytes a terminal while sequence ids fit int32.
    """

    def __init__(self, vg, keep_nodes: bool | None, max_nodes: int = NODES_KEPT, limit: int | None = None,
                 chance: bool = False):
        self.vg, self.limit, self.track = vg, limit, chance
        self.keep_nodes, self.max_nodes = keep_nodes, max_nodes
        self.levels: list[dict] = []  # per chunk: node arrays while they are kept
        self.level_offsets = [0]
        self.counts = [0, 0, 0]
        # per player: the infoset ids of the keys seen (for lookups), and per infoset in
        # discovery order its key, legal mask, tmp parent sequence and slot offsets
        A = len(vg.actions)
        self.known = [KeyTable(), KeyTable()]
        self.keys = [_Grow(np.int64), _Grow(np.int64)]  # [I]
        self.legal = [_Grow(bool, (A,)), _Grow(bool, (A,))]  # [I, A]
        self.parent = [_Grow(np.int64), _Grow(np.int64)]  # [I]
        self.slots = [_Grow(np.int64), _Grow(np.int64)]  # [I+1] cumulative slot counts
        for s in self.slots:
            s.extend(np.zeros(1, np.int64))
        self.terminals: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        # with chance=True, as `_Walk`: classes (parent, probability), chance nodes, terminal classes
        self.classes = [(np.full(1, -1, np.int64), np.ones(1))]
        self.num_classes = 1
        self.chance_nodes: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.terminal_class: list[np.ndarray] = []

    def fail(self, what: str, state: np.ndarray, node: int | None = None) -> TensorCFRError:
        where = f"state {state.tolist()}"
        if node is not None and self.levels:  # the node arrays are still kept: name the history
            where = f"history {self.history(node)}"
        return TensorCFRError(f"{self.vg.name}: {where}: {what}")

    def history(self, node: int) -> list[str]:
        parent, action, player = (np.concatenate([lv[k] for lv in self.levels]) for k in ("parent", "action", "player"))
        path = []
        while node > 0:
            up = int(parent[node])
            path.append(f"chance#{action[node]}" if player[up] == CHANCE else f"#{action[node]}")
            node = up
        return path[::-1]

    def run(self) -> "_LevelWalk":
        root = np.asarray(self.vg.initial(), dtype=np.int64)
        one = np.ones(1)
        # a frontier chunk: states [n, W], tmp sequence of each player [n], chance reach [n],
        # and, while node arrays are kept, parent node id, action rank, chance-edge probability [n]
        level = [dict(states=root, s0=np.zeros(1, np.int64), s1=np.zeros(1, np.int64), reach=one,
                      parent=np.full(1, -1, np.int64), action=np.full(1, -1, np.int64), prob=one,
                      cls=np.zeros(1, np.int64))]
        while level:
            start = self.level_offsets[-1]
            n = sum(len(c["states"]) for c in level)
            self.level_offsets.append(start + n)
            if len(self.level_offsets) > MAX_LEVELS:
                raise too_deep(self.vg.name)
            keep = self.keep_nodes is True or (self.keep_nodes is None and start + n <= self.max_nodes)
            if not keep:
                self.levels = []  # past the size limit: node arrays are dropped, not half kept
            nxt, offset, total = [], start, start + n  # total: histories so far, the next level's included
            while level:
                chunk = level.pop(0)  # freed once expanded
                children = self._expand(chunk, offset, keep)
                nxt += children
                offset += len(chunk["states"])
                total += sum(len(c["states"]) for c in children)
                if self.limit is not None and total > self.limit:
                    raise too_many(self.vg.name, self.limit, "vectorized")  # before the next level grows further
            level = nxt
        return self

    def _expand(self, c: dict, start: int, keep: bool) -> list[dict]:
        """Check and record one frontier chunk whose first node has id `start`; return its
        children as chunks, in breadth-first order."""
        vg, states = self.vg, c["states"]
        seq = [c["s0"], c["s1"]]
        n = len(states)
        player = np.asarray(vg.player(states), dtype=np.int64)  # [n]
        bad = ~np.isin(player, (0, 1, CHANCE, TERMINAL))
        if bad.any():
            i = int(np.argmax(bad))
            raise self.fail(f"player {player[i]} is not 0, 1, chance or terminal", states[i])
        infoset = np.full(n, -1, np.int64)
        if keep:
            self.levels.append(dict(parent=c["parent"], player=player.astype(np.int8), infoset=infoset,
                                    action=c["action"], prob=c["prob"]))
        t = np.flatnonzero(player == TERMINAL)
        if len(t):
            u = np.asarray(vg.utility(states[t]), dtype=np.float64)
            bad = utility_rows(u)
            if bad.any():
                i = int(np.argmax(bad))
                raise self.fail(f"utility {u[i]} is not finite", states[t[i]], start + t[i])
            # tmp sequence ids so far are below the slot counts: int32 where they fit
            self.terminals.append(tuple(seq[p][t].astype(_index_dtype(self.slots[p].view[-1] + 1)) for p in (0, 1))
                                  + (c["reach"][t] * u,))
            if self.track:
                self.terminal_class.append(c["cls"][t])
        # the edges out of this chunk, one group per kind of parent, each group listing
        # (parent row, action or outcome id, edge probability, mover, mover's first slot) [m]
        groups = []
        ch = np.flatnonzero(player == CHANCE)
        if len(ch):
            p_c = np.asarray(vg.chance(states[ch]), dtype=np.float64)  # [nc, C]
            bad = chance_rows(p_c)
            if bad.any():
                i = int(np.argmax(bad))
                raise self.fail(f"chance probabilities {p_c[i][p_c[i] != 0].tolist()} do not sum to 1",
                                states[ch[i]], start + ch[i])
            rows, outcome = np.nonzero(p_c > 0)
            if self.track:  # outcome classes numbered in (node, outcome) order, as the children below
                count = (p_c > 0).sum(axis=1)
                self.chance_nodes.append((c["cls"][ch], self.num_classes + np.cumsum(count) - count, count))
                self.classes.append((np.repeat(c["cls"][ch], count), p_c[rows, outcome]))
                self.num_classes += len(rows)
            groups.append((ch[rows], outcome, p_c[rows, outcome], np.full(len(rows), CHANCE, np.int8),
                           np.zeros(len(rows), np.int64)))
        for p in (0, 1):
            d = np.flatnonzero(player == p)
            if len(d):
                infoset[d], first, legal = self._decisions(p, states[d], seq[p][d], start + d)
                rows, act = np.nonzero(legal)
                groups.append((d[rows], act, np.ones(len(rows)), np.full(len(rows), p, np.int8), first[rows]))
        self.counts[0] += len(ch)
        self.counts[1] += int((player >= 0).sum())
        self.counts[2] += len(t)
        if not groups:
            return []
        # children in breadth-first order: grouped by parent row (each parent is of one kind,
        # so a stable sort keeps its actions ascending)
        rows, acts, edge, mover, first = (np.concatenate(x) for x in zip(*groups))
        del groups
        order = np.argsort(rows, kind="stable")
        rows, acts, edge, mover, first = rows[order], acts[order], edge[order], mover[order], first[order]
        del order
        rank = np.arange(len(rows)) - np.searchsorted(rows, rows)  # [m] index among the parent's edges
        base = self.num_classes - int((mover == CHANCE).sum())  # this chunk's first outcome class
        out = []
        for k in range(0, len(rows), CHUNK):
            sl = slice(k, k + CHUNK)
            r = rows[sl]
            child = dict(states=np.asarray(vg.next(states[r], acts[sl]), dtype=np.int64), reach=c["reach"][r] * edge[sl])
            for p in (0, 1):
                child[f"s{p}"] = np.where(mover[sl] == p, first[sl] + rank[sl] + 1, seq[p][r])
            if self.track:
                is_chance = mover[sl] == CHANCE
                new = base + np.cumsum(is_chance) - 1  # chance edges in (node, outcome) order
                base += int(is_chance.sum())
                child["cls"] = np.where(is_chance, new, c["cls"][r])
            if keep:  # the child level may still be kept; a dropped one costs nothing more
                child.update(parent=start + r, action=rank[sl], prob=edge[sl])
            out.append(child)
        return out

    def _decisions(self, p: int, states: np.ndarray, parent_seq: np.ndarray, nodes: np.ndarray):
        """Infoset ids of a chunk's decision states of player p, discovering new infosets and
        checking old ones (same legal actions, perfect recall).
        Returns (ids [n], first tmp slot [n], legal actions [n, A] bool)."""
        vg = self.vg
        keys = np.asarray(vg.infoset(states), dtype=np.int64)  # [n]
        legal = np.asarray(vg.legal(states), dtype=bool)  # [n, A]
        empty = ~legal.any(axis=1)
        if empty.any():
            i = int(np.argmax(empty))
            raise self.fail("no legal actions", states[i], nodes[i])
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        ids, disc = self.known[p].number(uniq, first)  # new infosets in discovery order: first history first
        if len(disc):
            rows = first[disc]
            self.keys[p].extend(uniq[disc])
            self.legal[p].extend(legal[rows])
            self.parent[p].extend(parent_seq[rows])
            self.slots[p].extend(self.slots[p].view[-1] + np.cumsum(legal[rows].sum(axis=1)))
        node_ids = ids[inv]
        name = lambda j: vg.infoset_names(self.keys[p].view[j:j + 1])[0]  # noqa: E731
        table = self.legal[p].view
        differ = (legal != table[node_ids]).any(axis=1)
        if differ.any():
            i = int(np.argmax(differ))
            acts = lambda row: [vg.actions[a] for a in np.flatnonzero(row)]  # noqa: E731
            raise self.fail(f"infoset {name(node_ids[i])!r} has legal actions {acts(table[node_ids[i]])} "
                            f"at its first history but {acts(legal[i])} here", states[i], nodes[i])
        recall = parent_seq != self.parent[p].view[node_ids]
        if recall.any():
            i = int(np.argmax(recall))
            raise self.fail(f"perfect recall fails at infoset {name(node_ids[i])!r}: its histories differ in "
                            f"player {p}'s earlier infosets or actions", states[i], nodes[i])
        return node_ids, self.slots[p].view[node_ids], legal

    def raw(self) -> RawTree:
        vg = self.vg
        keys = [k.view for k in self.keys]
        both = np.intersect1d(*keys)
        if len(both):
            raise TensorCFRError(f"{vg.name}: infoset {vg.infoset_names(both[:1])[0]!r} holds histories of both players")
        actions = []
        for p in (0, 1):
            patterns, which = _unique_rows(self.legal[p].view)  # few distinct action sets
            names = [tuple(vg.actions[a] for a in np.flatnonzero(row)) for row in patterns]
            actions.append([names[w] for w in which.ravel().tolist()])
        nodes = {k: np.concatenate([lv[k] for lv in self.levels]) for k in self.levels[0]} if self.levels else None
        terminals = tuple(np.concatenate(x) for x in zip(*self.terminals))
        self.terminals = []
        chance = None
        if self.track:
            nodes_c = tuple(np.concatenate(x) for x in zip(*self.chance_nodes)) if self.chance_nodes else \
                (np.zeros(0, np.int64),) * 3
            chance = (tuple(np.concatenate(x) for x in zip(*self.classes)), nodes_c,
                      np.concatenate(self.terminal_class))
        return RawTree(self.level_offsets, self.counts, nodes, keys=[vg.infoset_names(k) for k in keys], chance=chance,
                       actions=actions, info_parent=[x.view for x in self.parent],
                       first_slot=[x.view for x in self.slots], terminals=terminals)


def _unique_rows(mask: np.ndarray):
    """np.unique(mask, axis=0, return_inverse=True) for a bool matrix [n, A], fast: rows of up
    to 63 columns are packed into one integer each."""
    if mask.shape[1] > 63:
        return np.unique(mask, axis=0, return_inverse=True)
    packed = mask.astype(np.int64) @ (np.int64(1) << np.arange(mask.shape[1], dtype=np.int64))  # [n]
    _, first, which = np.unique(packed, return_index=True, return_inverse=True)
    return mask[first], which


class RawTree:
    """What a walk (per node or per level) hands to `_structure`: plain numpy arrays.

    Infosets and sequences are numbered in discovery order (breadth-first, a level's
    infosets in the order of their first history); "tmp" sequence k+1 is discovery slot k,
    0 the empty sequence. Node arrays are None when the walk did not keep them.
    """

    def __init__(self, level_offsets, counts, nodes, keys, actions, info_parent, first_slot, terminals, chance=None):
        self.level_offsets = np.asarray(level_offsets, dtype=np.int64)  # [L+1]
        self.counts = counts  # [3]: chance, decision, terminal nodes
        self.nodes = nodes  # {parent, player, infoset, action, prob}: [N] arrays, or None
        self.keys = keys  # per player: [I] infoset key strings
        self.actions = actions  # per player: [I] tuples of action names
        self.info_parent = info_parent  # per player: [I] int64 tmp parent sequence
        self.first_slot = first_slot  # per player: [I+1] int64 first tmp slot of each infoset
        self.terminals = terminals  # (tmp seq 0 [T], tmp seq 1 [T], chance reach * u0 [T])
        # with chance=True: ((parent class [C], edge probability [C]), (class [J], first outcome
        # class [J], outcomes [J]) per chance node, class of each terminal [T]); see chance.py
        self.chance = chance


def _index_dtype(bound: int):
    """int32 where every index fits (halves the memory of the big arrays), else int64."""
    return np.int32 if bound < 2 ** 31 else np.int64
