"""Threads against the work: an iteration's time with one thread, with every core, and with the
choice of `threads="auto"`, on an idle machine and beside a process that keeps one core busy.

    python experiments/threads.py                 # writes the table into docs/results/benchmark.md
    python experiments/threads.py --games kuhn leduc --blocks 3

Each (game, setting) runs in a fresh process (torch's thread pool is set once per process): a
solver is built (`tensorcfr.Solver(game, "cfr+", device="cpu", threads=...)`), warmed up, then
timed in --blocks blocks; the median and the best block are reported. The competing process is a
Python busy loop started before the solver and stopped after it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_section import command, replace_section  # noqa: E402

GAMES = {"kuhn": 200, "leduc": 100, "liars_dice": 20, "dudo(4,1,2)": 20, "dudo(4,2,2)": 3}

CHILD = """
import json, statistics, sys, time, tensorcfr
spec, threads, n, blocks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = tensorcfr.Solver(spec, "cfr+", device="cpu", threads=threads if threads == "auto" else int(threads))
s.step(max(2, n // 10))
times = []
for _ in range(blocks):
    t = time.perf_counter(); s.step(n); times.append((time.perf_counter() - t) / n * 1e3)
print(json.dumps({"threads": s.threads, "median": statistics.median(times), "best": min(times)}))
"""


def measure(spec: str, threads: str, n: int, blocks: int, loaded: bool) -> dict:
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if loaded else None
    try:
        if hog:
            time.sleep(0.5)  # let it take its core
        out = subprocess.run([sys.executable, "-c", CHILD, spec, threads, str(n), str(blocks)], capture_output=True,
                             text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    finally:
        if hog:
            hog.kill()
            hog.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=list(GAMES))
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    rows = ["| game | machine | 1 thread (ms) | all cores (ms) | auto: threads | auto (ms) | auto / best |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for spec in args.games:
        n = GAMES.get(spec, 10)
        for loaded in (False, True):
            one = measure(spec, "1", n, args.blocks, loaded)
            every = measure(spec, str(cores), n, args.blocks, loaded)
            auto = measure(spec, "auto", n, args.blocks, loaded)
            best = min(one["median"], every["median"])
            rows.append(f"| {spec} | {'one core busy' if loaded else 'idle'} | {one['median']:.3f} | "
                        f"{every['median']:.3f} | {auto['threads']} | {auto['median']:.3f} | {auto['median'] / best:.2f} |")
            print(rows[-1], flush=True)
    body = (f"Made by `{command('threads.py', None)}` on {platform.machine()}, {cores} CPUs, torch {torch.__version__}, "
            f"{time.strftime('%Y-%m-%d')}. CFR+ iterations, median of {args.blocks} blocks; 'one core busy': a "
            "Python busy loop runs beside the solver.\n\n" + "\n".join(rows) + "\n")
    if not args.no_write:
        replace_section("threads", body)


if __name__ == "__main__":
    main()
