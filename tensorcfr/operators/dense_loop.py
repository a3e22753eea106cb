"""The public-tree form's payoff values by dense matrices (`PublicPayoffOperator`'s classes:
Dudo, Liar's Dice, any game whose payoff is a [T0, T1] matrix per terminal) in one compiled C
loop (`spaces.native`) on the CPU.

The torch path zeroes the values [B, S_p], then per payoff class gathers the other player's
rows of its terminals ([n_k, T_o], `pick_rows`), multiplies them by the class's matrix (a
batched product) and writes or adds them into the own rows (`put_rows`, `add_rows`): four passes
over memory and a temporary a class. Here the own rows are walked once, in order: a row no
terminal reaches is zeroed, a row that terminals reach gets each one's matrix times the other
player's row, added in the order torch adds them (class by class, then the small classes'
terminals). A terminal on the other player's empty sequence reads that sequence's weight for
every type, one on the own empty sequence adds its sum over types into column 0, as the torch
path does by hand. The threads split the rows. The products sum over the other player's types
in order, where the batched product sums in its own blocks, so the numbers are torch's within
rounding (tested to 1e-12 at float64), not to the last bit. On Dudo(5,2,2) (1M terminals of 15
x 15 types a player, 2 cores, float32) a player's values took 35 ms against 52 ms.

It serves float32 and float64 on the CPU, from `LOOP_ENTRIES` entries [M_p T_p] a player (so
Leduc's and OCP(1000)'s few thousand keep torch's passes), a call a batch member. Elsewhere
`values` returns None and the torch path runs. `TENSORCFR_FUSE=0` turns it off.

Example:
    >>> import torch, tensorcfr
    >>> cg = tensorcfr.compile("dudo(4,1,1)", form="public")
    >>> op = cg.operator(torch.float64)
    >>> y = tensorcfr.Policy.uniform(cg).sequence_form()[1]
    >>> g = values(op, 0, y, least=0)  # None where the loop does not serve
    >>> g is None or torch.allclose(g, op.cfv(0, y))
    True
"""

from __future__ import annotations

import ctypes

import torch

from tensorcfr.operators.payoff import values_array
from tensorcfr.spaces import native

# from here the loop serves (M_p T_p entries, a player's values): Dudo(4,2,2)'s 655K and
# Dudo(5,2,2)'s 15.7M take it; Leduc's few hundred and OCP(1000)'s 4,000 keep torch's passes
# (whose figures the benchmark table holds)
LOOP_ENTRIES = 1 << 16

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <omp.h>

/* out [1 + M Tp] (entry 0, the empty sequence's) = the payoff values of the terminals z, each
   sign * mats[mat[z]] x with x the other player's row other[z] of xs [1 + M_o To] (entry 0 its
   empty sequence's weight, which stands for every type where other[z] < 0), the product as
   v[i] = sum over j of mats[k][j][i] x[j], j in order (mats [K, To, W], arranged per player:
   player 0's matrices transposed, and each row padded with zeros to W, a multiple of LANES, so
   that the product runs in whole vectors held in registers: 2x faster on Dudo's 15 types than a
   row of 15). Own rows ascending (own[z]; the terminals of a row in the order torch adds them):
   a row no terminal reaches gets 0, a row that some reach their sum; the threads split the rows,
   each writes its rows once. A terminal on the empty sequence (own[z] < 0, first in the order)
   adds its sum over types into entry 0, after the rows. */
#define LANES 8
#define DENSE(NAME, T_)                                                                         \
static void NAME##_term(T_* o, const T_* x, const T_* w, int64_t To, int64_t Tp, int64_t W,     \
                        int negate, int first) {                                               \
    for (int64_t i0 = 0; i0 < W; i0 += LANES) {                                                \
        T_ v[LANES];                                                                           \
        for (int k = 0; k < LANES; k++) v[k] = 0;                                              \
        for (int64_t j = 0; j < To; j++) {                                                     \
            const T_ xj = x[j];                                                                \
            const T_* wj = w + j * W + i0;                                                     \
            for (int k = 0; k < LANES; k++) v[k] = v[k] + wj[k] * xj;                          \
        }                                                                                      \
        if (negate)                                                                            \
            for (int k = 0; k < LANES; k++) v[k] = -v[k];                                      \
        int64_t n = Tp - i0 < LANES ? Tp - i0 : LANES;                                         \
        if (first)                                                                             \
            for (int64_t k = 0; k < n; k++) o[i0 + k] = v[k];                                  \
        else                                                                                   \
            for (int64_t k = 0; k < n; k++) o[i0 + k] = o[i0 + k] + v[k];                      \
    }                                                                                          \
}                                                                                              \
int NAME(T_* out0, const T_* xs, int64_t To, const T_* mats, int64_t Tp, int64_t W,              \
         const int64_t* own, const int64_t* other, const int64_t* mat, int64_t Z, int64_t M,     \
         int negate, int threads) {                                                            \
    T_* out = out0 + 1;                                                                        \
    const T_* src = xs + 1;                                                                    \
    int failed = 0;                                                                            \
    out0[0] = 0;                                                                               \
    _Pragma("omp parallel num_threads(threads)")                                                \
    {                                                                                          \
        int nt = omp_get_num_threads(), id = omp_get_thread_num();                             \
        int64_t r0 = M * id / nt, r1 = M * (id + 1) / nt, lo = 0, hi = Z;                      \
        T_* empty = (T_*)malloc(sizeof(T_) * (size_t)(To + 1));  /* xs[0] for every type */     \
        if (!empty) {                                                                          \
            _Pragma("omp atomic write")                                                         \
            failed = 1;                                                                        \
        } else {                                                                               \
            for (int64_t j = 0; j < To; j++) empty[j] = xs[0];                                 \
            while (lo < hi) {  /* the first terminal of a row from r0 */                        \
                int64_t mid = lo + (hi - lo) / 2;                                              \
                if (own[mid] < r0) lo = mid + 1; else hi = mid;                                \
            }                                                                                  \
            int64_t z = lo;                                                                    \
            for (int64_t r = r0; r < r1; r++) {                                                \
                T_* o = out + r * Tp;                                                          \
                if (z >= Z || own[z] != r) {                                                   \
                    for (int64_t i = 0; i < Tp; i++) o[i] = 0;                                 \
                    continue;                                                                  \
                }                                                                              \
                for (int first = 1; z < Z && own[z] == r; z++, first = 0)                      \
                    NAME##_term(o, other[z] < 0 ? empty : src + other[z] * To,                 \
                                mats + mat[z] * To * W, To, Tp, W, negate, first);             \
            }                                                                                  \
            free(empty);                                                                       \
        }                                                                                      \
    }                                                                                          \
    if (failed || Z == 0 || own[0] >= 0) return failed;                                        \
    /* the terminals on the own empty sequence: each one's values summed over types into 0 */  \
    T_* buf = (T_*)malloc(sizeof(T_) * (size_t)(Tp + To + 1));                                 \
    if (!buf) return 1;                                                                        \
    T_* empty = buf + Tp;                                                                      \
    for (int64_t j = 0; j < To; j++) empty[j] = xs[0];                                         \
    for (int64_t z = 0; z < Z && own[z] < 0; z++) {                                            \
        NAME##_term(buf, other[z] < 0 ? empty : src + other[z] * To, mats + mat[z] * To * W,    \
                    To, Tp, W, negate, 1);                                                     \
        T_ sum = 0;                                                                            \
        for (int64_t i = 0; i < Tp; i++) sum = sum + buf[i];                                   \
        out0[0] = out0[0] + sum;                                                               \
    }                                                                                          \
    free(buf);                                                                                 \
    return 0;                                                                                  \
}
DENSE(dense_f32, float)
DENSE(dense_f64, double)
"""
_I64, _PTR = ctypes.c_int64, ctypes.c_void_p
_SUFFIX = {torch.float32: "f32", torch.float64: "f64"}
_ARGS = [_PTR, _PTR, _I64, _PTR, _I64, _I64, _PTR, _PTR, _PTR, _I64, _I64, ctypes.c_int, ctypes.c_int]
LANES = 8  # the C loop's


def _library() -> ctypes.CDLL | None:
    """The loop's library (`native.library` keeps it), or None where it cannot be had."""
    return native.library("dense_loop", _SOURCE, {f"dense_{s}": _ARGS for s in _SUFFIX.values()})


def values(op, player: int, x_other: torch.Tensor, least: int | None = None,
           out: torch.Tensor | None = None) -> torch.Tensor | None:
    """Player `player`'s counterfactual values [B, S_p] against x_other [B_x, S_o] by the dense
    classes of `op` (a `PublicPayoffOperator` without cards or ranks), or None where the loop
    does not serve (`least`: `LOOP_ENTRIES` unless given).

    Example:
        >>> import torch, tensorcfr
        >>> cg = tensorcfr.compile("kuhn", form="public")
        >>> y = torch.ones(1, cg.treeplexes[1].num_sequences, dtype=torch.float64)
        >>> values(cg.operator(torch.float64), 0, y) is None  # Kuhn's 12 entries: below LOOP_ENTRIES
        True
        >>> g = values(cg.operator(torch.float64), 0, y, least=0)  # told to serve: torch's numbers
        >>> g is None or torch.allclose(g, cg.operator(torch.float64).cfv(0, y))
        True
    """
    sp, so = op.spaces[player], op.spaces[1 - player]
    dtype = x_other.dtype
    least = LOOP_ENTRIES if least is None else least
    if (sp.num_public_sequences * sp.types < least or dtype not in _SUFFIX  # (the cheap checks first)
            or op.cards is not None or op.ranked is not None
            or x_other.device.type != "cpu" or x_other.dim() != 2 or not x_other.is_contiguous()
            or x_other.shape[1] != so.num_sequences or not native.enabled() or native.traced()):
        return None  # (the loop reads the plan raw: its shape is checked, not trusted)
    plan = _plan(op, player, dtype)
    if plan is None or _library() is None:
        return None
    own, other, mat, mats = plan  # mats [B_w, K, T_o, W]
    batch = max(x_other.shape[0], mats.shape[0])
    if x_other.shape[0] not in (1, batch) or mats.shape[0] not in (1, batch):
        return None
    flat = values_array(out, x_other, batch, sp.num_sequences)  # every entry written by the loop
    fn, threads = getattr(_library(), f"dense_{_SUFFIX[dtype]}"), torch.get_num_threads()
    for b in range(batch):  # batch members, not nodes: a call each
        x = x_other[b if x_other.shape[0] > 1 else 0]
        w = mats[b if mats.shape[0] > 1 else 0]
        if fn(flat[b].data_ptr(), x.data_ptr(), so.types, w.data_ptr(), sp.types, w.shape[-1], own.data_ptr(),
              other.data_ptr(), mat.data_ptr(), len(own), sp.num_public_sequences, int(player == 1), threads):
            raise MemoryError("dense_loop: no memory for a thread's buffer")
    return flat


def _plan(op, player: int, dtype: torch.dtype):
    """(own rows [Z] ascending, the other's rows [Z] (-1: the empty sequence), matrix index
    [Z], the matrices [B_w, K, T_o, W] in dtype, rows padded to W), made once per player and
    dtype and kept on the operator; None where the operator has no terminals."""
    cache = op.__dict__.setdefault("_dense_loop", {})
    key = (player, dtype)
    if key not in cache:
        cache[key] = _make_plan(op, player, dtype)
    return cache[key]


def _make_plan(op, player: int, dtype: torch.dtype):
    other = 1 - player
    parts = list(zip(op.seq[player], op.seq[other]))  # per large class: (own rows, other's rows)
    big = len(parts)
    small = op.small_seq[0][0].numel() > 0
    if small:
        parts.append((op.small_seq[player], op.small_seq[other]))
    if not parts:
        return None
    # each side's rows, -1 where the terminal sits on the empty sequence (`_rows_of`'s positions)
    own = torch.cat([_with_empty(p) for p, _ in parts]).to("cpu", torch.int64)
    oth = torch.cat([_with_empty(q) for _, q in parts]).to("cpu", torch.int64)
    counts = [len(p[0]) for p, _ in parts]
    # each terminal's matrix: its class's for a large class, its own for a small class's
    mat = torch.cat([torch.full((counts[k],), k, dtype=torch.int64) for k in range(big)]
                    + ([big + torch.arange(counts[-1])] if small else []))
    mats = [w.unsqueeze(1) for w in op.weights] + ([op.small_weights] if small else [])  # each [B_w, ., T0, T1]
    width = max(m.shape[0] for m in mats)
    mats = torch.cat([m.expand(width, *m.shape[1:]) for m in mats], 1).to("cpu", dtype)  # [B_w, K, T0, T1]
    if player == 0:  # v[t0] = sum over t1 of W[t0, t1] x[t1]: the matrices read as [t1][t0]
        mats = mats.transpose(2, 3)
    # each row padded with zeros to whole vectors of the loop (`LANES`): [B_w, K, T_o, W]
    mats = torch.nn.functional.pad(mats, (0, -mats.shape[-1] % LANES))
    # the terminals by own row; a row's in the order torch adds them (class by class): stable
    order = torch.sort(own, stable=True)[1]
    return own[order].contiguous(), oth[order].contiguous(), mat[order].contiguous(), mats.contiguous()


def _with_empty(seq: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """[n] rows of the terminals (`PublicPayoffOperator.seq`'s pair), -1 for those on the
    empty sequence."""
    rows = seq[0].clone()
    rows[seq[1]] = -1
    return rows
