"""TensorBoard histograms of large float32 arrays counted by a compiled C loop.

`SummaryWriter.add_histogram` hands the values to numpy, which copies them to float64 and
counts them into TensorBoard's default buckets (about 1,500 edges from 1e-12 to 1e20, each 1.1
times the last, mirrored below 0) by sorting blocks of them: on the isomorphic flop spot a
player's regrets are 80 million numbers (a 640-MB float64 copy, 3.0 s to count), and a run's
four histograms took 2.3 s at each evaluation point (cProfile). `add_histogram` writes the same
buckets from one pass over the float32 numbers: each number's bucket read from a table of its
top 16 bits (sign, exponent, 7 bits of mantissa: a stretch of at most one edge, since a bucket
is 10% wide and a stretch 0.8%) and one comparison with the edge above. The counts, limits,
minimum, maximum and number are numpy's exactly; the sum and the sum of squares are added in
another order (float64, each thread's part in turn), so they differ from numpy's in rounding.
A `Quotient` (an array of float32 or float64 and a divisor) is counted as the float32 numbers
array / divisor, each divided as the loop reads it: a run's regrets over t without a copy.
Elsewhere (no compiler, another dtype or device) it is the writer's own.

Example:
    >>> import torch
    >>> proto = histogram_proto(torch.tensor([0.5, 1.0, 1.0, 3.0]))
    >>> proto.num, proto.min, proto.max, sum(proto.bucket)
    (4.0, 0.5, 3.0, 4.0)
"""

from __future__ import annotations

import ctypes
import functools
from typing import NamedTuple

import numpy as np
import torch

from tensorcfr.spaces import native

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

/* counts [nb + 2] (entry 0: below the first edge, nb + 1: past the last; a NaN there too) of
   the float32 numbers v[i] / divisor, v [n] float32 (f64 0) or float64 (f64 1: each quotient rounded
   to float32, as torch's (v / divisor).float() does; a float32 v is divided as a float32, as torch
   divides it); stats [4] = min, max, sum, sum of squares (float64); table [65536] each 16-bit prefix's
   lowest bucket (-1 below the first edge), edges [nb + 2] the edges and +inf (numpy closes the last
   bucket at its right edge, 9.92e19, which no float32 equals: no number needs it). Each thread counts
   a static share into its own counts, which are added in thread order after. 0 or 1 (no memory). */
int histogram_count(const void* v, int64_t n, int f64, double divisor, const int32_t* table,
                    const double* edges, int64_t nb, int64_t* counts, double* stats, int threads) {
    const float* v32 = (const float*)v;
    const double* v64 = (const double*)v;
    float d32 = (float)divisor;
    int nt = threads < 1 ? 1 : threads;
    int64_t* part = (int64_t*)calloc((size_t)nt * (size_t)(nb + 2), sizeof(int64_t));
    double* ps = (double*)malloc(sizeof(double) * 4 * (size_t)nt);
    if (!part || !ps) { free(part); free(ps); return 1; }
    #pragma omp parallel num_threads(nt)
    {
        int id = omp_get_thread_num(), tn = omp_get_num_threads();
        int64_t* c = part + (int64_t)id * (nb + 2);
        double lo = 1.0 / 0.0, hi = -1.0 / 0.0, s = 0.0, ss = 0.0;
        int64_t a = n * id / tn, b = n * (id + 1) / tn;
        for (int64_t i = a; i < b; i++) {
            float x = f64 ? (float)(v64[i] / divisor) : v32[i] / d32;
            uint32_t bits;
            memcpy(&bits, &x, 4);
            int64_t k = table[bits >> 16];
            double d = (double)x;
            if (k + 1 <= nb && d >= edges[k + 1]) k++;
            if (k < -1) k = -1;
            if (k > nb) k = nb;
            c[k + 1]++;
            if (d < lo) lo = d;
            if (d > hi) hi = d;
            if (d != d) { lo = d; hi = d; }  /* numpy's min and max of an array with a NaN: NaN */
            s += d;
            ss += d * d;
        }
        ps[4 * id] = lo; ps[4 * id + 1] = hi; ps[4 * id + 2] = s; ps[4 * id + 3] = ss;
    }
    memset(counts, 0, sizeof(int64_t) * (size_t)(nb + 2));
    stats[0] = 1.0 / 0.0; stats[1] = -1.0 / 0.0; stats[2] = 0.0; stats[3] = 0.0;
    for (int id = 0; id < nt; id++) {
        for (int64_t k = 0; k < nb + 2; k++) counts[k] += part[(int64_t)id * (nb + 2) + k];
        double lo = ps[4 * id], hi = ps[4 * id + 1];
        if (lo < stats[0] || lo != lo) stats[0] = lo;
        if (hi > stats[1] || hi != hi) stats[1] = hi;
        stats[2] += ps[4 * id + 2];
        stats[3] += ps[4 * id + 3];
    }
    free(part);
    free(ps);
    return 0;
}
"""
_P = ctypes.c_void_p
_ARGS = [_P, ctypes.c_int64, ctypes.c_int, ctypes.c_double, _P, _P, ctypes.c_int64, _P, _P, ctypes.c_int]


def default_bins() -> list[float]:
    """TensorBoard's default bucket edges (`SummaryWriter.default_bins`, the same list).

    Example:
        >>> bins = default_bins()
        >>> len(bins), bins[len(bins) // 2]
        (1549, 0)
    """
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-x for x in buckets[::-1]] + [0] + buckets


@functools.lru_cache(maxsize=None)
def _tables() -> tuple[torch.Tensor, torch.Tensor]:
    """(table [65536] int32, edges [nb + 2] float64 with +inf last): each float32 with a
    16-bit prefix lies at or above the prefix's lowest bucket and, a stretch holding at most one
    edge, below the bucket after it."""
    edges = np.asarray(default_bins(), dtype=np.float64)
    prefix = np.arange(1 << 16, dtype=np.uint32) << 16
    with np.errstate(invalid="ignore"):  # (the prefixes of NaNs)
        ends = np.stack([prefix.view(np.float32), (prefix | 0xFFFF).view(np.float32)]).astype(np.float64)
        smallest = np.minimum(ends[0], ends[1])  # (a negative float grows in magnitude with its bits)
    table = np.searchsorted(edges, smallest, side="right") - 1  # NaN: past the last edge
    return (torch.from_numpy(table.astype(np.int32)), torch.from_numpy(np.append(edges, np.inf)))


def _library():
    return native.library("histogram", _SOURCE, {"histogram_count": _ARGS})


class Quotient(NamedTuple):
    """The numbers (values / divisor) as float32, the division left to the count: what a run
    logs of an array (its cumulative regrets over the iterations, its infoset gaps at float64)
    without a divided or float32 copy of it (on the isomorphic flop spot the regrets' copies
    were 320 and 201 MB at float32, alive together).

    Example:
        >>> import torch
        >>> q = Quotient(torch.tensor([3.0, 6.0], dtype=torch.float64), 3)
        >>> q.divided(), histogram_proto(q).max
        (tensor([1., 2.]), 2.0)
    """

    values: torch.Tensor
    divisor: float = 1

    def numel(self) -> int:
        return self.values.numel()

    def divided(self) -> torch.Tensor:
        """The numbers counted, made: (values / divisor).float() on the CPU."""
        return (self.values / self.divisor).float().cpu()


def histogram_proto(values: "torch.Tensor | Quotient"):
    """The `HistogramProto` TensorBoard's `summary.histogram(name, values, "tensorflow" bins)`
    makes, from the C loop where it serves (float32 contiguous on the CPU, or a `Quotient` of
    such an array of float32 or float64); else torch's own.

    Example:
        >>> import torch
        >>> from torch.utils.tensorboard.summary import make_histogram
        >>> v = torch.tensor([0.0, 0.0, 2.0, -3.5])
        >>> a, b = histogram_proto(v), make_histogram(v.double().numpy(), default_bins())
        >>> (a.bucket, a.bucket_limit, a.min, a.max) == (b.bucket, b.bucket_limit, b.min, b.max)
        True
    """
    from tensorboard.compat.proto.summary_pb2 import HistogramProto
    from torch.utils.tensorboard.summary import make_histogram

    quotient = isinstance(values, Quotient)
    q = values if quotient else Quotient(values)
    flat = q.values.reshape(-1)  # (a view: the loop serves contiguous arrays only)
    lib = _library() if flat.numel() else None
    kinds = (torch.float32, torch.float64) if quotient else (torch.float32,)
    if lib is None or flat.dtype not in kinds or flat.device.type != "cpu" or not flat.is_contiguous():
        flat = q.divided().reshape(-1) if quotient else flat
        return make_histogram(flat.detach().cpu().numpy().astype(float), default_bins())
    table, edges = _tables()
    nb = len(edges) - 2
    counts = torch.empty(nb + 2, dtype=torch.int64)
    stats = torch.empty(4, dtype=torch.float64)
    if lib.histogram_count(flat.data_ptr(), flat.numel(), int(flat.dtype == torch.float64), float(q.divisor),
                           table.data_ptr(), edges.data_ptr(), nb, counts.data_ptr(), stats.data_ptr(),
                           torch.get_num_threads()):
        raise MemoryError("histogram: no memory for the threads' counts")
    counts = counts[1:nb + 1].numpy()
    limits = edges[:nb + 1].numpy()
    # the support as `make_histogram` trims it: from the bucket before the first that counts (or
    # an empty one in front, TensorBoard keeping right edges only) to the last that counts
    cum = np.cumsum(np.greater(counts, 0))
    start, end = (int(i) for i in np.searchsorted(cum, [0, cum[-1] - 1], side="right"))
    end += 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    lo, hi, total, squares = stats.tolist()
    return HistogramProto(min=lo, max=hi, num=flat.numel(), sum=total, sum_squares=squares,
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


def add_histogram(writer, tag: str, values: "torch.Tensor | Quotient", step: int) -> None:
    """`writer.add_histogram(tag, values, step)` with TensorBoard's default buckets, counted by
    `histogram_proto`.

    Example:
        >>> import tempfile, torch
        >>> from torch.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d:
        ...     w = SummaryWriter(d); add_histogram(w, "h", torch.randn(1000), 1); w.close()
    """
    h = histogram_proto(values)
    writer.add_histogram_raw(tag, h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit), list(h.bucket),
                             global_step=step)
