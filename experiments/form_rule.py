"""The measurements behind `form="auto"` (`tensorcfr.compiler.choose`): milliseconds per exact
iteration of both compiled forms on a ladder of games that have a public-tree form, at one
torch thread, CFR+, float64 (the CLI's defaults), the forms interleaved block by block so a
load on the machine falls on both alike.

    python experiments/form_rule.py                       # the ladder
    python experiments/form_rule.py --games kuhn leduc --blocks 7
    python experiments/form_rule.py --device cuda --games liars_dice "dudo(4,2,2)"  # on a GPU

Prints a table (game, histories, generic ms, public ms, public/generic, what `auto` picks for
that device) and writes `form_rule.json` (`form_rule_cuda.json` on CUDA, where the solvers take
their default capture, a CUDA graph) into `--out`, after each game.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

import tensorcfr
from tensorcfr import compiler

LADDER = ["kuhn", "ocp(12)", "leduc", "dudo(4,1,1)", "ocp(100)", "liars_dice", "dudo(5,1,1)", "dudo(4,1,2)",
          "dudo(6,1,1)", "ocp(256)", "liars_dice(numdice=2,faces=3)", "dudo(5,1,2)", "liars_dice(faces=8)",
          "ocp(1000)", "dudo(4,2,2)"]


def block_ms(solver, iterations: int) -> float:
    sync = torch.cuda.synchronize if solver.device.type == "cuda" else (lambda: None)
    sync()
    t = time.perf_counter()
    solver.step(iterations)
    sync()
    return 1e3 * (time.perf_counter() - t) / iterations


def measure(spec: str, blocks: int, budget_s: float, device: str = "cpu") -> dict:
    solvers = {form: tensorcfr.Solver(spec, "cfr+", device=device, dtype="float64", form=form)
               for form in ("generic", "public")}
    for s in solvers.values():
        s.step(2)  # warm-up: first-touch allocations
    # iterations a block: about budget_s / blocks of the slower form
    probe = max(block_ms(s, 1) for s in solvers.values())
    n = max(1, int(budget_s / blocks / (probe / 1e3)))
    times = {form: [] for form in solvers}
    for _ in range(blocks):
        for form, s in solvers.items():
            times[form].append(block_ms(s, n))
    cg = solvers["generic"].game
    row = {"game": spec, "histories": cg.num_histories, "iterations_a_block": n,
           **{f"{form}_ms": statistics.median(v) for form, v in times.items()}}
    row["public_over_generic"] = row["public_ms"] / row["generic_ms"]
    row["auto"] = compiler.choose(spec, device=device).name
    row["capture"] = {form: s.capture for form, s in solvers.items()}
    return row


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=LADDER)
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=6.0, help="a game's timed budget, per form")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    name = "form_rule.json" if args.device == "cpu" else "form_rule_cuda.json"
    os.makedirs(args.out, exist_ok=True)
    rows = []
    print(f"{'game':32} {'histories':>12} {'generic ms':>11} {'public ms':>10} {'public/generic':>15} {'auto':>8}")
    for spec in args.games:
        r = measure(spec, args.blocks, args.seconds, args.device)
        rows.append(r)
        print(f"{r['game']:32} {r['histories']:>12,} {r['generic_ms']:>11.3f} {r['public_ms']:>10.3f} "
              f"{r['public_over_generic']:>15.2f} {r['auto']:>8}", flush=True)
        with open(os.path.join(args.out, name), "w") as f:  # after each game: a run cut short keeps what it timed
            json.dump({"threads": 1, "algorithm": "cfr+", "dtype": "float64", "device": args.device,
                       "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
