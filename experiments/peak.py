"""The peak memory a piece of work adds to a process, for the benchmarks' peak columns.

On Linux, writing 5 to /proc/self/clear_refs resets the process's high-water mark of resident
memory (VmHWM) to what it holds now; after the work, VmHWM less the resident memory before it
is the most the work held at once: its own arrays, a peer's C++ tree, the allocator's slack.
Elsewhere there is no such counter, and the peak is None. No dependencies: `noregret_peer.py`
imports it in its own interpreter.

    >>> result, mb = added_peak(lambda: bytearray(64 << 20))
    >>> mb is None or mb >= 60
    True
"""

from __future__ import annotations

import ctypes


def _status_kb(field: str) -> int | None:
    """A field of /proc/self/status in kB (VmRSS, VmHWM), or None where there is none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _trim() -> None:
    """Hand the memory malloc keeps after earlier work back to the system (glibc's
    malloc_trim), so that work reusing it is counted too: without it, a second solver in the
    same process, built in the freed memory of the first, showed a peak of 0."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def added_peak(work):
    """(work(), the peak resident memory in MB that work added over what the process held before
    it, or None where it cannot be measured)."""
    _trim()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the high-water mark starts again from the resident memory now
    except OSError:
        return work(), None
    before = _status_kb("VmRSS")
    out = work()
    peak = _status_kb("VmHWM")
    return out, None if before is None or peak is None else (peak - before) / 1024
