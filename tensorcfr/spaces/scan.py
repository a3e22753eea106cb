"""Prefix sums of gathered rows, down segments: the card showdown's tables (`operators.cards`),
in a small C loop (`spaces.native`).

`gather_scan(x, index, segments)` is `x.index_select(0, index).view(segments, -1, R).cumsum_(1)`
for x [n, R] on the CPU, in one pass and to the same bits. torch's CPU cumsum adds float32 in
float64 (its accumulate type) and walks down one column at a time, so each addition waits for
the one before it: on a full-range turn spot's tables (1,129 x 99 and 52 x 48 x 99 entries) it
moves about one number a nanosecond. The loop here adds the same numbers in the same order
(a double accumulator per column, rounded to the input's type at each row), a row at a time,
so the columns' additions run side by side in vector registers: 3x faster on the first table,
2x on the second (measured, 2 cores, float32, 2026-11-26). Off the CPU, or without a compiler,
torch's operations serve.

Example:
    >>> import torch
    >>> x = torch.tensor([[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]])
    >>> gather_scan(x, torch.tensor([0, 1, 2, 2, 1, 0]), 2).tolist()  # two segments of three rows
    [[[1.0, 10.0], [3.0, 30.0], [7.0, 70.0]], [[4.0, 40.0], [6.0, 60.0], [7.0, 70.0]]]
"""

from __future__ import annotations

import ctypes

import torch

from tensorcfr.spaces import native

# The rows index[0:len] of x [., R] summed down in double (torch's accumulate type on the CPU),
# each prefix rounded to x's type as it comes (out [len, R]) or only the total (last_only: out
# [R]). A row at a time, so the R columns' additions are independent and vectorise; each
# column's are in torch's order. `scan_rows_f32` and `scan_rows_f64`, static: the C loops of
# other modules (`operators.card_loop`) take them in with this text.
ROWS_C = r"""
#include <stdint.h>
#include <stdlib.h>
#define SCAN_ROWS(NAME, T)                                                                     \
static void NAME(const T* x, const int64_t* index, int64_t len, int64_t R, T* out,            \
                 int last_only, double* acc) {                                                 \
    for (int64_t c = 0; c < R; c++) acc[c] = 0.0;                                              \
    for (int64_t j = 0; j < len; j++) {                                                        \
        const T* row = x + index[j] * R;                                                       \
        for (int64_t c = 0; c < R; c++) acc[c] += (double)row[c];                              \
        if (!last_only) {                                                                      \
            T* o = out + j * R;                                                                \
            for (int64_t c = 0; c < R; c++) o[c] = (T)acc[c];                                  \
        }                                                                                     \
    }                                                                                         \
    if (last_only)                                                                             \
        for (int64_t c = 0; c < R; c++) out[c] = (T)acc[c];                                    \
}
SCAN_ROWS(scan_rows_f32, float)
SCAN_ROWS(scan_rows_f64, double)
"""
_SOURCE = ROWS_C + r"""
/* Each of `segments` runs of `len` rows (out [segments len, R], or [segments, R]). */
#define SCAN(NAME, ROWS, T)                                                                    \
int NAME(const T* x, const int64_t* index, int64_t segments, int64_t len, int64_t R,          \
         T* out, int last_only) {                                                             \
    double* acc = (double*)malloc((size_t)(R > 0 ? R : 1) * sizeof(double));                  \
    if (!acc) return 1;                                                                       \
    for (int64_t s = 0; s < segments; s++)                                                     \
        ROWS(x, index + s * len, len, R, out + s * (last_only ? 1 : len) * R, last_only, acc); \
    free(acc);                                                                                \
    return 0;                                                                                 \
}
SCAN(scan_f32, scan_rows_f32, float)
SCAN(scan_f64, scan_rows_f64, double)
"""
_FUNCTIONS = {torch.float32: "scan_f32", torch.float64: "scan_f64"}
_ARGS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int]


def _library() -> ctypes.CDLL | None:
    """The loop's library (`native.library` keeps it), or None where it cannot be had."""
    return native.library("scan", _SOURCE, dict.fromkeys(_FUNCTIONS.values(), _ARGS))


def _native(x: torch.Tensor, index: torch.Tensor):
    """The compiled function for x and index, or None where torch's operations serve."""
    if (x.device.type != "cpu" or x.dtype not in _FUNCTIONS or x.dim() != 2 or not x.is_contiguous()
            or index.dtype != torch.int64 or not index.is_contiguous() or not native.enabled() or native.traced()):
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
