"""A batch of hold'em river spots in one run against the same spots one after the other: the
way value-network training data is made (many ranges and pots on one board).

    python experiments/holdem_batch.py                       # 8 spots, 180 DCFR iterations
    python experiments/holdem_batch.py --spots 32 --iterations 100 --no-readme
    python experiments/holdem_batch.py --boards              # each spot on a random board of its own

The spots share the board and the bets of the river spot of experiments/holdem.py; each has its
own pot (10 to 20, the stack 10 pots deep, so that the bet tree is the same) and its own ranges for
both players: every one of the 169 hand
classes with a weight drawn uniformly from (0.05, 1] (seeded), so that all spots deal the same
1,081 hands, each with its own probability. The batch is compiled once (`tensorcfr.compile`
of the list of specs) and solved by one `Solver`; each spot is then compiled and solved alone
with the same settings. The solves take turns, `--repeats` times (a fresh solver each, the
batch and then every spot), and the medians are reported: on a 2-core machine a process's
speed swings from one minute to the next (one batch took 0.44 and 0.56 s in two runs minutes
apart), which one solve of each would read as a difference between them. Reported: compile and
solving seconds of both, the process's peak memory after the batch's first solve, and each
spot's exploitability in percent of its pot, which must be the same in the batch and alone.
With --boards each spot gets a random board of its own (seeded): the batch then deals the union
of the spots' hands and each member sorts them by its own board.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
import torch

import tensorcfr
from tensorcfr import games
from tensorcfr.cli.strategy import grid_label
from tensorcfr.games.cards import RANKS, SUITS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from holdem import peak_mb  # noqa: E402
from readme_section import command, replace_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = ("holdem_river(board={board}, pot={pot:g}, stack={stack:g}, bets=(0.5,1,allin), cap=2, range0='{r0}', "
        "range1='{r1}'{deck})")


def random_range(rng: np.random.Generator, ranks: str = RANKS, suits: str = SUITS) -> str:
    """A weight in (0.05, 1] for each hand class of the 13 x 13 grid the deck has (one suit: the
    suited ones only)."""
    classes = [c for c in (grid_label(r, k) for r in range(13) for k in range(13))
               if c[0] in ranks and c[1] in ranks and (len(suits) > 1 or c.endswith("s"))]
    return ",".join(f"{c}:{w:.3f}" for c, w in zip(classes, rng.uniform(0.05, 1.0, len(classes))))


def spots(n: int, seed: int, board: str | None = "Ks7d2c9h4s", ranks: str = RANKS, suits: str = SUITS) -> list[str]:
    """n river spots on `board` (None: each on a random board of its own), pots 10 to 20 with
    stacks 10 pots deep (one bet tree: the bets are fractions of the pot, and a stack as deep in
    pots makes the same all-ins), each player's range random over every hand class."""
    rng = np.random.default_rng(seed)
    deck = "" if (ranks, suits) == (RANKS, SUITS) else f", ranks={ranks}, suits={suits}"
    cards = [r + s for r in ranks for s in suits]
    boards = [board or "".join(rng.choice(cards, 5, replace=False)) for _ in range(n)]
    pots = [10 + 10 * i / max(n - 1, 1) for i in range(n)]
    return [BASE.format(board=boards[i], pot=pots[i], stack=10 * pots[i], r0=random_range(rng, ranks, suits),
                        r1=random_range(rng, ranks, suits), deck=deck) for i in range(n)]


def run(game, algo: str, iterations: int, dtype, threads: int, device: str = "cpu",
        built: list | None = None) -> tuple[float, list[float]]:
    """(solving seconds, exploitability of each member's average strategy in chips), on `threads`
    threads (named: the library's choice follows the machine's load, which a run changes); the
    seconds the solver took to build are appended to `built`."""
    t0 = time.perf_counter()
    s = tensorcfr.Solver(game, algo, dtype=dtype, threads=threads, device=device)
    if s.device.type == "cuda":
        torch.cuda.synchronize()
    if built is not None:
        built.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    s.step(iterations)
    if s.device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    return seconds, [float(x) for x in s.evaluate()["average"].exploitability]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spots", type=int, default=8)
    ap.add_argument("--iterations", type=int, default=180)
    ap.add_argument("--algo", default="dcfr")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--board", default="Ks7d2c9h4s")
    ap.add_argument("--boards", action="store_true", help="each spot on a random board of its own (not --board)")
    ap.add_argument("--ranks", default=RANKS, help="a smaller deck's ranks (a test's)")
    ap.add_argument("--suits", default=SUITS)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="cpu", help="cpu or cuda")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--batch-only", action="store_true", help="time the batch alone, not the spots one by one")
    ap.add_argument("--repeats", type=int, default=5,
                    help="solves of the batch and of the spots, taking turns (medians reported)")
    ap.add_argument("--no-readme", action="store_true")
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype)
    specs = spots(a.spots, a.seed, None if a.boards else a.board, a.ranks, a.suits)
    pots = [games.make(s).pot for s in specs]
    t0 = time.perf_counter()
    cg = tensorcfr.compile(specs, form="public")
    compile_batch = time.perf_counter() - t0
    print(f"batch of {a.spots}: compiled in {compile_batch:.1f} s (at {time.time():.1f})", flush=True)
    built = []
    started = time.perf_counter()
    batch_s, batch_x = run(cg, a.algo, a.iterations, dtype, a.threads, a.device, built)
    end_to_end = compile_batch + time.perf_counter() - started  # the build, iterations and evaluation too
    peak = peak_mb()
    pct = [100 * x / p for x, p in zip(batch_x, pots)]
    gpu_peak = torch.cuda.max_memory_allocated() / 2**20 if a.device.startswith("cuda") else None
    print(f"batch of {a.spots}: compile {compile_batch:.1f} s, solver built in {built[0]:.1f} s, "
          f"{a.iterations} iterations {batch_s:.2f} s, {end_to_end:.1f} s from the specs to the evaluated strategies "
          f"(ended at {time.time():.1f}), peak {peak:,.0f} MB" + (f", GPU peak {gpu_peak:,.0f} MB" if gpu_peak else "")
          + f"; exploitability {min(pct):.3f}% to {max(pct):.3f}% of the pot", flush=True)
    if a.batch_only:
        return 0
    compile_solo, solos = 0.0, []
    for spec in specs:  # compiled once, kept for the repeats
        t0 = time.perf_counter()
        solos.append(tensorcfr.compile(spec, form="public"))
        compile_solo += time.perf_counter() - t0
    batch_times, solo_times = [batch_s], []
    for r in range(max(1, a.repeats)):  # taking turns: the batch, then the spots one after the other
        if r:
            batch_times.append(run(cg, a.algo, a.iterations, dtype, a.threads, a.device)[0])
        solo_s, solo_x = 0.0, []
        for one in solos:
            s, x = run(one, a.algo, a.iterations, dtype, a.threads, a.device)
            solo_s += s
            solo_x += x
        solo_times.append(solo_s)
        print(f"round {r + 1}: batch {batch_times[-1]:.2f} s, one by one {solo_s:.2f} s", flush=True)
    batch_s, solo_s = float(np.median(batch_times)), float(np.median(solo_times))
    # each round's batch over its spots: two solves minutes apart, which the machine's swings
    # of speed touch less than they touch the medians of each apart
    ratios = [b / s for b, s in zip(batch_times, solo_times)]
    print(f"one by one: compile {compile_solo:.1f} s, iterations {solo_s:.2f} s (median of {len(solo_times)})",
          flush=True)
    pct_solo = [100 * x / p for x, p in zip(solo_x, pots)]
    worst = max(abs(x - y) for x, y in zip(pct, pct_solo))
    sizes = cg.sizes()
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "torch": torch.__version__, "threads": a.threads, "dtype": a.dtype, "device": a.device,
            "gpu_peak_mb": gpu_peak, "command": command("holdem_batch.py", argv),
            "spots": a.spots, "iterations": a.iterations, "algorithm": a.algo, "compile_batch_s": compile_batch,
            "build_batch_s": built[0], "end_to_end_batch_s": end_to_end,
            "solve_batch_s": batch_s, "compile_solo_s": compile_solo, "solve_solo_s": solo_s, "peak_mb": peak,
            "solve_batch_runs_s": batch_times, "solve_solo_runs_s": solo_times, "ratio_runs": ratios,
            "percent_pot": pct, "percent_pot_solo": pct_solo, "hands": sizes["types"], "classes": sizes["payoff_classes"],
            "boards": [games.make(s).name.split("'")[1] for s in specs] if a.boards else [a.board]}
    body = "\n".join([
        f"Made by `{meta['command']}` on {meta['machine']} ({a.threads} threads), torch {meta['torch']}, {a.dtype}, "
        f"{meta['date']}: {a.spots} river spots "
        + (f"on random boards of their own (the batch deals the union of their hands, {sizes['types'][0]:,} x "
           f"{sizes['types'][1]:,}" if a.boards else
           f"on {a.board} ({sizes['types'][0]:,} x {sizes['types'][1]:,} hands")
        + f", {sizes['payoff_classes']} payoff classes each), pots 10 to 20 with stacks 10 pots deep, random ranges "
        f"over every hand; "
        f"{a.iterations} {a.algo} iterations each; solves medians of {len(solo_times)}, the batch and the spots "
        f"taking turns.", "",
        "| | compile | solve | seconds a spot (solve) |", "|---|---:|---:|---:|",
        f"| one batch | {compile_batch:.1f} s | {batch_s:.2f} s | {batch_s / a.spots:.3f} |",
        f"| one spot after another | {compile_solo:.1f} s | {solo_s:.2f} s | {solo_s / a.spots:.3f} |", "",
        f"Round by round the batch took {min(ratios):.2f} to {max(ratios):.2f} times the spots' time one by one "
        f"(median {float(np.median(ratios)):.2f}; rounds: " + ", ".join(f"{b:.2f} against {s:.2f} s" for b, s in
                                                                        zip(batch_times, solo_times)) + ").", "",
        f"Exploitability after the run: {min(pct):.3f}% to {max(pct):.3f}% of the pot, "
        + ("the same in the batch as alone (to the last bit)" if worst == 0 else
           f"within {worst:.1e} points of the pot of each spot alone (their sums round otherwise, and the "
           f"iterations grow that)")
        + f". Peak memory of the process after the batch: {peak:,.0f} MB."]) + "\n"
    os.makedirs(a.out, exist_ok=True)
    section = "holdem-boards" if a.boards else "holdem-batch"
    with open(os.path.join(a.out, f"{section}.json"), "w") as f:
        json.dump(meta, f, indent=1)
    if not a.no_readme:
        replace_section(section, body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
