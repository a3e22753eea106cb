"""Milliseconds per iteration: tensorcfr against OpenSpiel's C++ CFRSolver / CFRPlusSolver.

Runs every solver on the same game in this one process and prints ratios (absolute times on
shared CPUs are noise; ratios are not). Peers that are not installed are skipped, saying so
(`pip install -e ".[bench]"` installs OpenSpiel). On a machine with CUDA it adds GPU rows.

    python experiments/bench.py                       # Kuhn and Leduc, CFR and CFR+
    python experiments/bench.py --games leduc --iterations 500 --out experiments/results

Writes `bench.json` and `bench.md` into `--out`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

import torch

import tensorcfr

OPENSPIEL_NAMES = {"kuhn": "kuhn_poker", "leduc": "leduc_poker"}


def time_tensorcfr(game: str, algo: str, iterations: int, device: str, dtype: str) -> tuple[float, float]:
    """(ms per iteration, exploitability of the average after the run)."""
    solver = tensorcfr.Solver(game, algo, device=device, dtype=dtype)
    solver.step(10)  # warm-up: allocator, caches
    if solver.device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    solver.step(iterations)
    if solver.device.type == "cuda":
        torch.cuda.synchronize()
    ms = 1000 * (time.perf_counter() - t0) / iterations
    return ms, solver.evaluate()["average"].exploitability.item()


def time_openspiel(game: str, algo: str, iterations: int):
    try:
        import pyspiel
    except ImportError:
        return None
    g = pyspiel.load_game(OPENSPIEL_NAMES[game])
    solver = (pyspiel.CFRSolver if algo == "cfr" else pyspiel.CFRPlusSolver)(g)
    t0 = time.perf_counter()
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    ms = 1000 * (time.perf_counter() - t0) / iterations
    return ms, pyspiel.exploitability(g, solver.average_policy())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=["kuhn", "leduc"], choices=sorted(OPENSPIEL_NAMES))
    ap.add_argument("--algos", nargs="+", default=["cfr", "cfr+"], choices=["cfr", "cfr+"])
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
               f" ({torch.get_num_threads()} threads)"
               + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))
    rows = []
    for game in args.games:
        for algo in args.algos:
            peer = time_openspiel(game, algo, args.iterations)
            if peer is None:
                print("OpenSpiel (pyspiel) is not installed: skipping the peer; pip install -e '.[bench]'")
            for device in devices:
                for dtype in ("float64", "float32"):
                    ms, expl = time_tensorcfr(game, algo, args.iterations, device, dtype)
                    row = {"game": game, "algorithm": algo, "device": device, "dtype": dtype,
                           "iterations": args.iterations, "tensorcfr_ms": ms, "tensorcfr_exploitability": expl,
                           "openspiel_ms": peer[0] if peer else None,
                           "openspiel_exploitability": peer[1] if peer else None,
                           "speedup_vs_openspiel": peer[0] / ms if peer else None}
                    rows.append(row)
                    print(json.dumps(row))
    stamp = datetime.date.today().isoformat()
    lines = [f"Measured {stamp} on {machine}; {args.iterations} iterations each.", "",
             "| game | algorithm | device | dtype | tensorcfr ms/iter | OpenSpiel C++ ms/iter | speed-up |",
             "|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        peer = f"{r['openspiel_ms']:.3f}" if r["openspiel_ms"] else "not installed"
        ratio = f"{r['speedup_vs_openspiel']:.1f}x" if r["speedup_vs_openspiel"] else "-"
        lines.append(f"| {r['game']} | {r['algorithm']} | {r['device']} | {r['dtype']} | {r['tensorcfr_ms']:.3f} | {peer} | {ratio} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump({"date": stamp, "machine": machine, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
