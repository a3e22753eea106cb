"""Every algorithm side by side: exploitability of the average and of the last iterate against
iterations and against solving time, on Kuhn, Leduc and Dudo(6,1,1).

    python experiments/compare_algorithms.py                    # writes results/, runs/, README table
    python experiments/compare_algorithms.py --games kuhn --iterations 100 --no-readme

One TensorBoard run per (game, algorithm) under --logdir with identical tags (those of
`tensorcfr.run.training.TAGS`, plus `wallclock/exploitability_average|current` whose step is the
solving time in milliseconds), so one TensorBoard view overlays every algorithm. Also writes
`compare_algorithms.png` (needs matplotlib), `compare_algorithms.json` and a Markdown table of
exploitability at 10, 100 and 1,000 iterations.

FTRL's step size depends on the game's payoff scale, so for each game the script first runs
a batch of step sizes (one batched run per algorithm, `--etas`) and keeps the one with the
lowest final exploitability (of the average for ftrl, of the last iterate for oftrl).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

import tensorcfr
from tensorcfr.run.training import open_writer, train

from readme_section import command, publish_picture, replace_section

HERE = os.path.dirname(os.path.abspath(__file__))
ALGOS = ["cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "ftrl", "oftrl"]
FLOOR = 1e-15  # exploitability at or below this is rounding noise (it can even come out negative)


def fmt(v: float) -> str:
    return f"≤ {FLOOR:.0e}" if v <= FLOOR else f"{v:.2e}"


class OneTwoFive:
    """An evaluation schedule for `train`: at 1, 2, 5, 10, 20, 50, ... (and at the end, where
    `train` always evaluates).

    Example:
        >>> [OneTwoFive().next(i, []) for i in (0, 1, 2, 5, 60)]
        [1, 2, 5, 10, 100]
    """

    def next(self, iteration: int, points) -> int:
        k = 1
        while True:
            for m in (1, 2, 5):
                if m * k > iteration:
                    return m * k
            k *= 10


def best_eta(game, algo: str, etas: list[float], iterations: int, device: str) -> float:
    """The step size of `etas` with the lowest final exploitability (one batched run)."""
    s = tensorcfr.Solver(game, algo, eta=tuple(etas), device=device)
    s.step(iterations)
    ev = s.evaluate()["current" if s.config.optimistic else "average"]
    return etas[int(ev.exploitability.argmin())]


def run(game, spec: str, algo: str, iterations: int, device: str, logdir: str | None) -> list[dict]:
    """Train with `tensorcfr.train`, evaluating at 1, 2, 5, 10, ... (`OneTwoFive`); each row has
    iteration, seconds (solving only) and exploitability of the average and the current
    strategy. TensorBoard gets train's tags plus `wallclock/exploitability_average|current`."""
    solver = tensorcfr.Solver(game, algo, device=device)
    writer = open_writer(logdir, spec, algo) if logdir else None

    def wallclock(row):
        if writer is not None:
            ms = int(1000 * row["seconds"])
            writer.add_scalar("wallclock/exploitability_average", row["exploitability"], ms)
            writer.add_scalar("wallclock/exploitability_current", row["exploitability_current"], ms)

    rows = train(solver, iterations, OneTwoFive(), writer=writer, callback=wallclock, histograms=False)
    if writer is not None:
        writer.close()
    return [{k: r[k] for k in ("iteration", "seconds", "exploitability", "exploitability_current")} for r in rows]


def plot(results: dict, path: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG (pip install matplotlib)", file=sys.stderr)
        return False
    games = list(results)
    fig, axes = plt.subplots(2, len(games), figsize=(5.2 * len(games), 8.5), squeeze=False)
    colors = dict(zip(ALGOS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for j, g in enumerate(games):
        for label, rows in results[g]["runs"].items():
            base = label.split("(")[0]
            for i, x in enumerate(("iteration", "seconds")):
                ax = axes[i][j]
                xs = [r[x] for r in rows]
                floor = lambda key: [max(r[key], FLOOR) for r in rows]  # noqa: E731, B023  (log axes; used at once)
                ax.plot(xs, floor("exploitability"), color=colors.get(base), label=label)
                if base in ("ftrl", "oftrl", "cfr+", "pcfr+"):
                    ax.plot(xs, floor("exploitability_current"), color=colors.get(base), ls=":")
        for i, x in enumerate(("iterations", "solving seconds")):
            ax = axes[i][j]
            ax.set(xscale="log", yscale="log", xlabel=x, ylabel="exploitability", title=results[g]["name"])
            ax.grid(True, which="both", alpha=0.3)
        axes[0][j].legend(fontsize=8)
    fig.suptitle("solid: average strategy; dotted: last iterate")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def markdown(results: dict, iterations: int, meta: dict) -> str:
    marks = [m for m in (10, 100, 1000) if m <= iterations]
    head = ["game", "algorithm"] + [f"{m:,} it" for m in marks] + [f"last iterate, {marks[-1]:,} it", "ms/it"]
    lines = [f"Exploitability (NashConv/2) of the average strategy; {meta['device']}, torch {meta['torch']}, "
             f"{meta['date']}.", "", "| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for res in results.values():
        for label, rows in res["runs"].items():
            at = {r["iteration"]: r for r in rows}
            ms = 1000 * rows[-1]["seconds"] / rows[-1]["iteration"]
            lines.append(f"| {res['name']} | {label} | " + " | ".join(fmt(at[m]["exploitability"]) for m in marks)
                         + f" | {fmt(at[marks[-1]]['exploitability_current'])} | {ms:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=["kuhn", "leduc", "dudo(6,1,1)"])
    p.add_argument("--algos", nargs="+", default=ALGOS)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--etas", type=float, nargs="+", default=[0.5, 1, 2, 4, 8, 16, 32, 64, 128])
    p.add_argument("--device", default="auto")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--logdir", default=os.path.join(HERE, "..", "runs", "compare"))
    p.add_argument("--no-readme", dest="readme", action="store_false")
    args = p.parse_args(argv)
    tensorcfr.keep_freed_memory()  # CPU iterations reuse their temporaries (tensorcfr/memory.py)
    import datetime

    device = str(tensorcfr.devices.resolve_device(args.device))
    meta = {"device": device if device == "cpu" else torch.cuda.get_device_name(), "torch": torch.__version__,
            "date": datetime.date.today().isoformat(), "iterations": args.iterations}
    results = {}
    for spec in args.games:
        cg = tensorcfr.compile(spec)
        runs = {}
        for algo in args.algos:
            label = algo
            if algo in ("ftrl", "oftrl"):
                label = f"{algo}(eta={best_eta(cg, algo, args.etas, args.iterations, device):g})"
            runs[label] = run(cg, spec, label, args.iterations, device, args.logdir)
            last = runs[label][-1]
            print(f"{spec:>12} {label:<16} exploitability {last['exploitability']:.3e}  current "
                  f"{last['exploitability_current']:.3e}  {last['seconds']:.2f} s", flush=True)
        results[spec] = {"name": cg.name, "runs": runs}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "compare_algorithms.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    md = markdown(results, args.iterations, meta)
    with open(os.path.join(args.out, "compare_algorithms.md"), "w") as f:
        f.write(md)
    plot(results, os.path.join(args.out, "compare_algorithms.png"))
    if args.readme and os.path.exists(os.path.join(args.out, "compare_algorithms.png")):
        publish_picture(os.path.join(args.out, "compare_algorithms.png"))
    print(md)
    if args.readme:
        replace_section("compare-table", f"Made by `{command('compare_algorithms.py', argv)}`; plot: "
                        "[compare_algorithms.png](../assets/compare_algorithms.png)."
                        f"\n\n{md}")

if __name__ == "__main__":
    main()
