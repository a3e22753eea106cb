"""Run directories and checkpoints: what lets a long run be stopped and resumed bit for bit.

A run directory `{logdir}/{game}__{algo}__{seed}__{time}` holds the TensorBoard event files,
`run.json` (the command's settings, so `tensorcfr resume DIR` can rebuild the solver) and
`checkpoint.pt`. A checkpoint file is a short header (a magic line, the SHA-256 of the payload
and its length in bytes) followed by a `torch.save` payload; it is written to a temporary file,
flushed to disk and renamed over the old one, so a crash mid-write leaves the previous
checkpoint intact, and a file truncated or altered later is refused by name.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    >>> save_checkpoint(path, {"iteration": 7})
    >>> load_checkpoint(path)["iteration"]
    7
    >>> parse_duration("1h30m"), parse_duration("90")
    (5400.0, 90.0)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time

import torch

from .errors import TensorCFRError

MAGIC = b"tensorcfr-checkpoint 1\n"
CHECKPOINT = "checkpoint.pt"
RUN_FILE = "run.json"


def save_checkpoint(path: str, payload: dict) -> None:
    """Write `payload` (tensors, numbers, strings, lists, dicts) atomically to `path`."""
    buf = io.BytesIO()
    torch.save(payload, buf)
    data = buf.getvalue()
    header = MAGIC + hashlib.sha256(data).hexdigest().encode() + b"\n" + str(len(data)).encode() + b"\n"
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(header + data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)  # atomic: readers see the old file or the new one, never half of one


def load_checkpoint(path: str) -> dict:
    """Read a checkpoint written by `save_checkpoint`; a missing, truncated or altered file is a
    `TensorCFRError` that says which."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise TensorCFRError(f"no checkpoint at {path}") from None
    if not raw.startswith(MAGIC):
        raise TensorCFRError(f"{path} is not a tensorcfr checkpoint (or its header is damaged)")
    try:
        digest, length, data = raw[len(MAGIC):].split(b"\n", 2)
        length = int(length)
    except ValueError:
        raise TensorCFRError(f"checkpoint {path} is truncated inside its header") from None
    if len(data) != length:
        raise TensorCFRError(f"checkpoint {path} is truncated or padded: {len(data):,} payload bytes where "
                             f"{length:,} were written; it cannot be used")
    if hashlib.sha256(data).hexdigest().encode() != digest:
        raise TensorCFRError(f"checkpoint {path} is corrupt: its checksum does not match")
    return torch.load(io.BytesIO(data), weights_only=True)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str | float) -> float:
    """Seconds from `3600`, `90s`, `45m`, `2h`, `1h30m` or `1d`; a clear error otherwise."""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        t = text.strip().lower()
        if re.fullmatch(r"\d+(\.\d*)?", t):
            value = float(t)
        elif re.fullmatch(r"(\d+(\.\d*)?[smhd])+", t):
            value = sum(float(n) * _UNITS[u] for n, _, u in re.findall(r"(\d+(\.\d*)?)([smhd])", t))
        else:
            raise TensorCFRError(f"cannot read duration {text!r}: use seconds or e.g. 90s, 45m, 2h, 1h30m")
    if not value > 0:
        raise TensorCFRError(f"a duration must be positive, got {text!r}")
    return value


def run_name(game: str, algo: str, seed: int = 0) -> str:
    """`{game}__{algo}__{seed}__{time}` with characters unsafe in paths replaced.

    Example:
        >>> run_name("dudo(4,1,2)", "cfr+").startswith("dudo_4,1,2___cfr+__0__")
        True
    """
    safe = lambda s: re.sub(r"[^A-Za-z0-9_.+=,-]", "_", s)  # noqa: E731
    return f"{safe(game)}__{safe(algo)}__{seed}__{time.strftime('%Y%m%d-%H%M%S')}"


def new_run_dir(logdir: str, game: str, algo: str, seed: int = 0) -> str:
    """Create and return a fresh run directory under `logdir` (a suffix keeps names unique)."""
    base = os.path.join(logdir, run_name(game, algo, seed))
    path, k = base, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            k += 1
            path = f"{base}-{k}"


def write_run_file(run_dir: str, settings: dict) -> None:
    with open(os.path.join(run_dir, RUN_FILE), "w") as f:
        json.dump({"format": "tensorcfr-run", "version": 1, **settings}, f, indent=1)


def read_run_file(run_dir: str) -> dict:
    path = os.path.join(run_dir, RUN_FILE)
    try:
        with open(path) as f:
            d = json.load(f)
    except FileNotFoundError:
        raise TensorCFRError(f"{run_dir} is not a tensorcfr run directory (no {RUN_FILE})") from None
    except json.JSONDecodeError as e:
        raise TensorCFRError(f"{path} is damaged: {e}") from None
    if d.get("format") != "tensorcfr-run":
        raise TensorCFRError(f"{path} is not a tensorcfr run file")
    return d
