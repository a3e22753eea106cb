"""The training loop shared by the CLI and the Python API: iterate, evaluate, log.

Example:
    >>> import tensorcfr
    >>> s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> rows = tensorcfr.train(s, iterations=100, eval_every=50)
    >>> [r["iteration"] for r in rows]
    [50, 100]
"""

from __future__ import annotations

import os
import re
import time
from typing import Callable

import torch

from .solvers import Solver

# Scalar tags written at every evaluation: identical for every algorithm, so one
# TensorBoard view overlays them.
TAGS = {
    "exploitability/average": "exploitability",
    "exploitability/current": "exploitability_current",
    "nash_conv/average": "nash_conv",
    "nash_conv/current": "nash_conv_current",
    "value/average": "game_value",
    "value/current": "game_value_current",
    "best_response/p0": "best_response_p0",
    "best_response/p1": "best_response_p1",
    "regret/max_p0": "regret_max_p0",
    "regret/max_p1": "regret_max_p1",
    "regret/conditional_p0": "regret_conditional_p0",  # normal-form procedures only
    "regret/conditional_p1": "regret_conditional_p1",
    "perf/ms_per_iteration": "ms_per_iteration",
}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def evaluation_row(solver: Solver, member: int = 0, ev: dict | None = None) -> dict:
    """One row of figures for batch member `member` at the solver's current iteration
    (`ev`: the result of `solver.evaluate()`, when already computed)."""
    ev = ev or solver.evaluate()
    avg, cur = ev["average"].as_dict(member), ev["current"].as_dict(member)
    row = {"iteration": solver.iteration,
           "exploitability": avg["exploitability"], "exploitability_current": cur["exploitability"],
           "nash_conv": avg["nash_conv"], "nash_conv_current": cur["nash_conv"],
           "game_value": avg["game_value"], "game_value_current": cur["game_value"],
           "best_response_p0": avg["best_response"][0], "best_response_p1": avg["best_response"][1]}
    for k, v in solver.regret_summary().items():
        row[f"regret_{k}"] = float(v[min(member, v.shape[0] - 1)])
    return row


def run_name(game: str, algo: str, seed: int = 0) -> str:
    """`{game}__{algo}__{seed}__{time}` with characters unsafe in paths replaced."""
    safe = lambda s: re.sub(r"[^A-Za-z0-9_.+=,-]", "_", s)  # noqa: E731
    return f"{safe(game)}__{safe(algo)}__{seed}__{int(time.time())}"


def train(solver: Solver, iterations: int, eval_every: int | None = None,
          callback: Callable[[dict], None] | None = None, writer=None) -> list[dict]:
    """Run `iterations` more iterations, evaluating every `eval_every` and at the end.

    Each evaluation produces a row (see `evaluation_row`, plus `ms_per_iteration` and
    `seconds`, the solving time so far without evaluations) per batch member; `callback(row)`
    is called with member 0's row and `writer` (a `torch.utils.tensorboard.SummaryWriter`)
    receives the scalars of `TAGS` with the iteration as step (members after the first get a
    `/member{b}` suffix). Returns member 0's rows.
    """
    eval_every = eval_every or max(1, iterations // 10)
    rows, solving, done = [], 0.0, 0
    while done < iterations:
        n = min(eval_every - solver.iteration % eval_every, iterations - done)
        _sync(solver.device)
        t0 = time.perf_counter()
        solver.step(n)
        _sync(solver.device)
        dt = time.perf_counter() - t0
        solving += dt
        done += n
        if solver.iteration % eval_every and done < iterations:
            continue
        ev = solver.evaluate()
        for b in range(solver.batch_size):
            row = evaluation_row(solver, b, ev)
            row.update(ms_per_iteration=1000 * dt / n, seconds=solving)
            if writer is not None:
                suffix = f"/member{b}" if b else ""
                for tag, key in TAGS.items():
                    if key in row:  # FTRL keeps no regrets; only matrix games have conditional ones
                        writer.add_scalar(tag + suffix, row[key], solver.iteration)
            if b == 0:
                rows.append(row)
                if callback is not None:
                    callback(row)
    if writer is not None:
        writer.flush()
    return rows


def open_writer(logdir: str, game: str, algo: str, seed: int = 0):
    """A SummaryWriter on `logdir/{game}__{algo}__{seed}__{time}`."""
    from torch.utils.tensorboard import SummaryWriter  # imported late: it is slow to import

    return SummaryWriter(os.path.join(logdir, run_name(game, algo, seed)))
