"""Threads chosen by the work: one for a small game, every free core for a large one, a number
when given; the CLI and the library take the same setting."""

import json
import subprocess
import sys

import pytest
import torch

import tensorcfr
from tensorcfr import devices


@pytest.fixture(autouse=True)
def keep_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_pick_threads_follows_work_and_free_cores(monkeypatch):
    big = devices.SMALL_WORK * 4
    assert devices.pick_threads(devices.SMALL_WORK - 1, cores=16, busy=0.0) == 1
    assert devices.pick_threads(big, cores=16, busy=0.0) == 16
    assert devices.pick_threads(big, cores=16, busy=5.4) == 11
    assert devices.pick_threads(big, cores=2, busy=3.0) == 1  # never fewer than one
    monkeypatch.setattr(devices, "busy_cores", lambda interval=0.05: 1.0)  # what auto measures
    assert devices.pick_threads(big, cores=2) == 1
    assert 0.0 <= devices.busy_cores(0.01) <= devices.available_cores() + 1e-9


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_busy_cores_leaves_out_this_processs_own_time():
    """`busy_cores` subtracts this process's own CPU time (its threads can spin on after the
    work before, and a solve then took one thread of two): the own ticks it reads from
    /proc/self/stat are the process's CPU time by Python's clock, and are part of the system's
    busy ticks."""
    import os
    import time

    tick = os.sysconf("SC_CLK_TCK")
    p0, s0 = time.process_time(), devices._cpu_sample()
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:  # this process busy
        pass
    s1, p1 = devices._cpu_sample(), time.process_time()
    own = (s1[2] - s0[2]) / tick
    assert abs(own - (p1 - p0)) < 0.05 and own > 0.1
    assert (s1[0] - s0[0]) >= (s1[2] - s0[2]) - 2  # the system's busy ticks hold ours (to a tick each)


def test_solver_sets_the_threads(monkeypatch):
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    assert s.threads == 1 and torch.get_num_threads() == 1  # Kuhn is small work
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu", threads=2)
    assert s.threads == 2 and torch.get_num_threads() == 2 and s.describe()["threads"] == 2
    monkeypatch.setattr(devices, "SMALL_WORK", 0)  # every game large: auto takes the free cores
    monkeypatch.setattr(devices, "busy_cores", lambda interval=0.05: 0.0)
    assert tensorcfr.Solver("kuhn", "cfr+", device="cpu").threads == devices.available_cores()
    for bad in (0, -1, 1.5, "two", True):
        with pytest.raises(tensorcfr.TensorCFRError, match="threads must be auto or a whole number"):
            tensorcfr.Solver("kuhn", "cfr+", device="cpu", threads=bad)


def test_cli_threads_flag():
    run = lambda *a: subprocess.run([sys.executable, "-m", "tensorcfr", *a], capture_output=True, text=True,  # noqa: E731
                                    timeout=300)
    r = run("solve", "kuhn", "--iterations", "20", "--no-log", "--json", "--threads", "2", "--device", "cpu")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["threads"] == 2 and out["config"]["threads"] == 2
    r = run("solve", "kuhn", "--iterations", "20", "--no-log", "--json", "--device", "cpu")
    assert json.loads(r.stdout)["threads"] == 1
    r = run("solve", "kuhn", "--threads", "0")
    assert r.returncode == 2 and "--threads: expected auto or a whole number" in r.stderr and len(r.stderr.splitlines()) == 1


def test_a_large_cpu_game_keeps_freed_memory_and_a_small_one_does_not(monkeypatch):
    """A CPU solver whose iteration moves `LARGE_WORK` numbers or more asks malloc to keep what
    is freed (`devices.keep_freed_memory`); a smaller one leaves the process's malloc alone."""
    import tensorcfr.run.solver as solver_module

    calls = []
    monkeypatch.setattr(solver_module, "keep_freed_memory", lambda: calls.append(1) or True)
    tensorcfr.Solver("leduc", "cfr+", device="cpu")
    assert calls == []
    monkeypatch.setattr(solver_module, "LARGE_WORK", 1)
    tensorcfr.Solver("leduc", "cfr+", device="cpu")
    assert calls == [1]


@pytest.mark.parametrize("setting", ["1", "0"])
def test_keep_freed_memory_is_in_force_on_glibc_unless_turned_off(setting):
    """In a fresh process: on glibc the setting is made (and said so), once; with
    TENSORCFR_KEEP_FREED=0 it is not."""
    import ctypes.util
    import os

    glibc = sys.platform.startswith("linux") and "libc.so.6" in (ctypes.util.find_library("c") or "")
    code = ("from tensorcfr import devices; a = devices.keep_freed_memory(); b = devices.keep_freed_memory(); "
            "print(a, b)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "TENSORCFR_KEEP_FREED": setting}).stdout.split()
    expected = str(glibc and setting == "1")
    assert out == [expected, expected]


def test_a_compile_reuses_freed_tables_of_a_few_megabytes():
    """Inside a compile (`memory.returning_freed_memory`) with freed memory kept, a 9 MB table
    made and freed 20 times is served from the heap again, not mapped and faulted in anew each
    time (glibc's mapping threshold, fixed at 128 KiB by a mallopt call, had every [T0, T1]
    table of a river spot's compile faulted in: 7.0 s against 5.0 s for `tensorcfr solve`)."""
    import ctypes.util
    import os

    if not (sys.platform.startswith("linux") and "libc.so.6" in (ctypes.util.find_library("c") or "")):
        pytest.skip("glibc's malloc settings are Linux settings")
    code = """
import resource
import numpy as np
from tensorcfr import memory
memory.keep_freed_memory()
with memory.returning_freed_memory():
    np.ones(1081 * 1081)  # (the first one may map or grow the heap)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        np.ones(1081 * 1081)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
    env = {k: v for k, v in os.environ.items() if k not in ("TENSORCFR_KEEP_FREED", "TENSORCFR_KEEP_HEAP")}
    faults = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                env=env).stdout)
    pages = 1081 * 1081 * 8 // 4096  # one table's 4 KiB pages: 2,282
    assert faults < pages, faults  # (faulted in anew each time: 20 x 2,282)


def test_numpy_leaves_huge_pages_alone_in_a_kept_heap_and_in_a_compile():
    """In a fresh process on glibc: numpy asks for huge pages by default; inside a compile
    (`memory.returning_freed_memory`) it does not, and afterwards as before; once freed memory is
    kept, not at all (a kept heap's holes filled with huge pages made one solve's peak differ
    by 2x from run to run: `memory._numpy_huge_pages`)."""
    import ctypes.util
    import os

    if not (sys.platform.startswith("linux") and "libc.so.6" in (ctypes.util.find_library("c") or "")):
        pytest.skip("glibc's malloc and numpy's huge pages are Linux settings")
    code = """
from tensorcfr import memory
def on():  # read the setting, and put it back
    before = memory._numpy_huge_pages(True)
    memory._numpy_huge_pages(before)
    return before
seen = [on()]
with memory.returning_freed_memory():
    seen.append(on())
seen.append(on())
memory.keep_freed_memory()
with memory.returning_freed_memory():
    seen.append(on())
seen.append(on())
print(seen)
"""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMPY_MADVISE_HUGEPAGE", "TENSORCFR_KEEP_FREED",
                                                            "TENSORCFR_KEEP_HEAP")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["[True,", "False,", "True,", "False,", "False]"]
