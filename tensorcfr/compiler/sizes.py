"""Sizes known before anything large is allocated: the history count (a game's closed form, or
the compiler's running count), the bytes that compiling and solving need, and the limits a
user sets (`--max-histories`, `--max-memory`).

The estimate, measured on this project's 2-core machine as the peak resident memory of
compiling, building a CPU solver, 3 iterations and one evaluation, above the process's
baseline, with the level-by-level compiler:

    bytes = 120 MB + 105 B x (histories up to 2^24) + 40 B x (histories past 2^24)

(past 2^24 histories the per-node arrays are not kept). Measured against it: OCP(1000)
0.89 GB (estimate 1.06, +19%), Dudo(4,2,2) 1.37 GB (1.50, +9%), Dudo(5,1,2) 0.46 to 0.52 GB
(0.64, +23 to +39%), and Dudo(5,2,2) 18.9 GB (20.1, +6%; the whole process's peak, as an
earlier session measured it): a cautious upper bound on these. Domino's walk also keeps a
trie of event histories, which the formula misses: Domino(3,3) 0.77 GB (0.46, -40%). The
per-node walk needs about 380 B a history (OCP(300): 807k histories).

Example:
    >>> estimate_bytes(13_107_101) // 10**6  # Dudo(4,2,2)
    1496
    >>> parse_bytes("16G")
    17179869184
"""

from __future__ import annotations

import math
import os
import re

from tensorcfr.errors import TensorCFRError

FIXED_BYTES = 120_000_000
BYTES_KEPT, BYTES_DROPPED, BYTES_PER_NODE_WALK = 105, 40, 380
NODES_KEPT = 1 << 24  # the compiler keeps per-node arrays up to this many histories
MAX_LEVELS = 10_000  # deeper than any game here: a cycle or an unbounded game
# torch.compile's inductor, loaded and run for the public form's fused kernels at a solver's first
# update: about 120 MB of the process (Dudo(6,1,2), its calls' peaks traced, 2026-11-27)
FUSED_BYTES = 128 << 20
MARGIN = 256 << 20  # "auto" allows the available memory less this (the estimate is cautious itself)


def estimate_bytes(histories: int, method: str = "vectorized") -> int:
    """Peak bytes to compile a game of `histories` histories and solve it on the CPU (see the
    module docstring for the formula and how well it holds)."""
    if method == "per-node":
        return FIXED_BYTES + BYTES_PER_NODE_WALK * histories
    return FIXED_BYTES + BYTES_KEPT * min(histories, NODES_KEPT) + BYTES_DROPPED * max(histories - NODES_KEPT, 0)


def histories_within(budget: int, method: str = "vectorized") -> int:
    """The most histories whose estimate fits in `budget` bytes (the inverse of `estimate_bytes`)."""
    room = max(budget - FIXED_BYTES, 0)
    if method == "per-node":
        return room // BYTES_PER_NODE_WALK
    if room <= BYTES_KEPT * NODES_KEPT:
        return room // BYTES_KEPT
    return NODES_KEPT + (room - BYTES_KEPT * NODES_KEPT) // BYTES_DROPPED


def available_memory() -> int:
    """Bytes of host memory available now (Linux's MemAvailable; else physical memory)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_bytes(text: str | int | None) -> int | str | None:
    """`"auto"`, `"none"` / None, an integer, or a number with K, M, G or T (powers of 1024)."""
    if text is None:
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise TensorCFRError(f"--max-memory: a number of bytes must be >= 0, got {text}")
        return text
    s = str(text).strip().upper()
    if s in ("AUTO", "NONE"):
        return s.lower() if s == "AUTO" else None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)I?B?", s)
    if not m:
        raise TensorCFRError(f"--max-memory: expected BYTES (e.g. 16G, 512M), auto or none, got {text!r}")
    value = float(m.group(1)) * _UNITS[m.group(2)]
    if not math.isfinite(value):  # 400 nines: a float's inf, which int() cannot take
        raise TensorCFRError(f"--max-memory: {text!r} is past any memory")
    return int(value)


def approx(n: int) -> str:
    """A count for a message: 1.2e+07, or 10^304 where a float cannot hold it (read off its
    logarithm: Python refuses to print an int of more than 4,300 digits).

    Example:
        >>> approx(12), approx(12_345_678), approx(10**5000)
        ('12', '1.2e+07', 'about 10^5000')
    """
    return f"{n:,}" if n < 10**7 else f"{float(n):.2g}" if n < 10**300 else f"about 10^{_exponent(n)}"


def _exponent(n: int) -> int:
    """The power of ten of a positive int of any size, floor(log10(n)), without printing it."""
    e = int(math.log10(n))
    return e - 1 if 10**e > n else e + 1 if 10**(e + 1) <= n else e


# the public form's temporaries (the iteration's workspace, the rules' and an evaluation's arrays)
# and the holes they leave in a kept heap, in arrays of the larger player's size in the solve's
# dtype (fitted at each dtype, the same at both). The same work peaks differently from one process
# to the next as the holes fall. Fitted on 29 rows after a compile came to hand its freed heap
# back and an evaluation to work in the iteration's arrays (experiments/memory_estimate.py, 3
# processes a row, 2 cores, 2026-11-29): 5 arrays kept the estimate 1.06 times the highest peak
# of 300 river spots on boards of their own at float32 (1,067 to 1,160 MB), and 1,000 such spots,
# measured after, peaked at 3,414 to 3,726 MB against 3,644 estimated: 6 arrays, 1.06 times it.
# 8 before, when Dudo(5,2,2) at float32 peaked at up to 1,176 MB (873 to 889 now)
TEMPORARY_ARRAYS = 6
# a card game's walk: the bytes an entry of the dense payoff matrices it keeps, and a pair of types
# of the block of classes whose utilities it evaluates at once where it makes them from the game's
# utilities (`compiler/public.py`'s `UTILITY_ENTRIES`). Measured, the compile's peak: the
# full-range river spot, its 25.7 million entries made from its factors, 444 MB; a river spot of
# 3.6 million entries (129 x 1,081 hands), made from utilities 2.1 million pairs at a time, 279 MB
# (223 MB of them numpy's, traced; 2026-11-29)
CARD_WALK_BYTES = 16
CARD_UTILITY_BYTES = 100
# a batch member's walk of its deal, which a batch compiled in one process keeps up to
# `compiler.public.KEEP_WALK_BYTES` in all: a pair of types of its [T0, T1] tables (a river spot's
# walk, 14.6 MB for 1,081 x 1,081 hands: 13.1 B a pair)
CARD_DEAL_BYTES = 16


def public_estimate_bytes(public_nodes: int, types: tuple[int, int], dtype_bytes: int = 8,
                          matrix_entries: int | None = None, factor_entries: int | None = None,
                          members: int = 1, board_rows: int | None = None) -> int:
    """Peak bytes to compile a game in the public-tree form and solve it on the CPU with
    per-sequence arrays of `dtype_bytes` (8: float64, the default), counted from the arrays
    the code holds, the larger of:

    - the walk's: ~300 B a public node, and 120 B an entry of the payoff matrices it evaluates
      (`matrix_entries`, default T0 T1; 0 for a ranked deal, which has none); in a card game,
      `CARD_WALK_BYTES` an entry of the dense matrices it keeps (up to `DENSE_ENTRIES`) and,
      where it makes them from the game's utilities (up to `CHECKED_ENTRIES` a member),
      `CARD_UTILITY_BYTES` a pair of types of a block of classes (`UTILITY_ENTRIES`); in a
      batch, the members' walks a compile keeps (`CARD_DEAL_BYTES` a pair of types, up to
      `KEEP_WALK_BYTES`);
    - the solve's: the index tensors (~100 B a public node); per member, the state (strategy,
      average and regrets, three arrays a player of (public sequences ~ public nodes / 2) x
      types entries); the temporaries of the build, an update or an evaluation (values, plans,
      normalising sums, the rule's) with the holes they leave in the heap a solver keeps
      (`memory.keep_freed_memory`), `TEMPORARY_ARRAYS` arrays of the larger player's size in
      the solve's dtype; the kept payoff matrices, float64 in the compiled game and a copy in
      the solver's dtype.

    The solve's fixed part: torch.compile's inductor (`FUSED_BYTES`) where the fused kernels
    serve (one game, a player's arrays from `FUSE_ENTRIES` entries), besides the process's
    (`FIXED_BYTES`). A card game (`factor_entries` given) keeps its matrices only up to
    `DENSE_ENTRIES` (all members together); where the compiled card loop cannot be had
    (`native.available`), torch's kernel call holds a board's terminal rows (`board_rows`, every
    member's) in and out, float64 rows of 2 T entries; with few types
    (`DENSE_KERNEL_PAIRS`), a stacked call of `STACK_ENTRIES` entries in and out; a batch's
    payoff extent, `TOTALS_ENTRIES` entries in some 20 float64 arrays while the solver is built.

    `members`: a batch of that many games over one tree, each of these sizes (types: the
    batch's, the union of its members'). `experiments/memory_estimate.py` measures the
    estimate against the peak (the guide's memory section has its table).

    Example (the hold'em turn spot of the docs, `holdem_turn(board=Ks7d2c9h, ...)`, by its
    `public_size_hint` but the board's rows, which count only without the compiled card loop;
    alone at float32 and float64, and 10 such spots at float32):
        >>> turn = dict(matrix_entries=15_283_876_608, factor_entries=27_099_072)
        >>> [round(public_estimate_bytes(41_547, (1128, 1128), e, **turn) / 1e9, 2) for e in (4, 8)]
        [1.38, 2.51]
        >>> round(public_estimate_bytes(41_547, (1128, 1128), 4, **turn, members=10) / 1e9, 1)
        11.5
    """
    from tensorcfr.spaces.fused import FUSE_ENTRIES  # (where the fused kernels serve: one member, large arrays)

    entries = [(public_nodes // 2 + 1) * t for t in types]
    solve = 100 * public_nodes + members * dtype_bytes * (3 * sum(entries) + TEMPORARY_ARRAYS * max(entries))
    matrices = types[0] * types[1] if matrix_entries is None else matrix_entries
    walk = 300 * public_nodes + 120 * matrices
    if factor_entries is not None:
        # (the compiler's and the operators' rules; sizes.py is imported by the compiler)
        from tensorcfr.compiler.public import CHECKED_ENTRIES, DENSE_ENTRIES, KEEP_WALK_BYTES, UTILITY_ENTRIES
        from tensorcfr.operators.cards import DENSE_KERNEL_PAIRS, TOTALS_ENTRIES
        from tensorcfr.operators.public import STACK_ENTRIES

        block = min(matrices, max(UTILITY_ENTRIES, types[0] * types[1])) if matrices <= CHECKED_ENTRIES else 0
        matrices = matrices if members * matrices <= DENSE_ENTRIES else 0
        walk = 300 * public_nodes + CARD_UTILITY_BYTES * block + CARD_WALK_BYTES * matrices
        if members > 1:  # the members' walks a compile in one process keeps
            walk += min(members * CARD_DEAL_BYTES * types[0] * types[1], KEEP_WALK_BYTES)
        from tensorcfr.spaces import native

        if not native.available():  # (the compiled card loop reads the rows where they lie)
            solve += 2 * 8 * members * (board_rows or 0) * 2 * max(types)
        if types[0] * types[1] <= DENSE_KERNEL_PAIRS:
            solve += 2 * dtype_bytes * STACK_ENTRIES
        if members > 1:
            solve += 20 * 8 * TOTALS_ENTRIES
    solve += (8 + dtype_bytes) * matrices * members
    fused = FUSED_BYTES if members == 1 and max(entries) >= FUSE_ENTRIES else 0
    return FIXED_BYTES + max(walk, fused + solve)


def public_need(hint: tuple, members: int = 1, dtype_bytes: int = 8) -> int:
    """`public_estimate_bytes` from a game's `public_size_hint()` ((public nodes, types[,
    payoff-matrix entries[, factor entries[, a board's terminal rows]]])) for a batch of
    `members` such games."""
    return public_estimate_bytes(hint[0], hint[1], dtype_bytes, matrix_entries=hint[2] if len(hint) > 2 else None,
                                 factor_entries=hint[3] if len(hint) > 3 else None, members=members,
                                 board_rows=hint[4] if len(hint) > 4 else None)


def public_limit(name: str, hint, histories: tuple[int, bool] | None, max_histories: int | None,
                 max_memory: int | str | None, members: int = 1, dtype_bytes: int = 8) -> None:
    """Refuse a game whose public-tree form passes a limit, from its closed-form sizes `hint`
    ((public nodes, types[, payoff-matrix entries[, factor entries]]), or None: not known, not
    checked); `members`: a batch of that many such games, `name` naming it; `dtype_bytes`: the
    solve's numbers."""
    memory = parse_bytes(max_memory)
    budget = max(available_memory() - MARGIN, 0) if memory == "auto" else memory
    if histories is not None and max_histories is not None and histories[0] > max_histories:
        raise TensorCFRError(f"{name}: {'' if histories[1] else 'at least '}{approx(histories[0])} histories, "
                             f"more than --max-histories {max_histories:,}")
    if hint is None or budget is None:
        return
    need = public_need(hint, members, dtype_bytes)
    if need > budget:
        source = "available" if memory == "auto" else "allowed by --max-memory"
        size = "" if histories is None else f"{'' if histories[1] else 'at least '}{approx(histories[0])} histories; "
        each = " a member" if members > 1 else ""
        # what would fit instead: the same game at float32 where a float64 solve does not
        single = public_need(hint, members, 4) if dtype_bytes > 4 else None
        instead = f"--dtype float32 ({_gb(single)}), " if single is not None and single <= budget else ""
        raise TensorCFRError(f"{name}: {size}its public-tree form ({approx(hint[0])} public nodes, {hint[1][0]} x "
                             f"{hint[1][1]} types{each}) needs {_gb(need)} to compile and solve, {_gb(budget)} {source}; "
                             f"{instead}a smaller {'batch' if members > 1 else 'game'}, or --max-memory if the estimate "
                             "is too cautious")


def walk_limit(name: str, hint: tuple[int, bool] | None, method: str, max_histories: int | None,
               max_memory: int | str | None) -> int | None:
    """Refuse a game whose known size passes a limit (one line: the game, its size, the bytes
    needed and available, what would help); otherwise the most histories the compiler may
    walk before it stops (None: no bound)."""
    memory = parse_bytes(max_memory)
    budget = max(available_memory() - MARGIN, 0) if memory == "auto" else memory
    source = "available" if memory == "auto" else "allowed by --max-memory"
    if hint is not None:
        count, exact = hint
        size = f"{'' if exact else 'at least '}{approx(count)} histories"
        if max_histories is not None and count > max_histories:
            raise TensorCFRError(f"{name}: {size}, more than --max-histories {max_histories:,}; "
                                 f"it would need {_gb(estimate_bytes(count, method))} to compile and solve")
        if budget is not None and estimate_bytes(count, method) > budget:
            raise TensorCFRError(f"{name}: {size} need {_gb(estimate_bytes(count, method))} to compile and "
                                 f"solve, {_gb(budget)} {source}; a smaller game, or --max-memory if the "
                                 "estimate is too cautious")
    limits = [x for x in (max_histories, None if budget is None else histories_within(budget, method)) if x is not None]
    return min(limits) if limits else None  # 0 (a budget below the fixed cost) refuses at the first history


def too_deep(name: str) -> TensorCFRError:
    """The error of a walk deeper than `MAX_LEVELS`."""
    return TensorCFRError(f"{name}: more than {MAX_LEVELS:,} levels deep: a cycle, or a game without an end?")


def too_many(name: str, limit: int, method: str) -> TensorCFRError:
    """The error of a walk that passed `limit` histories."""
    if limit == 0:  # (a --max-memory below the fixed part: "more than 0 histories" would say nothing)
        return TensorCFRError(f"{name}: a solve takes {_gb(estimate_bytes(1, method))} from its first history, more "
                              "than --max-memory allows; a larger limit")
    return TensorCFRError(f"{name}: more than {limit:,} histories, which is past --max-histories or what "
                          f"--max-memory allows ({_gb(estimate_bytes(limit, method))}); a smaller game, or a "
                          "larger limit")


def _gb(n: int) -> str:
    if n < 1e8:  # (a limit of 50 MB or 1 KB shown as 0.0 GB would say nothing)
        return f"{n / 1e6:.3g} MB" if n >= 1e5 else f"{int(n):,} bytes"
    return f"{n / 1e9:.1f} GB" if n < 1e18 else f"about 10^{_exponent(int(n)) - 9} GB"


# per-sequence [B, S_p] arrays alive at once in a solver, 3 of its iterations and its evaluation:
# about 8 measured on an H100 (Dudo(5,2,2) public form: 1.92 GB at float64, 8.0 arrays)
STATE_ARRAYS = 10


def device_estimate_bytes(cg, batch: int, dtype) -> dict[str, int]:
    """Bytes a solver of the compiled game `cg` needs on its device, before any is allocated:
    `game` (the compiled tensors, moved there, the chance tree of sampling included), `payoff`
    (the operator in `dtype`: generic, each player's CSR values and column indices; public-tree
    form, the class matrices and the small classes' per-terminal ones), `state` (`STATE_ARRAYS`
    per-sequence arrays per player: the iteration state, its temporaries and the evaluation's),
    `paths` (`DecisionSpace.path_table_bytes`: a launch-bound pass's tables of paths)
    and their `total`. Not counted: what the CUDA libraries take once a process and stream (cuBLAS's
    workspace, 32 MiB a stream on Hopper). On games it was not fitted on, on an H100
    (`experiments/gpu_checks.py`, 2026-11-25), the estimate was 1.09 to 4.38 times the peak of a
    solver's build, 3 iterations and an evaluation, and never below it.

    Example:
        >>> import torch, tensorcfr
        >>> need = device_estimate_bytes(tensorcfr.compile("kuhn"), 1, torch.float64)
        >>> need["total"] == need["game"] + need["payoff"] + need["state"] + need["paths"]
        True
    """
    import torch

    e = torch.finfo(dtype).bits // 8
    tensors = [t for tp in cg.treeplexes for t in tp.tensors().values()]
    tensors += [v for v in vars(cg).values() if isinstance(v, torch.Tensor)]
    game = sum(t.numel() * t.element_size() for t in tensors)
    chance = getattr(cg, "chance", None)
    if chance is not None:  # Monte-Carlo sampling's chance tree (`compile(chance=True)`), moved too
        game += sum(t.numel() * t.element_size() for t in vars(chance).values())
    payoff = cg.payoff_bytes(dtype)
    sequences = sum(tp.num_sequences for tp in cg.treeplexes)
    state = STATE_ARRAYS * batch * sequences * e
    # the path tables a launch-bound GPU pass builds and keeps, with a pass's gathers: Liar's Dice
    # in the generic form, which they served under the bound of the time, 12.0 MB at float64 for
    # both players; without them the estimate was 0.6 MB below the peak at float64 and 0.8 MB at
    # float32 on an H200 (2026-11-28)
    paths = sum(tp.path_table_bytes(batch, e) for tp in cg.treeplexes)
    return {"game": game, "payoff": payoff, "state": state, "paths": paths, "total": game + payoff + state + paths}


def check_device_memory(cg, batch: int, dtype, device) -> int:
    """On CUDA, refuse a solver that would not fit in the device's free memory before anything
    is moved there: the error names the bytes needed (`device_estimate_bytes`) and free, and
    what helps; returns the bytes needed. Nothing is checked on the CPU (the compiler's limits
    did that; 0 is returned)."""
    import torch

    if device.type != "cuda":
        return 0
    free, total = torch.cuda.mem_get_info(device)
    need = device_estimate_bytes(cg, batch, dtype)
    if need["total"] > free:
        raise TensorCFRError(
            f"{cg.name}: a solver needs about {_gb(need['total'])} on {device} (game {_gb(need['game'])}, payoff "
            f"{_gb(need['payoff'])}, iteration state {_gb(need['state'])}), {_gb(free)} free of {_gb(total)}; "
            "a smaller game or batch, " + ("" if dtype == torch.float32 else "--dtype float32, ")
            + cg.smaller_form + "or --device cpu")
    return need["total"]
