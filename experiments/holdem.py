"""Hold'em river and turn spots: time, iterations and memory to a share of the pot.

    python experiments/holdem.py                                   # the full-range river spot, CPU
    python experiments/holdem.py --algos dcfr --target 0.3 --no-readme
    python experiments/holdem.py --device cuda --threads 0         # on a GPU
    python experiments/holdem.py --spot "holdem_turn(board=Ks7d2c9h, pot=10, stack=100, bets=(0.5,1,allin), cap=2)" \
        --algos dcfr "dcfr(gamma=3)" "dcfr(gamma=5)" --target 0.5 --eval-every 10 --most 600 \
        --section holdem-turn                                      # the full-range turn spot

The spot: board Ks7d2c9h4s, pot 10, stack 100, full ranges (1,081 hands each after the board),
bets and raises of 1/2 and 1 pot and all-in, two raises. Each algorithm runs until its average
strategy's exploitability is at most `--target` percent of the pot, evaluated every
`--eval-every` iterations (the evaluations are not timed; `seconds` counts iterations only, as
`tensorcfr solve` does; a throwaway solver runs a few iterations first, so that the first row
does not pay the process's warm-up alone). Also measured: one iteration with the dense T0 x T1 payoff products
instead of the card-removal showdown (`operators/cards.py`) where the spot keeps them (a turn
spot keeps its showdown factors only), the compile time, the first solver's start and the
process's peak memory.

Writes SECTION.json and SECTION.md into --out and the table into the docs' section --section.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time

import torch

from tensorcfr import games
import tensorcfr
from tensorcfr.operators.public import PublicPayoffOperator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_section import command, replace_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WARM_UP = 3  # untimed iterations before the first solve
RIVER = "holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2)"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def solve(cg, algo: str, dtype, device: str, target: float, every: int, most: int, threads="auto") -> dict:
    """Iterations and solving seconds (`tensorcfr.train`'s, evaluations left out) until the
    exploitability is at most `target` chips, evaluating every `every` iterations."""
    s = tensorcfr.Solver(cg, algo, dtype=dtype, device=device, threads=threads)
    last = tensorcfr.train(s, most, eval_every=every, target_exploitability=target, histograms=False)[-1]
    return {"iterations": last["iteration"], "seconds": last["seconds"], "exploitability": last["exploitability"],
            "ms_per_iteration": 1000 * last["seconds"] / last["iteration"]}


def payoff_ms(cg, dtype, device: str, iterations: int = 3, showdown: bool = False) -> float:
    """ms of an iteration's payoff work (both players' counterfactual values) with the dense
    products (`PublicPayoffOperator.of(showdown=False)`), or with the card-removal showdown
    (`showdown=True`)."""
    cg = cg.to(torch.device(device))
    op = PublicPayoffOperator.of(cg, dtype, showdown=showdown)
    x = [torch.rand(1, tp.num_sequences, dtype=dtype, device=cg.device) for tp in cg.treeplexes]
    op.cfv(0, x[1])  # warm
    sync(cg.device)
    t0 = time.perf_counter()
    for _ in range(iterations):
        op.cfv(0, x[1])
        op.cfv(1, x[0])
    sync(cg.device)
    return 1000 * (time.perf_counter() - t0) / iterations


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spot", default=RIVER, help="the spot (a holdem_river or holdem_turn spec)")
    ap.add_argument("--algos", nargs="+", default=["dcfr", "cfr+"])
    ap.add_argument("--target", type=float, default=0.3, help="percent of the pot")
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--most", type=int, default=5000, help="iterations at most")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads (0: torch's default)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--section", default="holdem", help="the marked section of the docs to write (and the files' name)")
    ap.add_argument("--no-readme", action="store_true")
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype)
    t0 = time.perf_counter()
    cg = tensorcfr.compile(a.spot, form="public")
    compile_s = time.perf_counter() - t0
    sizes = cg.sizes()
    pot = games.make(a.spot).pot
    # a throwaway solver's iterations first, untimed: the first solve of a process would pay the
    # warm-up (thread pool, first pages) alone (the river's first row took 0.72 s once, 0.47 the next run);
    # its start is what a process pays before its first iteration (the payoff's extent, the operator and
    # its kernels, which the game keeps for the solvers after it, the first compile of fused passes)
    t0 = time.perf_counter()
    first = tensorcfr.Solver(cg, a.algos[0], dtype=dtype, device=a.device, threads=a.threads or "auto")
    start_s = time.perf_counter() - t0
    first.step(WARM_UP)
    del first
    rows = []
    for algo in a.algos:
        r = solve(cg, algo, dtype, a.device, a.target / 100 * pot, a.eval_every, a.most, a.threads or "auto")
        r.update(algorithm=algo, percent_pot=100 * r["exploitability"] / pot)
        rows.append(r)
        print(f"{algo}: {r['iterations']} iterations, {r['seconds']:.2f} s, {r['percent_pot']:.3f}% of the pot, "
              f"{r['ms_per_iteration']:.2f} ms an iteration", flush=True)
    dense = None if cg.payoff_weights is None else payoff_ms(cg, dtype, a.device)
    cards = None if dense is None or cg.showdown is None else payoff_ms(cg, dtype, a.device, showdown=True)
    if dense is not None:
        print(f"dense payoff products: {dense:.2f} ms an iteration's payoff work; the card-removal showdown "
              f"{cards:.2f} ms", flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs"
            + (f", {torch.cuda.get_device_name()}" if a.device.startswith("cuda") else ""),
            "torch": torch.__version__, "threads": torch.get_num_threads(), "device": a.device, "dtype": a.dtype,
            "command": command("holdem.py", argv), "spot": a.spot, "compile_seconds": compile_s,
            "start_seconds": start_s,
            "peak_memory_mb": peak_mb(), "dense_ms_per_iteration": dense,
            "showdown_ms_per_iteration": cards,
            "gpu_peak_memory_mb": torch.cuda.max_memory_allocated() / 2**20 if a.device.startswith("cuda") else None,
            "sizes": {k: sizes[k] for k in ("histories", "public_nodes", "types", "payoff_classes", "public_terminals")}}
    lines = [f"Made by `{meta['command']}` on {meta['machine']} ({a.device}, {meta['threads']} threads), torch "
             f"{meta['torch']}, {a.dtype}, {meta['date']}. Spot: `{a.spot}`: {sizes['histories']:,} histories, "
             f"{sizes['public_nodes']:,} public nodes, {sizes['types'][0]:,} x {sizes['types'][1]:,} hands, "
             f"{sizes['payoff_classes']:,} payoff classes. Compile {compile_s:.1f} s, the first solver's start "
             f"{start_s:.1f} s; peak memory of the process "
             f"{meta['peak_memory_mb']:,.0f} MB"
             + (f", of the GPU {meta['gpu_peak_memory_mb']:,.0f} MB" if meta["gpu_peak_memory_mb"] else "")
             + f". Seconds count iterations, not the evaluations every "
             f"{a.eval_every}, after {WARM_UP} untimed iterations of a throwaway solver.", "",
             f"| algorithm | iterations to {a.target:g}% of the pot | seconds | % of the pot | ms/iteration |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {r['algorithm']} | {r['iterations']} | {r['seconds']:.2f} | {r['percent_pot']:.3f} | "
              f"{r['ms_per_iteration']:.2f} |" for r in rows]
    if dense is not None:
        lines += ["", f"The dense T0 x T1 payoff products instead of the card-removal showdown: {dense:.1f} ms for an "
                  f"iteration's payoff work alone, against {cards:.1f} ms with the showdown."]
    else:
        entries = sizes["payoff_classes"] * sizes["types"][0] * sizes["types"][1]
        lines += ["", f"The dense T0 x T1 payoff matrices are not kept: they would hold {entries:,} entries "
                  f"({entries * 8 / 2**30:,.0f} GiB at float64)."]
    body = "\n".join(lines) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, f"{a.section}.json"), "w") as f:
        json.dump({**meta, "rows": rows}, f, indent=1)
    with open(os.path.join(a.out, f"{a.section}.md"), "w") as f:
        f.write(body)
    if not a.no_readme:
        replace_section(a.section, body)
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
