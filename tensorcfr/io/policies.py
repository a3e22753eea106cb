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

A game of more than `PUBLIC_LAYOUT_INFOSETS` infosets writes its `.npz` by public infoset and
private type instead (version 2, `layout` "public", `form` the compiled form it came from; a flop
spot has 9.6e7 infosets, whose keys alone would take gigabytes; in the generic form every
infoset is a public infoset of one type, and the public sequences its sequences), per player p:
    p{p}_average  [M, T] float32|float64  the probability of public sequence m's action for a
                  player of private type t (and `p{p}_current`, where saved)
    p{p}_infoset  [M] int64  the public infoset u of each public sequence (an infoset's
                  sequences are consecutive)
    p{p}_action   [M] str    the action of each public sequence
    p{p}_live     [U, T] bool  the (u, t) chance reaches; the other rows' numbers never matter
    p{p}_types    [T] str, p{p}_public [U] str  (where `names` is True) names such that the
                  infoset key of (u, t) is types[t] + public[u]
`read_policy(compiled game, path)` reads either layout into a `Policy`.

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
PUBLIC_VERSION = 2  # the public layout; files by key stay version 1, readable by older versions
TABLES = ("average", "current")
# Above this many infosets a game's .npz is written by public infoset x type, and
# its keys are not turned into {infoset: {action: p}} tables on reading (4.2M: about 1 GB of
# Python objects); a .json policy is refused above JSON_MAX_INFOSETS, before the solve.
PUBLIC_LAYOUT_INFOSETS = 1 << 22
JSON_MAX_INFOSETS = 1 << 20


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


def load_policy(path: str, keep=None, tables: bool = True) -> dict:
    """Read a policy file: {"game": ..., "average": {infoset: {action: p}}, ...} (plus metadata).
    A file of another format or version is a clear error. A file in the public layout gives its
    infosets' keys where it stores their names, only those of the public infosets whose name
    passes `keep` (a predicate; None: all), up to `PUBLIC_LAYOUT_INFOSETS` of them.
    `tables=False`: the metadata only, with "strategies" (which of `TABLES` the file holds)."""
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
            if isinstance(d, dict) and not tables:
                d = {k: v for k, v in d.items() if k not in TABLES} | {"strategies": [w for w in TABLES if w in d]}
        elif ext == ".npz":
            with np.load(path, allow_pickle=False) as z:
                d = {k: z[k].item() for k in z.files if z[k].ndim == 0}
                public = d.get("layout") == "public"
                held = [w for w in TABLES if (f"p0_{w}" if public else w) in z.files]
                if not tables:
                    d["strategies"] = held
                elif public:
                    for which in held:
                        d[which] = _public_tables(path, z, which, keep)
                else:
                    keys, offsets, names = z["infoset_keys"].tolist(), z["offsets"].tolist(), z["action_names"].tolist()
                    arrays = ["infoset_keys", "offsets", "action_names", *held]
                    if any(z[k].ndim != 1 for k in arrays) or len(offsets) != len(keys) + 1 or \
                            any(len(z[w]) != len(names) for w in held):
                        raise ValueError("its arrays are not one-dimensional or do not fit together")
                    for which in held:
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
    if version > PUBLIC_VERSION:
        raise TensorCFRError(f"{path} has policy format version {d['version']}; this tensorcfr reads "
                             f"versions up to {PUBLIC_VERSION}: upgrade tensorcfr")
    if not (d["strategies"] if not tables else any(w in d for w in TABLES)):
        raise TensorCFRError(f"{path} holds no strategy (neither \"average\" nor \"current\")")
    for w in TABLES if tables else ():
        if w in d and not (isinstance(d[w], dict) and all(isinstance(row, dict) for row in d[w].values())):
            raise TensorCFRError(f"{path}: {w!r} must map infosets to {{action: probability}}")
    return d


def policy_info(path: str) -> dict:
    """A policy file's metadata ("game", "algorithm", "iteration", "layout" where not by key,
    "strategies"), its probabilities left unread.

    Example:
        >>> import tempfile, os, tensorcfr
        >>> path = os.path.join(tempfile.mkdtemp(), "uniform.npz")
        >>> write_policy(path, {"average": tensorcfr.Policy.uniform(tensorcfr.compile("kuhn"))}, iteration=0)
        'keys'
        >>> policy_info(path)["strategies"]
        ['average']
    """
    return load_policy(path, tables=False)


def _public_tables(path: str, z, which: str, keep) -> dict[str, dict[str, float]]:
    """{infoset key: {action: p}} of a public-layout file's reachable infosets, where it names them."""
    if not z["names"].item():
        raise TensorCFRError(f"{path} is written by public infoset and type without key names (this game's keys "
                             "are not a type's name followed by a public one): read it with "
                             "tensorcfr.io.policies.read_policy(compiled game, path)")
    out, count = {}, 0
    for p in (0, 1):
        types, public = z[f"p{p}_types"].tolist(), z[f"p{p}_public"].tolist()
        probs, infoset, action = z[f"p{p}_{which}"], z[f"p{p}_infoset"], z[f"p{p}_action"].tolist()
        live = z[f"p{p}_live"]
        if probs.shape != (len(infoset), len(types)) or live.shape != (len(public), len(types)) or \
                len(action) != len(infoset) or (len(infoset) and not 0 <= infoset.min() <= infoset.max() < len(public)):
            raise ValueError(f"player {p}'s arrays do not fit together")
        starts = np.searchsorted(infoset, np.arange(len(public) + 1))  # u's sequences: starts[u]:starts[u+1]
        chosen = [u for u in range(len(public)) if keep is None or keep(public[u])]
        count += int(live[chosen].sum()) if chosen else 0
        if count > PUBLIC_LAYOUT_INFOSETS:
            raise TensorCFRError(f"{path}: more than {PUBLIC_LAYOUT_INFOSETS:,} infosets to turn into key tables; "
                                 "read it with tensorcfr.io.policies.read_policy(compiled game, path)")
        for u in chosen:
            a, b = int(starts[u]), int(starts[u + 1])
            names, rows = action[a:b], probs[a:b].T.tolist()  # rows: [T][actions]
            for t in np.flatnonzero(live[u]).tolist():
                out[types[t] + public[u]] = dict(zip(names, rows[t]))
    return out


def policy_table(path: str, which: str = "average", keep=None) -> dict[str, dict[str, float]]:
    """The `which` strategy of a policy file ({infoset: {action: p}}); `keep`: `load_policy`'s."""
    d = load_policy(path, keep)
    if which not in d:
        raise TensorCFRError(f"{path} has no {which!r} strategy; it has {[w for w in TABLES if w in d]}")
    return d[which]


def write_policy(path: str, policies: dict, *, member: int = 0, layout: str | None = None, **meta) -> str:
    """Write the strategies `policies` ({"average": Policy, "current": Policy}, of one compiled
    game) to `path`: by infoset key (.json, and .npz up to `PUBLIC_LAYOUT_INFOSETS` infosets),
    by public infoset and type (.npz of a larger game). Returns the layout written,
    "keys" or "public" (`layout` chooses it instead; `meta`: the metadata to record, such as
    `algorithm` and `iteration`). A .json policy of more than `JSON_MAX_INFOSETS` infosets is
    refused.

    Example:
        >>> import tempfile, os, tensorcfr
        >>> cg = tensorcfr.compile("leduc", form="public")
        >>> path = os.path.join(tempfile.mkdtemp(), "leduc.npz")
        >>> write_policy(path, {"average": tensorcfr.Policy.uniform(cg)}, layout="public")
        'public'
        >>> read_policy(cg, path).infoset("Qs|-|r")
        {'fold': 0.3333333333333333, 'call': 0.3333333333333333, 'raise': 0.3333333333333333}
    """
    ext = os.path.splitext(path)[1].lower()
    cg = next(iter(policies.values())).game
    layout = layout or policy_layout(cg, path)
    if layout == "keys":
        save_policy(path, cg.name, {w: pol.to_dict(member) for w, pol in policies.items()},
                    players=cg.infoset_players(), **meta)
        return layout
    if ext != ".npz":
        raise TensorCFRError(f"policy file {path!r}: the layout by public infoset and type is an .npz")
    arrays, names = {}, True
    for tp in cg.treeplexes:  # each form's space gives its layout (the generic form's: one type)
        p = tp.player
        arrays.update({f"p{p}_{k}": v for k, v in tp.layout(member).items()})
        for which, pol in policies.items():
            s = pol.sigma[p]
            probs = tp.rows(s[min(member, s.shape[0] - 1)][None])[0].cpu().numpy()  # [M, T]
            if not np.isfinite(probs).all():
                raise TensorCFRError(f"policy file {path}: a probability to be written is NaN or infinite")
            arrays[f"p{p}_{which}"] = probs
        split = tp.split_names()
        names = names and split is not None
        if split is not None:
            arrays[f"p{p}_types"], arrays[f"p{p}_public"] = np.array(split[0], dtype=str), np.array(split[1], dtype=str)
    if not names:  # names on one side only would be a trap
        arrays = {k: v for k, v in arrays.items() if not k.endswith(("_types", "_public"))}
    try:
        write_atomic(path, lambda f: np.savez(
            f, format=FORMAT, version=PUBLIC_VERSION, layout="public", names=names, game=cg.name, form=cg.form,
            **{k: str(v) for k, v in meta.items()}, **arrays), binary=True)
    except OSError as e:
        raise TensorCFRError(f"cannot write the policy file {path} ({e.strerror or e})") from None
    return "public"


def policy_layout(cg, path: str) -> str:
    """The layout `write_policy` gives `cg`'s policy at `path` ("keys" or "public"); a .json
    policy too large to write is refused here, before any solving."""
    infosets = sum(tp.num_infosets for tp in cg.treeplexes)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json" and infosets > JSON_MAX_INFOSETS:
        raise TensorCFRError(f"policy file {path!r}: {cg.name} has {infosets:,} infosets, too many for JSON "
                             f"(at most {JSON_MAX_INFOSETS:,}): save it as .npz")
    return "public" if ext == ".npz" and infosets > PUBLIC_LAYOUT_INFOSETS else "keys"


def read_policy(cg, path: str, which: str = "average", tol: float = 1e-6):
    """The `which` strategy of a policy file as a `Policy` of the compiled game `cg`, from
    either layout. A file that does not fit the game (another game, other public sequences or
    types), or whose probabilities are negative or do not sum to 1 within `tol` (1e-5 for
    float32 files), is a one-line error.

    Example:
        >>> import tempfile, os, tensorcfr
        >>> cg = tensorcfr.compile("kuhn")
        >>> path = os.path.join(tempfile.mkdtemp(), "kuhn.json")
        >>> write_policy(path, {"average": tensorcfr.Policy.uniform(cg)})
        'keys'
        >>> read_policy(cg, path).infoset("K:pb")
        {'pass': 0.5, 'bet': 0.5}
    """
    import torch

    from tensorcfr.evaluation import Policy

    info = policy_info(path)
    if info.get("layout") != "public":
        return Policy.from_dict(cg, policy_table(path, which), tol=tol)
    if info.get("game") != cg.name:
        raise TensorCFRError(f"{path} is a policy of {info.get('game')}, not of {cg.name}")
    if which not in info["strategies"]:
        raise TensorCFRError(f"{path} has no {which!r} strategy; it has {info['strategies']}")
    sigmas = []
    try:
        with np.load(path, allow_pickle=False) as z:
            for tp in cg.treeplexes:
                p, lay = tp.player, tp.layout()
                probs, infoset, action = z[f"p{p}_{which}"], z[f"p{p}_infoset"], z[f"p{p}_action"]
                if probs.shape != (len(lay["infoset"]), lay["live"].shape[1]) or \
                        not np.array_equal(infoset, lay["infoset"]) or not np.array_equal(action, lay["action"]):
                    saved = f" (written from the {info['form']} form, read into the {cg.form})" \
                        if info.get("form", cg.form) != cg.form else ""
                    raise TensorCFRError(f"{path} does not fit {cg.name}: player {p}'s public sequences or "
                                         f"types differ ({probs.shape[0]} x {probs.shape[1]} in the file, "
                                         f"{len(lay['infoset'])} x {lay['live'].shape[1]} in the game){saved}")
                sigma = torch.empty(1, tp.num_sequences, dtype=torch.float64, device=cg.device)
                sigma[0, 0] = 1.0
                sigma[0, 1:] = torch.from_numpy(np.ascontiguousarray(probs)).reshape(-1).to(cg.device)
                total = tp.segment_sum(sigma)  # [1, I]
                live = torch.from_numpy(lay["live"]).reshape(1, -1).to(device=cg.device, dtype=torch.float64)
                at = tp.at_sequences(live)  # [1, S]: 1 at the sequences chance reaches
                bad_p = ((sigma < -tol) | ~torch.isfinite(sigma)) & (at > 0)
                slack = tol if probs.dtype == np.float64 else max(tol, 1e-5)
                bad_t = ((total - 1).abs() > slack) & (live > 0)
                if bool(bad_p.any()) or bool(bad_t.any()):
                    j = int(bad_t[0].nonzero()[0]) if bool(bad_t.any()) else \
                        int(tp.segment_sum(bad_p.to(torch.float64))[0].nonzero()[0])
                    raise TensorCFRError(f"{path}: infoset {tp.infoset_keys[j]!r} has probabilities that are "
                                         "negative or do not sum to 1")
                sigmas.append(tp.normalize(sigma.clamp_(min=0.0), out=sigma))
    except TensorCFRError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged archive fails in numpy's or zip's own way
        raise TensorCFRError(f"policy file {path} is damaged or not a policy file: {e}") from None
    return Policy(cg, tuple(sigmas))
