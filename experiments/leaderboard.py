"""Every update rule on the benchmark games: iterations and solving seconds to NashConv 1e-3 and
1e-6, of the average strategy and of the last iterate, within a budget of iterations and
seconds per run; a table and a picture, with the machine and the date.

    python experiments/leaderboard.py                      # the small suite: docs/results/leaderboard.md
    python experiments/leaderboard.py --large              # adds Goofspiel-6 and -7, OCP(1000), Dudo(4,2,2)
    python experiments/leaderboard.py --games kuhn --rules cfr+ dcfr --iterations 200 --no-readme

Each rule runs as its preset (`tensorcfr.PRESETS`: the step sizes of ftrl, oftrl and mmd are not
tuned per game here; see compare_algorithms.py for that), every run on one thread, evaluated 20
times a decade of iterations (the iteration a target is first met is known to 12%). Seconds
count solving only, not the evaluations. Writes leaderboard.json, leaderboard.md and
leaderboard.png in --out.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys

import torch

import tensorcfr
from tensorcfr.run.training import train

from readme_section import command, publish_picture, replace_section

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = ["cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "pdcfr+", "hs-dcfr", "hs-pcfr+", "ftrl", "oftrl", "mmd", "rtcfr+"]
GAMES = ["kuhn", "leduc", "liars_dice", "goofspiel(num_cards=4)", "goofspiel(num_cards=5,points_order=descending)"]
LARGE = ["goofspiel(num_cards=6,points_order=descending)", "ocp(1000)", "dudo(4,2,2)",
         "goofspiel(num_cards=7,points_order=descending)"]
TARGETS = (1e-3, 1e-6)  # NashConv


def first(rows: list[dict], key: str, target: float) -> dict | None:
    """The first evaluated row whose `key` is at or below `target`, or None."""
    return next((r for r in rows if r[key] <= target), None)


def run(cg, rule: str, iterations: int, seconds: float) -> list[dict]:
    """One rule on one compiled game: rows of (iteration, seconds, NashConv of the average and
    of the last iterate) at 20 evaluations a decade, until `iterations`, `seconds` of solving
    or both NashConvs below the smallest target."""
    solver = tensorcfr.Solver(cg, rule, device="cpu", threads=1)
    rows: list[dict] = []

    def keep(row):
        rows.append({k: row[k] for k in ("iteration", "seconds", "nash_conv", "nash_conv_current")})

    def finished() -> bool:  # both profiles below the smallest target: nothing left to measure
        return bool(rows) and max(rows[-1]["nash_conv"], rows[-1]["nash_conv_current"]) <= min(TARGETS)

    train(solver, iterations, "log:20", callback=keep, time_limit=seconds, should_stop=finished, histograms=False)
    return rows


def summary(rows: list[dict]) -> dict:
    """Per target and profile (average, last iterate): the first iteration and seconds it was met
    at, or None; and the final NashConvs."""
    out = {"iterations": rows[-1]["iteration"], "seconds": rows[-1]["seconds"],
           "nash_conv": rows[-1]["nash_conv"], "nash_conv_current": rows[-1]["nash_conv_current"],
           "ms_per_iteration": 1000 * rows[-1]["seconds"] / max(rows[-1]["iteration"], 1)}
    for t in TARGETS:
        for which, key in (("average", "nash_conv"), ("last", "nash_conv_current")):
            r = first(rows, key, t)
            out[f"{which}_{t:g}"] = None if r is None else {"iteration": r["iteration"], "seconds": r["seconds"]}
    return out


def cell(hit: dict | None) -> str:
    return "–" if hit is None else f"{hit['iteration']:,} ({hit['seconds']:.2f} s)"


def markdown(results: dict, meta: dict) -> str:
    lines = [f"NashConv targets reached by each rule's preset, as iterations (solving seconds); – where the "
             f"budget ({meta['iterations']:,} iterations or {meta['seconds']:g} s a run) ran out first. "
             f"{meta['machine']}, one thread, torch {meta['torch']}, float64, {meta['date']}.", "",
             "| game | rule | average ≤ 1e-3 | average ≤ 1e-6 | last ≤ 1e-3 | last ≤ 1e-6 | NashConv at the end "
             "(average / last) | ms/it |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for game, runs in results.items():
        for rule, s in runs.items():
            lines.append(f"| {game} | {rule} | {cell(s['average_0.001'])} | {cell(s['average_1e-06'])} | "
                         f"{cell(s['last_0.001'])} | {cell(s['last_1e-06'])} | {s['nash_conv']:.1e} / "
                         f"{s['nash_conv_current']:.1e} at {s['iterations']:,} | {s['ms_per_iteration']:.2f} |")
    # the fastest to 1e-6 of the average, by seconds, per game: what the presets' defaults answer to
    lines += ["", "Fastest to an average NashConv of 1e-6, by seconds: " + "; ".join(
        f"{game}: {best}" for game, best in winners(results).items()) + "."]
    return "\n".join(lines) + "\n"


def winners(results: dict) -> dict[str, str]:
    """Per game, the rule first to an average NashConv of 1e-6 in seconds (or of 1e-3, or none)."""
    out = {}
    for game, runs in results.items():
        for t in ("1e-06", "0.001"):
            hits = {rule: s[f"average_{t}"]["seconds"] for rule, s in runs.items() if s[f"average_{t}"]}
            if hits:
                rule = min(hits, key=hits.get)
                out[game] = f"{rule} ({hits[rule]:.2f} s{'' if t == '1e-06' else ', to 1e-3'})"
                break
        else:
            out[game] = "none within the budget"
    return out


def plot(curves: dict, path: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG (pip install matplotlib)", file=sys.stderr)
        return False
    games = list(curves)
    cols = min(3, len(games))
    nrows = (len(games) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5.4 * cols, 4.2 * nrows), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if max(len(c) for c in curves.values()) > len(colors):  # twelve rules: no colour used twice
        colors = list(plt.get_cmap("tab20").colors)
    for ax, game in zip(axes.flat, games):
        for k, (rule, rows) in enumerate(curves[game].items()):
            xs = [r["iteration"] for r in rows]
            c = colors[k % len(colors)]
            ax.plot(xs, [max(r["nash_conv"], 1e-15) for r in rows], color=c, label=rule)
            ax.plot(xs, [max(r["nash_conv_current"], 1e-15) for r in rows], color=c, ls=":", lw=0.9)
        for t in TARGETS:
            ax.axhline(t, color="grey", lw=0.6, ls="--")
        ax.set(xscale="log", yscale="log", xlabel="iterations", ylabel="NashConv", title=game)
        ax.grid(True, which="both", alpha=0.25)
    for ax in axes.flat[len(games):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, ncol=2)
    fig.suptitle("solid: average strategy; dotted: last iterate; dashed: the targets 1e-3 and 1e-6")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=None, help="game specs (default: the small suite)")
    p.add_argument("--large", action="store_true", help=f"add {', '.join(LARGE)} (outside CI: minutes each)")
    p.add_argument("--rules", nargs="+", default=RULES, help="rule presets or specs")
    p.add_argument("--iterations", type=int, default=10_000, help="iteration budget per run")
    p.add_argument("--seconds", type=float, default=20.0, help="solving-time budget per run")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--no-readme", dest="readme", action="store_false", help="do not rewrite the docs table")
    args = p.parse_args(argv)
    games = (args.games or GAMES) + (LARGE if args.large else [])
    try:  # a bad spec ends here, before any run
        for spec in games:
            tensorcfr.games.make(spec)
        for rule in args.rules:
            tensorcfr.make_config(rule)
    except (tensorcfr.TensorCFRError, tensorcfr.games.GameError) as e:
        p.error(str(e))
    torch.set_num_threads(1)
    meta = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "torch": torch.__version__,
            "date": datetime.date.today().isoformat(), "iterations": args.iterations, "seconds": args.seconds}
    results, curves = {}, {}
    for spec in games:
        cg = tensorcfr.compile(spec)
        results[spec], curves[spec] = {}, {}
        for rule in args.rules:
            rows = run(cg, rule, args.iterations, args.seconds)
            curves[spec][rule] = rows
            results[spec][rule] = s = summary(rows)
            print(f"{spec:>48} {rule:<8} NashConv {s['nash_conv']:.2e} / last {s['nash_conv_current']:.2e} "
                  f"after {s['iterations']:,} iterations, {s['seconds']:.1f} s", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "leaderboard.json"), "w") as f:
        json.dump({"meta": meta, "results": results, "curves": curves}, f, indent=1)
    md = markdown(results, meta)
    with open(os.path.join(args.out, "leaderboard.md"), "w") as f:
        f.write(md)
    png = os.path.join(args.out, "leaderboard.png")
    drawn = plot(curves, png)
    print(md)
    if args.readme:
        if drawn:
            publish_picture(png)
        replace_section("leaderboard", f"Made by `{command('leaderboard.py', argv)}`.\n\n{md}\n"
                        "![NashConv against iterations, every rule on every game](../assets/leaderboard.png)\n")


if __name__ == "__main__":
    main()
