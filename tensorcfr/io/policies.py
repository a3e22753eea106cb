"""Policy files: a solver's average (and current) strategy, readable without tensorcfr.

Two encodings of one versioned format, chosen by the file's extension:

`.json` (small games): one object
    {"format": "tensorcfr-policy", "version": 1, "game": "kuhn", "algorithm": "cfr+",
     "iteration": 1000, "average": {INFOSET: {ACTION: probability}}, "current": {...}}
with every infoset of both players keyed by the game's infoset key.

`.npz` (large games; numpy's compressed archive, `numpy.load(path)`): arrays
    format, version, game, algorithm, iteration   0-d metadata
    infoset_keys  [I] str    every infoset of both players, player 0's first
    player        [I] int8   whose infoset it is
    offsets       [I+1] int64  infoset i's actions are entries offsets[i]:offsets[i+1] of:
    action_names  [N] str
    average       [N] float64  probabilities (and `current`, where saved)

Example:
    >>> import tempfile, os, tensorcfr
    >>> cg = tensorcfr.compile("kuhn")
    >>> path = os.path.join(tempfile.mkdtemp(), "uniform.json")
    >>> save_policy(path, cg.name, {"average": tensorcfr.Policy.uniform(cg).to_dict()})
    >>> load_policy(path)["average"]["K:pb"]
    {'pass': 0.5, 'bet': 0.5}
"""

from __future__ import annotations

import os
import stat
import tempfile

import numpy as np

from tensorcfr.errors import TensorCFRError
from tensorcfr.io.files import read_json, write_atomic, write_json

FORMAT, VERSION = "tensorcfr-policy", 1
TABLES = ("average", "current")


MAX_POLICY_BYTES = 1 << 34  # 16 GiB: far above Dudo(5,2,2)'s policy, far below an endless read


def check_policy_path(path: str) -> None:
    """Refuse, before any work, a policy file that could not be written: an empty name, another
    extension than .json or .npz, a directory, a missing or unwritable folder."""
    if not path:
        raise TensorCFRError("--save-policy needs a file name ending in .json or .npz")
    if os.path.splitext(path)[1].lower() not in (".json", ".npz"):
        raise TensorCFRError(f"policy file {path!r}: the extension must be .json or .npz")
    if os.path.isdir(path):
        raise TensorCFRError(f"policy file {path!r} is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise TensorCFRError(f"policy file {path!r}: the folder {folder} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tensorcfr-probe-"):
            pass
    except OSError as e:
        raise TensorCFRError(f"policy file {path!r}: cannot write in {folder} ({e.strerror})") from None


def save_policy(path: str, game: str, tables: dict[str, dict[str, dict[str, float]]], *,
                players: dict[str, int] | None = None, **meta) -> None:
    """Write `tables` ({"average": {infoset: {action: p}}, "current": ...}) to `path` (.json or
    .npz), atomically. `players` ({infoset: 0 or 1}) is recorded in .npz files."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".json", ".npz"):
        raise TensorCFRError(f"policy file {path!r}: the extension must be .json or .npz")
    if not tables or set(tables) - set(TABLES):
        raise TensorCFRError(f"policy tables must be among {TABLES}, got {sorted(tables)}")
    if ext == ".json":
        write_json(path, {"format": FORMAT, "version": VERSION, "game": game, **meta, **tables}, "the policy file",
                   indent=1)
        return
    first = next(iter(tables.values()))
    keys = list(first)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    names = []
    for i, k in enumerate(keys):
        names += list(first[k])
        offsets[i + 1] = len(names)
    arrays = {which: np.array([p for k in keys for p in t[k].values()], dtype=np.float64)
              for which, t in tables.items()}
    if not all(np.isfinite(a).all() for a in arrays.values()):
        raise TensorCFRError(f"policy file {path}: a probability to be written is NaN or infinite")
    player = np.array([(players or {}).get(k, -1) for k in keys], dtype=np.int8)
    try:
        write_atomic(path, lambda f: np.savez_compressed(
            f, format=FORMAT, version=VERSION, game=game, **{k: str(v) for k, v in meta.items()},
            infoset_keys=np.array(keys, dtype=str), player=player, offsets=offsets,
            action_names=np.array(names, dtype=str), **arrays), binary=True)
    except OSError as e:
        raise TensorCFRError(f"cannot write the policy file {path} ({e.strerror or e})") from None


def load_policy(path: str) -> dict:
    """Read a policy file: {"game": ..., "average": {infoset: {action: p}}, ...} (plus metadata).
    A file of another format or version is a clear error."""
    ext = os.path.splitext(path)[1].lower()
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise TensorCFRError(f"no policy file at {path}") from None
    except OSError as e:
        raise TensorCFRError(f"cannot read the policy file {path} ({e.strerror})") from None
    if not stat.S_ISREG(info.st_mode):  # a device such as /dev/zero would be read without end
        raise TensorCFRError(f"policy file {path} is not a regular file")
    if info.st_size > MAX_POLICY_BYTES:
        raise TensorCFRError(f"policy file {path} is {info.st_size:,} bytes, more than {MAX_POLICY_BYTES:,}")
    try:
        if ext == ".json":
            d = read_json(path)
        elif ext == ".npz":
            with np.load(path, allow_pickle=False) as z:
                d = {k: z[k].item() for k in z.files if z[k].ndim == 0}
                keys, offsets, names = z["infoset_keys"].tolist(), z["offsets"].tolist(), z["action_names"].tolist()
                arrays = ["infoset_keys", "offsets", "action_names", *(w for w in TABLES if w in z.files)]
                if any(z[k].ndim != 1 for k in arrays) or len(offsets) != len(keys) + 1 or \
                        any(len(z[w]) != len(names) for w in TABLES if w in z.files):
                    raise ValueError("its arrays are not one-dimensional or do not fit together")
                for which in TABLES:
                    if which in z.files:
                        probs = z[which].tolist()
                        d[which] = {k: dict(zip(names[a:b], probs[a:b]))
                                    for k, a, b in zip(keys, offsets[:-1], offsets[1:])}
        else:
            raise TensorCFRError(f"policy file {path!r}: the extension must be .json or .npz")
    except FileNotFoundError:
        raise TensorCFRError(f"no policy file at {path}") from None
    except TensorCFRError:
        raise
    except Exception as e:  # noqa: BLE001 - json, zip and numpy each fail their own way on a damaged file
        raise TensorCFRError(f"policy file {path} is damaged or not a policy file: {e}") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise TensorCFRError(f"{path} is not a tensorcfr policy file (no \"format\": \"{FORMAT}\")")
    version = d.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int):
        raise TensorCFRError(f"{path}: the policy format version must be an integer, got {version!r}")
    if version > VERSION:
        raise TensorCFRError(f"{path} has policy format version {d['version']}; this tensorcfr reads "
                             f"version {VERSION}: upgrade tensorcfr")
    if not any(w in d for w in TABLES):
        raise TensorCFRError(f"{path} holds no strategy (neither \"average\" nor \"current\")")
    for w in TABLES:
        if w in d and not (isinstance(d[w], dict) and all(isinstance(row, dict) for row in d[w].values())):
            raise TensorCFRError(f"{path}: {w!r} must map infosets to {{action: probability}}")
    return d


def policy_table(path: str, which: str = "average") -> dict[str, dict[str, float]]:
    """The `which` strategy of a policy file ({infoset: {action: p}})."""
    d = load_policy(path)
    if which not in d:
        raise TensorCFRError(f"{path} has no {which!r} strategy; it has {[w for w in TABLES if w in d]}")
    return d[which]
