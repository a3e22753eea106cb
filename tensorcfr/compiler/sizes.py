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

import os
import math
import re

from tensorcfr.errors import TensorCFRError

FIXED_BYTES = 120_000_000
BYTES_KEPT, BYTES_DROPPED, BYTES_PER_NODE_WALK = 105, 40, 380
NODES_KEPT = 1 << 24  # the compiler keeps per-node arrays up to this many histories
MAX_LEVELS = 10_000  # deeper than any game here: a cycle or an unbounded game
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
    """A count for a message: 1.2e+07, or 10^304 where a float cannot hold it."""
    return f"{n:,}" if n < 10**7 else f"{float(n):.2g}" if n < 10**300 else f"about 10^{len(str(n)) - 1}"


def public_estimate_bytes(public_nodes: int, types: tuple[int, int], dtype_bytes: int = 4,
                          matrix_entries: int | None = None, factor_entries: int | None = None,
                          members: int = 1) -> int:
    """Peak bytes to compile a game in the public-tree form and solve it on the CPU with
    per-sequence arrays of `dtype_bytes` (4: float32, the least it can need): the larger of the
    walk's arrays (~300 B a public node, freed before the solve) and the solve's, which are the
    index tensors (~100 B a public node), the state (three arrays a player: strategy, average,
    regrets) and, during one player's update or an evaluation, about six arrays of that
    player's size (values, plans, the rule's temporaries). A player's arrays hold (public
    sequences ~ public nodes / 2) x types entries, and the payoff matrices `matrix_entries`
    (default T0 T1; 0 for a ranked deal, which has none). Dudo(5,2,2) at float32: 1.31 GB
    measured (Python and torch included), 1.09 GB estimated. A card game (`factor_entries`
    given: its showdown factors, T0 + T1 float64 a payoff class) keeps its matrices only up to
    `DENSE_ENTRIES`, and its factors always: the flop spot of the hold'em tutorial, solved by
    the CLI for 4 iterations at float32 with its evaluations, peaked at 7.5 GB; estimated 8.3 GB
    (6.5 GB before the factors' 1.8 GB were counted).

    `members`: a batch of that many games over one tree, each of these sizes. The index tensors
    and the walk's arrays are one member's (the walk takes a member at a time); the state, the
    factors and the kept matrices are every member's. 1,000 river spots on boards of their own
    (`experiments/holdem_batch.py --boards`): 3.7 GB estimated; 5.0 GB measured for the
    compile, 3 DCFR iterations and an evaluation at float32 (2026-11-27).

    Example:
        >>> one = public_estimate_bytes(100, (1000, 1000), matrix_entries=0, factor_entries=10_000)
        >>> public_estimate_bytes(100, (1000, 1000), matrix_entries=0, factor_entries=10_000, members=10) > 9 * (
        ...     one - FIXED_BYTES)
        True
    """
    entries = [(public_nodes // 2 + 1) * t for t in types]
    solve = 100 * public_nodes + members * dtype_bytes * (3 * sum(entries) + 6 * max(entries))
    matrices = types[0] * types[1] if matrix_entries is None else matrix_entries
    if factor_entries is not None:
        from tensorcfr.compiler.public import DENSE_ENTRIES  # (the compiler's rule; sizes.py is imported by it)

        solve += 8 * factor_entries * members
        matrices = matrices if members * matrices <= DENSE_ENTRIES else 0
    # the rows the walk evaluates a member's matrices on, and the other members' matrices kept
    # (float64 in the compiled game, and the solver's copy)
    return FIXED_BYTES + max(300 * public_nodes, solve) + 200 * matrices + 12 * matrices * (members - 1)


def public_limit(name: str, hint, histories: tuple[int, bool] | None, max_histories: int | None,
                 max_memory: int | str | None, members: int = 1) -> None:
    """Refuse a game whose public-tree form passes a limit, from its closed-form sizes `hint`
    ((public nodes, types[, payoff-matrix entries[, factor entries]]), or None: not known, not
    checked); `members`: a batch of that many such games, `name` naming it."""
    memory = parse_bytes(max_memory)
    budget = max(available_memory() - MARGIN, 0) if memory == "auto" else memory
    if histories is not None and max_histories is not None and histories[0] > max_histories:
        raise TensorCFRError(f"{name}: {approx(histories[0])} histories, more than --max-histories {max_histories:,}")
    if hint is None or budget is None:
        return
    need = public_estimate_bytes(hint[0], hint[1], matrix_entries=hint[2] if len(hint) > 2 else None,
                                 factor_entries=hint[3] if len(hint) > 3 else None, members=members)
    if need > budget:
        source = "available" if memory == "auto" else "allowed by --max-memory"
        size = "" if histories is None else f"{'' if histories[1] else 'at least '}{approx(histories[0])} histories; "
        each = " a member" if members > 1 else ""
        raise TensorCFRError(f"{name}: {size}its public-tree form ({approx(hint[0])} public nodes, {hint[1][0]} x "
                             f"{hint[1][1]} types{each}) needs {_gb(need)} to compile and solve, {_gb(budget)} {source}; "
                             f"a smaller {'batch' if members > 1 else 'game'}, or --max-memory if the estimate is too "
                             "cautious")


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
    return TensorCFRError(f"{name}: more than {limit:,} histories, which is past --max-histories or what "
                          f"--max-memory allows ({_gb(estimate_bytes(limit, method))}); a smaller game, or a "
                          "larger limit")


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n < 1e18 else f"about 10^{len(str(int(n))) - 10} GB"


# per-sequence [B, S_p] arrays alive at once in a solver, 3 of its iterations and its evaluation:
# about 8 measured on an H100 (Dudo(5,2,2) public form: 1.92 GB at float64, 8.0 arrays)
STATE_ARRAYS = 10


def device_estimate_bytes(cg, batch: int, dtype) -> dict[str, int]:
    """Bytes a solver of the compiled game `cg` needs on its device, before any is allocated:
    `game` (the compiled tensors, moved there, the chance tree of sampling included), `payoff`
    (the operator in `dtype`: generic, each player's CSR values and column indices; public-tree
    form, the class matrices and the small classes' per-terminal ones), `state` (`STATE_ARRAYS`
    per-sequence arrays per player: the iteration state, its temporaries and the evaluation's)
    and their `total`. Not counted: what the CUDA libraries take once a process and stream (cuBLAS's
    workspace, 32 MiB a stream on Hopper). On games it was not fitted on, on an H100
    (`experiments/gpu_checks.py`, 2026-11-25), the estimate was 1.09 to 4.38 times the peak of a
    solver's build, 3 iterations and an evaluation, and never below it.

    Example:
        >>> import torch, tensorcfr
        >>> need = device_estimate_bytes(tensorcfr.compile("kuhn"), 1, torch.float64)
        >>> need["total"] == need["game"] + need["payoff"] + need["state"]
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
    return {"game": game, "payoff": payoff, "state": state, "total": game + payoff + state}


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
