"""Prefix sums of gathered rows, down segments: the card showdown's tables (`operators.cards`),
in a small C loop compiled once per machine.

`gather_scan(x, index, segments)` is `x.index_select(0, index).view(segments, -1, R).cumsum_(1)`
for x [n, R] on the CPU, in one pass and to the same bits. torch's CPU cumsum adds float32 in
float64 (its accumulate type) and walks down one column at a time, so each addition waits for
the one before it: on a full-range turn spot's tables (1,129 x 99 and 52 x 48 x 99 entries) it
moves about one number a nanosecond. The loop here adds the same numbers in the same order
(a double accumulator per column, rounded to the input's type at each row), a row at a time,
so the columns' additions run side by side in vector registers: 3x faster on the first table,
2x on the second (measured, 2 cores, float32, 2026-11-26).

The C source below is compiled with the machine's C compiler (`$CC`, else cc, gcc or clang:
the compiler torch's Inductor needs for `spaces.fused` anyway) into the cache folder
(`paths.kernels_dir`), once per source, compiler and processor, and loaded with ctypes. Where
there is no compiler, or it fails, a warning says so once and torch's operations serve, with
the same numbers. `TENSORCFR_FUSE=0` turns it off with the fused kernels.

Example:
    >>> import torch
    >>> x = torch.tensor([[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]])
    >>> gather_scan(x, torch.tensor([0, 1, 2, 2, 1, 0]), 2).tolist()  # two segments of three rows
    [[[1.0, 10.0], [3.0, 30.0], [7.0, 70.0]], [[4.0, 40.0], [6.0, 60.0], [7.0, 70.0]]]
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import warnings

import torch

from tensorcfr.paths import kernels_dir

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>

/* Rows index[s len + j] of x [n, R] summed down each segment s of `len` rows in double (torch's
   accumulate type on the CPU), each prefix rounded to the input's type as it comes: out
   [segments len, R], or with last_only the segments' totals [segments, R]. A row at a time, so
   the R columns' additions are independent and vectorise; each column's are in torch's order. */
#define SCAN(NAME, T)                                                                          \
int NAME(const T* x, const int64_t* index, int64_t segments, int64_t len, int64_t R,          \
         T* out, int last_only) {                                                             \
    double* acc = (double*)malloc((size_t)(R > 0 ? R : 1) * sizeof(double));                  \
    if (!acc) return 1;                                                                       \
    for (int64_t s = 0; s < segments; s++) {                                                   \
        for (int64_t c = 0; c < R; c++) acc[c] = 0.0;                                          \
        for (int64_t j = 0; j < len; j++) {                                                    \
            const T* row = x + index[s * len + j] * R;                                         \
            for (int64_t c = 0; c < R; c++) acc[c] += (double)row[c];                          \
            if (!last_only) {                                                                  \
                T* o = out + (s * len + j) * R;                                                \
                for (int64_t c = 0; c < R; c++) o[c] = (T)acc[c];                              \
            }                                                                                 \
        }                                                                                     \
        if (last_only) {                                                                       \
            T* o = out + s * R;                                                                \
            for (int64_t c = 0; c < R; c++) o[c] = (T)acc[c];                                  \
        }                                                                                     \
    }                                                                                         \
    free(acc);                                                                                \
    return 0;                                                                                 \
}
SCAN(scan_f32, float)
SCAN(scan_f64, double)
"""
# no -ffast-math: the additions stay in the source's order, unfused; -march=native: AVX2's four
# doubles a register where SSE2 has two (1.6x on the first table, measured)
_FLAGS = ["-O3", "-march=native", "-fPIC", "-shared", "-std=c99"]
_FUNCTIONS = {torch.float32: "scan_f32", torch.float64: "scan_f64"}
_lib: ctypes.CDLL | None | bool = None  # None: not tried yet; False: unavailable


def enabled() -> bool:
    """Whether the compiled loop may serve: not turned off by TENSORCFR_FUSE=0."""
    return os.environ.get("TENSORCFR_FUSE", "1") != "0"


def _compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _processor() -> str:
    """What -march=native compiles for: the processor's name and flags (Linux), else its kind."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor() + platform.machine()


def _build(cc: str) -> str:
    """The shared library's path, compiled into the cache folder where it is not there yet."""
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256("\0".join([_SOURCE, " ".join(_FLAGS), version, _processor()]).encode()).hexdigest()[:16]
    folder = kernels_dir()
    path = os.path.join(folder, f"scan-{key}.so")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src, lib = os.path.join(tmp, "scan.c"), os.path.join(tmp, "scan.so")
        with open(src, "w") as f:
            f.write(_SOURCE)
        done = subprocess.run([cc, *_FLAGS, src, "-o", lib], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed")
        os.replace(lib, path)  # atomic: processes compiling side by side (pytest-xdist) each land whole
    return path


def _library() -> ctypes.CDLL | None:
    global _lib
    if _lib is None:
        _lib = False
        try:
            cc = _compiler()
            if cc is None:
                raise RuntimeError("no C compiler (cc, gcc, clang or $CC)")
            lib = ctypes.CDLL(_build(cc))
            for name in _FUNCTIONS.values():
                fn = getattr(lib, name)
                fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_void_p, ctypes.c_int]
                fn.restype = ctypes.c_int
            _lib = lib
        except Exception as e:  # noqa: BLE001  (torch's operations give the same numbers)
            warnings.warn(f"tensorcfr: the compiled prefix sums are unavailable ({type(e).__name__}: {e}); "
                          "torch's serve", stacklevel=3)
    return _lib or None


def _native(x: torch.Tensor, index: torch.Tensor):
    """The compiled function for x and index, or None where torch's operations serve."""
    if (x.device.type != "cpu" or x.dtype not in _FUNCTIONS or x.dim() != 2 or not x.is_contiguous()
            or index.dtype != torch.int64 or not index.is_contiguous() or not enabled()):
        return None
    lib = _library()
    return None if lib is None else getattr(lib, _FUNCTIONS[x.dtype])


def gather_scan(x: torch.Tensor, index: torch.Tensor, segments: int, last: bool = False) -> torch.Tensor:
    """x[index] [m, R] (x [n, R], index [m] of rows in range, unchecked; m a multiple of `segments`) summed
    down each of `segments` runs of m / segments rows: [segments, m / segments, R] of prefix sums,
    or with `last` only each run's total [segments, R]. The same numbers as torch's
    `x.index_select(0, index).view(segments, -1, R).cumsum_(1)`, which serves off the CPU.

    Example:
        >>> x = torch.tensor([[1.0], [2.0]])
        >>> gather_scan(x, torch.tensor([1, 0, 1]), 1, last=True).tolist()
        [[5.0]]
    """
    R, m = x.shape[-1], len(index)
    fn = _native(x, index)
    if fn is None:
        sums = x.index_select(0, index).view(segments, m // segments, R).cumsum_(1)
        return sums[:, -1] if last else sums
    out = x.new_empty((segments, R) if last else (segments, m // segments, R))
    if fn(x.data_ptr(), index.data_ptr(), segments, m // segments, R, out.data_ptr(), int(last)):
        raise MemoryError("gather_scan: no memory for the accumulators")
    return out
