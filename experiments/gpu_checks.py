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
    if torch.cuda.is_available():
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


def determinism(games: list[tuple[str, str]], iterations: int, device: str = "cuda") -> list[dict]:
    """Per game, form, capture and algorithm: ms/it without and with deterministic, and whether
    two runs of each agree bit for bit (`device="cpu"`: eager only, as the tests run it)."""
    rows = []
    for spec, form in games:
        cg = tensorcfr.compile(spec, form=form)
        for capture in ("none", "cuda-graph") if device == "cuda" else ("none",):
            for algo in ("cfr+", "dcfr"):
                row = {"game": spec, "form": form, "capture": capture, "algorithm": algo}
                for det in (False, True):
                    runs, ms = [], []
                    for _ in range(2):
                        s = tensorcfr.Solver(cg, algo, device=device, capture=capture, deterministic=det)
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
    """The estimate against the peak after building a DCFR solver, 3 iterations and an evaluation.
    A spec "leduc*64" is a batch of 64 payoff variants of Leduc (`variants`)."""
    rows = []
    for spec, form in games:
        name, _, b = spec.partition("*")
        cg = variants(name, int(b)) if b else tensorcfr.compile(spec, form=form)
        for dtype in (torch.float64, torch.float32):
            need = device_estimate_bytes(cg, cg.batch_size, dtype)
            torch.cuda.empty_cache()
            sync()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            s = tensorcfr.Solver(cg, "dcfr", device="cuda", dtype=dtype)
            sync()
            built = torch.cuda.max_memory_allocated() - base  # the solver's tensors, before it runs
            s.step(3)
            stepped = torch.cuda.max_memory_allocated() - base  # and an iteration's (a graph's pool)
            s.evaluate()
            sync()
            peak = torch.cuda.max_memory_allocated() - base
            # (which part the estimate misses or overstates: the built solver, the iterations, whose
            # temporaries a CUDA graph keeps in a pool of its own, or the evaluation)
            row = {"game": spec, "form": form, "dtype": str(dtype)[6:], "capture": s.capture,
                   "built_mb": built / 2**20, "stepped_mb": stepped / 2**20, "peak_mb": peak / 2**20,
                   "estimate_mb": need["total"] / 2**20, "estimate_over_peak": need["total"] / peak,
                   **{f"{k}_mb": v / 2**20 for k, v in need.items() if k != "total"}}
            print(json.dumps(row), flush=True)
            rows.append(row)
            del s
    return rows


def refusal(spec: str, form: str) -> dict:
    """A solver refused for real: the device is filled by one allocation until half of what `spec`
    needs is free, then `Solver` must raise before allocating anything (no stand-in for
    `mem_get_info`, as the suite has to use: its workers share the GPU)."""
    cg = tensorcfr.compile(spec, form=form)
    need = device_estimate_bytes(cg, 1, torch.float64)["total"]
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    block = torch.empty(free - need // 2, dtype=torch.uint8, device="cuda")
    before = torch.cuda.memory_allocated()
    try:
        tensorcfr.Solver(cg, "cfr+", device="cuda")
        message = None
    except tensorcfr.TensorCFRError as e:
        message = str(e)
    row = {"game": spec, "form": form, "estimate_mb": need / 2**20, "refused": message is not None,
           "message": message, "allocated_by_the_refused_solver": torch.cuda.memory_allocated() - before}
    del block
    torch.cuda.empty_cache()
    print(json.dumps(row), flush=True)
    return row


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
    ap.add_argument("--memory-games", nargs="+", default=None, metavar="GAME:FORM",
                    help="the memory section's games (default: the games the estimate was fitted on); "
                    "GAME*B is a batch of B payoff variants")
    ap.add_argument("--name", default="gpu_checks.json", help="the JSON file written in OUT")
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
        games = [tuple(g.rsplit(":", 1)) for g in a.memory_games] if a.memory_games else [
            ("leduc", "generic"), ("leduc", "public"), ("liars_dice", "generic"), ("liars_dice", "public"),
            ("ocp(1000)", "generic"), ("dudo(4,2,2)", "generic"), ("dudo(4,2,2)", "public"), ("dudo(5,2,2)", "public")]
        out["memory"] = memory(games)
    if "refusal" in a.sections:
        out["refusal"] = refusal("dudo(4,2,2)", "generic")
    if "blotto" in a.sections:
        out["blotto"] = blotto(20000)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
