"""From process start to a solved game, and the memory it took: tensorcfr's command line
beside OpenSpiel's C++ CFR+, LiteEFG's CFR+ and noregret's CFR+, each in a fresh process, as a
user meets them.

    python experiments/startup.py                          # Kuhn and Leduc to 1e-3, Liar's Dice to 1e-2
    python experiments/startup.py --games kuhn --runs 2 --no-readme

- tensorcfr: `python -m tensorcfr solve GAME --target-exploitability E` (the README's
  command; CFR+, every setting its default, the run directory and TensorBoard events written
  as a user gets them, into a temporary folder), and the same with `--capture compile`. It
  evaluates where its trend says the target is crossed, and stops there: those evaluations are
  in its time.
- OpenSpiel: `pyspiel.CFRPlusSolver`, `evaluate_and_update_policy()` for the iterations it
  needs, then `pyspiel.exploitability` once; LiteEFG: `baselines.CFRplus` on
  `OpenSpielEnv(..., traverse_type="Enumerate")`, `update_graph` + `update_strategy`, then its
  exploitability once; noregret (Python >= 3.12: its own interpreter, `--noregret-python` or
  $NOREGRET_PYTHON, as in bench.py): `nr.to_efg` of the OpenSpiel game, `nr.CFR_plus` for each
  player, one `nr.regret_minimization` call with alternation for the iterations it needs on its
  CPU kernel, then `game.exploitability` once. The iterations each peer needs are found first (its exploitability at
  log-spaced iterations, 20 a decade: the first point at or below the target), so its timed
  runs pay for one evaluation, not a search.

Each (game, solver) runs --runs times, the solvers interleaved; the table gives the median and
the fastest wall time from start to exit, and the peak resident memory of the process
(`ru_maxrss`, measured by a small launcher process: see `LAUNCHER`). Writes startup.{json,md}
into --out and the table into docs/results/benchmark.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_curve  # noqa: E402
from readme_section import command, replace_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOLVERS = ("tensorcfr solve", "tensorcfr solve --capture compile", "OpenSpiel C++ CFR+", "LiteEFG CFR+",
           "noregret CFR+")
TARGETS = {"kuhn": 1e-3, "leduc": 1e-3, "liars_dice": 1e-2}  # the exploitability each game is solved to
GAMES = {g: (peers_curve.OPENSPIEL_NAMES[g], target) for g, target in TARGETS.items()}  # with OpenSpiel's name

# a peer's whole run in a fresh process: load, solve for N iterations, evaluate once
OPENSPIEL = """
import sys, pyspiel
game, n = pyspiel.load_game(sys.argv[1]), int(sys.argv[2])
solver = pyspiel.CFRPlusSolver(game)
for _ in range(n):
    solver.evaluate_and_update_policy()
print(pyspiel.exploitability(game, solver.average_policy()))
"""
LITEEFG = """
import contextlib, io, sys, pyspiel, LiteEFG
n = int(sys.argv[2])
with contextlib.redirect_stdout(io.StringIO()):  # its constructors print banners
    graph = LiteEFG.baselines.CFRplus.graph()
    env = LiteEFG.OpenSpielEnv(pyspiel.load_game(sys.argv[1]), traverse_type="Enumerate")
    env.set_graph(graph)
for _ in range(n):
    graph.update_graph(env)
    env.update_strategy(graph.current_strategy(), update_best=False)
print(sum(env.exploitability(graph.current_strategy(), "linear-avg-iterate")) / 2)
"""

# noregret's run as its README writes it (CPU kernel); with a target instead of a count, the
# first log-spaced iteration (20 a decade) its average is at or below it, or 0
NOREGRET = """
import math, sys, noregret as nr
name, arg = sys.argv[1], sys.argv[2]
ker = nr.FPKer()
game = nr.to_efg(ker, nr.OpenSpielGame(ker, name))
rows, cols = nr.CFR_plus(ker, game.row_sequence_form_polytope), nr.CFR_plus(ker, game.column_sequence_form_polytope)
expl = lambda: float(game.exploitability(rows.average_strategy, cols.average_strategy))
if arg.startswith("target="):
    target, done, found, points = float(arg[7:]), [0], [0], sorted({math.ceil(10 ** (k / 20)) for k in range(121)})
    def update():
        done[0] += 1
        if done[0] in points and expl() <= target:
            found[0] = done[0]
        return bool(found[0])
    nr.regret_minimization(game, rows, cols, alternation=True, prediction=False, iteration_count=points[-1],
                           update=update, progress_bar=False)
    print(found[0])
else:
    nr.regret_minimization(game, rows, cols, alternation=True, prediction=False, iteration_count=int(arg),
                           progress_bar=False)
    print(expl())
"""

# Starts the measured process and reports its wall time and peak memory. A child inherits the
# peak resident size of the process it was forked from (Linux keeps it across exec): forked
# from this script, which has imported torch, every child would report at least ~290 MB.
LAUNCHER = """
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
code = subprocess.call(sys.argv[2:], stdout=sys.stdout, stderr=sys.stderr)
seconds = time.perf_counter() - t0
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "seconds": seconds, "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}, f)
"""


def run(argv: list[str], cwd: str, env: dict | None = None) -> dict:
    """One fresh process, started by a small launcher: wall seconds from start to exit, peak
    resident MB, its stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        p = subprocess.run([sys.executable, "-c", LAUNCHER, report, *argv], cwd=cwd, capture_output=True, text=True,
                           env={**os.environ, **(env or {})})
        if p.returncode or not os.path.exists(report):
            raise RuntimeError(f"{' '.join(argv[:5])} failed: {p.stderr.strip()[-500:]}")
        r = json.load(open(report))
    if r["code"]:
        raise RuntimeError(f"{' '.join(argv[:5])} failed: {p.stderr.strip()[-500:]}")
    return {"seconds": r["seconds"], "peak_mb": r["maxrss_kb"] / 1024, "stdout": p.stdout}


def iterations_needed(solver: str, name: str, target: float, seconds: float = 600.0) -> int | None:
    """The first log-spaced iteration (20 a decade) at which the peer's exploitability is at or
    below `target`, in this process (`peers_curve`'s runs of each peer); None if the peer is not
    installed or does not get there within `seconds` of solving."""
    run = {"OpenSpiel C++ CFR+": peers_curve.curve_openspiel, "LiteEFG CFR+": peers_curve.curve_liteefg}[solver]
    c = run(name, seconds, target)
    if c is None or c["points"][-1][2] > target:
        return None
    return c["points"][-1][0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per game and solver")
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--noregret-python", default=os.environ.get("NOREGRET_PYTHON"),
                    help="a Python >= 3.12 with noregret installed (default $NOREGRET_PYTHON; none: skipped)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--no-readme", dest="readme", action="store_false", help="do not rewrite the docs' table")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as cwd:
        for game in args.games:
            name, target = GAMES[game]
            ours = [sys.executable, "-m", "tensorcfr", "solve", game, "--target-exploitability", str(target),
                    "--json", "--quiet", "--logdir", os.path.join(cwd, "runs")]
            solvers = {"tensorcfr solve": ours, "tensorcfr solve --capture compile": ours + ["--capture", "compile"]}
            solvers = {k: v for k, v in solvers.items() if k in args.solvers}
            needed = {}
            for peer, child in (("OpenSpiel C++ CFR+", OPENSPIEL), ("LiteEFG CFR+", LITEEFG)):
                if peer not in args.solvers:
                    continue
                n = iterations_needed(peer, name, target)
                if n is None:
                    print(f"{game}: {peer} is not installed (or did not reach {target:g}): skipped", flush=True)
                    continue
                needed[peer] = n
                solvers[peer] = [sys.executable, "-c", child, name, str(n)]
            if "noregret CFR+" in args.solvers and args.noregret_python:
                found = subprocess.run([args.noregret_python, "-c", NOREGRET, name, f"target={target}"],
                                       capture_output=True, text=True)
                n = int(found.stdout.split()[-1]) if found.returncode == 0 and found.stdout.split() else 0
                if n:
                    needed["noregret CFR+"] = n
                    solvers["noregret CFR+"] = [args.noregret_python, "-c", NOREGRET, name, str(n)]
                else:
                    print(f"{game}: noregret did not run or reach {target:g}: skipped "
                          f"({found.stderr.strip()[-300:]})", flush=True)
            runs: dict[str, list[dict]] = {s: [] for s in solvers}
            for _ in range(args.runs):  # interleaved: a slow spell of the machine hits every solver
                for solver, cmd in solvers.items():
                    # compiling: a cache of this experiment's own, so the first run compiles cold
                    r = run(cmd, cwd, {"TORCHINDUCTOR_CACHE_DIR": os.path.join(cwd, "inductor")})
                    if solver.startswith("tensorcfr"):
                        result = json.loads(r["stdout"])
                        r["iterations"], r["exploitability"] = result["iterations"], result["exploitability"]
                    else:
                        r["iterations"], r["exploitability"] = needed[solver], float(r["stdout"].split()[-1])
                    del r["stdout"]
                    runs[solver].append(r)
                    print(json.dumps({"game": game, "solver": solver, **r}), flush=True)
            for solver, rs in runs.items():
                seconds = [r["seconds"] for r in rs]
                rows.append({"game": game, "target": target, "solver": solver, "iterations": rs[-1]["iterations"],
                             "exploitability": rs[-1]["exploitability"], "seconds": statistics.median(seconds),
                             "seconds_min": min(seconds), "first_seconds": seconds[0],
                             "peak_mb": max(r["peak_mb"] for r in rs), "runs": rs})
    import torch

    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
    stamp = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "startup.json"), "w") as f:
        json.dump({"date": stamp, "machine": machine, "rows": rows}, f, indent=1)
    md = markdown(rows, machine, stamp, args.runs)
    with open(os.path.join(args.out, "startup.md"), "w") as f:
        f.write(md)
    print(md)
    if args.readme:
        replace_section("startup", f"Made by `{command('startup.py', argv)}`.\n\n{md}")


def markdown(rows: list[dict], machine: str, stamp: str, runs: int) -> str:
    lines = [f"Measured {stamp} on {machine}; {runs} fresh processes per row, interleaved. Seconds from "
             "process start to exit with the game solved to the target (median, fastest in brackets; the first "
             "run of `--capture compile` compiles into an empty cache, later ones read Inductor's cache from disk: "
             "first run apart); peak resident memory of the process.",
             "",
             "| game | target | solver | iterations | exploitability | seconds | first run | peak memory (MB) |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['game']} | {r['target']:g} | {r['solver']} | {r['iterations']:,} "
                     f"| {r['exploitability']:.3g} | {r['seconds']:.2f} ({r['seconds_min']:.2f}) "
                     f"| {r['first_seconds']:.2f} | {r['peak_mb']:.0f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
