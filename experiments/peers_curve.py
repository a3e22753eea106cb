"""The README's picture: exploitability against solving time on one game, tensorcfr beside
OpenSpiel's C++ CFR+ and LiteEFG's CFR+, each run the way its own documentation runs it.

    python experiments/peers_curve.py                       # Leduc, 20 s a solver
    python experiments/peers_curve.py --game kuhn --seconds 2 --out /tmp/curve

- tensorcfr: `tensorcfr.Solver(game, algo)` with the library's defaults (the form of
  `form="auto"`, alternating updates as the cfr+ and dcfr presets say, float64), trained in chunks
  between evaluations; each algorithm of --algo is one curve.
- OpenSpiel: `pyspiel.CFRPlusSolver(game)`, `evaluate_and_update_policy()` an iteration,
  `pyspiel.exploitability(game, solver.average_policy())` at each point (its C++ solver
  alternates updates).
- LiteEFG: `LiteEFG.baselines.CFRplus`, `OpenSpielEnv(game, traverse_type="Enumerate")`,
  `update_graph` + `update_strategy` an iteration, the exploitability of its
  "linear-avg-iterate" at each point (its `utils.train`'s CFR+ setting); its per-player gains
  are summed and halved, which is the exploitability the other two report.

Time is solving time only: evaluations are excluded for all three, and tensorcfr's compile and
the peers' tree conversions are reported beside it, not drawn. Everything runs on one thread
(`torch.set_num_threads(1)`; the peers are single-threaded), on the CPU. Writes
peers_curve.{json,md,png} into --out (the PNG needs matplotlib) and the PNG into docs/assets.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import time

import torch

import tensorcfr
from tensorcfr.run.training import LogSpaced

HERE = os.path.dirname(os.path.abspath(__file__))
OPENSPIEL_NAMES = {"kuhn": "kuhn_poker", "leduc": "leduc_poker", "liars_dice": "liars_dice"}


def curve(solver: str, setup, step, exploitability, seconds: float, target: float | None = None) -> dict:
    """One solver's curve: `setup()` once (timed apart), then `step(n)` to reach iteration n
    (timed: the solving time) and `exploitability()` (not timed) at log-spaced iterations, 20 a
    decade, until `seconds` of solving have passed or the exploitability is at most `target`."""
    t0 = time.perf_counter()
    setup()
    out = {"solver": solver, "setup_seconds": time.perf_counter() - t0, "points": []}
    plan, it, solving = LogSpaced(20), 0, 0.0
    while solving < seconds:
        it = plan.next(it, [])
        t0 = time.perf_counter()
        step(it)
        solving += time.perf_counter() - t0
        out["points"].append((it, solving, exploitability()))
        if target is not None and out["points"][-1][2] <= target:
            break
    return out


def curve_tensorcfr(game: str, algo: str, seconds: float) -> dict:
    s = {}

    def setup():
        # a throwaway iteration first: the compiled C loops are built (or loaded) on the first
        # call, 1.4 s where their cache is cold (a test's fresh cache folder), which is setup
        tensorcfr.Solver(game, algo, device="cpu").step(1)
        s["solver"] = tensorcfr.Solver(game, algo, device="cpu")

    return {**curve(f"tensorcfr {algo}", setup, lambda n: s["solver"].step(n - s["solver"].iteration),
                    lambda: float(s["solver"].evaluate()["average"].exploitability), seconds),
            "form": s["solver"].game.form}


def curve_openspiel(name: str, seconds: float, target: float | None = None) -> dict | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game, s = pyspiel.load_game(name), {"done": 0}

    def setup():
        s["solver"] = pyspiel.CFRPlusSolver(game)

    def step(n):
        while s["done"] < n:
            s["solver"].evaluate_and_update_policy()
            s["done"] += 1

    return curve("OpenSpiel C++ CFR+", setup, step,
                 lambda: float(pyspiel.exploitability(game, s["solver"].average_policy())), seconds, target)


def curve_liteefg(name: str, seconds: float, target: float | None = None) -> dict | None:
    try:
        import LiteEFG
        import pyspiel
    except ImportError:
        return None
    s = {"done": 0}

    def setup():
        with contextlib.redirect_stdout(io.StringIO()):  # its constructors print banners
            s["graph"] = LiteEFG.baselines.CFRplus.graph()
            s["env"] = LiteEFG.OpenSpielEnv(pyspiel.load_game(name), traverse_type="Enumerate")
            s["env"].set_graph(s["graph"])

    def step(n):
        while s["done"] < n:
            s["graph"].update_graph(s["env"])
            s["env"].update_strategy(s["graph"].current_strategy(), update_best=False)
            s["done"] += 1

    def exploitability():  # per-player gains: their sum is NashConv, half of it the exploitability
        return sum(s["env"].exploitability(s["graph"].current_strategy(), "linear-avg-iterate")) / 2

    return curve("LiteEFG CFR+", setup, step, exploitability, seconds, target)


def plot(curves: list[dict], game: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    styles = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1))]
    for k, c in enumerate(curves):
        xs = [max(s, 1e-5) for _, s, _ in c["points"]]
        ys = [max(e, 1e-12) for _, _, e in c["points"]]
        ax.plot(xs, ys, linestyle=styles[k % len(styles)], color=f"C{k}", label=c["solver"], linewidth=1.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("solving time (s), one CPU thread")
    ax.set_ylabel("exploitability of the average strategy")
    ax.set_title(f"{game}: exploitability against time")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def markdown(curves: list[dict], game: str, seconds: float, stamp: str, machine: str) -> str:
    lines = [f"Measured {stamp} on {machine}; {game}, {seconds:g} s of solving a solver, one thread. "
             "Time excludes evaluations; setup is compile or tree conversion.", "",
             "| solver | setup (s) | iterations | solving (s) | exploitability | to 1e-3 (s) | to 1e-4 (s) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for c in curves:
        it, s, e = c["points"][-1]

        reach = [next((f"{t:.3f}" for _, t, x in c["points"] if x <= target), "-") for target in (1e-3, 1e-4)]
        lines.append(f"| {c['solver']} | {c['setup_seconds']:.2f} | {it:,} | {s:.2f} | {e:.3e} | "
                     f"{reach[0]} | {reach[1]} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="leduc", choices=sorted(OPENSPIEL_NAMES))
    ap.add_argument("--algo", nargs="+", default=["cfr+", "dcfr"], help="tensorcfr's presets to draw")
    ap.add_argument("--seconds", type=float, default=20.0, help="solving time a solver")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--no-docs", dest="docs", action="store_false",
                    help="do not copy the picture into docs/assets (where the README and the docs show it)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    tensorcfr.keep_freed_memory()
    curves = [curve_tensorcfr(args.game, a, args.seconds) for a in args.algo]
    for peer in (curve_openspiel, curve_liteefg):
        c = peer(OPENSPIEL_NAMES[args.game], args.seconds)
        if c is None:
            print(f"{peer.__name__}: its library is not installed; skipped (pip install -e '.[bench]' liteefg)",
                  file=sys.stderr)
        else:
            curves.append(c)
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d")
    machine = f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
    md = markdown(curves, args.game, args.seconds, stamp, machine)
    with open(os.path.join(args.out, "peers_curve.json"), "w") as f:
        json.dump({"game": args.game, "seconds": args.seconds, "date": stamp, "machine": machine, "curves": curves},
                  f, indent=1)
    with open(os.path.join(args.out, "peers_curve.md"), "w") as f:
        f.write(md)
    try:
        png = os.path.join(args.out, "peers_curve.png")
        plot(curves, args.game, png)
        if args.docs:
            import shutil

            assets = os.path.join(HERE, "..", "docs", "assets")
            os.makedirs(assets, exist_ok=True)
            shutil.copyfile(png, os.path.join(assets, "peers_curve.png"))
    except ImportError:
        print("matplotlib is not installed: no picture (pip install -e '.[plot]')", file=sys.stderr)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
