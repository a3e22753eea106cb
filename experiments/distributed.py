"""One game across 1, 2 and 4 processes (`torch.distributed`): time per iteration and, per rank,
the bytes of its block of the payoff operator and its peak resident memory.

    python experiments/distributed.py                           # gloo ranks on the CPU, Dudo(4,2,2)
    python experiments/distributed.py --ranks 1 2 --game leduc --iterations 200
    python experiments/distributed.py --device cuda             # NCCL, one GPU per rank

Each rank compiles only its block of a generic payoff (`compile(..., shard=)`; `--whole`: the
whole game, then its block, as before the compile was split): the walk and the treeplexes are
whole on every rank, the sorted payoff — the compile's peak — is 1/N of it. On a machine with
fewer cores than ranks the ranks share the cores, and the time per iteration says so. Writes
`distributed.json` (`--whole`: `distributed_whole.json`) into --out and prints one line per
world size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import tensorcfr
from tensorcfr.operators.distributed import launch_local


def operator_bytes(op) -> int:
    """Bytes of the tensors a payoff operator holds (CSR values and indices, or class matrices)."""
    seen, total = set(), 0

    def walk(x):
        nonlocal total
        if isinstance(x, torch.Tensor):
            parts = ([x.crow_indices(), x.col_indices(), x.values()] if x.layout == torch.sparse_csr else [x])
            for t in parts:
                if t.data_ptr() not in seen:  # (views of one storage counted once)
                    seen.add(t.data_ptr())
                    total += t.numel() * t.element_size()
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    for v in vars(op).values():
        walk(v)
    return total


def _rank(rank, world, init, a, out):
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
    cuda = a.device == "cuda"
    if cuda:
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if cuda else "gloo", init_method=init, rank=rank, world_size=world,
                            timeout=timedelta(minutes=10))
    t0 = time.perf_counter()
    # by name: this rank's block only; --whole: the whole game (compiled afresh, as a first run does)
    game = tensorcfr.compile(a.game, form=a.form, cache=False) if a.whole else a.game
    s = tensorcfr.Solver(game, a.algo, device=f"cuda:{rank}" if cuda else "cpu", form=a.form, distributed=True)
    compile_s = time.perf_counter() - t0
    s.step(2)
    dist.barrier()
    t0 = time.perf_counter()
    s.step(a.iterations)
    if cuda:
        torch.cuda.synchronize()
    dist.barrier()
    ms = 1000 * (time.perf_counter() - t0) / a.iterations
    ev = s.evaluate()["average"]
    row = {"rank": rank, "ms_per_iteration": ms, "compile_seconds": compile_s,
           "operator_mb": operator_bytes(s.op.local) / 2**20,
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "exploitability": ev.exploitability.item()}
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(row, f)
    dist.destroy_process_group()


def run(world: int, a) -> list[dict]:
    with tempfile.TemporaryDirectory() as out:
        codes = launch_local(_rank, world, out, a, out)
        if any(codes):
            raise SystemExit(f"a rank failed with {world} ranks: exit codes {codes}")
        return [json.load(open(os.path.join(out, f"rank{r}.json"))) for r in range(world)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="dudo(4,2,2)")
    ap.add_argument("--form", default="generic", choices=["generic", "public"])
    ap.add_argument("--algo", default="cfr+")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--whole", action="store_true", help="each rank compiles the whole game, then keeps its block")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "distributed"))
    a = ap.parse_args(argv)
    result = {"game": a.game, "form": a.form, "algorithm": a.algo, "device": a.device, "iterations": a.iterations,
              "compile": "whole, then the block" if a.whole else "the block only",
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}", "worlds": {}}
    for world in a.ranks:
        rows = run(world, a)
        result["worlds"][world] = rows
        ops = ", ".join(f"{r['operator_mb']:.0f}" for r in rows)
        rss = ", ".join(f"{r['peak_rss_mb']:.0f}" for r in rows)
        print(f"{world} rank(s): {max(r['ms_per_iteration'] for r in rows):.1f} ms/it, operator per rank {ops} MB, "
              f"peak RSS per rank {rss} MB, compile {max(r['compile_seconds'] for r in rows):.1f} s, "
              f"exploitability {rows[0]['exploitability']:.9g}", flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "distributed_whole.json" if a.whole else "distributed.json"), "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
