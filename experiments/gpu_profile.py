"""Where a GPU iteration's time goes, kernel by kernel: the iteration run eagerly under
torch's profiler (one row per kernel name: launches and GPU microseconds an iteration), beside
the wall-clock time of the same iteration eager and recorded as a CUDA graph, and the
bytes-moved floor of `bench.py` (`bytes_per_iteration` over the measured copy bandwidth).
The gap between the wall clock and the summed kernel time is launch and host overhead.

    python experiments/gpu_profile.py --games "ocp(1000)" "dudo(4,2,2)" --out experiments/results/gpu  # needs CUDA

Writes `gpu_profile.json` and prints one table per game and form.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time

import torch
from torch.profiler import ProfilerActivity, profile

import tensorcfr
from bench import bytes_per_iteration, copy_bandwidth


def wall_ms(solver, n: int) -> float:
    """Milliseconds an iteration, best of 3 blocks of `n` after a warm-up (a capture happens there)."""
    solver.step(3)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        solver.step(n)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / n)
    return 1000 * best


def kernels(solver, n: int) -> list[dict]:
    """GPU time per kernel name over `n` eager iterations, per iteration, largest first."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        solver.step(n)
        torch.cuda.synchronize()
    total = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total[e.name][0] += 1
            total[e.name][1] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    rows = [{"kernel": k[:120], "launches": c / n, "us": us / n} for k, (c, us) in total.items()]
    return sorted(rows, key=lambda r: -r["us"])


def profile_game(spec: str, form: str, algo: str, dtype: str, n: int) -> dict:
    cg = tensorcfr.compile(spec, form=form)
    out = {"game": spec, "form": cg.form, "algorithm": algo, "dtype": dtype}
    for capture in ("none", "cuda-graph"):
        s = tensorcfr.Solver(cg, algo, device="cuda", dtype=dtype, capture=capture, updates="alternating")
        out[f"ms_{capture}"] = wall_ms(s, n)
        if capture == "none":
            rows = kernels(s, n)
        del s
    out["kernel_ms"] = sum(r["us"] for r in rows) / 1000
    out["launches"] = sum(r["launches"] for r in rows)
    out["floor_ms"] = 1000 * bytes_per_iteration(cg, getattr(torch, dtype)) / copy_bandwidth(torch.device("cuda"))
    out["x_floor_graph"] = out["ms_cuda-graph"] / out["floor_ms"]
    out["x_floor_kernels"] = out["kernel_ms"] / out["floor_ms"]
    out["kernels"] = rows[:25]
    print(f"\n{spec} ({cg.form}, {algo}, {dtype}): eager {out['ms_none']:.3f} ms, graph {out['ms_cuda-graph']:.3f} ms, "
          f"kernels {out['kernel_ms']:.3f} ms in {out['launches']:.0f} launches, floor {out['floor_ms']:.3f} ms "
          f"(graph {out['x_floor_graph']:.1f}x, kernels {out['x_floor_kernels']:.1f}x)", flush=True)
    for r in rows[:15]:
        print(f"  {r['us']:9.1f} us {r['launches']:6.1f}x  {r['kernel']}", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=["ocp(1000)", "dudo(4,2,2)"])
    ap.add_argument("--forms", nargs="+", default=["generic", "public"], choices=["generic", "public"])
    ap.add_argument("--algo", default="cfr+")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gpu"))
    ap.add_argument("--name", default="gpu_profile.json", help="the JSON file written in OUT")
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("gpu_profile.py needs CUDA")
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "copy_bandwidth_gb_s": copy_bandwidth(torch.device("cuda")) / 1e9, "rows": []}
    for spec in a.games:
        for form in a.forms:
            try:
                out["rows"].append(profile_game(spec, form, a.algo, a.dtype, a.iterations))
            except tensorcfr.TensorCFRError as e:  # a game without that form
                print(f"{spec} ({form}): {e}", flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
