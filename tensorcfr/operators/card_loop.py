"""One group of a card game's terminals (`PublicPayoffOperator`'s groups: one board's
showdowns, or the folds of one chance path) from the other player's plan to the own rows of the
values, in one compiled C loop (`spaces.native`) on the CPU: a player's groups one after another
in one call (`group_entries`, `add_groups`).

The torch path (`cards.card_values` between the operator's `_rows` and `_add`) makes a dozen
passes over [N, T] arrays: it gathers the other player's rows, writes them times the other's
factors transposed ([T_o + 1, N], `CardKernel.sums_t`'s layout), builds the prefix tables, reads
them back per own hand, multiplies by the own factors, transposes, multiplies the riders and
adds the result into the own rows. Here the same
operations run in one call, in the same order on the same operands, so every number is the
torch path's to the last bit (tested): the transposes happen inside the loop (16 x 16 tiles in
registers at float32), the
prefix tables stay in the caches, and the values are added into the rows as they come. The
loop runs on torch's OpenMP threads (`torch.get_num_threads()` of them), split over hands.

It serves prefix-sum kernels where the torch path works transposed (`cards.TRANSPOSED_DEVICES`:
the CPU), an entry a batch member (spots over one board, or on boards of their own, each member
then with its own tables), in float32 or float64, where no terminal sits on the empty sequence
and the rows take the values as `add_rows` adds them (in order, row by row, or written where no
two terminals share a row); elsewhere `group_entries` returns None and the torch path
runs. A batch on boards of their own has the torch path work by rows, whose sums round
otherwise: there the loop's numbers are those of the transposed layout, each member's as its
tables give them.

Example:
    >>> import torch, tensorcfr
    >>> cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
    >>> op = cg.operator(torch.float64)
    >>> y = tensorcfr.Policy.uniform(cg).sequence_form()[1]
    >>> g = op.cfv(0, y)  # a player's groups in one call of the loop where it takes them
    >>> g.shape == (1, cg.treeplexes[0].num_sequences)
    True
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import torch

from tensorcfr.operators.cards import TRANSPOSED_DEVICES, CardKernel
from tensorcfr.spaces import native
from tensorcfr.spaces.scan import ROWS_C

_SOURCE = ROWS_C + r"""
#include <omp.h>
#include <string.h>
#define DESC 22  /* the integers of an entry of desc: `_DESC` */
#define P64(x) ((const int64_t*)(intptr_t)(x))
#define BLOCK 16  /* hands a block: a cache line of floats */

/* The two transposes between rows of hands and rows of terminals, a block of nb (<= BLOCK) hands
   t0.. at a time. LOAD: y[t][n] = src[other_rows[n] To + t] other[t], the other's reach in;
   STORE: out[own_rows[n] Tp + t] += V[t - t0][n] own[t] (v = V own, then out + v; or where
   writes[n], the terminal that reaches its row first: out = v), V a block's values a hand a row
   [nb, NP], in increasing n, as a loop a hand at a time does. One element at a time they were a
   third of the card loop's time (perf, 2026-11-29): a scalar load or add a row per hand. For
   float32, a full block goes by 16 x 16 tiles, transposed in registers (four rounds of
   two-vector shuffles), so that each row takes one vector of 16 hands: per player, the
   isomorphic flop spot's groups 320 and 297 ms against 237 and 233 (values and reach; in another
   run the values alone 239 and 242 against 295 and 284), the full-range turn spot's 81 and 79
   against 63 and 64 (one process, taking turns, 6 rounds, medians). Doubles go by 8 x 8 tiles, a
   block's two halves (the full-range turn's iteration at float64: 490 against 451 ms). Every
   number is the same: the same operations per element. The blocks' tails and compilers without
   vector shuffles (GCC before 12) go an element at a time. */
#define ONE_AT_A_TIME(T, SUFFIX)                                                               \
static void load_##SUFFIX(T* y, const T* src, const int64_t* other_rows, int64_t N, int64_t To, \
                          int64_t t0, int64_t nb, const T* other) {                            \
    for (int64_t t = t0; t < t0 + nb; t++) {                                                  \
        T f = other[t];                                                                       \
        T* yt = y + t * N;                                                                    \
        for (int64_t n = 0; n < N; n++) yt[n] = src[other_rows[n] * To + t] * f;              \
    }                                                                                         \
}                                                                                             \
static void store_##SUFFIX(T* out, const int64_t* own_rows, int64_t N, int64_t Tp, int64_t t0, \
                           int64_t nb, const T* V, int64_t NP, const T* own,                   \
                           const unsigned char* writes) {                                     \
    for (int64_t t = t0; t < t0 + nb; t++) {                                                  \
        T o = own[t];                                                                         \
        const T* vb = V + (t - t0) * NP;                                                      \
        for (int64_t n = 0; n < N; n++) {                                                     \
            T v = vb[n] * o;                                                                  \
            if (writes[n]) out[own_rows[n] * Tp + t] = v;                                     \
            else out[own_rows[n] * Tp + t] += v;                                              \
        }                                                                                     \
    }                                                                                         \
}
ONE_AT_A_TIME(double, one_f64)
ONE_AT_A_TIME(float, one_f32)
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
typedef float v16f __attribute__((vector_size(64)));
/* a round of the transpose: rows i and i + d (i & d == 0) swap their off-diagonal d x d blocks */
#define SA8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define SB8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define SA4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define SB4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define SA2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define SB2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define SA1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define SB1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
/* L rows of V, their shuffles' indices P##A##d and P##B##d (S: floats, D: doubles) */
#define ROUND(L, V, P, d)                                                                      \
    for (int i = 0; i < L; i++)                                                                \
        if (!(i & d)) {                                                                        \
            V a = r[i], b = r[i + d];                                                          \
            r[i] = __builtin_shufflevector(a, b, P##A##d);                                     \
            r[i + d] = __builtin_shufflevector(a, b, P##B##d);                                 \
        }
static inline void transpose16(v16f* r) {
    ROUND(16, v16f, S, 8) ROUND(16, v16f, S, 4) ROUND(16, v16f, S, 2) ROUND(16, v16f, S, 1)
}
typedef double v8d __attribute__((vector_size(64)));
/* the same for doubles, 8 x 8 (a vector holds 8): a block of 16 hands is two parts of 8 */
#define DA4 0, 1, 2, 3, 8, 9, 10, 11
#define DB4 4, 5, 6, 7, 12, 13, 14, 15
#define DA2 0, 1, 8, 9, 4, 5, 12, 13
#define DB2 2, 3, 10, 11, 6, 7, 14, 15
#define DA1 0, 8, 2, 10, 4, 12, 6, 14
#define DB1 1, 9, 3, 11, 5, 13, 7, 15
static inline void transpose8(v8d* r) { ROUND(8, v8d, D, 4) ROUND(8, v8d, D, 2) ROUND(8, v8d, D, 1) }
/* a block of BLOCK hands by L x L tiles of V (L lanes of T), BLOCK / L parts of L hands */
#define TILED(T, V, L, TRANSPOSE, SUFFIX)                                                     \
static void load_##SUFFIX(T* y, const T* src, const int64_t* other_rows, int64_t N, int64_t To,\
                          int64_t t0, int64_t nb, const T* other) {                           \
    if (nb < BLOCK) { load_one_##SUFFIX(y, src, other_rows, N, To, t0, nb, other); return; }  \
    for (int64_t h = t0; h < t0 + BLOCK; h += L) {  /* hands h .. h + L - 1 */                \
        V f, r[L];                                                                            \
        memcpy(&f, other + h, sizeof(V));                                                     \
        for (int64_t n0 = 0; n0 < N; n0 += L) {                                               \
            int64_t ni = N - n0 < L ? N - n0 : L;                                             \
            for (int64_t i = 0; i < L; i++) {  /* terminal n0 + i's row, times the factors */ \
                if (i < ni) {                                                                 \
                    memcpy(&r[i], src + other_rows[n0 + i] * To + h, sizeof(V));              \
                    r[i] = r[i] * f;                                                          \
                } else {                                                                      \
                    r[i] = f * 0;                                                             \
                }                                                                             \
            }                                                                                 \
            TRANSPOSE(r);  /* r[j]: hand h + j's reach at terminals n0.. */                   \
            if (ni == L)                                                                      \
                for (int j = 0; j < L; j++) memcpy(y + (h + j) * N + n0, &r[j], sizeof(V));   \
            else                                                                              \
                for (int j = 0; j < L; j++)                                                   \
                    for (int64_t i = 0; i < ni; i++) y[(h + j) * N + n0 + i] = r[j][i];       \
        }                                                                                     \
    }                                                                                         \
}                                                                                             \
static void store_##SUFFIX(T* out, const int64_t* own_rows, int64_t N, int64_t Tp, int64_t t0,\
                           int64_t nb, const T* V_, int64_t NP, const T* own,                 \
                           const unsigned char* writes) {                                     \
    if (nb < BLOCK) { store_one_##SUFFIX(out, own_rows, N, Tp, t0, nb, V_, NP, own, writes); return; }\
    for (int64_t h = 0; h < BLOCK; h += L) {  /* the block's hands h .. h + L - 1 */          \
        V o, r[L];                                                                            \
        memcpy(&o, own + t0 + h, sizeof(V));                                                  \
        for (int64_t n0 = 0; n0 < N; n0 += L) {  /* (V_'s rows hold NP >= n0 + L numbers) */  \
            for (int j = 0; j < L; j++) memcpy(&r[j], V_ + (h + j) * NP + n0, sizeof(V));     \
            TRANSPOSE(r);  /* r[i]: terminal n0 + i's values of those hands */                \
            int64_t ni = N - n0 < L ? N - n0 : L;                                             \
            for (int64_t i = 0; i < ni; i++) {                                                \
                T* p = out + own_rows[n0 + i] * Tp + t0 + h;                                  \
                V v = r[i] * o;                                                               \
                if (writes[n0 + i]) {                                                         \
                    memcpy(p, &v, sizeof(V));                                                 \
                } else {                                                                      \
                    V c;                                                                      \
                    memcpy(&c, p, sizeof(V));                                                 \
                    c = c + v;                                                                \
                    memcpy(p, &c, sizeof(V));                                                 \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
}
TILED(float, v16f, 16, transpose16, f32)
TILED(double, v8d, 8, transpose8, f64)
#else
#define load_f32 load_one_f32
#define store_f32 store_one_f32
#define load_f64 load_one_f64
#define store_f64 store_one_f64
#endif

/* One group's values added (or written, where writes) into out [M_p, Tp] at own_rows [N + n_r]:
   y [To + 1, N] = the other's rows src[other_rows] [N, To] times its factors `other` [To],
   transposed, with a zero row To; its prefix sums by strength (order [To + 1]) and by card (card
   q's list lists[starts[q]:starts[q + 1]], `CardKernel.starts`) for showdowns (ranked), or per
   card and in all for folds; then per own hand t
   (the rows idx [., Tp] of `CardKernel.fused_index`) free and margin, v = free a + b margin
   (folds: free a) per terminal n, times own[t]; the riders r: free at column at[r] times a_r[r],
   times own[t]. Every operation as `cards.card_values`' torch path orders it.

   NAME##_body is what every thread of the caller's parallel region runs for a group (orphaned
   work-sharing): y, prefix and cards are shared scratch at least of the group's sizes, acc [N]
   and tiles [BLOCK (2 NP + NR)] the thread's own (a block's free reach, values and riders'
   values, NP and NR: N and n_r rounded up to BLOCK); a thread without them (no memory) skips its
   share and sets
   *failed. Each work-sharing loop ends in its barrier, so the next group starts once this one's
   values are in and may reuse the scratch: the groups add in their order, and every number is
   the one a call a group gives. (y's zero row is written in the loop that reads the reach, not
   by a construct of its own: one barrier a group fewer. Letting a thread through its own hands
   go on to the next group, with two sets of scratch taking turns, measured within the noise on
   the flop and turn spots, 2026-11-29.)

   Two loops walk the terminals' rows a block of columns at a time (LOAD_ and STORE_): y's,
   reading src[other_rows[n]] at t0.., and the values', adding into out[own_rows[n]] at t0...
   Rows lie far apart in plans of hundreds of MB, where the processor's prefetchers see no
   stream, so each new cache line of a row was a wait (perf on the isomorphic flop spot: 36% of
   the loop's samples on the two loads). At each block both prefetch each row's lines ahead.
   Measured in one process, 2
   threads, float32, old and new loop taking turns, 6 blocks of 4 iterations each (2026-11-29):
   the flop spot 1,138 ms an iteration against 972 (medians), the full-range turn spot 303
   against 275. Prefetching changes no number. */
#define GROUP(NAME, SCAN_, LOAD_, STORE_, T)                                                   \
static void NAME##_body(const T* src, int64_t To, const int64_t* other_rows, int64_t N,        \
         const T* other, const int64_t* order, const int64_t* lists, const int64_t* starts, int k, \
         int ranked, const int64_t* idx, int64_t n_idx, int64_t Tp, const T* a, const T* b,     \
         const T* own, const int64_t* at, const T* a_r, int64_t n_r, T* out,                    \
         const int64_t* own_rows, const unsigned char* writes, T* y, T* prefix, T* cards,        \
         double* acc, T* tiles,                                                                \
         int* failed) {                                                                        \
    const int64_t LINE = 64 / (int64_t)sizeof(T);  /* the numbers of T a cache line holds */ \
    _Pragma("omp for schedule(static)")                                                       \
    for (int64_t t0 = 0; t0 < To; t0 += BLOCK) {  /* a block of the other's hands at a time */  \
        if (t0 + 2 * BLOCK < To)  /* each row's lines two blocks ahead */                     \
            for (int64_t n = 0; n < N; n++)                                                   \
                for (int64_t l = 0; l < BLOCK; l += LINE)                                     \
                    __builtin_prefetch(src + other_rows[n] * To + t0 + 2 * BLOCK + l, 0, 3);  \
        LOAD_(y, src, other_rows, N, To, t0, To - t0 < BLOCK ? To - t0 : BLOCK, other);       \
        if (t0 == 0)  /* y's zero row To, in this loop: no barrier of its own */              \
            for (int64_t n = 0; n < N; n++) y[To * N + n] = 0;                                \
    }                                                                                         \
    /* the scans, a table (the prefix by strength, a card's) a thread at a time: whole        \
       rows, so no two threads write one cache line (split by columns, they took turns        \
       to own the lines they shared, and the scans ran 2.5x slower) */                        \
    if (!acc) *failed = 1;                                                                    \
    if (ranked) {                                                                             \
        _Pragma("omp for schedule(dynamic, 1)")                                               \
        for (int64_t q = -1; q < 52; q++) {                                                   \
            if (!acc) continue;                                                               \
            if (q < 0) SCAN_(y, order, To + 1, N, prefix, 0, acc);                            \
            else SCAN_(y, lists + starts[q], starts[q + 1] - starts[q], N, cards + starts[q] * N, 0, acc); \
        }                                                                                     \
    } else {                                                                                  \
        _Pragma("omp for schedule(dynamic, 4)")                                               \
        for (int64_t q = 0; q < 52; q++)                                                      \
            if (acc) SCAN_(y, lists + starts[q], starts[q + 1] - starts[q], N, cards + q * N, 1, acc); \
        _Pragma("omp single")                                                                 \
        for (int64_t c = 0; c < N; c++) {  /* torch: per_card.cumsum(0)[-1] / k */            \
            double s = 0.0;                                                                   \
            for (int64_t q = 0; q < 52; q++) s += (double)cards[q * N + c];                   \
            prefix[c] = (T)s / (T)k;                                                          \
        }                                                                                     \
    }                                                                                         \
    const int64_t NP = (N + BLOCK - 1) / BLOCK * BLOCK;  /* a row of the thread's tiles */    \
    const int64_t NR = (n_r + BLOCK - 1) / BLOCK * BLOCK;  /* a row of the riders' tile */     \
    /* guided: the two threads' shares of the own hands ended up to 30 ms apart in a 360-ms call  \
       with equal halves (static; the same work a hand), the slower thread not always the same   \
       one; guided chunks of 2 blocks or more: the flop spot's calls 673 -> 656 ms a pair, the    \
       turn's 193 -> 181 (one process, taking turns, 2026-11-29; a whole iteration: the turn's    \
       226.7 -> 223.7 ms, the flop's even, 652 and 655); dynamic chunks of 2 or 4                \
       blocks were slower (800 and 736), most likely from blocks sharing lines with their neighbours' */ \
    _Pragma("omp for schedule(guided, 2)")                                                    \
    for (int64_t t0 = 0; t0 < Tp; t0 += BLOCK) {  /* a block of own hands at a time */        \
        if (!tiles) continue;                                                                 \
        int64_t nb = Tp - t0 < BLOCK ? Tp - t0 : BLOCK;                                       \
        for (int64_t t = t0; t < t0 + nb; t++) {  /* each hand's free reach and values, a row */ \
            T* fb = tiles + (t - t0) * NP;                                                    \
            T* vb = tiles + (BLOCK + t - t0) * NP;                                            \
            if (ranked) {                                                                     \
                const T* total = prefix + To * N;                                             \
                const T* h0 = cards + idx[t] * N;                                             \
                const T* f0 = cards + idx[Tp + t] * N;                                        \
                const T* l0 = cards + idx[2 * Tp + t] * N;                                    \
                const T* first = prefix + idx[(n_idx - 2) * Tp + t] * N;                      \
                const T* last = prefix + idx[(n_idx - 1) * Tp + t] * N;                       \
                if (k == 2) {                                                                 \
                    const T* h1 = cards + idx[3 * Tp + t] * N;                                \
                    const T* f1 = cards + idx[4 * Tp + t] * N;                                \
                    const T* l1 = cards + idx[5 * Tp + t] * N;                                \
                    const T* same = y + idx[6 * Tp + t] * N;                                  \
                    for (int64_t n = 0; n < N; n++) {                                         \
                        T fr = total[n] - h0[n]; fr = fr - h1[n]; fr = fr + same[n];          \
                        T m = first[n] + last[n]; m = m - total[n];                           \
                        m = m - f0[n]; m = m - l0[n]; m = m + h0[n];                          \
                        m = m - f1[n]; m = m - l1[n]; m = m + h1[n];                          \
                        T p = fr * a[n], q = b[n] * m;                                        \
                        fb[n] = fr; vb[n] = p + q;                                            \
                    }                                                                         \
                } else {                                                                      \
                    for (int64_t n = 0; n < N; n++) {                                         \
                        T fr = total[n] - h0[n];                                              \
                        T m = first[n] + last[n]; m = m - total[n];                           \
                        m = m - f0[n]; m = m - l0[n]; m = m + h0[n];                          \
                        T p = fr * a[n], q = b[n] * m;                                        \
                        fb[n] = fr; vb[n] = p + q;                                            \
                    }                                                                         \
                }                                                                             \
            } else {                                                                          \
                const T* h0 = cards + idx[t] * N;                                             \
                if (k == 2) {                                                                 \
                    const T* h1 = cards + idx[Tp + t] * N;                                    \
                    const T* same = y + idx[2 * Tp + t] * N;                                  \
                    for (int64_t n = 0; n < N; n++) {                                         \
                        T fr = prefix[n] - h0[n]; fr = fr - h1[n]; fr = fr + same[n];         \
                        fb[n] = fr; vb[n] = fr * a[n];                                        \
                    }                                                                         \
                } else {                                                                      \
                    for (int64_t n = 0; n < N; n++) {                                         \
                        T fr = prefix[n] - h0[n];                                             \
                        fb[n] = fr; vb[n] = fr * a[n];                                        \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        if (t0 + BLOCK < Tp)  /* each own row's lines of the next block */                    \
            for (int64_t n = 0; n < N; n++)                                                   \
                for (int64_t l = 0; l < BLOCK; l += LINE)                                     \
                    __builtin_prefetch(out + own_rows[n] * Tp + t0 + BLOCK + l, 1, 3);        \
        STORE_(out, own_rows, N, Tp, t0, nb, tiles + BLOCK * NP, NP, own, writes);            \
        if (n_r > 0) {  /* the riders' values, stored after the terminals' as before */         \
            T* rv = tiles + 2 * BLOCK * NP;                                                   \
            for (int64_t t = t0; t < t0 + nb; t++) {                                          \
                const T* fb = tiles + (t - t0) * NP;                                          \
                T* rt = rv + (t - t0) * NR;                                                   \
                for (int64_t r = 0; r < n_r; r++) rt[r] = fb[at[r]] * a_r[r];                 \
            }                                                                                 \
            STORE_(out, own_rows + N, n_r, Tp, t0, nb, rv, NR, own, writes + N);              \
        }                                                                                     \
    }                                                                                         \
    if (!tiles) *failed = 1;                                                                  \
}                                                                                             \
/* E entries (a group, or a batch member's share of one) one after the other in one parallel  \
   region: a call's fixed costs (the region, the scratch, the call from Python) paid once for  \
   a player's groups, not for each (a flop spot's 1,936). desc [E, DESC]: an entry's arguments \
   of NAME##_body as integers, with the member's rows of src and out, b_src (d[0]) and b_out   \
   (d[19]): src + b_src src_stride, out + b_out out_stride. */                                 \
int NAME(const T* src, int64_t src_stride, T* out, int64_t out_stride, const int64_t* desc,      \
         int64_t E, int threads) {                                                            \
    typedef const T* CT;                                                                       \
    int64_t ys = 1, ps = 1, cs = 1, ns = 1, rs = 1;                                            \
    for (int64_t e = 0; e < E; e++) {                                                          \
        const int64_t* d = desc + e * DESC;                                                    \
        int64_t To = d[1], N = d[3], rows = P64(d[7])[52], ranked = d[9];                      \
        if ((To + 1) * N > ys) ys = (To + 1) * N;                                              \
        if ((ranked ? To + 1 : 1) * N > ps) ps = (ranked ? To + 1 : 1) * N;                    \
        if ((ranked ? rows : 52) * N > cs) cs = (ranked ? rows : 52) * N;                      \
        if (N > ns) ns = N;                                                                    \
        if (d[18] > rs) rs = d[18];                                                            \
    }                                                                                         \
    T* y = (T*)malloc(sizeof(T) * (size_t)ys);                                                 \
    T* prefix = (T*)malloc(sizeof(T) * (size_t)ps);                                            \
    T* cards = (T*)malloc(sizeof(T) * (size_t)cs);                                             \
    int failed = !y || !prefix || !cards;                                                      \
    if (!failed) {                                                                             \
        _Pragma("omp parallel num_threads(threads)")                                           \
        {                                                                                     \
            double* acc = (double*)malloc(sizeof(double) * (size_t)ns);                        \
            int64_t np_ = (ns + BLOCK - 1) / BLOCK * BLOCK, nr_ = (rs + BLOCK - 1) / BLOCK * BLOCK; \
            T* tiles = (T*)malloc(sizeof(T) * (size_t)(BLOCK * (2 * np_ + nr_)));             \
            for (int64_t e = 0; e < E; e++) {                                                  \
                const int64_t* d = desc + e * DESC;                                            \
                NAME##_body(src + d[0] * src_stride, d[1], P64(d[2]), d[3], (CT)(intptr_t)d[4],  \
                            P64(d[5]), P64(d[6]), P64(d[7]), (int)d[8], (int)d[9], P64(d[10]),  \
                            d[11], d[12], (CT)(intptr_t)d[13], (CT)(intptr_t)d[14],             \
                            (CT)(intptr_t)d[15], P64(d[16]), (CT)(intptr_t)d[17], d[18],        \
                            out + d[19] * out_stride, P64(d[20]),                              \
                            (const unsigned char*)(intptr_t)d[21], y, prefix, cards,           \
                            acc, tiles, &failed);                                              \
            }                                                                                 \
            free(acc); free(tiles);                                                            \
        }                                                                                     \
    }                                                                                         \
    free(y); free(prefix); free(cards);                                                        \
    return failed;                                                                            \
}
GROUP(group_f32, scan_rows_f32, load_f32, store_f32, float)
GROUP(group_f64, scan_rows_f64, load_f64, store_f64, double)
"""
_FUNCTIONS = {torch.float32: "group_f32", torch.float64: "group_f64"}
_I64, _PTR = ctypes.c_int64, ctypes.c_void_p
_ARGS = [_PTR, _I64, _PTR, _I64, _PTR, _I64, ctypes.c_int]  # (src, its member stride, out, its, desc, E, threads)
_DESC = 22  # the C source's DESC: (b_src, To ... n_r, b_out, own_rows, writes) as `_plan` lists them


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


@dataclass(frozen=True, eq=False)
class Groups:
    """Groups of terminals that `add_groups` runs in one C call, in order: desc [E, 22] int64,
    an entry a group and batch member (the C source's DESC), and `keep`, the tensors its
    pointers point into."""

    dtype: torch.dtype
    desc: torch.Tensor
    keep: tuple

    @staticmethod
    def join(runs: list["Groups"]) -> "Groups":
        """Runs of one dtype as one call, in their order.

        Example:
            >>> g = Groups(torch.float32, torch.zeros(1, 22, dtype=torch.int64), ())
            >>> Groups.join([g, g]).desc.shape
            torch.Size([2, 22])
        """
        return Groups(runs[0].dtype, torch.cat([r.desc for r in runs]), tuple(t for r in runs for t in r.keep))


def group_entries(kernel, src: torch.Tensor, other_rows: torch.Tensor, out: torch.Tensor,
                  own_rows: torch.Tensor, factors: tuple, riders: tuple | None,
                  put: bool | torch.Tensor) -> Groups | None:
    """One group's entries for `add_groups` (a call's worth of its values, a batch member each),
    or None where the torch path must run it; made once and run every iteration (`Groups.join`
    puts a player's groups into one call).

    kernel: the group's `cards.CardKernel`; src [B_x, M_o, T_o]: the other player's rows of its
    plan (B_x 1 or B); other_rows [N]: the row of each terminal there; out [B, M_p, T_p]: the own
    rows of the values, a member each; own_rows [N + n_r]: the terminals' rows there, then the
    riders'; factors: the group's `cards.terminal_factors` (shared: one row of d a player; a
    batch's [B, ...] or one for all); riders: (at [n_r], a [(B,) n_r, 1]) or None; put: True where
    no two terminals share a row (each written, not added), False where each adds, or uint8
    [N + n_r], 1 where that terminal (or rider) is the first to write its row in the call (the
    values written there, so that out need not be zeroed; read at each call, so the caller may
    fill it after this returns). A batch of members takes an entry each: spots
    over one board whose ranges or pots differ (member b's numbers those of its spot alone), or
    spots on boards of their own (each with its board's tables). The index tensors must be int64
    and contiguous, as the operator makes them (the loop reads them raw: checked, not trusted);
    src and out are read through pointers at each call, so a later call passes arrays of the
    same shapes and strides.

    Example:
        >>> import torch
        >>> from tensorcfr.operators.cards import CardKernel
        >>> cards, one = torch.tensor([[0, 1], [2, 3]]), torch.tensor([0])
        >>> meta = torch.zeros(1, 1, 2, device="meta")  # not the CPU: torch's path takes the group
        >>> print(group_entries(CardKernel(cards, cards), meta, one, meta, one, (), None, False))
        None
    """
    if (not _runs(kernel, out.device) or out.dim() != 3 or src.dim() != 3 or not src[0].is_contiguous()
            or not out[0].is_contiguous()):
        return None
    plan = _plan(kernel, src, other_rows, out, own_rows, factors, riders, put)
    if plan is None:
        return None
    members, keep = plan
    many = src.shape[0] > 1
    desc = torch.tensor([(b if many else 0, *before, b, *after) for b, (before, after) in enumerate(members)],
                        dtype=torch.int64)  # [members, _DESC]
    assert desc.shape[1] == _DESC
    return Groups(out.dtype, desc, (*keep, other_rows, own_rows, *(riders or ())))  # (riders: `at` is theirs)


def add_groups(groups: Groups, src: torch.Tensor, out: torch.Tensor) -> None:
    """Run `groups` (`group_entries`) on src [B_x, M_o, T_o] and into out [B, M_p, T_p], arrays
    of the shapes and strides they were made for, in one C call on torch's threads.

    Example:
        >>> import torch
        >>> from tensorcfr.operators.cards import CardKernel
        >>> cards = torch.tensor([[0, 1], [2, 3]])
        >>> f = (torch.ones(1, 2), torch.ones(1, 2), torch.ones(1, 1), torch.zeros(1, 1))  # a fold
        >>> src, out = torch.tensor([[[1.0, 1.0]]]), torch.zeros(1, 1, 2)
        >>> g = group_entries(CardKernel(cards, cards), src, torch.tensor([0]), out, torch.tensor([0]), f, None, False)
        >>> _ = add_groups(g, src, out) if g is not None else out.fill_(1.0)  # (no C compiler: the loop's result)
        >>> out.tolist()  # each hand: the other's one hand beside it
        [[[1.0, 1.0]]]
    """
    fn = getattr(_library(), _FUNCTIONS[groups.dtype])
    # torch's setting, from any thread (OpenMP keeps one a thread)
    if fn(src.data_ptr(), src.stride(0), out.data_ptr(), out.stride(0), groups.desc.data_ptr(),
          groups.desc.shape[0], torch.get_num_threads()):
        raise MemoryError("add_groups: no memory for the groups' tables")


def _plan(kernel, src, other_rows, out, own_rows, factors, riders, put):
    """(per member its arguments before its other's rows and between those and its own rows, the
    tensors they point into), or None where the loop cannot take the group."""
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
    if _library() is None:
        return None
    writes = put if isinstance(put, torch.Tensor) else torch.full((N + n_r,), int(put), dtype=torch.uint8)
    if writes.dtype != torch.uint8 or not writes.is_contiguous() or writes.shape != (N + n_r,):
        return None
    members, keep = [], [writes]
    for b in range(B):
        own_f, other_f, a, bb = (_member(x, b, B > 1) for x in factors)
        own_f, other_f, a = _flat(own_f, Tp, dtype), _flat(other_f, To, dtype), _flat(a, N, dtype)
        bb = _flat(bb, N, dtype) if kernel.ranked else a
        a_r = _flat(_member(riders[1], b, B > 1), n_r, dtype) if n_r else a
        if own_f is None or other_f is None or a is None or bb is None or a_r is None:
            return None
        own_tables = kernel.members > 1  # a member's tables where the members show down on boards of their own
        idx = kernel.fused_index(b if own_tables else 0)
        lists, starts = kernel.packed_lists(b if own_tables else 0), kernel.starts()
        order = (kernel.order[b] if own_tables else kernel.order) if kernel.ranked else other_rows  # (folds: none)
        keep += [own_f, other_f, a, bb, a_r, idx, lists, starts, order]
        members.append(((To, other_rows.data_ptr(), N, other_f.data_ptr(), order.data_ptr(), lists.data_ptr(),
                         starts.data_ptr(), kernel.k, int(kernel.ranked), idx.data_ptr(), idx.shape[0], Tp, a.data_ptr(),
                         bb.data_ptr(), own_f.data_ptr(), at.data_ptr(), a_r.data_ptr(), n_r),
                        (own_rows.data_ptr(), writes.data_ptr())))
    return members, keep  # (keep: the tensors the pointers point into)
