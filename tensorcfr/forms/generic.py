"""The compiled form of a game: two treeplexes, a sparse payoff matrix and the tree levels.

Dimension names used in shapes: B batch (payoff vectors over one tree), S sequences of one
player (index 0 is the empty sequence), I infosets of one player, Z nonzeros of the payoff
matrix, N nodes of the game tree, L levels.

Layout (see docs/concepts.md): a player's infosets are stored by treeplex level, the infosets of
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
import hashlib
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from tensorcfr.errors import TensorCFRError
from tensorcfr.forms import PayoffExtent
from tensorcfr.spaces.treeplex import Treeplex

if TYPE_CHECKING:
    from tensorcfr.compiler.chance import ChanceTree

FORMAT_VERSION = 3  # 2: int32 indices, node_counts, optional per-node arrays; 3: names packed in tensors
READABLE_VERSIONS = (2, 3)
_SEP = "\x00"  # between packed infoset keys


@dataclass(frozen=True, eq=False)
class CompiledGame:
    """A game compiled for the solvers: frozen, `.to(device)`, `save`/`load`.

    The payoff matrix A is stored as COO with `payoff_seq[:, k] = (s0, s1)` and
    `payoff[b, k] = sum over terminals z with last sequences (s0, s1) of chance(z) * u0_b(z)`,
    sorted by (s0, s1). Player 1's payoff is -A. The game-tree arrays describe every node
    (chance, decision, terminal) in breadth-first order, one level after another.
    """

    form = "generic"  # `forms.CompiledForm`; `public.PublicCompiledGame` is the other
    smaller_form = "the public-tree form (--form public) where the game has one, "  # what an out-of-memory error suggests

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
    # the chance tree of Monte-Carlo sampling (`compile(..., chance=True)`; not saved):
    chance: "ChanceTree | None" = None
    # (rank, world): the payoff holds only rank's block of the ranks' (`compile(..., shard=)`;
    # `operators/distributed.py`); None: the whole payoff
    shard: tuple[int, int] | None = None

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

    def infoset_players(self) -> dict[str, int]:
        """{infoset key: the player who moves there} (what a policy file records)."""
        return {k: tp.player for tp in self.treeplexes for _, k, _ in tp.infosets()}

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
            "form": "generic",
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

    def operator(self, dtype: torch.dtype, gather: bool = False):
        """The payoff operator (`forms.CompiledForm`): `payoff.PayoffOperator`, CSR, or the
        gather form with `gather` (what a compiled iteration fuses)."""
        from tensorcfr.operators.payoff import PayoffOperator
        return PayoffOperator.build(self, dtype, gather)

    def estimator(self, scheme: str, samples: int, dtype: torch.dtype, epsilon: float):
        """Monte-Carlo counterfactual values over the chance tree (`sampling.Estimator`; the
        game must be compiled with `chance=True`)."""
        from tensorcfr.sampling.generic import Estimator
        return Estimator(self, scheme, samples, dtype, epsilon)

    def default_samples(self, update_scope: str) -> int:
        """`POOLED_SAMPLES` with the full update: pooled, an estimate costs about one sample's
        work at any K, and on Leduc and Liar's Dice more samples gave a lower exploitability at
        equal time all the way to 65,536 (docs: Monte-Carlo CFR); 1 with the touched update,
        whose point is to touch what one sample reaches.

        Example:
            >>> import tensorcfr
            >>> tensorcfr.compile("kuhn", chance=True).default_samples("touched")
            1
        """
        from tensorcfr.sampling.generic import POOLED_SAMPLES
        return POOLED_SAMPLES if update_scope == "all" else 1

    def block(self, rank: int, world: int) -> "CompiledGame":
        """Rank's block of the payoff nonzeros [lo, hi) of `world` ranks, still sorted by
        (s0, s1) (`distributed.shard`)."""
        from tensorcfr.operators.distributed import bounds
        lo, hi = bounds(int(self.payoff.shape[1]), rank, world)
        return dataclasses.replace(self, payoff_seq=self.payoff_seq[:, lo:hi].clone(), payoff=self.payoff[:, lo:hi].clone())

    def payoff_bytes(self, dtype: torch.dtype) -> int:
        """Values and int32 columns per orientation, the dtype's copy they are cut from, a sort's
        indices and CSR row offsets (measured: within the estimate from OCP(1000) to Dudo(4,2,2))."""
        e = torch.finfo(dtype).bits // 8
        z, b = self.payoff.shape[1], self.payoff.shape[0]
        return 2 * z * (b * e + 8) + z * b * e + 24 * z

    @property
    def payoff_entries(self) -> int:
        """Nonzeros of the payoff a batch member (`forms.CompiledForm`)."""
        return int(self.payoff.shape[1])

    def payoff_extent(self) -> PayoffExtent:
        """The payoff's magnitude (`forms.PayoffExtent`), a slice of 2^22 entries at a time (no
        copy of the whole payoff); an entry is named by the two sequences that reach it."""
        total = torch.zeros(self.batch_size, dtype=torch.float64, device=self.device)
        largest, smallest, k_large, k_small = 0.0, math.inf, 0, 0
        for lo in range(0, self.payoff.shape[1], 1 << 22):
            a = self.payoff[:, lo:lo + (1 << 22)].abs()  # [B, z]
            total += a.sum(1)
            top, k = a.amax(0).max(0)
            if float(top) > largest:
                largest, k_large = float(top), lo + int(k)
            low, k = torch.where(a > 0, a, math.inf).amin(0).min(0)
            if float(low) < smallest:
                smallest, k_small = float(low), lo + int(k)

        def where(which: str) -> str:
            s0, s1 = (int(v) for v in self.payoff_seq[:, k_large if which == "largest" else k_small])
            n0, n1 = (tp.sequence_names()[s] or "no move" for tp, s in zip(self.treeplexes, (s0, s1)))
            return f"the terminals reached by {n0} of player 0 and {n1} of player 1"
        return PayoffExtent(float(total.max()) if self.batch_size else 0.0, largest,
                            0.0 if smallest == math.inf else smallest, where)

    def _tensors(self) -> dict[str, torch.Tensor]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if isinstance(getattr(self, f.name), torch.Tensor)}

    def to(self, device) -> "CompiledGame":
        """A copy on `device` (the game's structure is shared, tensors are moved)."""
        return dataclasses.replace(self, treeplexes=tuple(t.to(device) for t in self.treeplexes),
                                   chance=None if self.chance is None else self.chance.to(device),
                                   **{k: v.to(device) for k, v in self._tensors().items()})

    def save(self, path: str | os.PathLike, identity: dict | None = None) -> None:
        """Write to a `.pt` file (atomically: a crash never leaves half a file), with a checksum
        of its contents and `identity` (what the file is: the compile cache stores the game and
        the digest of the code that compiled it), both verified by `load(path, expect=...)`."""
        if self.shard is not None:
            raise TensorCFRError(f"{self.name}: this is rank {self.shard[0]}'s block of the payoff of {self.shard[1]} "
                                 "ranks, not a whole game; save the game compiled without shard=")
        data = {"format": "tensorcfr.CompiledGame", "version": FORMAT_VERSION,
                "name": self.name, "batch_names": list(self.batch_names),
                "tensors": {k: v.cpu() for k, v in self._tensors().items()},
                "treeplexes": [{"player": t.player, **_pack_names(t.infoset_keys, t.action_names),
                                "tensors": {k: v.cpu() for k, v in t.tensors().items()}}
                               for t in self.treeplexes],
                "identity": identity or {}}
        data["checksum"] = _checksum(data)
        tmp = f"{os.fspath(path)}.tmp"
        torch.save(data, tmp)
        os.replace(tmp, path)

    @staticmethod
    def load(path: str | os.PathLike, device="cpu", expect: dict | None = None) -> "CompiledGame":
        """Read a file written by `save`. With `expect`, the file must carry that identity and
        an intact checksum, and finite payoffs; anything else is a `TensorCFRError` saying which.

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
        if data.get("version") not in READABLE_VERSIONS:
            raise TensorCFRError(f"{path}: format version {data.get('version')}, expected one of {READABLE_VERSIONS}")
        if expect is not None:
            if data.get("identity") != expect:
                raise TensorCFRError(f"{path} holds {data.get('identity') or data.get('name')!r}, not {expect!r}")
            if data.get("checksum") != _checksum(data):
                raise TensorCFRError(f"{path}: its checksum does not match its contents")
        try:
            tps = tuple(Treeplex(t["player"], *_unpack_names(t), **t["tensors"]) for t in data["treeplexes"])
            cg = CompiledGame(data["name"], tuple(data["batch_names"]), tps, **data["tensors"])
        except Exception as e:  # noqa: BLE001 - a file of the right format with the wrong insides
            raise TensorCFRError(f"{path}: a damaged compiled game ({type(e).__name__}: {e})") from None
        if expect is not None and not bool(torch.isfinite(cg.payoff).all()):
            raise TensorCFRError(f"{path}: its payoffs are not all finite")
        return cg


def _checksum(data: dict) -> str:
    """BLAKE2 digest of a saved game's contents: every tensor's bytes and every name."""
    h = hashlib.blake2b(digest_size=16)

    def feed(key: str, value) -> None:
        h.update(key.encode())
        if isinstance(value, torch.Tensor):
            h.update(str((value.dtype, tuple(value.shape))).encode())
            if value.numel():
                h.update(value.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().data)
        elif isinstance(value, dict):
            for k in sorted(value):
                feed(f"{key}/{k}", value[k])
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                feed(f"{key}[{i}]", v)
        else:
            h.update(repr(value).encode())

    feed("", {k: v for k, v in data.items() if k != "checksum"})
    return h.hexdigest()


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
