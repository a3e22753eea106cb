"""The GPU figures that are not a per-game speed row (those are `bench.py`'s): what
`deterministic=True` costs and whether runs repeat bit for bit without it; a batch of 1,000
payoff variants of Kuhn and of Leduc against 1,000 solo runs; the device-memory estimate
against the measured peak; and RM+ on Blotto(5,3) on the GPU (the CPU needs 401 iterations).

    python experiments/gpu_checks.py --out experiments/results/gpu      # needs CUDA

Writes `gpu_checks.json` and prints one line per figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import time

import torch

import tensorcfr
from tensorcfr.compiler.sizes import device_estimate_bytes


def sync():
    torch.cuda.synchronize()


def ms_per_iteration(solver, n: int) -> float:
    solver.step(3)  # allocator, capture
    sync()
    t0 = time.perf_counter()
    solver.step(n)
    sync()
    return 1000 * (time.perf_counter() - t0) / n


def state(solver) -> list[torch.Tensor]:
    d = solver.state_dict()
    return [*d["sigma"], *d["average"], *(t for st in d["state"] for t in st.values())]


def determinism(games: list[tuple[str, str]], iterations: int) -> list[dict]:
    """Per game, form, capture and algorithm: ms/it without and with deterministic, and whether
    two runs of each agree bit for bit."""
    rows = []
    for spec, form in games:
        cg = tensorcfr.compile(spec, form=form)
        for capture in ("none", "cuda-graph"):
            for algo in ("cfr+", "dcfr"):
                row = {"game": spec, "form": form, "capture": capture, "algorithm": algo}
                for det in (False, True):
                    runs, ms = [], []
                    for _ in range(2):
                        s = tensorcfr.Solver(cg, algo, device="cuda", capture=capture, deterministic=det)
                        ms.append(ms_per_iteration(s, iterations))
                        runs.append(state(s))
                        row[f"capture_used_{det}"] = s.capture
                        del s
                    key = "deterministic" if det else "default"
                    row[f"{key}_ms"] = min(ms)
                    row[f"{key}_repeats_bitwise"] = all(torch.equal(a, b) for a, b in zip(*runs))
                    row[f"{key}_max_diff"] = max(float((a - b).abs().max()) for a, b in zip(*runs))
                row["cost"] = row["deterministic_ms"] / row["default_ms"]
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def variants(spec: str, b: int, seed: int = 0):
    """`spec` compiled once, its payoff vector replaced by b variants (each terminal's payoff
    times a factor in [0.5, 1.5]: zero-sum, the same tree)."""
    cg = tensorcfr.compile(spec)
    g = torch.Generator().manual_seed(seed)
    factor = 0.5 + torch.rand(b, cg.payoff.shape[1], generator=g, dtype=cg.payoff.dtype)
    return dataclasses.replace(cg, payoff=cg.payoff * factor, batch_names=tuple(f"{spec}#{i}" for i in range(b)))


def batched(specs: list[str], b: int, iterations: int) -> list[dict]:
    rows = []
    for spec in specs:
        big = variants(spec, b)
        for capture in ("none", "cuda-graph"):
            solo = tensorcfr.Solver(spec, "cfr+", device="cuda", capture=capture)
            solo_ms = ms_per_iteration(solo, iterations)
            s = tensorcfr.Solver(big, "cfr+", device="cuda", capture=capture)
            batch_ms = ms_per_iteration(s, iterations)
            row = {"game": spec, "batch": b, "capture": capture, "capture_used": s.capture,
                   "batch_ms_per_iteration": batch_ms, "solo_ms_per_iteration": solo_ms,
                   "member_iterations_per_s": 1000 * b / batch_ms, "solo_iterations_per_s": 1000 / solo_ms,
                   "speedup_vs_solo_runs": b * solo_ms / batch_ms}
            print(json.dumps(row), flush=True)
            rows.append(row)
            del s, solo
    return rows


def memory(games: list[tuple[str, str]]) -> list[dict]:
    rows = []
    for spec, form in games:
        cg = tensorcfr.compile(spec, form=form)
        for dtype in (torch.float64, torch.float32):
            need = device_estimate_bytes(cg, 1, dtype)
            torch.cuda.empty_cache()
            sync()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            s = tensorcfr.Solver(cg, "dcfr", device="cuda", dtype=dtype)
            s.step(3)
            s.evaluate()
            sync()
            peak = torch.cuda.max_memory_allocated() - base
            row = {"game": spec, "form": form, "dtype": str(dtype)[6:], "peak_mb": peak / 2**20,
                   "estimate_mb": need["total"] / 2**20, "estimate_over_peak": need["total"] / peak,
                   **{f"{k}_mb": v / 2**20 for k, v in need.items() if k != "total"}}
            print(json.dumps(row), flush=True)
            rows.append(row)
            del s
    return rows


def blotto(limit: int) -> dict:
    from tensorcfr.normal_form import RegretMatching

    rm = RegretMatching("blotto(5,3)", "rm+", device="cuda")
    at401, first = None, None
    for t in range(1, limit + 1):
        rm.step(1)
        e = rm.evaluate()["average"].exploitability.item()
        if t == 401:
            at401 = e
        if e < 1e-3 and first is None:
            first = t
            if at401 is not None:
                break
    row = {"game": "blotto(5,3)", "procedure": "rm+", "exploitability_at_401": at401, "first_below_1e-3": first}
    print(json.dumps(row), flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gpu"))
    ap.add_argument("--sections", nargs="+", default=["determinism", "batched", "memory", "blotto"])
    ap.add_argument("--batch", type=int, default=1000)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("gpu_checks.py needs CUDA")
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda}
    if "determinism" in a.sections:
        out["determinism"] = determinism([("leduc", "generic"), ("leduc", "public"), ("liars_dice", "generic"),
                                          ("liars_dice", "public"), ("dudo(4,2,2)", "generic"),
                                          ("dudo(4,2,2)", "public")], 20)
    if "batched" in a.sections:
        out["batched"] = batched(["kuhn", "leduc"], a.batch, 50)
    if "memory" in a.sections:
        out["memory"] = memory([("leduc", "generic"), ("leduc", "public"), ("liars_dice", "generic"),
                                ("liars_dice", "public"), ("ocp(1000)", "generic"), ("dudo(4,2,2)", "generic"),
                                ("dudo(4,2,2)", "public"), ("dudo(5,2,2)", "public")])
    if "blotto" in a.sections:
        out["blotto"] = blotto(20000)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "gpu_checks.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
