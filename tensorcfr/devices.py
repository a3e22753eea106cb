"""Device and dtype names as the CLI and the API take them.

Example:
    >>> resolve_device("cpu"), resolve_dtype("float32")
    (device(type='cpu'), torch.float32)
"""

from __future__ import annotations

import contextlib
import os
import time

import torch

from tensorcfr.errors import TensorCFRError
from tensorcfr.memory import keep_freed_memory  # noqa: F401  (its old place, kept for programs that import it here)


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """`"auto"` -> CUDA when available, else CPU; `"cuda"` without CUDA is an error."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise TensorCFRError(f"unknown device {device!r}; use cpu, cuda or auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise TensorCFRError("device cuda requested but CUDA is not available; use --device cpu or auto")
    if dev.type not in ("cpu", "cuda"):
        raise TensorCFRError(f"unsupported device {device!r}; use cpu, cuda or auto")
    return dev


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """`"float32"` / `"float64"` (or the torch dtypes) -> the torch dtype."""
    table = {"float32": torch.float32, "float64": torch.float64, torch.float32: torch.float32,
             torch.float64: torch.float64}
    if dtype not in table:
        raise TensorCFRError(f"unsupported dtype {dtype!r}; use float32 or float64")
    return table[dtype]


@contextlib.contextmanager
def deterministic(on: bool = True):
    """Within the block, torch's deterministic kernels where it has them (`on`; else nothing
    changes). On CUDA, `index_add_` and `scatter_add_` otherwise add with atomics in whatever
    order the threads run, so a sum's last bit, and through regret matching's ties at 0 a whole
    strategy, differs from run to run; the deterministic kernels sort the indices first (the
    treeplex's and the generic payoff's sums sort theirs once instead: `spaces.segments`). An
    operation with no such kernel warns rather than fails. The CPU's kernels are deterministic
    already. Torch's filling of fresh memory with NaN (`torch.utils.deterministic.
    fill_uninitialized_memory`), one more kernel for each tensor an operation allocates with
    `empty`, is off within: every tensor an iteration allocates is written before it is read, and
    a read of one that was not would show as two runs that differ, which the GPU checks compare
    bit for bit. The previous settings are restored afterwards.

    Example:
        >>> with deterministic():
        ...     torch.are_deterministic_algorithms_enabled(), torch.utils.deterministic.fill_uninitialized_memory
        (True, False)
        >>> torch.utils.deterministic.fill_uninitialized_memory
        True
    """
    if not on:
        yield
        return
    # cuBLAS is deterministic only with a fixed workspace; it reads this when its handle is made
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    before, warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn)
        torch.utils.deterministic.fill_uninitialized_memory = fill


# Below this many numbers moved an iteration (sequences of both players plus payoff entries), a
# second thread buys nothing on an idle machine and costs 1.4-2.1x when another process holds
# the other core (measured on the 2-core CPU: Kuhn, Leduc; experiments/threads.py)
SMALL_WORK = 1 << 20


def available_cores() -> int:
    """The cores this process may run on (its affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def busy_cores(interval: float = 0.05) -> float:
    """How many cores other work keeps busy now: from /proc/stat over `interval` seconds on
    Linux, less this process's own time meanwhile (its threads can still be spinning down from
    the work before: right after a turn spot's compile they held a whole core for 0.1 s, and a
    CLI solve of the flop spot then took one thread of two), else the 1-minute load average;
    0 if neither is there."""
    try:
        before = _cpu_sample()
        time.sleep(interval)
        return _busy(available_cores(), before, _cpu_sample())
    except (OSError, ValueError, IndexError):
        try:
            return float(os.getloadavg()[0])
        except (AttributeError, OSError):
            return 0.0


def _cpu_sample() -> tuple[int, int, int]:
    """(busy, all) clock ticks of every CPU from /proc/stat, and this process's own (all its
    threads', user and system, from /proc/self/stat): the same unit."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    with open("/proc/self/stat") as f:
        own = f.read().rsplit(")", 1)[1].split()  # (the name may hold spaces)
    return sum(fields[:8]) - idle, sum(fields[:8]), int(own[11]) + int(own[12])


def _busy(cores: int, before: tuple[int, int, int], after: tuple[int, int, int]) -> float:
    """Cores busy with other work between two `_cpu_sample`s.

    Example:
        >>> _busy(2, (100, 1000, 0), (200, 1200, 0))  # half of all ticks busy, none of them ours
        1.0
        >>> _busy(2, (100, 1000, 0), (200, 1200, 100))  # all of them ours
        0.0
    """
    other = (after[0] - before[0]) - (after[2] - before[2])
    return max(0.0, cores * other / max(after[1] - before[1], 1))


# From this many numbers an iteration's arrays reach tens of megabytes, which glibc maps afresh at
# each allocation (past 32 MB it always does): a CPU solver then calls `keep_freed_memory`
# (tensorcfr/memory.py, re-exported here)
LARGE_WORK = 1 << 23


def pick_threads(work: int, cores: int | None = None, busy: float | None = None) -> int:
    """Intra-op threads for an iteration that moves `work` numbers: one for small work (threads
    only add synchronisation), else every core that other work leaves free (a thread that
    shares a core with another process makes every step wait for it), at least one.

    Example:
        >>> pick_threads(1000, cores=8, busy=0.0), pick_threads(10**7, cores=8, busy=0.0)
        (1, 8)
        >>> pick_threads(10**7, cores=2, busy=1.0)  # another process holds one of two cores
        1
    """
    cores = cores or available_cores()
    if work < SMALL_WORK or cores == 1:
        return 1
    busy = busy_cores() if busy is None else busy
    return max(1, min(cores, cores - round(busy)))


def check_threads(threads) -> int | str:
    """`threads` as a run takes it: "auto" or a whole number >= 1 (a bad one is a one-line error)."""
    if threads == "auto":
        return threads
    if isinstance(threads, str) and threads.isdigit():
        threads = int(threads)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise TensorCFRError(f"threads must be auto or a whole number >= 1, got {threads!r}")
    return threads
