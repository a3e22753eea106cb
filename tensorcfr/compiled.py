"""The compiled form of a game: two treeplexes, a sparse payoff matrix and the tree levels.

Dimension names used in shapes: B batch (payoff vectors over one tree), S sequences of one
player (index 0 is the empty sequence), I infosets of one player, Z nonzeros of the payoff
matrix, N nodes of the game tree, L levels.

Layout (see DESIGN.md §1): a player's infosets are stored by treeplex level, the infosets of
one level contiguous, and the actions of one infoset are contiguous sequences, so "all
actions of an infoset" is a segment and "all infosets of a level" is a slice.

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("kuhn")
    >>> cg.sizes()["sequences"]
    [12, 12]
    >>> cg.treeplexes[0].sequence_names()[1]
    'J:/pass'
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from .errors import TensorCFRError

FORMAT_VERSION = 3  # 2: int32 indices, node_counts, optional per-node arrays; 3: names packed in tensors
READABLE_VERSIONS = (2, 3)
_SEP = "\x00"  # between packed infoset keys


class Level(NamedTuple):
    """One treeplex level: infosets `i0:i1`, sequences `s0:s1`, and their index tensors."""

    i0: int
    i1: int
    s0: int
    s1: int
    segment: torch.Tensor  # [s1-s0] int64: infoset of each sequence, minus i0
    parent: torch.Tensor  # [i1-i0] int64: parent sequence of each infoset
    seq_parent: torch.Tensor  # [s1-s0] int64: parent sequence of each sequence's infoset


@dataclass(frozen=True, eq=False)
class Treeplex:
    """One player's sequence-form decision space (S sequences incl. the empty one, I infosets).

    Sequence 0 is the empty sequence; infoset j owns sequences
    `infoset_offsets[j] : infoset_offsets[j+1]`, one per action in `action_names[j]` order.
    """

    player: int
    infoset_keys: tuple[str, ...]  # [I]
    action_names: tuple[tuple[str, ...], ...]  # [I][A_j]
    infoset_parent: torch.Tensor  # [I] int64: parent sequence of each infoset
    infoset_offsets: torch.Tensor  # [I+1] int64: CSR offsets of each infoset's sequences
    seq_infoset: torch.Tensor  # [S] int64: infoset owning each sequence, -1 for the empty one
    level_offsets: torch.Tensor  # [L+1] int64: level l holds infosets level_offsets[l]:[l+1]
    # derived on construction, not stored in files:
    levels: tuple[Level, ...] = field(init=False, repr=False)
    slot_infoset: torch.Tensor = field(init=False, repr=False)  # [S-1] seq_infoset[1:]
    num_actions: torch.Tensor = field(init=False, repr=False)  # [I] int64
    _uniform: dict = field(init=False, repr=False, compare=False)  # dtype -> [S-1] 1 / actions

    def __post_init__(self):
        lo = self.level_offsets.tolist()
        io = self.infoset_offsets.tolist()
        levels = []
        for i0, i1 in zip(lo[:-1], lo[1:]):
            s0, s1 = io[i0], io[i1]
            segment = self.seq_infoset[s0:s1] - i0
            parent = self.infoset_parent[i0:i1]
            levels.append(Level(i0, i1, s0, s1, segment, parent, parent[segment]))
        object.__setattr__(self, "levels", tuple(levels))
        object.__setattr__(self, "slot_infoset", self.seq_infoset[1:])
        object.__setattr__(self, "num_actions", self.infoset_offsets.diff())
        object.__setattr__(self, "_uniform", {})

    def uniform(self, dtype: torch.dtype) -> torch.Tensor:
        """[S-1] the uniform strategy's probability of each sequence (1 / its infoset's actions),
        made once per dtype: regret matching falls back to it at every iteration."""
        if dtype not in self._uniform:
            self._uniform[dtype] = (1.0 / self.num_actions.to(dtype))[self.slot_infoset]
        return self._uniform[dtype]

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

    @property
    def num_sequences(self) -> int:
        """Sequences including the empty one (the length of every per-sequence tensor)."""
        return int(self.seq_infoset.numel())

    @property
    def seq_parent(self) -> torch.Tensor:
        """[S] int64: the parent sequence of each sequence's infoset (0 for the empty one)."""
        return torch.cat([self.infoset_parent.new_zeros(1), self.infoset_parent[self.seq_infoset[1:]]])

    def infoset_index(self) -> dict[str, int]:
        """{infoset key: storage index}, built once (lookups by key happen at every evaluation)."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {k: i for i, k in enumerate(self.infoset_keys)}
            object.__setattr__(self, "_index", index)
        return index

    def sequence_names(self) -> list[str]:
        """Readable name of every sequence: `""` for the empty one, else `"key/action"`."""
        return [""] + [f"{k}/{a}" for k, acts in zip(self.infoset_keys, self.action_names) for a in acts]

    def per_infoset(self, row: list) -> dict[str, dict[str, object]]:
        """`{infoset key: {action name: row[sequence]}}` for a per-sequence list `row` [S].

        Example:
            >>> import tensorcfr
            >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
            >>> tp.per_infoset(list(range(tp.num_sequences)))["J:"]
            {'pass': 1, 'bet': 2}
        """
        offsets = self.infoset_offsets.tolist()
        return {key: dict(zip(acts, row[offsets[j]:offsets[j + 1]]))
                for j, (key, acts) in enumerate(zip(self.infoset_keys, self.action_names))}

    def tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.init and isinstance(getattr(self, f.name), torch.Tensor)}

    def to(self, device) -> "Treeplex":
        return Treeplex(self.player, self.infoset_keys, self.action_names,
                        **{k: v.to(device) for k, v in self.tensors().items()})


@dataclass(frozen=True, eq=False)
class CompiledGame:
    """A game compiled for the solvers: frozen, `.to(device)`, `save`/`load`.

    The payoff matrix A is stored as COO with `payoff_seq[:, k] = (s0, s1)` and
    `payoff[b, k] = sum over terminals z with last sequences (s0, s1) of chance(z) * u0_b(z)`,
    sorted by (s0, s1). Player 1's payoff is -A. The game-tree arrays describe every node
    (chance, decision, terminal) in breadth-first order, one level after another.
    """

    name: str  # spec of the game (of the first batch member)
    batch_names: tuple[str, ...]  # [B] spec of each batch member
    treeplexes: tuple[Treeplex, Treeplex]
    payoff_seq: torch.Tensor  # [2, Z] int32 (int64 past 2^31 sequences): (s0, s1) of each nonzero
    payoff: torch.Tensor  # [B, Z] float64: chance-weighted utility of player 0
    node_counts: torch.Tensor  # [3] int64: chance, decision and terminal nodes
    node_level_offsets: torch.Tensor  # [L+1] int64: level d holds nodes offsets[d]:[d+1]
    # Per-node arrays, int32 where N < 2^31; the solvers never read them, so compile keeps them
    # only up to `compiler.NODES_KEPT` histories (None past that, or with nodes=False).
    node_parent: torch.Tensor | None = None  # [N]: parent node, -1 for the root
    node_player: torch.Tensor | None = None  # [N] int8: 0 or 1 to move, -1 chance, -2 terminal
    node_infoset: torch.Tensor | None = None  # [N]: infoset of the player to move, -1 elsewhere
    node_action: torch.Tensor | None = None  # [N]: index of the action or outcome leading here, -1 root
    node_chance_prob: torch.Tensor | None = None  # [N] float64: probability of the chance edge into the node, else 1

    @property
    def batch_size(self) -> int:
        return int(self.payoff.shape[0])

    @property
    def device(self) -> torch.device:
        return self.payoff.device

    @property
    def num_histories(self) -> int:
        return int(self.node_counts.sum())

    @property
    def num_terminals(self) -> int:
        return int(self.node_counts[2])

    @property
    def num_levels(self) -> int:
        return int(self.node_level_offsets.numel() - 1)

    def sizes(self) -> dict:
        """Sizes as reported by `tensorcfr info --json`.

        `histories` counts every node (chance, decision, terminal): the thesis' node count for
        games that deal at one root chance node. `infosets_with_choice` counts the infosets of
        both players with two or more actions: the thesis' information-set count.

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("leduc").sizes()["infosets"]
            [468, 468]
        """
        t0, t1 = self.treeplexes
        return {
            "histories": self.num_histories,
            "terminals": self.num_terminals,
            "chance_nodes": int(self.node_counts[0]),
            "decision_nodes": int(self.node_counts[1]),
            "infosets": [t0.num_infosets, t1.num_infosets],
            "infosets_with_choice": int((t0.num_actions >= 2).sum() + (t1.num_actions >= 2).sum()),
            "sequences": [t0.num_sequences - 1, t1.num_sequences - 1],
            "levels": self.num_levels,
            "treeplex_levels": [len(t0.levels), len(t1.levels)],
            "payoff_nonzeros": int(self.payoff.shape[1]),
            "batch": self.batch_size,
        }

    def _tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if isinstance(getattr(self, f.name), torch.Tensor)}

    def nbytes(self) -> int:
        """Bytes held by the tensors (the per-node arrays included when kept)."""
        own = sum(t.numel() * t.element_size() for t in self._tensors().values())
        return own + sum(t.numel() * t.element_size() for tp in self.treeplexes for t in tp.tensors().values())

    def to(self, device) -> "CompiledGame":
        """A copy on `device` (the game's structure is shared, tensors are moved)."""
        return dataclasses.replace(self, treeplexes=tuple(t.to(device) for t in self.treeplexes),
                                   **{k: v.to(device) for k, v in self._tensors().items()})

    def save(self, path: str | os.PathLike) -> None:
        """Write to a `.pt` file (atomically: a crash never leaves half a file)."""
        data = {"format": "tensorcfr.CompiledGame", "version": FORMAT_VERSION,
                "name": self.name, "batch_names": list(self.batch_names),
                "tensors": {k: v.cpu() for k, v in self._tensors().items()},
                "treeplexes": [{"player": t.player, **_pack_names(t.infoset_keys, t.action_names),
                                "tensors": {k: v.cpu() for k, v in t.tensors().items()}}
                               for t in self.treeplexes]}
        tmp = f"{os.fspath(path)}.tmp"
        torch.save(data, tmp)
        os.replace(tmp, path)

    @staticmethod
    def load(path: str | os.PathLike, device="cpu") -> "CompiledGame":
        """Read a file written by `save`.

        Example:
            >>> import tensorcfr, tempfile, os
            >>> cg = tensorcfr.compile("kuhn")
            >>> p = os.path.join(tempfile.mkdtemp(), "kuhn.pt"); cg.save(p)
            >>> tensorcfr.CompiledGame.load(p).sizes() == cg.sizes()
            True
        """
        try:
            data = torch.load(path, map_location=device, weights_only=True)
            assert data["format"] == "tensorcfr.CompiledGame"
        except Exception as e:
            raise TensorCFRError(f"{path}: not a compiled tensorcfr game ({e})") from None
        if data["version"] not in READABLE_VERSIONS:
            raise TensorCFRError(f"{path}: format version {data['version']}, expected one of {READABLE_VERSIONS}")
        tps = tuple(Treeplex(t["player"], *_unpack_names(t), **t["tensors"]) for t in data["treeplexes"])
        return CompiledGame(data["name"], tuple(data["batch_names"]), tps, **data["tensors"])


def _pack_names(keys: tuple[str, ...], actions: tuple[tuple[str, ...], ...]) -> dict:
    """Infoset keys and action names as tensors: torch's weights-only unpickler is written in
    Python, and Dudo(5,2,2)'s 15.7M key strings took 143 s to load one by one, 23 s packed.
    Keys are joined by NUL ([bytes] uint8); action tuples become a table of the distinct tuples
    plus an int32 index per infoset."""
    joined = _SEP.join(keys)
    if joined.count(_SEP) != max(len(keys) - 1, 0):  # a key holding NUL: keep the plain list
        packed_keys = list(keys)
    else:
        packed_keys = torch.frombuffer(bytearray(joined.encode("utf-8")), dtype=torch.uint8) if joined else \
            torch.zeros(0, dtype=torch.uint8)
    table: dict[tuple[str, ...], int] = {}
    which = torch.tensor([table.setdefault(a, len(table)) for a in actions], dtype=torch.int32)
    return {"infoset_keys": packed_keys, "num_infosets": len(keys),
            "action_names": [list(a) for a in table], "action_index": which}


def _unpack_names(t: dict) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The inverse of `_pack_names` (and the plain lists of format 2)."""
    keys = t["infoset_keys"]
    if isinstance(keys, torch.Tensor):
        keys = bytes(keys.cpu().numpy()).decode("utf-8").split(_SEP) if t["num_infosets"] else []
    names = [tuple(a) for a in t["action_names"]]
    if "action_index" in t:
        names = [names[i] for i in t["action_index"].tolist()]
    return tuple(keys), tuple(names)
