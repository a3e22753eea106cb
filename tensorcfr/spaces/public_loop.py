"""The treeplexes' per-iteration passes in compiled C loops (`spaces.native`) on the CPU: the
realisation plan, the regret-matching family's whole update, an evaluation's best response
(the same walk up, each infoset's largest row for its strategy's mix), and the normalisation of weights
to a strategy (`normalize`: a start's uniform strategy, an evaluation's average; it replaced a
fused kernel whose compile cost a flop spot's start 3.7 s with torch's disk cache warm, and a
run of the family on a large game now compiles no kernel at all). The public treeplex walks its
public sequences, rows of T types; the generic one its sequences, rows of one type
(`WalkLayout`).

An update of the regret-matching family walks the treeplex bottom up (each infoset's value
under the strategy, added into its parent sequence), subtracts the infoset values from the
sequence values (the instantaneous regrets), updates the cumulative regrets and normalises their
positive part per infoset. torch's operations make each of those a pass over [M, T] arrays,
with the temporaries between them: about fifteen passes over 22M entries a player on a full-range
turn spot, and a Python loop over the levels on a small game. The loop here makes one walk: an
infoset's rows are read once, updated in the caches, and written once. How the threads
(`torch.get_num_threads()`) share a walk (`split`): the plan walk splits each level's rows and
the threads meet after each level. The regret walk does the same where a row holds fewer than
`MIN_TYPES` types (Dudo, Liar's Dice: a row of 15 fits one cache line; a generic treeplex's
rows of one), giving each thread whole runs of a parent's infosets so that a parent's values
are added by one thread, in order; a tree whose levels list one parent's infosets apart, as
poker's do, then takes it on one thread. With rows of `MIN_TYPES` types or more it goes by
parent (`BY_PARENT`): each thread takes whole rows of the infosets whose parents fall in its
runs of parents, in any tree. (Splitting the columns, each thread a run of cache lines over
the whole tree, was the first way: whole rows stream faster, measured at `split`, and it is
gone.) The two splits compute every number alike (tested bit for bit). Every
operation is the torch path's, on the same operands and in the same order, so where
`public.add_rows` adds rows
in order (`public.adds_in_order`: rows of `public.WIDE_TYPES` types or more, or small levels) every
number is the torch path's to the last bit (tested); where it sums by a sparse product, the
product's order of summation is MKL's and the numbers differ in rounding only (tested to 1e-10
at float64).

The loops serve float32 and float64 on the CPU, a walk a batch member, from `LOOP_ENTRIES`
entries [M T] a member of a public treeplex and from `treeplex.WALK_SEQUENCES` sequences of a
generic one; elsewhere the callers' torch operations run. `TENSORCFR_FUSE=0` turns them off.

Example:
    >>> import torch, tensorcfr
    >>> tp = tensorcfr.compile("leduc", form="public").treeplexes[0]
    >>> sigma = tp.normalize(torch.rand(1, tp.num_sequences, dtype=torch.float64))
    >>> x = torch.empty_like(sigma)
    >>> plan(tp, sigma, x, least=0) and torch.equal(x, tp.sequence_form(sigma))  # Leduc: torch's passes
    True
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple

import torch

from tensorcfr.spaces import fused, native

# from here the loops serve (M T entries, a player's arrays): Leduc's few hundred keep torch's
# passes, which the tests hold the loops to; a full-range river spot's 66K take the loops
LOOP_ENTRIES = 1 << 16
# the regret walk of rows of at least this many types goes by parent (`BY_PARENT`), of fewer by
# rows, level by level: Dudo(5,2,2)'s 15 types, 2 cores, float32, an iteration with the dense
# payoff loop (`operators.dense_loop`): 136 ms with torch's passes, 101 ms with the walks by rows
# (173 and 136 ms without that loop; one process, taking turns), where the columns (the first
# way of rows this wide) left one thread a row; Rhode Island's 52 took the columns then (934
# against 869 ms for torch's passes) and go by parent now (its iteration 1,400 ms against 1,500
# by columns, on 2026-11-29)
MIN_TYPES = 32
# `split`'s ways, the C source's `how`: each level's rows split between the threads, or (the
# regret walk's other way) each level's infosets by their parents
BY_ROWS, BY_PARENT = 1, 2

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <omp.h>

/* Thread id's columns [c0, c1) of T: runs of `line` columns (a cache line's worth) a thread, so
   that two threads share at most the one line where their runs meet in a row (a row of T
   entries need not start on a line). */
static void span(int64_t T, int64_t line, int nt, int id, int64_t* c0, int64_t* c1) {
    int64_t lines = (T + line - 1) / line;
    *c0 = lines * id / nt * line;
    *c1 = lines * (id + 1) / nt * line;
    if (*c0 > T) *c0 = T;
    if (*c1 > T) *c1 = T;
}

/* x [1 + M T] = the realisation plan of sigma [1 + M T] (entry 0: the empty sequence, 1; then
   rows of T: public sequences 1..M): row m is x[parent[m]] * sigma[m], or sigma[m] where
   parent[m] < 0 (the empty sequence). Parents come before their children, so one walk down the
   rows; x may be sigma. With avg (not NULL), each entry also goes into the average as `_average`
   adds it: avg = avg d + x w (avg d: only with discount). The threads split each level's rows
   [row_levels[l], row_levels[l + 1]), meeting after each level. */
#define PLAN(NAME, T_)                                                                         \
static void NAME##_rows(T_* x, const T_* sigma, const int64_t* parent, int64_t m0, int64_t m1,  \
                        int64_t T, T_* avg, T_ w, int discount, T_ d) {                  \
    if (T == 1) {  /* a generic treeplex's rows of one: no loop over the columns */             \
        for (int64_t m = m0; m < m1; m++) {                                                    \
            T_ o = parent[m] < 0 ? sigma[m] : x[parent[m]] * sigma[m];                          \
            x[m] = o;                                                                         \
            if (avg) avg[m] = discount ? avg[m] * d + o * w : avg[m] + o * w;                 \
        }                                                                                     \
        return;                                                                               \
    }                                                                                         \
    for (int64_t m = m0; m < m1; m++) {                                                        \
        const T_* s = sigma + m * T;                                                          \
        T_* o = x + m * T;                                                                    \
        if (parent[m] < 0) {                                                                  \
            for (int64_t c = 0; c < T; c++) o[c] = s[c];                                      \
        } else {                                                                              \
            const T_* p = x + parent[m] * T;                                                  \
            for (int64_t c = 0; c < T; c++) o[c] = p[c] * s[c];                               \
        }                                                                                     \
        if (avg) {                                                                            \
            T_* a = avg + m * T;                                                              \
            if (discount)                                                                     \
                for (int64_t c = 0; c < T; c++) a[c] = a[c] * d + o[c] * w;                    \
            else                                                                              \
                for (int64_t c = 0; c < T; c++) a[c] = a[c] + o[c] * w;                        \
        }                                                                                     \
    }                                                                                         \
}                                                                                             \
int NAME(T_* x0, const T_* sigma0, const int64_t* parent, int64_t M, int64_t T, T_* avg0,       \
         double w_, int discount, double d_, const int64_t* row_levels, int64_t L, int threads) { \
    const T_ w = (T_)w_, d = (T_)d_;                                                          \
    x0[0] = 1;                                                                                \
    if (avg0) avg0[0] = (discount ? avg0[0] * d : avg0[0]) + x0[0] * w;                       \
    T_* x = x0 + 1;                                                                           \
    const T_* sigma = sigma0 + 1;                                                             \
    T_* avg = avg0 ? avg0 + 1 : 0;                                                            \
    _Pragma("omp parallel num_threads(threads)")                                               \
    {                                                                                         \
        int nt = omp_get_num_threads(), id = omp_get_thread_num();                            \
        for (int64_t l = 0; l < L; l++) {                                                     \
            int64_t a = row_levels[l], n = row_levels[l + 1] - a;                              \
            NAME##_rows(x, sigma, parent, a + n * id / nt, a + n * (id + 1) / nt, T, avg, w,    \
                        discount, d);                                                         \
            _Pragma("omp barrier")                                                             \
        }                                                                                     \
    }                                                                                         \
    return 0;                                                                                 \
}

/* One update of the regret-matching family, levels deepest first, each level's infosets in
   order. Infoset u holds rows offsets[u]-1 .. offsets[u+1]-2, and its parent sequence is row
   parents[u]-1 (none where parents[u] is 0). Per infoset and column:
     v = sum of sigma q over its rows (in order, from 0); the parent's q += v;
     per row: inst = q - v; r = regret + inst; r = max(r, 0) (plus);
              r = r > 0 ? r pos : r neg (discount); regret = r;
              p = max(r + inst, 0) (predictive) or max(r, 0); out = p; total += p;
     per row: out = total > 0 ? out / total : uniform[row].
   With best (an evaluation's best response, `best_response`): v = each column's largest over
   the infoset's rows, added into the parent (and the twins') as above and written to vout's
   row u where vout is given; sigma, regret, out and uniform are not read (NULL allowed).
   As torch's passes do it: `PublicTreeplex.bottom_up` and `instantaneous_regret`, then
   `fused.regret_step` and `PublicTreeplex.normalize`. The arrays are a member's [1 + M T],
   entry 0 the empty sequence's (out's: 1). The threads meet after each level, which they split
   (how 1) at changes of parent (the caller has checked that a level's infosets with one parent
   are consecutive: a parent's children are then added by one thread, in order), or (how 2, any
   tree) by the infosets' parents, a thread those whose parent falls in its runs of PARENT_RUN
   parents (whole rows, a parent's children added by one thread, in order), the twins' permuted
   adds split by columns. */
#define PARENT_RUN 64  /* by parent (how 2): runs of this many parents a thread */
/* The walk reads an infoset's rows, then the next's, which follow in memory, but a level's rows
   cross a 4 KB page every few rows, where the processor's prefetchers stop: each row's lines are
   prefetched this many entries ahead (sigma and the values in the first pass, the regrets in
   the second). Measured on the isomorphic flop spot (2026-11-29, one process, taking turns, 2
   threads, float32), a player's regret walk: 68 and 46 ms against 82 and 56 (1,024 entries
   ahead: 70 and 47; 2,048: 73 and 48). The same numbers. */
#define AHEAD 512
#define REGRET(NAME, T_)                                                                       \
/* one entry's update: its regret r updated in place from its value q against its infoset's v,  \
   and its positive part (of r + inst where predictive) returned */                           \
static inline T_ NAME##_cell(T_ q, T_ v, T_* r, T_ pos, T_ neg, int plus, int discount,         \
                             int predictive) {                                                \
    T_ inst = q - v;                                                                          \
    T_ x = *r + inst;                                                                         \
    if (plus) x = x > 0 ? x : 0;                                                              \
    if (discount) x = x > 0 ? x * pos : x * neg;                                              \
    *r = x;                                                                                   \
    T_ y = predictive ? x + inst : x;                                                         \
    return y > 0 ? y : 0;                                                                     \
}                                                                                             \
static void NAME##_infoset(int64_t u, T_* q, const T_* sigma, T_* regret, T_* out,             \
                           const T_* uniform, const int64_t* offsets, const int64_t* parents,    \
                           int64_t T, T_* v, T_* total, T_ pos, T_ neg,                         \
                           int plus, int discount, int predictive, const int64_t* mrow,         \
                           T_* vbuf, int best, T_* vout) {                                    \
    int64_t a = offsets[u] - 1, b = offsets[u + 1] - 1;                                        \
    if (T == 1) {  /* a generic treeplex's rows of one: the same operations on scalars */       \
        T_ s = best ? q[a] : 0, tot = 0;                                                      \
        if (best)                                                                             \
            for (int64_t m = a + 1; m < b; m++) s = q[m] > s ? q[m] : s;                       \
        else                                                                                  \
            for (int64_t m = a; m < b; m++) s = s + sigma[m] * q[m];                           \
        if (parents[u] > 0) q[parents[u] - 1] = q[parents[u] - 1] + s;                         \
        if (best) {                                                                           \
            if (mrow && mrow[u] >= 0) vbuf[mrow[u]] = s;                                      \
            if (vout) vout[u] = s;                                                            \
            return;                                                                           \
        }                                                                                     \
        for (int64_t m = a; m < b; m++) {                                                      \
            out[m] = NAME##_cell(q[m], s, regret + m, pos, neg, plus, discount, predictive);   \
            tot = tot + out[m];                                                               \
        }                                                                                     \
        for (int64_t m = a; m < b; m++) out[m] = tot > 0 ? out[m] / tot : uniform[m];          \
        return;                                                                               \
    }                                                                                         \
    if (best) {  /* the best response's value: each column's largest over the rows (exact) */   \
        for (int64_t c = 0; c < T; c++) v[c] = q[a * T + c];                                   \
        for (int64_t m = a + 1; m < b; m++) {                                                  \
            const T_* qm = q + m * T;                                                         \
            for (int64_t c = 0; c < T; c += 64 / (int64_t)sizeof(T_))                          \
                __builtin_prefetch(qm + c + AHEAD, 0, 3);                                     \
            for (int64_t c = 0; c < T; c++) v[c] = qm[c] > v[c] ? qm[c] : v[c];                \
        }                                                                                     \
    } else {                                                                                  \
        for (int64_t c = 0; c < T; c++) v[c] = 0;                                              \
        for (int64_t m = a; m < b; m++) {                                                      \
            const T_* s = sigma + m * T;                                                      \
            const T_* qm = q + m * T;                                                         \
            for (int64_t c = 0; c < T; c += 64 / (int64_t)sizeof(T_)) {                        \
                __builtin_prefetch(s + c + AHEAD, 0, 3);                                      \
                __builtin_prefetch(qm + c + AHEAD, 0, 3);                                     \
            }                                                                                 \
            for (int64_t c = 0; c < T; c++) v[c] = v[c] + s[c] * qm[c];                        \
        }                                                                                     \
    }                                                                                         \
    if (parents[u] > 0) {                                                                     \
        T_* p = q + (parents[u] - 1) * T;                                                     \
        for (int64_t c = 0; c < T; c++) p[c] = p[c] + v[c];                                    \
    }                                                                                         \
    if (mrow && mrow[u] >= 0) {  /* kept for its twins' permuted adds after the level */        \
        T_* d = vbuf + mrow[u] * T;                                                           \
        for (int64_t c = 0; c < T; c++) d[c] = v[c];                                          \
    }                                                                                         \
    if (best) {                                                                               \
        if (vout)                                                                             \
            for (int64_t c = 0; c < T; c++) vout[u * T + c] = v[c];                            \
        return;                                                                               \
    }                                                                                         \
    for (int64_t c = 0; c < T; c++) total[c] = 0;                                              \
    for (int64_t m = a; m < b; m++) {                                                          \
        const T_* qm = q + m * T;                                                             \
        T_* r = regret + m * T;                                                               \
        T_* o = out + m * T;                                                                  \
        for (int64_t c = 0; c < T; c += 64 / (int64_t)sizeof(T_)) __builtin_prefetch(r + c + AHEAD, 1, 3); \
        for (int64_t c = 0; c < T; c++) {                                                      \
            o[c] = NAME##_cell(qm[c], v[c], r + c, pos, neg, plus, discount, predictive);      \
            total[c] = total[c] + o[c];                                                       \
        }                                                                                     \
    }                                                                                         \
    for (int64_t m = a; m < b; m++) {                                                          \
        T_* o = out + m * T;                                                                  \
        T_ un = uniform[m];                                                                   \
        for (int64_t c = 0; c < T; c++)                                                        \
            o[c] = total[c] > 0 ? o[c] / total[c] : un;                                       \
    }                                                                                         \
}                                                                                             \
/* thread id's share [u0, u1) of the level's infosets [lo, hi), its ends moved past changes of  \
   parent so that one parent's infosets fall to one thread */                                  \
static int64_t NAME##_cut(const int64_t* parents, int64_t lo, int64_t hi, int64_t u) {         \
    while (u > lo && u < hi && parents[u] == parents[u - 1]) u++;                              \
    return u;                                                                                 \
}                                                                                             \
int NAME(T_* q0, const T_* sigma0, T_* regret0, T_* out0, const T_* uniform,                  \
         const int64_t* offsets, const int64_t* parents, const int64_t* levels, int64_t L,      \
         int64_t T, double pos_, double neg_, int plus, int discount, int predictive,            \
         int how, int threads, const int64_t* mrow, T_* vbuf, const int64_t* moff,              \
         const int64_t* mvrow, const int64_t* mpar, const int64_t* mperm, int best,            \
         T_* vout) {                                                                          \
    const T_ pos = (T_)pos_, neg = (T_)neg_;                                                  \
    T_* q = q0 + 1;                                                                           \
    const T_* sigma = best ? 0 : sigma0 + 1;                                                  \
    T_* regret = best ? 0 : regret0 + 1;                                                      \
    T_* out = best ? 0 : out0 + 1;                                                            \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(threads)")                                               \
    {                                                                                         \
        int nt = omp_get_num_threads(), id = omp_get_thread_num();                            \
        int64_t tc0 = 0, tc1 = T;  /* the twins' adds' columns (how 2: a thread's share) */     \
        if (how == 2) span(T, 64 / sizeof(T_), nt, id, &tc0, &tc1);                           \
        T_* v = (T_*)malloc(sizeof(T_) * (size_t)(2 * T + 1));                                 \
        if (!v) {                                                                             \
            _Pragma("omp atomic write")                                                        \
            failed = 1;                                                                       \
        }                                                                                     \
        _Pragma("omp barrier")  /* (every thread sees a failure before the first level) */     \
        if (!failed) {                                                                        \
            T_* total = v + T;                                                                \
            for (int64_t l = L - 1; l >= 0; l--) {                                            \
                int64_t lo = levels[l], hi = levels[l + 1], u0 = lo, u1 = hi;                  \
                if (how == 1) {                                                               \
                    u0 = NAME##_cut(parents, lo, hi, lo + (hi - lo) * id / nt);                \
                    u1 = NAME##_cut(parents, lo, hi, lo + (hi - lo) * (id + 1) / nt);          \
                }                                                                             \
                for (int64_t u = u0; u < u1; u++)                                              \
                    if (how != 2 || (parents[u] / PARENT_RUN) % nt == id)                      \
                        NAME##_infoset(u, q, sigma, regret, out, uniform, offsets, parents, T,  \
                                       v, total, pos, neg, plus, discount, predictive,          \
                                       mrow, vbuf, best, vout);                               \
                _Pragma("omp barrier")  /* the parents' values whole before the next level */    \
                if (moff && moff[l + 1] > moff[l]) {                                          \
                    /* twins: each adds its infoset's values, permuted, into the parent, after  \
                       the level's own adds (as `PublicTreeplex._to_parent`); a permuted column \
                       may be another thread's, so every thread's values are in first */         \
                    if (how == 2 || id == 0) {  /* (how 1: one thread, every column) */       \
                        int64_t a0 = tc0, a1 = tc1;                                           \
                        for (int64_t e = moff[l]; e < moff[l + 1]; e++) {                      \
                            if (mpar[e] < 0) continue;  /* (the empty sequence: no value) */   \
                            T_* p = q + mpar[e] * T;                                          \
                            const T_* vr = vbuf + mvrow[e] * T;                               \
                            const int64_t* pm = mperm + e * T;                                \
                            for (int64_t c = a0; c < a1; c++) p[c] = p[c] + vr[pm[c]];         \
                        }                                                                     \
                    }                                                                         \
                    _Pragma("omp barrier")                                                     \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        free(v);                                                                              \
    }                                                                                         \
    if (!best) out0[0] = 1;                                                                   \
    return failed;                                                                            \
}

/* out = each row of w divided by its infoset's total, per column, or the row's uniform[m] where
   that total is not > 0 (as `PublicTreeplex.normalize`: the total of infoset u's rows
   offsets[u]-1 .. offsets[u+1]-2 added in row order from 0, then torch.where(total > 0, w /
   total, uniform)). Arrays [1 + M T] of a member, entry 0 (the empty sequence's) untouched; out
   may be w (an infoset's total is whole before its rows are written). The infosets are
   independent: the threads split them. */
#define NORMALIZE(NAME, T_)                                                                    \
int NAME(const T_* w0, T_* out0, const T_* uniform, const int64_t* offsets, int64_t U,         \
         int64_t T, int threads) {                                                            \
    const T_* w = w0 + 1;                                                                     \
    T_* out = out0 + 1;                                                                       \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(threads)")                                               \
    {                                                                                         \
        T_* total = (T_*)malloc(sizeof(T_) * (size_t)(T > 0 ? T : 1));                         \
        if (!total) {                                                                         \
            _Pragma("omp atomic write")                                                        \
            failed = 1;                                                                       \
        }                                                                                     \
        _Pragma("omp barrier")  /* (every thread sees a failure before the work is shared) */  \
        if (!failed) {                                                                        \
            _Pragma("omp for schedule(static)")                                               \
            for (int64_t u = 0; u < U; u++) {                                                  \
                int64_t a = offsets[u] - 1, b = offsets[u + 1] - 1;                            \
                for (int64_t c = 0; c < T; c++) total[c] = 0;                                  \
                for (int64_t m = a; m < b; m++)                                                \
                    for (int64_t c = 0; c < T; c++) total[c] = total[c] + w[m * T + c];        \
                for (int64_t m = a; m < b; m++) {                                              \
                    const T_* r = w + m * T;                                                  \
                    T_* o = out + m * T;                                                      \
                    T_ un = uniform[m];                                                       \
                    for (int64_t c = 0; c < T; c++) o[c] = total[c] > 0 ? r[c] / total[c] : un; \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        free(total);                                                                          \
    }                                                                                         \
    return failed;                                                                            \
}
PLAN(plan_f32, float)
PLAN(plan_f64, double)
REGRET(regret_f32, float)
REGRET(regret_f64, double)
NORMALIZE(normalize_f32, float)
NORMALIZE(normalize_f64, double)
"""
_I64, _PTR, _INT, _DBL = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int, ctypes.c_double
_SUFFIX = {torch.float32: "f32", torch.float64: "f64"}
_PLAN_ARGS = [_PTR, _PTR, _PTR, _I64, _I64, _PTR, _DBL, _INT, _DBL, _PTR, _I64, _INT]
_REGRET_ARGS = [_PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _I64, _I64, _DBL, _DBL, _INT, _INT, _INT, _INT, _INT,
                _PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _INT, _PTR]
_NORMALIZE_ARGS = [_PTR, _PTR, _PTR, _PTR, _I64, _I64, _INT]
_FUNCTIONS = {f"{k}_{s}": args for k, args in (("plan", _PLAN_ARGS), ("regret", _REGRET_ARGS),
                                                ("normalize", _NORMALIZE_ARGS)) for s in _SUFFIX.values()}


class WalkLayout(NamedTuple):
    """What the walks read of a treeplex: M rows of T types (a per-sequence array [B, S] is its
    empty sequence, then the rows: S = 1 + M T), and per infoset u its rows `offsets[u] - 1 ..
    offsets[u + 1] - 2`, its parent sequence `parents[u]` (a row plus one; 0 the empty sequence),
    the infosets by level (`levels` [L + 1], deepest last) and each row's infoset (`slot` [M]).
    The public treeplex gives its public sequences (`PublicTreeplex.walk_layout`); the generic
    one gives its sequences as rows of one type (`Treeplex.walk_layout`)."""

    rows: int
    types: int
    offsets: torch.Tensor
    parents: torch.Tensor
    levels: torch.Tensor
    slot: torch.Tensor


def _library() -> ctypes.CDLL | None:
    """The loops' library (`native.library` keeps it, or None where it cannot be had)."""
    return native.library("public_loop", _SOURCE, _FUNCTIONS)


def serves(tp, *xs: torch.Tensor, least: int | None = None) -> bool:
    """Whether the loops take arrays xs [B, S] of the treeplex tp: one batch size, float32 or
    float64 alike, contiguous, of tp's width, on the CPU, at least `least` entries a member
    (`LOOP_ENTRIES` unless given), and the library at hand.

    Example:
        >>> import tensorcfr
        >>> tp = tensorcfr.compile("kuhn", form="public").treeplexes[0]
        >>> serves(tp, torch.zeros(1, tp.num_sequences))  # 4 public sequences x 3 types: torch's passes
        False
    """
    dtype, batch = xs[0].dtype, xs[0].shape[0]
    lay = _layout(tp)
    width = 1 + lay.rows * lay.types  # (the walks read the arrays raw: their shape is checked, not trusted)
    if width - 1 < (LOOP_ENTRIES if least is None else least) or dtype not in _SUFFIX:
        return False
    if native.traced():  # (a compiled or recorded iteration takes torch's passes, which the tracer sees)
        return False
    if not all(x.dtype == dtype and x.device.type == "cpu" and x.dim() == 2 and x.shape[0] == batch
               and x.shape[1] == width and x.is_contiguous() for x in xs):
        return False
    return _library() is not None


def _layout(tp) -> WalkLayout:
    """tp's `walk_layout()`, kept on it (asked at every call)."""
    got = tp.__dict__.get("_walk_layout")
    if got is None:
        got = tp.walk_layout()
        object.__setattr__(tp, "_walk_layout", got)
    return got


def _index(tp) -> dict:
    """tp's index tensors as the loops read them (int64, contiguous, on the CPU), made once:
    offsets, parents and levels of the infosets, each row's parent row, each level's first row
    (`row_levels` [L + 1]), and whether each level's infosets with one parent are consecutive
    (`grouped`: the regret walk may then split a level's infosets between threads)."""
    got = tp.__dict__.get("_loop_index")
    if got is None:
        cpu = lambda t: t.to("cpu", torch.int64).contiguous()  # noqa: E731
        lay = _layout(tp)
        parent_row = (lay.parents[lay.slot] - 1)  # [M] the parent sequence's row, -1: empty
        offsets, parents, levels = cpu(lay.offsets), cpu(lay.parents), cpu(lay.levels)
        # a run of one parent starts at each change of (level, parent): as many runs as pairs where grouped
        level = torch.repeat_interleave(torch.arange(len(levels) - 1), levels.diff())  # [U]
        key = level * (int(parents.max()) + 1 if len(parents) else 1) + parents
        runs = int((key[1:] != key[:-1]).sum()) + 1 if len(key) else 0
        got = dict(offsets=offsets, parents=parents, levels=levels, parent_row=cpu(parent_row),
                   row_levels=(offsets[levels] - 1).contiguous(), grouped=runs == len(torch.unique(key)))
        mu = getattr(tp, "mirror_u", None)
        if mu is not None:  # the twins (`PublicTreeplex.mirror_u`): entries by level, a value row per infoset
            mu = cpu(mu)
            kept, vrow = torch.unique(mu, return_inverse=True)
            mrow = torch.full((len(parents),), -1, dtype=torch.int64)
            mrow[kept] = torch.arange(len(kept))
            got.update(mrow=mrow, moff=torch.searchsorted(mu, levels).contiguous(), mvrow=vrow.contiguous(),
                       mpar=(parents[mu] - 1).contiguous(), mperm=cpu(tp.mirror_perm), mkept=len(kept))
        object.__setattr__(tp, "_loop_index", got)
    return got


def split(tp, regret: bool) -> tuple[int, int]:
    """How a walk of tp shares its work: (how, threads), how being `BY_ROWS` (each level's rows
    split between the threads, `torch.get_num_threads()`) or `BY_PARENT`. The plan walk splits
    each level's rows.
    The regret walk goes by parent with `MIN_TYPES` types a row or more, and with fewer (one
    cache line holds a row) splits each level's rows, which needs each parent's infosets of a
    level consecutive (`_index`'s `grouped`, which every Dudo and Liar's Dice tree has) for more
    than one thread to add into the parents; a tree without (poker's) takes it on one thread.

    Example:
        >>> import tensorcfr
        >>> split(tensorcfr.compile("dudo(4,1,2)", form="public").treeplexes[1], regret=True)[0] == BY_ROWS
        True
    """
    threads = torch.get_num_threads()
    if not regret:
        # the plan writes each row once, from its parent's: each level's rows split in two runs
        # stream whole rows, where half rows a thread left the prefetchers half a stream.
        # Measured on 2026-11-29 (2 threads, float32, one process, the two taking turns), a
        # player's plan walk with the average: the isomorphic flop spot 41 and 26 ms against 58
        # and 39 by columns, the full-range turn 15 against 17, the river 0.047 against 0.055,
        # Rhode Island (52 types) 45 and 44 against 77 and 81; the same numbers. The flop spot's
        # iteration: 910 ms against 975 (its solvers of both codes taking turns, 6 blocks of 4)
        return BY_ROWS, threads
    if _layout(tp).types >= MIN_TYPES:
        # each thread whole rows of the infosets whose parents fall in its runs of PARENT_RUN
        # parents: a parent's infosets on one thread, in order, in any tree. Measured on
        # 2026-11-29 (2 threads, float32, one process, taking turns), a player's regret walk on
        # the isomorphic flop spot: 108 and 64 ms against 165 and 97 by columns (runs of 1 parent:
        # 152 and 81; of 256: 115 and 71); the same numbers
        return BY_PARENT, threads
    return BY_ROWS, threads if threads == 1 or _index(tp)["grouped"] else 1


def _members(x, batch: int) -> list[float] | None:
    """A number of the iteration (a float, or one a member [B, 1]) as B floats; None where it
    is neither. Read only after `serves`: on a GPU, or traced (`native.traced`), the walks have
    declined before any number is read."""
    if isinstance(x, torch.Tensor):
        if x.numel() not in (1, batch):
            return None
        return [float(v) for v in x.reshape(-1).expand(batch)]
    return [float(x)] * batch


def plan(tp, sigma: torch.Tensor, out: torch.Tensor, least: int | None = None, average: torch.Tensor | None = None,
         weight=None, discount=None) -> bool:
    """out [B, S] = the realisation plan of sigma [B, S] (`PublicTreeplex.sequence_form`), out
    may be sigma; with `average` [B, S], the plan times `weight` also added into it, the average
    first multiplied by `discount` where that is not None (`PublicTreeplex.averaged_plan`). True
    where the loop ran (a call a batch member), False where it does not serve (nothing written)."""
    batch = sigma.shape[0]
    if not serves(tp, sigma, out, *(() if average is None else (average,)), least=least):
        return False  # (before reading any number: on a GPU, inside a CUDA graph's capture, that would sync)
    w = _members(0.0 if weight is None else weight, batch)
    d = _members(1.0 if discount is None else discount, batch)
    if w is None or d is None:
        return False
    (_, threads), ix, lay = split(tp, regret=False), _index(tp), _layout(tp)
    fn = getattr(_library(), f"plan_{_SUFFIX[sigma.dtype]}")
    rows = [_rows(t, batch) for t in (out, sigma, average)]  # each member's [S] (pointers, not slices: 2 us each)
    for b in range(batch):  # batch members, not nodes: a walk each
        fn(rows[0][b], rows[1][b], ix["parent_row"].data_ptr(), lay.rows, lay.types, rows[2][b],
           w[b], int(discount is not None), d[b], ix["row_levels"].data_ptr(), len(ix["levels"]) - 1, threads)
    return True


def averaged_plan(tp, sigma: torch.Tensor, average: torch.Tensor, weight, discount=None,
                  least: int | None = None, out: torch.Tensor | None = None) -> torch.Tensor | None:
    """The realisation plan x [B, S] of sigma [B, S] in a new array (or `out`), with `average` [B, S]
    multiplied by `discount` (where not None) and x times `weight` added into it, in one walk
    down tp; or None where the walks do not serve (`serves`; nothing changed, no array made).
    What both treeplexes' `averaged_plan` run.

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("kuhn").treeplexes[0]
        >>> sigma = tp.normalize(torch.ones(1, tp.num_sequences, dtype=torch.float64))
        >>> avg = torch.zeros_like(sigma)
        >>> x = averaged_plan(tp, sigma, avg, 1.0, least=0)
        >>> x is None or (torch.equal(x, tp.sequence_form(sigma)) and torch.equal(avg, x))
        True
    """
    if not serves(tp, sigma, average, least=least):
        return None
    x = torch.empty_like(sigma) if out is None else out
    return x if plan(tp, sigma, x, least=least, average=average, weight=weight, discount=discount) else None


def _rows(t: torch.Tensor | None, batch: int) -> list[int | None]:
    """The addresses of each member's row of a contiguous [B, S] (None for None)."""
    if t is None:
        return [None] * batch
    p, step = t.data_ptr(), t.shape[1] * t.element_size()
    return [p + b * step for b in range(batch)]


def regret_step(tp, g: torch.Tensor, sigma: torch.Tensor, regret: torch.Tensor, positive, negative,
                plus: bool, predictive: bool, least: int | None = None,
                out: torch.Tensor | None = None) -> torch.Tensor | None:
    """The next strategy [B, S] of the regret-matching family's update in one walk a member
    (`rules.CFRConfig.next_strategy`: regrets [B, S] updated in place by the values g [B, S],
    which it overwrites, against sigma [B, S]; `positive`/`negative`: the discounts, numbers
    or one a member [B, 1], None for none), or None where the loop does not serve (nothing
    changed). `out` [B, S] (sigma itself allowed: an infoset's strategy is read before it is
    written) receives it; None: a new array."""
    batch, discount = regret.shape[0], positive is not None
    if not serves(tp, g, sigma, regret, *(() if out is None else (out,)), least=least):
        return None  # (before reading any number: on a GPU, inside a CUDA graph's capture, that would sync)
    if out is not None and not fused.disjoint(out, g, regret):
        out = None  # (the strategy may take sigma's memory, never the values' or the regrets')
    pos, neg = (_members(positive, batch), _members(negative, batch)) if discount else ([1.0] * batch,) * 2
    uniform = tp.uniform(regret.dtype)
    if pos is None or neg is None or uniform.device.type != "cpu" or not uniform.is_contiguous():
        return None
    out = torch.empty_like(regret) if out is None else out
    _walk_up(tp, g, (sigma, regret, out), uniform, pos, neg, (plus, discount, predictive), None)
    return out


def _walk_up(tp, g: torch.Tensor, state, uniform, pos, neg, flags, vout: torch.Tensor | None) -> None:
    """The C walk up tp a batch member at a time: the regret-matching family's update (`state`
    = (sigma, regret, out) [B, S] each, `flags` = (plus, discount, predictive), pos and neg a
    member each) or, with `state` None, the best response's values (each infoset's into `vout`
    [B, I] where given)."""
    batch, best = g.shape[0], state is None
    (how, threads), ix = split(tp, regret=True), _index(tp)
    fn = getattr(_library(), f"regret_{_SUFFIX[g.dtype]}")
    rows = [_rows(t, batch) for t in (g, *(state or (None,) * 3), vout)]
    twins = [None] * 6
    if "mrow" in ix:  # the twins' values, a row a mirrored infoset, made for the call
        vbuf = g.new_empty(ix["mkept"], _layout(tp).types)
        twins = [ix["mrow"].data_ptr(), vbuf.data_ptr()] + [ix[k].data_ptr() for k in ("moff", "mvrow", "mpar", "mperm")]
    for b in range(batch):  # batch members, not nodes: a walk each
        if fn(rows[0][b], rows[1][b], rows[2][b], rows[3][b], None if best else uniform.data_ptr(),
              ix["offsets"].data_ptr(), ix["parents"].data_ptr(), ix["levels"].data_ptr(), len(ix["levels"]) - 1,
              _layout(tp).types, pos[b], neg[b], *(int(f) for f in flags), how, threads, *twins, int(best),
              rows[4][b]):
            raise MemoryError("a walk up the treeplex: no memory for a thread's rows")


def best_response(tp, q: torch.Tensor, v: torch.Tensor | None, least: int | None = None) -> bool:
    """The best response's values bottom up in one walk a member (`PublicTreeplex.bottom_up`
    without a strategy): q [B, S] the counterfactual values, each infoset's largest row added
    into its parent sequence in place (the top level's, whose parent is the empty sequence, are
    not: the caller adds them), v [B, U T] each infoset's value (None: not kept). True where the loop ran; False
    where it does not serve (nothing written). Maxima are exact, and the adds go as the torch
    path's where it adds rows in order (`public.adds_in_order`): the same numbers there (tested).

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("leduc", form="public").treeplexes[0]
        >>> g = torch.rand(1, tp.num_sequences, dtype=torch.float64)
        >>> q, v = g.clone(), g.new_empty(1, tp.num_infosets)
        >>> best_response(tp, q, v, least=0) and torch.equal(v, tp.bottom_up(g)[1])
        True
    """
    if not serves(tp, q, least=least) or not (v is None or (v.dtype == q.dtype and v.device.type == "cpu"
                                                            and v.is_contiguous()
                                                            and v.shape == (q.shape[0], tp.num_infosets))):
        return False
    batch = q.shape[0]
    _walk_up(tp, q, None, None, [1.0] * batch, [1.0] * batch, (0, 0, 0), v)
    return True


def normalize(tp, weights: torch.Tensor, out: torch.Tensor, least: int | None = None) -> bool:
    """out [B, S] = the behavioural strategy proportional to weights [B, S] (>= 0; uniform where
    an infoset's weights sum to 0), column 0 left as it is, in one walk a member over the
    infosets (`PublicTreeplex.normalize`'s numbers where its totals add the rows in order,
    `public.adds_in_order`; else they differ in rounding). out may be weights. True where the
    loop ran, False where it does not serve (nothing written). No fused kernel to compile: a
    flop spot's start and evaluations used to compile one (3.7 s with torch's disk cache warm).

    Example:
        >>> import torch, tensorcfr
        >>> tp = tensorcfr.compile("leduc", form="public").treeplexes[0]
        >>> w = torch.rand(1, tp.num_sequences, dtype=torch.float64)
        >>> out = torch.zeros_like(w)
        >>> normalize(tp, w, out, least=0) and torch.equal(out[:, 1:], tp.normalize(w)[:, 1:])
        True
    """
    batch = weights.shape[0]
    if not serves(tp, weights, out, least=least) or not (out is weights or fused.disjoint(weights, out)):
        return False
    uniform = tp.uniform(weights.dtype)
    if uniform.device.type != "cpu" or not uniform.is_contiguous():
        return False
    ix, lay = _index(tp), _layout(tp)
    fn = getattr(_library(), f"normalize_{_SUFFIX[weights.dtype]}")
    rows = [_rows(t, batch) for t in (weights, out)]
    for b in range(batch):  # batch members, not infosets: a walk each
        if fn(rows[0][b], rows[1][b], uniform.data_ptr(), ix["offsets"].data_ptr(), len(ix["offsets"]) - 1,
              lay.types, torch.get_num_threads()):
            raise MemoryError("normalize: no memory for a thread's totals")
    return True
