"""One group of a card game's terminals (`PublicPayoffOperator`'s groups: one board's
showdowns, or the folds of one chance path) from the other player's plan to the own rows of the
values, in one compiled C loop (`spaces.native`) on the CPU.

The torch path (`cards.card_values` between the operator's `_rows` and `_add`) makes a dozen
passes over [N, T] arrays: it gathers the other player's rows, writes them times the other's
factors transposed ([T_o + 1, N], `CardKernel.sums_t`'s layout), builds the prefix tables, reads
them back per own hand, multiplies by the own factors, transposes, multiplies the riders and
adds the result into the own rows. Here the same
operations run in one call, in the same order on the same operands, so every number is the
torch path's to the last bit (tested): the transposes are strided loads inside the loop, the
prefix tables stay in the caches, and the values are added into the rows as they come. The
loop runs on torch's OpenMP threads (`torch.get_num_threads()` of them), split over hands.

It serves prefix-sum kernels where the torch path works transposed (`cards.TRANSPOSED_DEVICES`:
the CPU), a call a batch member (spots over one board, or on boards of their own, each member
then with its own tables), in float32 or float64, where no terminal sits on the empty sequence
and the rows take the values as `add_rows` adds them (in order, row by row, or written where no
two terminals share a row); elsewhere `add_group_values` returns False and the torch path
runs. A batch on boards of their own has the torch path work by rows, whose sums round
otherwise: there the loop's numbers are those of the transposed layout, each member's as its
tables give them.

Example:
    >>> import torch, tensorcfr
    >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
    >>> op = cg.operator(torch.float64)
    >>> y = tensorcfr.Policy.uniform(cg).sequence_form()[1]
    >>> g = op.cfv(0, y)  # the groups go through add_group_values where they can
    >>> g.shape == (1, cg.treeplexes[0].num_sequences)
    True
"""

from __future__ import annotations

import ctypes

import torch

from tensorcfr.operators.cards import TRANSPOSED_DEVICES, CardKernel
from tensorcfr.spaces import native
from tensorcfr.spaces.scan import ROWS_C

_SOURCE = ROWS_C + r"""
#include <omp.h>

/* The group's values added (or written, put) into out [M_p, Tp] at own_rows [N + n_r]:
   y [To + 1, N] = the other's rows src[other_rows] [N, To] times its factors `other` [To],
   transposed, with a zero row To; its prefix sums by strength (order [To + 1]) and by card (lists
   [52 w]) for showdowns (ranked), or per card (lists) and in all for folds; then per own hand t
   (the rows idx [., Tp] of `CardKernel.fused_index`) free and margin, v = free a + b margin
   (folds: free a) per terminal n, times own[t]; the riders r: free at column at[r] times a_r[r],
   times own[t]. Every operation as `cards.card_values`' torch path orders it. */
#define GROUP(NAME, SCAN_, T)                                                                  \
int NAME(const T* src, int64_t To, const int64_t* other_rows, int64_t N, const T* other,       \
         const int64_t* order, const int64_t* lists, int64_t w, int k, int ranked,             \
         const int64_t* idx, int64_t n_idx, int64_t Tp, const T* a, const T* b, const T* own,  \
         const int64_t* at, const T* a_r, int64_t n_r, T* out, const int64_t* own_rows,        \
         int put, int threads) {                                                              \
    int64_t card_rows = ranked ? 52 * w : 52;                                                  \
    T* y = (T*)malloc(sizeof(T) * (size_t)((To + 1) * N));                                     \
    T* prefix = (T*)malloc(sizeof(T) * (size_t)((ranked ? To + 1 : 1) * N));                   \
    T* cards = (T*)malloc(sizeof(T) * (size_t)(card_rows * N));                                \
    int failed = !y || !prefix || !cards;                                                      \
    if (!failed) {                                                                             \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                     \
            int nt = omp_get_num_threads(), id = omp_get_thread_num();                         \
            _Pragma("omp for schedule(static)")                                                \
            for (int64_t t = 0; t < To; t++) {                                                 \
                T f = other[t];                                                               \
                T* yt = y + t * N;                                                            \
                for (int64_t n = 0; n < N; n++) yt[n] = src[other_rows[n] * To + t] * f;       \
            }                                                                                 \
            _Pragma("omp single")                                                              \
            for (int64_t n = 0; n < N; n++) y[To * N + n] = 0;                                 \
            /* the scans, a table (the prefix by strength, a card's) a thread at a time: whole  \
               rows, so no two threads write one cache line (split by columns, they took turns  \
               to own the lines they shared, and the scans ran 2.5x slower) */                 \
            double* acc = (double*)malloc(sizeof(double) * (size_t)(N > 0 ? N : 1));           \
            if (!acc) failed = 1;                                                              \
            if (ranked) {                                                                      \
                _Pragma("omp for schedule(dynamic, 1)")                                        \
                for (int64_t q = -1; q < 52; q++) {                                            \
                    if (!acc) continue;                                                        \
                    if (q < 0) SCAN_(y, order, To + 1, N, prefix, 0, acc);                     \
                    else SCAN_(y, lists + q * w, w, N, cards + q * w * N, 0, acc);             \
                }                                                                             \
            } else {                                                                           \
                _Pragma("omp for schedule(dynamic, 4)")                                        \
                for (int64_t q = 0; q < 52; q++)                                               \
                    if (acc) SCAN_(y, lists + q * w, w, N, cards + q * N, 1, acc);             \
                _Pragma("omp single")                                                          \
                for (int64_t c = 0; c < N; c++) {  /* torch: per_card.cumsum(0)[-1] / k */     \
                    double s = 0.0;                                                           \
                    for (int64_t q = 0; q < 52; q++) s += (double)cards[q * N + c];            \
                    prefix[c] = (T)s / (T)k;                                                   \
                }                                                                             \
            }                                                                                 \
            free(acc);                                                                        \
            _Pragma("omp barrier")                                                             \
            T* fb = (T*)malloc(sizeof(T) * (size_t)(2 * (N > 0 ? N : 1)));                     \
            T* vb = fb + N;                                                                    \
            _Pragma("omp for schedule(static)")                                                \
            for (int64_t t = 0; t < Tp; t++) {                                                 \
                if (!fb) continue;                                                            \
                if (ranked) {                                                                  \
                    const T* total = prefix + To * N;                                          \
                    const T* h0 = cards + idx[t] * N;                                          \
                    const T* f0 = cards + idx[Tp + t] * N;                                     \
                    const T* l0 = cards + idx[2 * Tp + t] * N;                                 \
                    const T* first = prefix + idx[(n_idx - 2) * Tp + t] * N;                   \
                    const T* last = prefix + idx[(n_idx - 1) * Tp + t] * N;                    \
                    if (k == 2) {                                                              \
                        const T* h1 = cards + idx[3 * Tp + t] * N;                             \
                        const T* f1 = cards + idx[4 * Tp + t] * N;                             \
                        const T* l1 = cards + idx[5 * Tp + t] * N;                             \
                        const T* same = y + idx[6 * Tp + t] * N;                               \
                        for (int64_t n = 0; n < N; n++) {                                      \
                            T fr = total[n] - h0[n]; fr = fr - h1[n]; fr = fr + same[n];       \
                            T m = first[n] + last[n]; m = m - total[n];                        \
                            m = m - f0[n]; m = m - l0[n]; m = m + h0[n];                       \
                            m = m - f1[n]; m = m - l1[n]; m = m + h1[n];                       \
                            T p = fr * a[n], q = b[n] * m;                                     \
                            fb[n] = fr; vb[n] = p + q;                                         \
                        }                                                                     \
                    } else {                                                                  \
                        for (int64_t n = 0; n < N; n++) {                                      \
                            T fr = total[n] - h0[n];                                           \
                            T m = first[n] + last[n]; m = m - total[n];                        \
                            m = m - f0[n]; m = m - l0[n]; m = m + h0[n];                       \
                            T p = fr * a[n], q = b[n] * m;                                     \
                            fb[n] = fr; vb[n] = p + q;                                         \
                        }                                                                     \
                    }                                                                         \
                } else {                                                                      \
                    const T* h0 = cards + idx[t] * N;                                          \
                    if (k == 2) {                                                              \
                        const T* h1 = cards + idx[Tp + t] * N;                                 \
                        const T* same = y + idx[2 * Tp + t] * N;                               \
                        for (int64_t n = 0; n < N; n++) {                                      \
                            T fr = prefix[n] - h0[n]; fr = fr - h1[n]; fr = fr + same[n];      \
                            fb[n] = fr; vb[n] = fr * a[n];                                     \
                        }                                                                     \
                    } else {                                                                  \
                        for (int64_t n = 0; n < N; n++) {                                      \
                            T fr = prefix[n] - h0[n];                                          \
                            fb[n] = fr; vb[n] = fr * a[n];                                     \
                        }                                                                     \
                    }                                                                         \
                }                                                                             \
                T o = own[t];                                                                 \
                if (put) {                                                                     \
                    for (int64_t n = 0; n < N; n++) out[own_rows[n] * Tp + t] = vb[n] * o;     \
                    for (int64_t r = 0; r < n_r; r++) {                                        \
                        T v = fb[at[r]] * a_r[r];                                             \
                        out[own_rows[N + r] * Tp + t] = v * o;                                 \
                    }                                                                         \
                } else {                                                                      \
                    for (int64_t n = 0; n < N; n++) {                                          \
                        T v = vb[n] * o;                                                      \
                        out[own_rows[n] * Tp + t] += v;                                        \
                    }                                                                         \
                    for (int64_t r = 0; r < n_r; r++) {                                        \
                        T v = fb[at[r]] * a_r[r];                                             \
                        v = v * o;                                                            \
                        out[own_rows[N + r] * Tp + t] += v;                                    \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
            if (!fb) failed = 1;                                                              \
            free(fb);                                                                         \
        }                                                                                     \
    }                                                                                         \
    free(y); free(prefix); free(cards);                                                        \
    return failed;                                                                            \
}
GROUP(group_f32, scan_rows_f32, float)
GROUP(group_f64, scan_rows_f64, double)
"""
_FUNCTIONS = {torch.float32: "group_f32", torch.float64: "group_f64"}
_I64, _PTR = ctypes.c_int64, ctypes.c_void_p
_ARGS = [_PTR, _I64, _PTR, _I64, _PTR, _PTR, _PTR, _I64, ctypes.c_int, ctypes.c_int, _PTR, _I64, _I64, _PTR, _PTR,
         _PTR, _PTR, _PTR, _I64, _PTR, _PTR, ctypes.c_int, ctypes.c_int]


def _library() -> ctypes.CDLL | None:
    """The loop's library (`native.library` keeps it), or None where it cannot be had."""
    return native.library("card_loop", _SOURCE, dict.fromkeys(_FUNCTIONS.values(), _ARGS))


def serves(kernel, device) -> bool:
    """Whether the C loop runs `kernel`'s groups on `device` (where the torch path would work
    transposed and the loop compiles), so that a batch's calls are sized for a member each.

    Example:
        >>> import torch
        >>> from tensorcfr.operators.cards import CardKernel
        >>> serves(CardKernel(torch.tensor([[0, 1]]), torch.tensor([[2, 3]])), "meta")
        False
    """
    return _runs(kernel, device) and _library() is not None


def _runs(kernel, device) -> bool:
    """A prefix-sum kernel on a device where the torch path works transposed
    (`cards.TRANSPOSED_DEVICES`), one member's, or a batch's on boards of their own (the loop
    takes a member's tables a call)."""
    return (isinstance(kernel, CardKernel) and torch.device(device).type in TRANSPOSED_DEVICES
            and not native.traced())  # (a tracer would record the iteration without the loop)


def _flat(x: torch.Tensor, n: int, dtype: torch.dtype) -> torch.Tensor | None:
    """x as a contiguous [n] vector of `dtype`, or None where it is not n numbers of it."""
    if x.numel() != n or x.dtype != dtype:
        return None
    return x.reshape(n).contiguous()


def _member(x: torch.Tensor, b: int, batched: bool) -> torch.Tensor:
    """Member b's factors of x [(B,) n, k] (batched: a leading member dimension)."""
    return x[b] if batched and x.dim() == 3 and x.shape[0] > 1 else x


def add_group_values(kernel, src: torch.Tensor, other_rows: torch.Tensor, out: torch.Tensor,
                     own_rows: torch.Tensor, factors: tuple, riders: tuple | None, put: bool) -> bool:
    """Add one group's values into the own rows, or return False where the torch path must run.

    kernel: the group's `cards.CardKernel`; src [B_x, M_o, T_o]: the other player's rows of its
    plan (B_x 1 or B); other_rows [N]: the row of each terminal there; out [B, M_p, T_p]: the own
    rows of the values, a member each; own_rows [N + n_r]: the terminals' rows there, then the
    riders'; factors: the group's `cards.terminal_factors` (shared: one row of d a player; a
    batch's [B, ...] or one for all); riders: (at [n_r], a [(B,) n_r, 1]) or None; put: no two
    terminals share a row (written, not added). A batch of members runs a call each: spots over
    one board whose ranges or pots differ (member b's numbers those of its spot alone), or spots
    on boards of their own (each with its board's tables). The index tensors must be int64 and
    contiguous, as the operator makes them (the loop reads them raw: checked, not trusted).

    Example:
        >>> import torch
        >>> from tensorcfr.operators.cards import CardKernel
        >>> cards = torch.tensor([[0, 1], [2, 3]])
        >>> out = torch.zeros(1, 1, 2)
        >>> f = (torch.ones(1, 2), torch.ones(1, 2), torch.ones(1, 1), torch.zeros(1, 1))  # a fold
        >>> done = add_group_values(CardKernel(cards, cards), torch.tensor([[[1.0, 1.0]]]), torch.tensor([0]), out,
        ...                         torch.tensor([0]), f, None, put=False)
        >>> out.tolist() if done else [[[1.0, 1.0]]]  # each hand: the other's one hand beside it
        [[[1.0, 1.0]]]
    """
    dtype = out.dtype
    if not _runs(kernel, out.device) or out.dim() != 3 or src.dim() != 3:
        return False
    # what does not change from call to call (the factors' pointers, the tables'), made once a
    # group and shape: 17 us of Python a call otherwise, 6% of a flop spot's iteration
    key = (id(factors), id(riders), id(other_rows), id(own_rows), put, dtype, tuple(src.shape), tuple(out.shape))
    plans = kernel.__dict__.setdefault("_loop_plans", {})
    plan = plans.get(key)
    if plan is None or plan[0] is not factors or plan[1] is not riders or plan[2] is not other_rows \
            or plan[3] is not own_rows:
        plan = plans[key] = (factors, riders, other_rows, own_rows,
                             _plan(kernel, src, other_rows, out, own_rows, factors, riders, put))
    args = plan[4]
    if args is None:
        return False
    fn, members, _ = args
    threads = torch.get_num_threads()  # torch's setting, from any thread (OpenMP keeps one a thread)
    many = src.shape[0] > 1
    for b, (before, after) in enumerate(members):  # batch members, not nodes: a call each
        s, o = src[b if many else 0], out[b]
        if not (s.is_contiguous() and o.is_contiguous()):
            return False
        if fn(s.data_ptr(), *before, o.data_ptr(), *after, threads):
            raise MemoryError("add_group_values: no memory for the group's tables")
    return True


def _plan(kernel, src, other_rows, out, own_rows, factors, riders, put):
    """(the C function, per member its arguments before its other's rows and between those and
    its own rows, the tensors they point into), or None where the loop cannot take the group."""
    dtype = out.dtype
    if (dtype not in _FUNCTIONS or src.shape[0] not in (1, out.shape[0]) or src.dtype != dtype
            or kernel.members not in (1, out.shape[0])):
        return None
    B, N, n_r = out.shape[0], len(other_rows), 0 if riders is None else len(riders[0])
    To, Tp = src.shape[2], out.shape[2]
    if any(x.dim() == 3 and x.shape[0] not in (1, B) for x in factors + (() if riders is None else riders[1:])):
        return None
    at = riders[0] if n_r else other_rows
    if (kernel.fused_index().shape[1] != Tp or len(own_rows) != N + n_r or kernel.To != To
            or not all(i.dtype == torch.int64 and i.is_contiguous() and i.device.type == "cpu"
                       for i in (other_rows, own_rows, at))):
        return None
    lib = _library()
    if lib is None:
        return None
    w, members, keep = kernel.width + 1, [], []
    for b in range(B):
        own_f, other_f, a, bb = (_member(x, b, B > 1) for x in factors)
        own_f, other_f, a = _flat(own_f, Tp, dtype), _flat(other_f, To, dtype), _flat(a, N, dtype)
        bb = _flat(bb, N, dtype) if kernel.ranked else a
        a_r = _flat(_member(riders[1], b, B > 1), n_r, dtype) if n_r else a
        if own_f is None or other_f is None or a is None or bb is None or a_r is None:
            return None
        own_tables = kernel.members > 1  # a member's tables where the members show down on boards of their own
        idx = kernel.fused_index(b if own_tables else 0)
        lists = kernel.lists[b] if own_tables else kernel.lists
        order = (kernel.order[b] if own_tables else kernel.order) if kernel.ranked else other_rows  # (folds: none)
        keep += [own_f, other_f, a, bb, a_r, idx, lists, order]
        members.append(((To, other_rows.data_ptr(), N, other_f.data_ptr(), order.data_ptr(), lists.data_ptr(), w,
                         kernel.k, int(kernel.ranked), idx.data_ptr(), idx.shape[0], Tp, a.data_ptr(), bb.data_ptr(),
                         own_f.data_ptr(), at.data_ptr(), a_r.data_ptr(), n_r),
                        (own_rows.data_ptr(), int(put))))
    return getattr(lib, _FUNCTIONS[dtype]), members, keep  # (keep: the tensors the pointers point into)
