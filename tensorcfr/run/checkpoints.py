"""Run directories and checkpoints: what lets a long run be stopped and resumed bit for bit.

A run directory `{logdir}/{game}__{algo}__{seed}__{time}` holds the TensorBoard event files,
`run.json` (the command's settings, so `tensorcfr resume DIR` can rebuild the solver) and
`checkpoint.pt`. A checkpoint file is a `torch.save` payload (a zip archive) whose zip comment,
at the file's end, is a trailer: a magic word, the SHA-256 of the payload and its length in
bytes. It is written to a temporary file, flushed to disk and renamed over the old one, so a
crash mid-write leaves the previous checkpoint intact, and a file truncated or altered later is
refused by name. Being a plain zip, it loads mapped from the file (`torch.load(path,
mmap=True)`), so a resume copies the state in without a second copy of it in memory (what lets
Dudo(6,2,2), 8.5 GB of state, resume in 24 GiB). Files of the first format (the same fields
as a header before the payload) still load, read into memory.

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

import contextlib
import hashlib
import io
import math
import os
import tempfile
import re
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from tensorcfr.errors import TensorCFRError
from tensorcfr.io.files import read_json, write_json
from tensorcfr.memory import all_finite_releasing

MAGIC = b"tensorcfr-checkpoint 1\n"  # the first format's header line
TRAILER_MAGIC = b"tensorcfr-checkpoint 2 "
TRAILER_SIZE = len(TRAILER_MAGIC) + 64 + 1 + 20 + 1  # magic, digest, " ", length, "\n"
_EOCD = 22  # a zip's end-of-central-directory record without a comment; its last 2 bytes: the comment's length
CHECKPOINT = "checkpoint.pt"
RUN_FILE = "run.json"
COMPARE_FILE = "compare.json"  # in a comparison's parent directory: its algorithms and their runs


def save_checkpoint(path: str, payload: dict) -> None:
    """Write `payload` (tensors, numbers, strings, lists, dicts) atomically to `path`, streamed
    to the file and hashed on the way (no copy of the payload in memory: Dudo(6,2,2)'s state is
    8.5 GB at float32); the trailer goes in as the zip's comment: its length in the archive's
    last record (the 2 bytes the digest leaves out), then the trailer itself."""
    tmp = f"{path}.tmp"
    try:
        with open(tmp, "w+b") as f, ThreadPoolExecutor(1) as hasher:  # (read too: the archive's last record is checked)
            out = _Hashing(f, hold=2, hasher=hasher)
            try:
                torch.save(payload, out)
            except RuntimeError:
                if out.error is None:
                    raise
                raise out.error from None  # a full disk, as the file said it
            f.seek(out.length - _EOCD)
            if f.read(4) != b"PK\x05\x06" or out.held != b"\x00\x00":
                raise TensorCFRError(f"{path}: torch.save wrote an archive that does not end in a plain zip "
                                     "record; the checkpoint cannot carry its trailer")
            f.seek(out.length - 2)
            f.write(TRAILER_SIZE.to_bytes(2, "little"))
            f.seek(out.length)
            f.write(TRAILER_MAGIC + out.digest.hexdigest().encode() + b" " + str(out.length).zfill(20).encode()
                    + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # atomic: readers see the old file or the new one, never half of one
    except BaseException as e:  # a full disk, a vanished folder, Ctrl-C: the previous checkpoint stays as it was
        try:
            os.remove(tmp)
        except OSError:
            pass
        if not isinstance(e, OSError):
            raise
        kept = "the previous one is intact" if os.path.exists(path) else "no checkpoint was written before"
        raise TensorCFRError(f"cannot write the checkpoint {path} ({e.strerror or e}); {kept}") from None


def _header(digest: bytes, length: int) -> bytes:
    """The first format's header (the tests write files of that format with it)."""
    return MAGIC + digest + b"\n" + str(length).zfill(20).encode() + b"\n"


class _Hashing(io.RawIOBase):
    """A write-only file that hashes and counts what passes through it into `f`, all but the
    last `hold` bytes (kept in `held`, out of the digest). With a `hasher` (an executor), a
    large write is hashed there while it goes to the file: both let go of the GIL, and the
    write returns once both are done, so the bytes are hashed in order and torch's buffer
    outlives the hashing."""

    def __init__(self, f, hold: int = 0, hasher=None):
        self.f, self.digest, self.length, self.hold, self.held = f, hashlib.sha256(), 0, hold, b""
        self.hasher = hasher
        self.error: OSError | None = None  # what the file raised: torch.save's C++ writer reports it as a RuntimeError

    def writable(self):
        return True

    def write(self, b):
        mv = memoryview(b).cast("B")  # bytes, never a copy of a tensor's storage
        n = len(mv)
        self.length += n
        hashing = None
        if self.hasher is not None and n >= PARALLEL_HASH:
            hashing = self.hasher.submit(self._hash, mv)
        else:
            self._hash(mv)
        try:
            self.f.write(mv)
        except OSError as e:
            self.error = e
            raise
        finally:
            if hashing is not None:
                hashing.result()
        return n

    def _hash(self, mv: memoryview) -> None:
        n = len(mv)
        if not self.hold:
            self.digest.update(mv)
        elif n >= self.hold:
            self.digest.update(self.held)
            self.digest.update(mv[:n - self.hold])
            self.held = bytes(mv[n - self.hold:])
        else:  # a write shorter than what is held
            data = self.held + bytes(mv)
            self.digest.update(data[:max(0, len(data) - self.hold)])
            self.held = data[-self.hold:]


class _Window(io.RawIOBase):
    """Bytes [start, start + length) of the open file `f`, as a file of their own (what
    `torch.load` reads the payload from, with no copy of it in memory)."""

    def __init__(self, f, start: int, length: int):
        self.f, self.start, self.length = f, start, length
        f.seek(start)

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.f.tell() - self.start

    def seek(self, offset, whence=0):
        pos = offset if whence == 0 else self.tell() + offset if whence == 1 else self.length + offset
        self.f.seek(self.start + pos)
        return pos

    def readinto(self, b):
        data = self.f.read(max(0, min(len(b), self.length - self.tell())))
        b[:len(data)] = data
        return len(data)


HASH_CHUNK = 1 << 24
PARALLEL_HASH = 1 << 20  # a write from this many bytes is hashed beside its writing (`_Hashing`)


def load_checkpoint(path: str) -> dict:
    """Read a checkpoint written by `save_checkpoint`; a missing, truncated or altered file is a
    `TensorCFRError` that says which. The payload is hashed a chunk at a time, then its tensors
    are mapped from the file (`torch.load(..., mmap=True)`), not read into memory: copying them
    into a solver (`Solver.load_state_dict`) hands the file's pages back as it goes. A file of
    the first format is read into memory."""
    try:
        with open(path, "rb") as f:
            start = f.read(len(MAGIC))
            if start != MAGIC:
                return _load_mapped(path, f, start)
            digest, length = f.readline().rstrip(b"\n"), f.readline()
            try:
                if not length.endswith(b"\n"):
                    raise ValueError
                length = int(length)
            except ValueError:
                raise TensorCFRError(f"checkpoint {path} is truncated inside its header") from None
            start = f.tell()
            size = os.fstat(f.fileno()).st_size - start
            if size != length:
                raise TensorCFRError(f"checkpoint {path} is truncated or padded: {size:,} payload bytes where "
                                     f"{length:,} were written; it cannot be used")
            if _sha256(f, start, length) != digest:
                raise TensorCFRError(f"checkpoint {path} is corrupt: its checksum does not match")
            try:
                return torch.load(_Window(f, start, length), weights_only=True)
            except Exception as e:  # noqa: BLE001 - the weights-only unpickler refuses anything but plain data
                raise TensorCFRError(f"checkpoint {path} holds something other than a solver's state ({e})") from None
    except FileNotFoundError:
        raise TensorCFRError(f"no checkpoint at {path}") from None
    except OSError as e:
        raise TensorCFRError(f"cannot read the checkpoint {path} ({e.strerror})") from None


def _sha256(f, start: int, length: int) -> bytes:
    """The hex SHA-256 of bytes [start, start + length) of the open file `f`, a chunk at a time,
    each hashed in a second thread while the next is read (both let go of the GIL)."""
    h, left, hashing = hashlib.sha256(), length, None
    f.seek(start)
    with ThreadPoolExecutor(1) as hasher:
        while left > 0:
            chunk = f.read(min(HASH_CHUNK, left))
            if hashing is not None:
                hashing.result()  # (in order: one chunk at a time)
            if not chunk:
                break
            hashing = hasher.submit(h.update, chunk)
            left -= len(chunk)
        if hashing is not None:
            hashing.result()
    return h.hexdigest().encode()


def _load_mapped(path: str, f, start: bytes) -> dict:
    """`load_checkpoint` of the zip format: the trailer checked, the payload hashed, then mapped."""
    size = os.fstat(f.fileno()).st_size
    if size >= TRAILER_SIZE:
        f.seek(size - TRAILER_SIZE)
        trailer = f.read(TRAILER_SIZE)
    if size < TRAILER_SIZE or not trailer.startswith(TRAILER_MAGIC):
        if start.startswith(b"PK\x03\x04"):
            raise TensorCFRError(f"checkpoint {path} is truncated (its trailer is missing); it cannot be used")
        raise TensorCFRError(f"{path} is not a tensorcfr checkpoint (or its trailer is damaged)")
    fields = trailer[len(TRAILER_MAGIC):].split()
    try:
        digest, length = fields[0], int(fields[1])
    except (IndexError, ValueError):
        raise TensorCFRError(f"checkpoint {path} has a damaged trailer; it cannot be used") from None
    if length + TRAILER_SIZE != size:
        raise TensorCFRError(f"checkpoint {path} is truncated or padded: {size - TRAILER_SIZE:,} payload bytes where "
                             f"{length:,} were written; it cannot be used")
    if _sha256(f, 0, length - 2) != digest:  # all but the comment's length
        raise TensorCFRError(f"checkpoint {path} is corrupt: its checksum does not match")
    try:
        return torch.load(path, weights_only=True, mmap=True)
    except Exception as e:  # noqa: BLE001 - the weights-only unpickler refuses anything but plain data
        raise TensorCFRError(f"checkpoint {path} holds something other than a solver's state ({e})") from None


def check_checkpoint(ckpt, where: str) -> dict:
    """A loaded checkpoint of the CLI's shape ({"solver": state_dict, "loop": loop state, ...}),
    checked before it is used: the right containers, finite tensors, a non-negative iteration."""
    def bad(what: str) -> TensorCFRError:
        return TensorCFRError(f"{where}: the checkpoint is not a solver's state: {what}")

    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("solver"), dict) or not isinstance(ckpt.get("loop"), dict):
        raise bad("expected {'solver': {...}, 'loop': {...}}")
    solver = ckpt["solver"]
    it = solver.get("iteration")
    if isinstance(it, bool) or not isinstance(it, int) or it < 0:
        raise bad(f"iteration {it!r}")
    tensors = []
    if "generator" not in solver:  # a tree solver's state (normal-form procedures are checked on load)
        for key in ("sigma", "average", "state"):
            if not isinstance(solver.get(key), list) or len(solver[key]) != 2:
                raise bad(f"{key!r} is not a list of two players' tensors")
        tensors = [*solver["sigma"], *solver["average"]]
        for st in solver["state"]:
            if not isinstance(st, dict):
                raise bad("the rule's state is not a dict of tensors")
            tensors += list(st.values())
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise bad(f"{type(t).__name__} where a tensor is expected")
        if t.is_floating_point() and not all_finite_releasing(t):  # a mapped file's pages are handed back
            raise bad("a tensor holds NaN or infinite values")
    loop = ckpt["loop"]
    if not isinstance(loop.get("rows", []), list) or not isinstance(loop.get("solving", 0.0), (int, float)):
        raise bad("the training loop's state is damaged")
    return ckpt


@contextlib.contextmanager
def lock_run_dir(run_dir: str):
    """Hold the run directory's lock for the block; a second holder is refused at once."""
    import fcntl

    path = os.path.join(run_dir, ".lock")
    try:
        f = open(path, "w")
    except OSError as e:
        raise TensorCFRError(f"cannot lock {run_dir} ({e.strerror}): resuming writes checkpoints and events "
                             "there; copy the run directory somewhere writable and resume the copy") from None
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise TensorCFRError(f"{run_dir} is being resumed by another process; wait for it to stop") from None
        yield
    finally:
        f.close()


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
    if not 0 < value < math.inf:  # 400 digits read as a float are inf too
        raise TensorCFRError(f"a duration must be a positive finite number of seconds, got {text!r}")
    return value


NAME_PART = 120  # characters of a game or algorithm in a directory name (a file name holds 255 bytes)


def _safe(text: str, most: int = NAME_PART) -> str:
    """`text` with characters unsafe in paths replaced; past `most` characters, its first ones and
    a hash of the whole (a hold'em spot with two ranges spelled out runs to hundreds of characters,
    which no file system takes as a directory name; run.json keeps the whole spec).

    Example:
        >>> _safe("dudo(4,1,2)"), len(_safe("x" * 600)), _safe("x" * 600) != _safe("x" * 599)
        ('dudo_4,1,2_', 120, True)
    """
    safe = re.sub(r"[^A-Za-z0-9_.+=,-]", "_", text)
    if len(safe) <= most:
        return safe
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{safe[:most - 11]}~{digest}"


def run_name(game: str, algo: str, seed: int = 0) -> str:
    """`{game}__{algo}__{seed}__{time}` with characters unsafe in paths replaced.

    Example:
        >>> run_name("dudo(4,1,2)", "cfr+").startswith("dudo_4,1,2___cfr+__0__")
        True
    """
    return f"{_safe(game)}__{_safe(algo)}__{seed}__{time.strftime('%Y%m%d-%H%M%S')}"


def member_name(algo: str, seed: int = 0) -> str:
    """A run's name inside a comparison's directory (which names the game and the time):
    the algorithm, and the seed where it is not 0, so TensorBoard's legend reads `cfr+`, `dcfr`.

    Example:
        >>> member_name("dcfr(alpha=2)"), member_name("cfr+", seed=3)
        ('dcfr_alpha=2_', 'cfr+__seed3')
    """
    return _safe(algo) + (f"__seed{seed}" if seed else "")


def compare_name(game: str, seed: int = 0) -> str:
    """A comparison's directory: `compare__{game}__{time}` (and the seed where it is not 0).

    Example:
        >>> compare_name("leduc").startswith("compare__leduc__2")
        True
    """
    return f"compare__{_safe(game)}__" + (f"seed{seed}__" if seed else "") + time.strftime("%Y%m%d-%H%M%S")


def check_logdir(logdir: str) -> None:
    """Refuse, before any work, a log directory that cannot hold run directories: a file,
    a device, a folder that cannot be made or written to."""
    if os.path.exists(logdir) and not os.path.isdir(logdir):
        raise TensorCFRError(f"--logdir {logdir!r} is not a directory")
    try:
        os.makedirs(logdir, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=logdir, prefix=".tensorcfr-probe-"):
            pass
    except OSError as e:
        raise TensorCFRError(f"--logdir {logdir!r}: cannot write there ({e.strerror})") from None


def new_run_dir(logdir: str, name: str) -> str:
    """Create and return a fresh run directory `logdir/name` (`run_name`, `compare_name`,
    `member_name`; a suffix keeps names unique)."""
    base = os.path.join(logdir, name)
    path, k = base, 1
    while True:
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            k += 1
            path = f"{base}-{k}"
        except OSError as e:
            raise TensorCFRError(f"cannot make the run directory {path!r} ({e.strerror})") from None


def write_run_file(run_dir: str, settings: dict) -> None:
    """Write run.json (atomically, strict JSON)."""
    write_json(os.path.join(run_dir, RUN_FILE), {"format": "tensorcfr-run", "version": 1, **settings},
               "the run file", indent=1)


def write_compare_file(parent: str, plan: dict) -> None:
    """Write a comparison's plan (atomically: it is rewritten as each algorithm starts)."""
    write_json(os.path.join(parent, COMPARE_FILE), plan, "the comparison file", indent=1)


def read_compare_file(parent: str) -> dict:
    path = os.path.join(parent, COMPARE_FILE)
    try:
        d = read_json(path)
    except (OSError, ValueError) as e:
        raise TensorCFRError(f"{path} cannot be read: {e}") from None
    ok = (isinstance(d, dict) and d.get("format") == "tensorcfr-compare" and isinstance(d.get("algos"), list)
          and d["algos"] and all(isinstance(a, str) for a in d["algos"]) and isinstance(d.get("runs"), dict)
          and isinstance(d.get("args"), dict))
    if not ok:
        raise TensorCFRError(f"{path} is not a tensorcfr comparison file, or is damaged")
    return d


def read_run_file(run_dir: str) -> dict:
    path = os.path.join(run_dir, RUN_FILE)
    try:
        d = read_json(path)
    except FileNotFoundError:
        raise TensorCFRError(f"{run_dir} is not a tensorcfr run directory (no {RUN_FILE})") from None
    except (OSError, ValueError) as e:  # a folder, unreadable bytes, NaN tokens, broken JSON
        raise TensorCFRError(f"{path} is damaged: {e}") from None
    if not isinstance(d, dict) or d.get("format") != "tensorcfr-run":
        raise TensorCFRError(f"{path} is not a tensorcfr run file")
    return d
