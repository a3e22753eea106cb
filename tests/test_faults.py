"""Faults injected into every file tensorcfr writes (issue 35 item 4): a disk that fills after
any number of bytes, a process stopped at every step of the checkpoint protocol, a read-only
run directory. Each time the previous file stays valid (and a run resumable), the error is one
line, and no temporary is left behind."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os

import pytest
import torch

import tensorcfr
from cli_run import error_line, run_cli
from tensorcfr.errors import TensorCFRError
from tensorcfr.io.policies import load_policy, save_policy
from tensorcfr.run import checkpoints, continuation
from tensorcfr.run.checkpoints import load_checkpoint, read_run_file, save_checkpoint, write_run_file

BUDGETS = [0, 1, 17, 100, 1000, 5000, 20000]  # bytes a file may take before the disk is full


class FullDisk:
    """`open` for files under `root` whose name contains `which`: writes past `budget` bytes
    (over all such files) raise ENOSPC, as a full disk does."""

    def __init__(self, monkeypatch, root, budget: int, which: str = ""):
        self.root, self.budget, self.which, self.written = os.path.abspath(root), budget, which, 0
        real = builtins.open

        def fake_open(file, mode="r", *args, **kwargs):
            f = real(file, mode, *args, **kwargs)
            path = os.path.abspath(os.fsdecode(file)) if isinstance(file, (str, bytes, os.PathLike)) else ""
            if any(m in mode for m in "wax+") and path.startswith(self.root) and self.which in os.path.basename(path):
                return _Filling(f, self)
            return f
        monkeypatch.setattr(builtins, "open", fake_open)
        monkeypatch.setattr(io, "open", fake_open)  # TensorBoard's file layer calls io.open


class _Wrapped:
    """A file that passes everything through to `f` but what a subclass overrides."""

    def __init__(self, f):
        self._f = f

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __iter__(self):
        return iter(self._f)


class _Filling(_Wrapped):
    def __init__(self, f, disk: FullDisk):
        super().__init__(f)
        self._disk = disk

    def write(self, data):
        if self._disk.written + len(data) > self._disk.budget:
            raise OSError(errno.ENOSPC, "No space left on device")
        self._disk.written += len(data)
        return self._f.write(data)


def temporaries(root) -> list[str]:
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if ".tmp" in f]


KUHN = tensorcfr.compile("kuhn")
OLD = tensorcfr.Policy.uniform(KUHN).to_dict()


# -- a disk that fills ---------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".json", ".npz"])
@pytest.mark.parametrize("budget", BUDGETS)
def test_a_policy_on_a_full_disk(monkeypatch, tmp_path, ext, budget):
    path = str(tmp_path / f"p{ext}")
    save_policy(path, "kuhn", {"average": OLD}, players=KUHN.infoset_players())
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    s.step(30)
    new = s.average_policy().to_dict()
    FullDisk(monkeypatch, tmp_path, budget)
    try:
        save_policy(path, "kuhn", {"average": new}, players=KUHN.infoset_players())
        written = True
    except TensorCFRError as e:
        assert "cannot write the policy file" in str(e) and "No space left" in str(e) and "\n" not in str(e)
        written = False
    monkeypatch.undo()
    assert load_policy(path)["average"] == (new if written else OLD)  # the old file or the new one, whole
    assert written == (budget >= 5000)
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("budget", BUDGETS)
def test_run_json_on_a_full_disk(monkeypatch, tmp_path, budget):
    write_run_file(str(tmp_path), {"args": {"game": ["kuhn"]}, "algo": "cfr+"})
    FullDisk(monkeypatch, tmp_path, budget)
    try:
        write_run_file(str(tmp_path), {"args": {"game": ["leduc"]}, "algo": "cfr+"})
    except TensorCFRError as e:
        assert "cannot write the run file" in str(e)
    monkeypatch.undo()
    assert read_run_file(str(tmp_path))["args"]["game"] in (["kuhn"], ["leduc"])
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_value_cache_on_a_full_disk(monkeypatch, tmp_path, budget):
    """A cache write that fails costs only a re-solve: the old table stays whole."""
    monkeypatch.setenv("TENSORCFR_CACHE", str(tmp_path))
    continuation._store("old", {"value": 0.5})
    FullDisk(monkeypatch, tmp_path, budget)
    continuation._store("new", {"value": 0.25, "pad": "x" * 3000})
    monkeypatch.undo()
    monkeypatch.setenv("TENSORCFR_CACHE", str(tmp_path))
    table = continuation._load()
    assert table["old"] == {"value": 0.5} and set(table) in ({"old"}, {"old", "new"})
    assert ("new" in table) == (budget >= 5000)
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("budget", BUDGETS + [60000])
def test_a_checkpoint_on_a_full_disk(monkeypatch, tmp_path, budget, parallel):
    path = str(tmp_path / "checkpoint.pt")
    s = tensorcfr.Solver("leduc", "cfr+", device="cpu")
    s.step(2)
    save_checkpoint(path, {"solver": s.state_dict(), "iteration": 2})
    s.step(3)
    # (Leduc's writes are under a megabyte: parallel, each is hashed in the second thread)
    monkeypatch.setattr(checkpoints, "PARALLEL_HASH", 1 if parallel else 1 << 62)
    FullDisk(monkeypatch, tmp_path, budget)
    try:
        save_checkpoint(path, {"solver": s.state_dict(), "iteration": 5})
    except TensorCFRError as e:
        assert "cannot write the checkpoint" in str(e) and "the previous one is intact" in str(e)
    monkeypatch.undo()
    assert load_checkpoint(path)["iteration"] == (5 if budget == 60000 else 2)
    assert temporaries(tmp_path) == []


def test_a_checkpoint_hashed_beside_its_writing_is_the_same_file(monkeypatch, tmp_path):
    # large writes are hashed in a second thread while they go to the file, and the file is
    # read back for its check a chunk ahead of the hashing: the same bytes as one thread's
    payload = {"solver": {"regrets": torch.randn(3, 700_001, generator=torch.Generator().manual_seed(1))},
               "iteration": 9, "small": torch.arange(5)}
    files = {}
    for parallel in (False, True):
        monkeypatch.setattr(checkpoints, "PARALLEL_HASH", 1 << 20 if parallel else 1 << 62)
        monkeypatch.setattr(checkpoints, "HASH_CHUNK", 1 << 20)  # (several chunks to read)
        path = str(tmp_path / f"c{parallel}.pt")
        save_checkpoint(path, payload)
        files[parallel] = open(path, "rb").read()
        back = load_checkpoint(path)
        assert back["iteration"] == 9 and torch.equal(back["solver"]["regrets"], payload["solver"]["regrets"])
    assert files[True] == files[False] and len(files[True]) > 8_400_000
    altered = bytearray(files[True])
    altered[len(altered) // 2] ^= 1  # a bit in the middle of the regrets, read in the fifth chunk
    open(tmp_path / "bad.pt", "wb").write(bytes(altered))
    with pytest.raises(TensorCFRError, match="checksum does not match|corrupt"):
        load_checkpoint(str(tmp_path / "bad.pt"))


@pytest.mark.parametrize("budget", [0, 3000, 30000])
def test_tensorboard_events_on_a_full_disk_stop_the_run_in_one_line_and_it_resumes(capsys, monkeypatch, tmp_path,
                                                                                   budget):
    """Before: a traceback from TensorBoard's writer thread, then one from the main thread, exit 1."""
    FullDisk(monkeypatch, tmp_path, budget, which="tfevents")
    code, _, err = run_cli(capsys, "solve", "leduc", "--iterations", "300", "--eval-every", "10", "--checkpoint-every",
                       "20", "--logdir", str(tmp_path / "runs"), "--quiet")
    line = error_line(err)
    assert code == 2 and "cannot write the TensorBoard events" in line and "No space left" in line, err
    monkeypatch.undo()
    run_dir, = [os.path.join(tmp_path, "runs", d) for d in os.listdir(tmp_path / "runs")]
    if os.path.exists(os.path.join(run_dir, "checkpoint.pt")):
        assert "is intact: tensorcfr resume" in line
        code, out, err = run_cli(capsys, "resume", run_dir, "--json")
        assert code == 0 and json.loads(out)["iterations"] == 300, err
    else:
        assert "no checkpoint was written yet" in line or "nothing was run" in line


# -- stopped at every step of the checkpoint protocol ---------------------------------------------
class Stopped(BaseException):
    """A stop the code cannot catch as an error (as Ctrl-C or a kill would leave the files)."""


STEPS = ["open", "write", "seek", "fsync", "replace"]


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("nth", [1, 2, 5])
def test_a_checkpoint_stopped_at_any_step_leaves_the_old_one_whole(monkeypatch, tmp_path, step, nth):
    path = str(tmp_path / "checkpoint.pt")
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    s.step(2)
    save_checkpoint(path, {"solver": s.state_dict(), "iteration": 2})
    s.step(3)
    calls = {"n": 0}

    def stop_at_nth(real):
        def wrapped(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == nth:
                raise Stopped(step)
            return real(*args, **kwargs)
        return wrapped
    if step == "open":
        monkeypatch.setattr(builtins, "open", stop_at_nth(builtins.open))
    elif step in ("write", "seek"):
        real_open = builtins.open

        def opening(file, mode="r", *a, **k):
            f = real_open(file, mode, *a, **k)
            if "w" in mode and str(file).endswith(".tmp"):
                f = _Stopping(f, step, stop_at_nth)
            return f
        monkeypatch.setattr(builtins, "open", opening)
    else:
        monkeypatch.setattr(os, step, stop_at_nth(getattr(os, step)))
    stopped = False
    try:
        save_checkpoint(path, {"solver": s.state_dict(), "iteration": 5})
    except (Stopped, RuntimeError):  # torch.save's C++ writer reports a stop inside a write as a RuntimeError
        stopped = True
    monkeypatch.undo()
    got = load_checkpoint(path)["iteration"]
    assert got == (2 if stopped else 5)  # whole either way: the old one, or (stop after the rename) the new
    # a kill would leave its temporary: the next save writes over it and the run goes on
    save_checkpoint(path, {"solver": s.state_dict(), "iteration": 5})
    assert load_checkpoint(path)["iteration"] == 5 and temporaries(tmp_path) == []


class _Stopping(_Wrapped):
    def __init__(self, f, step, stop_at_nth):
        super().__init__(f)
        setattr(self, step, stop_at_nth(getattr(f, step)))


def test_a_killed_save_leaves_a_temporary_that_resume_ignores(capsys, tmp_path):
    """A kill -9 mid-save leaves checkpoint.pt.tmp (half written) beside the last checkpoint:
    resume reads the checkpoint, and its own saves write over the temporary."""
    code, _, err = run_cli(capsys, "solve", "kuhn", "--iterations", "20", "--logdir", str(tmp_path), "--quiet")
    assert code == 0, err
    run_dir, = [os.path.join(tmp_path, d) for d in os.listdir(tmp_path)]
    with open(os.path.join(run_dir, "checkpoint.pt.tmp"), "wb") as f:
        f.write(b"PK\x03\x04 half a checkpoint")
    code, out, err = run_cli(capsys, "resume", run_dir, "--iterations", "40", "--json")
    assert code == 0 and json.loads(out)["iterations"] == 40, err
    assert temporaries(tmp_path) == []


# -- a read-only run directory ---------------------------------------------------------------------
def test_a_read_only_run_directory_is_one_line(capsys, tmp_path, monkeypatch):
    """Resuming needs to write the lock, checkpoints and events: refused at once, saying what to do.
    (Made read-only by refusing writes under it: the tests may run as root, whom chmod does not stop.)"""
    code, _, err = run_cli(capsys, "solve", "kuhn", "--iterations", "10", "--logdir", str(tmp_path), "--quiet")
    run_dir, = [os.path.join(tmp_path, d) for d in os.listdir(tmp_path)]
    before = open(os.path.join(run_dir, "checkpoint.pt"), "rb").read()
    real = builtins.open

    def read_only(file, mode="r", *a, **k):
        if any(m in mode for m in "wax+") and os.path.abspath(str(file)).startswith(str(tmp_path)):
            raise OSError(errno.EROFS, "Read-only file system", str(file))
        return real(file, mode, *a, **k)
    monkeypatch.setattr(builtins, "open", read_only)
    code, out, err = run_cli(capsys, "resume", run_dir, "--iterations", "20")
    monkeypatch.undo()
    line = error_line(err)
    assert code == 2 and "Read-only file system" in line and "copy the run directory" in line
    assert open(os.path.join(run_dir, "checkpoint.pt"), "rb").read() == before


def test_a_run_directory_moved_or_copied_resumes(capsys, tmp_path):
    import shutil

    code, _, err = run_cli(capsys, "solve", "kuhn", "--iterations", "10", "--logdir", str(tmp_path / "a"), "--quiet")
    run_dir, = [os.path.join(tmp_path, "a", d) for d in os.listdir(tmp_path / "a")]
    shutil.copytree(run_dir, tmp_path / "copy")
    os.rename(tmp_path / "a", tmp_path / "b")
    for where in (tmp_path / "copy", os.path.join(tmp_path, "b", os.path.basename(run_dir))):
        code, out, err = run_cli(capsys, "resume", str(where), "--iterations", "20", "--json")
        assert code == 0 and json.loads(out)["iterations"] == 20, err
    assert torch.equal(*(load_checkpoint(os.path.join(w, "checkpoint.pt"))["solver"]["average"][0]
                         for w in (tmp_path / "copy", os.path.join(tmp_path, "b", os.path.basename(run_dir)))))
