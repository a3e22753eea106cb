"""Exact against Monte-Carlo iterations: exploitability against solving time, per game.

    python experiments/sampling.py                              # Leduc, Dudo(4,1,2), Dudo(4,2,2)
    python experiments/sampling.py --games leduc --seconds 10 --seeds 2 --no-readme
    python experiments/sampling.py --thesis-seconds 300         # the thesis' chance-sampled CFR longer
    python experiments/sampling.py --peers-only --seeds 3       # against OpenSpiel's MCCFR on Leduc

Each game runs the best exact presets (CFR+ and DCFR) once (they are deterministic) and chance,
external (both with CFR+) and outcome sampling (with CFR: regret matching+ stalls there), with
K = 1 sample per estimate and a large K, over several seeds, each for the same solving-time
budget; "chance/touched" is chance sampling updating only what each sample touches, and a scheme
ending in ":public" samples in the public-tree form (`tensorcfr.sampling.public`: a sample is a
deal of types, touching one type column of each player). Time counts iterations only; the exact
evaluations between them are not timed. The table gives, per configuration, the time and
iterations to exploitability 1e-2 (median over the seeds, and the slowest seed) and the
exploitability at the end of the budget (median and range); the plot draws every run.

The thesis rows (`--thesis-games`, `--thesis-seconds`) repeat the thesis' own setting,
chance-sampled vanilla CFR (simultaneous updates, uniform averaging, one deal per iteration,
only the infosets it touches updated), on Dudo(4,1,2), OCP(12) and, in the public-tree form,
Dudo(5,2,2): the
iterations per second against the thesis' (its 10-hour runs' iterations / 36,000 s), and the
ε (100 × NashConv) reached.

Also measured: the cost of one iteration of each scheme against an exact one of the same form
on Dudo(4,2,2) (`--cost-game`), in both forms, and the share of payoff entries each touches.
`--keep` reuses the runs already in OUT/sampling.json (same game, algorithm, scheme, K and seed)
and runs only the others.

Writes sampling.json, sampling.md and sampling.png (where matplotlib is installed) into --out
and the table into the README's sampling section.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch

import tensorcfr
from tensorcfr.sampling import EPSILON_DEFAULT

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers_curve import OPENSPIEL_NAMES  # noqa: E402
from readme_section import command, publish_picture, replace_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "shared", "reference", "thesis-reference.json")
# 10 h: iterations, eps %; Dudo(5,2,2) samples in the public-tree form (the generic one needs 19 GB)
THESIS = {"dudo(4,1,2)": (1_215_600, 0.0971), "ocp(12)": (1_147_919_240, 0.0032), "dudo(5,2,2)": (3_826, 15.1963)}
THESIS_FORM = {"dudo(5,2,2)": "public"}
TARGET = 1e-2
# outcome sampling with regret matching+ stalls (Leduc, CFR+, K = 1: exploitability 0.8-1.05 after
# 15 s against 0.1 for chance sampling): it is run with vanilla regret matching, its usual pairing
SAMPLED_ALGO = {"chance": "cfr+", "external": "cfr+", "outcome": "cfr"}


def settings(sampling: str) -> tuple[str, dict]:
    """("generic" or "public", the Solver's sampling keywords) of a scheme such as "chance",
    "chance/touched" (update_scope="touched") or "chance/touched:public" (the public-tree form)."""
    sampling, _, form = sampling.partition(":")
    scheme, _, scope = sampling.partition("/")
    kw = {} if scheme == "none" else dict(sampling=scheme, update_scope=scope or "all")
    return form or "generic", kw


class Budget:
    """The evaluation schedule and stop rule of one curve under a solving-time budget, for
    `tensorcfr.train`: the next evaluation doubles the last gap (at most half the iterations so
    far, about 2 points per doubling of t) but falls near the budget where that comes first, and
    the run stops at the first evaluation past the budget. Time is train's solving time, which
    leaves the evaluations out.

    Example:
        >>> b = Budget(10.0); b.next(0, []), b.next(1, [(1, 0.5)])
        (1, 2)
    """

    def __init__(self, seconds: float):
        self.seconds, self.solving, self.gap = seconds, 0.0, 0

    def next(self, iteration: int, points: list) -> int:
        gap = max(1, min(2 * self.gap, int(iteration * 0.5) or 1)) if iteration else 1
        if iteration and self.solving > 0:  # the last one near the budget
            gap = min(gap, int((self.seconds - self.solving) / (self.solving / iteration)) + 1)
        self.gap = max(gap, 1)
        return iteration + self.gap

    def seen(self, row: dict) -> None:  # train's callback: the solving seconds so far
        self.solving = row["seconds"]

    def spent(self) -> bool:  # train's should_stop
        return self.solving >= self.seconds


def curve(game: str, algo: str, sampling: str, samples: int, seed: int, seconds: float, cg=None) -> dict:
    """One run by `tensorcfr.train` under `Budget(seconds)`: [(solving seconds, iteration,
    exploitability, NashConv, game value)] at geometrically spaced points."""
    form, kw = settings(sampling)
    if kw:
        kw.update(samples=samples, seed=seed)
    if cg is None:
        kw["form"] = form
    s = tensorcfr.Solver(cg if cg is not None else game, algo, device="cpu", **kw)
    budget = Budget(seconds)
    rows = tensorcfr.train(s, 2**62, eval_every=budget, callback=budget.seen, should_stop=budget.spent,
                           histograms=False)
    points = [(r["seconds"], r["iteration"], r["exploitability"], r["nash_conv"], r["game_value"]) for r in rows]
    reach = next(((t, it) for t, it, e, _, _ in points if e <= TARGET), None)
    return {"game": game, "algorithm": algo, "sampling": sampling, "samples": samples, "seed": seed,
            "points": points, "reached": reach, "final": points[-1][2], "iterations": s.iteration,
            "ms_per_iteration": 1000 * points[-1][0] / s.iteration, "sampled_fraction": s.sampled_fraction}


COST_SCHEMES = ("none", "chance", "external", "outcome", "chance/touched", "external/touched", "outcome/touched")


def iteration_cost(game: str, iterations: int = 10, repeats: int = 3) -> list[dict]:
    """ms an iteration of exact CFR+ and of each scheme (K = 1) on `game` in each form (the
    fastest of `repeats` runs of `iterations`), one compile per form; `of_exact` against the
    exact iteration of the same form."""
    out = []
    for form in ("generic", "public"):
        cg = tensorcfr.compile(game, chance=True) if form == "generic" else tensorcfr.compile(game, form="public")
        for sampling in COST_SCHEMES:
            s = tensorcfr.Solver(cg, "cfr+", device="cpu", **settings(sampling)[1])
            s.step(2)
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                s.step(iterations)
                best = min(best, (time.perf_counter() - t0) / iterations)
            out.append({"game": game, "form": form, "sampling": sampling, "ms_per_iteration": 1000 * best,
                        "sampled_fraction": s.sampled_fraction})
        exact = next(r for r in out if r["form"] == form and r["sampling"] == "none")["ms_per_iteration"]
        for r in out:
            if r["form"] == form:
                r["of_exact"] = r["ms_per_iteration"] / exact
    return out


def openspiel_mccfr(game: str, scheme: str, seed: int):
    """(the OpenSpiel game, its C++ MCCFR solver of `scheme`) as its documentation makes them:
    default averaging, outcome sampling's exploration 0.6 (ours by default too)."""
    import pyspiel

    spiel = pyspiel.load_game(OPENSPIEL_NAMES.get(game, game))
    return spiel, (pyspiel.ExternalSamplingMCCFRSolver(spiel, seed) if scheme == "external" else
                   pyspiel.OutcomeSamplingMCCFRSolver(spiel, EPSILON_DEFAULT, seed))


def peers(game: str, iterations: int, seeds: int) -> list[dict]:
    """External and outcome sampling against OpenSpiel's C++ MCCFR solvers (as their
    documentation runs them: `run_iteration` in a loop; one traversal per player an iteration)
    at equal iterations: ours is vanilla CFR with alternating updates, K = 1."""
    try:
        import pyspiel
    except ImportError:
        print("open_spiel is not installed: no OpenSpiel rows", file=sys.stderr)
        return []
    out = []
    for scheme in ("external", "outcome"):
        for seed in range(seeds):
            spiel, solver = openspiel_mccfr(game, scheme, seed)
            t0 = time.perf_counter()
            for _ in range(iterations):
                solver.run_iteration()
            theirs = time.perf_counter() - t0
            s = tensorcfr.Solver(game, "cfr", device="cpu", sampling=scheme, samples=1, seed=seed,
                                 updates="alternating")
            t0 = time.perf_counter()
            s.step(iterations)
            ours = time.perf_counter() - t0
            out.append({"game": game, "sampling": scheme, "seed": seed, "iterations": iterations,
                        "seconds": ours, "openspiel_seconds": theirs,
                        "exploitability": float(s.evaluate()["average"].exploitability[0]),
                        "openspiel_exploitability": float(pyspiel.exploitability(spiel, solver.average_policy()))})
            print(f"peer {game} {scheme} seed {seed}: ours {ours:.1f} s {out[-1]['exploitability']:.4f}, OpenSpiel "
                  f"{theirs:.1f} s {out[-1]['openspiel_exploitability']:.4f}", flush=True)
    return out


def at_marks(marks: list[float], step, measure) -> list[tuple]:
    """[(mark, *measure())] for each solving-time mark: `step()` is called (and timed) until
    the solving time passes the mark, then `measure()` (not timed) gives (iterations,
    exploitability)."""
    solving, points = 0.0, []
    for mark in sorted(marks):
        while solving < mark:
            t0 = time.perf_counter()
            step()
            solving += time.perf_counter() - t0
        points.append((mark, *measure()))
    return points


def timed_run(job: tuple) -> dict:
    """One run of `--equal-time` (its own process): ("openspiel", game, scheme, seed, marks) runs
    OpenSpiel's C++ MCCFR solver (`openspiel_mccfr`) in blocks of 100 iterations (the clock read
    costs < 1% of them); ("tensorcfr", game, scheme, seed, marks, K) runs our `Solver` with CFR+
    (scheme "none": exact iterations) in chunks doubling up to 64. Both on one thread."""
    kind, game, scheme, seed, marks = job[:5]
    if kind == "openspiel":
        import pyspiel

        spiel, solver = openspiel_mccfr(game, scheme, seed)
        done = [0]

        def step():
            for _ in range(100):
                solver.run_iteration()
            done[0] += 100

        points = at_marks(marks, step, lambda: (done[0], float(pyspiel.exploitability(spiel, solver.average_policy()))))
        label, k = f"OpenSpiel C++ {scheme} sampling", 1
    else:
        torch.set_num_threads(1)
        k = job[5]
        kw = {} if scheme == "none" else dict(sampling=scheme, samples=k, seed=seed)
        s = tensorcfr.Solver(game, "cfr+", device="cpu", threads=1, **kw)
        chunk = [1]

        def step():
            s.step(chunk[0])
            chunk[0] = min(2 * chunk[0], 64)

        points = at_marks(marks, step, lambda: (s.iteration, float(s.evaluate()["average"].exploitability[0])))
        label = "tensorcfr CFR+ exact" if scheme == "none" else f"tensorcfr CFR+ {scheme} sampling, K = {k:,}"
    print(f"{game} {label} seed {seed}: " + ", ".join(f"{m:g} s {e:.3g}" for m, _, e in points), flush=True)
    return {"game": game, "solver": kind, "sampling": scheme, "samples": k, "seed": seed, "label": label,
            "points": points}


def equal_time(games: list[str], seconds: list[float], samples: list[int], seeds: int, jobs: int) -> list[dict]:
    """Every `timed_run` of `--equal-time`: per game, OpenSpiel's external and outcome sampling,
    ours with each K of `samples` for both schemes, and our exact CFR+ (deterministic: one
    seed), `jobs` processes at a time (each on one thread)."""
    todo = []
    for game in games:
        todo.append(("tensorcfr", game, "none", 0, seconds, 1))
        for scheme in ("external", "outcome"):
            for seed in range(seeds):
                todo.append(("openspiel", game, scheme, seed, seconds))
                todo += [("tensorcfr", game, scheme, seed, seconds, k) for k in samples]
    if jobs <= 1:
        return [timed_run(j) for j in todo]
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs, maxtasksperchild=1) as pool:
        return pool.map(timed_run, todo, chunksize=1)


def time_table(rows: list[dict]) -> str:
    """The `--equal-time` table, a row per game and solver in the order they ran: the
    exploitability of the average at each solving-time mark (median over the seeds), and the
    iterations run by the last mark."""
    marks = sorted({p[0] for r in rows for p in r["points"]})
    out = ["| game | solver | seeds | " + " | ".join(f"after {m:g} s" for m in marks) + " | iterations |",
           "|---|---|---:|" + "---:|" * len(marks) + "---:|"]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["game"], r["label"]), []).append(r)
    for (game, label), rs in groups.items():
        cells = [f"{statistics.median(r['points'][i][2] for r in rs):.2e}" for i in range(len(marks))]
        its = statistics.median(r["points"][-1][1] for r in rs)
        out.append(f"| {game} | {label} | {len(rs)} | " + " | ".join(cells) + f" | {its:,.0f} |")
    return "\n".join(out) + "\n"


def peer_table(rows: list[dict]) -> str:
    out = ["| game | sampling | iterations | seeds | exploitability, ours (median [min, max]) | OpenSpiel | "
           "seconds, ours | OpenSpiel | speed-up |", "|---|---|---:|---:|---|---|---:|---:|---:|"]
    for scheme in ("external", "outcome"):
        rs = [r for r in rows if r["sampling"] == scheme]
        if not rs:
            continue

        def span(k, rs=rs):
            vals = [r[k] for r in rs]
            return f"{statistics.median(vals):.4f} [{min(vals):.4f}, {max(vals):.4f}]"
        ours, theirs = statistics.median(r["seconds"] for r in rs), statistics.median(r["openspiel_seconds"] for r in rs)
        out.append(f"| {rs[0]['game']} | {scheme} | {rs[0]['iterations']:,} | {len(rs)} | {span('exploitability')} | "
                   f"{span('openspiel_exploitability')} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.2g}× |")
    return "\n".join(out) + "\n"


def summarize(runs: list[dict]) -> list[dict]:
    rows = []
    keys = sorted({(r["game"], r["algorithm"], r["sampling"], r["samples"]) for r in runs},
                  key=lambda k: (GAMES_ORDER.get(k[0], 99), k[2] != "none", k[2], k[3], k[1]))
    for key in keys:
        rs = [r for r in runs if (r["game"], r["algorithm"], r["sampling"], r["samples"]) == key]
        hit = [r["reached"] for r in rs if r["reached"]]
        finals = [r["final"] for r in rs]
        rows.append({"game": key[0], "algorithm": key[1], "sampling": key[2], "samples": key[3], "seeds": len(rs),
                     "reached": f"{len(hit)}/{len(rs)}",
                     "seconds_to_target": statistics.median([h[0] for h in hit]) if len(hit) == len(rs) else None,
                     "slowest_to_target": max(h[0] for h in hit) if len(hit) == len(rs) else None,
                     "iterations_to_target": statistics.median([h[1] for h in hit]) if len(hit) == len(rs) else None,
                     "final_median": statistics.median(finals), "final_min": min(finals), "final_max": max(finals),
                     "ms_per_iteration": statistics.median([r["ms_per_iteration"] for r in rs]),
                     "sampled_fraction": rs[0]["sampled_fraction"]})
    return rows


GAMES_ORDER: dict[str, int] = {}


def table(rows: list[dict], seconds: dict, cost: list[dict], thesis: list[dict]) -> str:
    fmt = lambda x, f: "–" if x is None else format(x, f)  # noqa: E731
    out = ["| game | algorithm | sampling | K | seeds | s to 1e-2 (median / slowest) | iterations to 1e-2 | "
           "exploitability at the budget (median [min, max]) | ms/it | entries touched |",
           "|---|---|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        name = "exact" if r["sampling"] == "none" else r["sampling"]
        to = (f"{r['seconds_to_target']:.2f} / {r['slowest_to_target']:.2f}" if r["seconds_to_target"] is not None
              else f"not reached ({r['reached']})")
        spread = (f"{r['final_median']:.2e}" if r["seeds"] == 1 else
                  f"{r['final_median']:.2e} [{r['final_min']:.2e}, {r['final_max']:.2e}]")
        out.append(f"| {r['game']} ({seconds[r['game']]:g} s) | {r['algorithm']} | {name} | {r['samples']} | "
                   f"{r['seeds']} | {to} | {fmt(r['iterations_to_target'], ',.0f')} | {spread} | "
                   f"{r['ms_per_iteration']:.3f} | {fmt(r['sampled_fraction'], '.4f')} |")
    if cost:
        out += ["", f"One iteration of CFR+ on {cost[0]['game']} (K = 1), against an exact one of the same form "
                "(the fastest of 3 runs of 10 iterations):", "",
                "| form | iteration | ms | × exact | entries touched |", "|---|---|---:|---:|---:|"]
        for c in cost:
            out.append(f"| {c.get('form', 'generic')} | {'exact' if c['sampling'] == 'none' else c['sampling']} | "
                       f"{c['ms_per_iteration']:.1f} | {c['of_exact']:.2f} | {fmt(c['sampled_fraction'], '.4f')} |")
    if thesis:
        out += ["", "The thesis' setting, chance-sampled vanilla CFR (simultaneous, uniform averaging, K = 1, "
                "updating the infosets each deal touches):", "",
                "| game | form | iterations | seconds | ε (%) | iterations/s | thesis: iterations in 10 h | thesis ε (%) | "
                "thesis iterations/s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for t in thesis:
            out.append(f"| {t['game']} | {t.get('form', 'generic')} | {t['iterations']:,} | {t['seconds']:.0f} | "
                       f"{t['eps_percent']:.4f} | "
                       f"{t['iterations_per_second']:,.1f} | {t['thesis_iterations']:,} | {t['thesis_eps_percent']} | "
                       f"{t['thesis_iterations'] / 36000:,.1f} |")
    return "\n".join(out) + "\n"


def plot(runs: list[dict], path: str) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return False
    games = list(dict.fromkeys(r["game"] for r in runs))
    fig, axes = plt.subplots(1, len(games), figsize=(5.5 * len(games), 4.2), squeeze=False)
    colors = {}
    for ax, game in zip(axes[0], games):
        for r in (r for r in runs if r["game"] == game):
            label = f"{r['algorithm']} exact" if r["sampling"] == "none" else f"{r['sampling']} K={r['samples']}"
            color = colors.setdefault(label, f"C{len(colors) % 10}")
            t = [p[0] for p in r["points"]]
            e = [p[2] for p in r["points"]]
            ax.loglog(t, e, color=color, lw=1.8 if r["sampling"] == "none" else 0.9,
                      label=label if r["seed"] == 0 else None, alpha=1 if r["sampling"] == "none" else 0.7)
        ax.axhline(TARGET, color="gray", ls=":", lw=0.8)
        ax.set_title(game)
        ax.set_xlabel("solving time (s, CPU)")
        ax.set_ylabel("exploitability of the average")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", nargs="+", default=["leduc", "dudo(4,1,2)", "dudo(4,2,2)"])
    ap.add_argument("--seconds", nargs="+", type=float, default=[15, 20, 45],
                    help="solving-time budget per run, one per game (the last repeats)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--large-k", type=int, default=16, help="the large number of samples per estimate")
    ap.add_argument("--schemes", nargs="+",
                    default=["chance", "chance/touched", "chance/touched:public", "external", "outcome"],
                    help="sampling schemes; SCHEME/touched updates only what a sample touches; SCHEME:public "
                         "samples in the public-tree form")
    ap.add_argument("--keep", action="store_true", help="reuse the runs already in OUT/sampling.json")
    ap.add_argument("--thesis-seconds", type=float, default=60, help="budget of each thesis row (0: none)")
    ap.add_argument("--thesis-games", nargs="+", default=list(THESIS), choices=list(THESIS),
                    help="the games of the thesis rows")
    ap.add_argument("--cost-game", default="dudo(4,2,2)", help="game of the per-iteration cost rows ('' for none)")
    ap.add_argument("--openspiel-iterations", type=int, default=8000,
                    help="iterations of the OpenSpiel MCCFR comparison (--peers-only) on --openspiel-game")
    ap.add_argument("--openspiel-game", default="leduc")
    ap.add_argument("--peers-only", action="store_true", help="only the OpenSpiel comparison (its own files)")
    ap.add_argument("--equal-time", action="store_true",
                    help="only the equal-time comparison with OpenSpiel's MCCFR (its own files)")
    ap.add_argument("--time-games", nargs="+", default=["leduc", "liars_dice"], help="games of --equal-time")
    ap.add_argument("--time-seconds", nargs="+", type=float, default=[30, 120],
                    help="solving-time marks of --equal-time")
    ap.add_argument("--time-samples", nargs="+", type=int, default=[256, 65536],
                    help="our samples per estimate in --equal-time")
    ap.add_argument("--jobs", type=int, default=1, help="--equal-time runs at a time (each on one thread)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--no-readme", action="store_true")
    a = ap.parse_args(argv)
    torch.set_num_threads(os.cpu_count() or 1)
    if a.equal_time:
        rows = equal_time(a.time_games, a.time_seconds, a.time_samples, a.seeds, a.jobs)
        body = (f"Made by `{command('sampling.py', argv)}` on {platform.machine()}, {os.cpu_count()} CPUs, "
                f"torch {torch.__version__}, {time.strftime('%Y-%m-%d')}; every run on one thread, "
                f"{a.jobs} at a time. Exploitability of the average strategy after that much solving "
                f"time (evaluations not timed), median over the seeds.\n\n" + time_table(rows))
        return write(a, "sampling_time", rows, body, "sampling-time")
    if a.peers_only:
        rows = peers(a.openspiel_game, a.openspiel_iterations, a.seeds)
        body = (f"Made by `{command('sampling.py', argv)}` on {platform.machine()}, {os.cpu_count()} CPUs, "
                f"torch {torch.__version__}, {time.strftime('%Y-%m-%d')}.\n\n" + peer_table(rows))
        return write(a, "sampling_openspiel", rows, body, "sampling-openspiel")
    seconds = {g: a.seconds[min(i, len(a.seconds) - 1)] for i, g in enumerate(a.games)}
    GAMES_ORDER.update({g: i for i, g in enumerate(a.games)})
    earlier = {}  # --keep: the runs and thesis rows of OUT/sampling.json
    if a.keep and os.path.exists(os.path.join(a.out, "sampling.json")):
        with open(os.path.join(a.out, "sampling.json")) as f:
            earlier = json.load(f)
    kept = {(r["game"], r["algorithm"], r["sampling"], r["samples"], r["seed"]): r for r in earlier.get("runs", [])}
    kept_thesis = {t["game"]: t for t in earlier.get("thesis", [])}
    runs = []
    for game in a.games:
        cgs = {}  # one compile per game and form serves every run
        configs = [("cfr+", "none", 1, 0), ("dcfr", "none", 1, 0)]
        configs += [(SAMPLED_ALGO[sch.split("/")[0].split(":")[0]], sch, k, seed)
                    for sch in a.schemes for k in (1, a.large_k) for seed in range(a.seeds)]
        for algo, sampling, k, seed in configs:
            if (game, algo, sampling, k, seed) in kept:
                runs.append(kept[game, algo, sampling, k, seed])
                continue
            form = settings(sampling)[0]
            if form not in cgs:
                cgs[form] = tensorcfr.compile(game, chance=True) if form == "generic" else \
                    tensorcfr.compile(game, form="public")
            r = curve(game, algo, sampling, k, seed, seconds[game], cgs[form])
            runs.append(r)
            print(f"{game} {algo} {sampling} K={k} seed={seed}: {r['iterations']} iterations, exploitability "
                  f"{r['final']:.3e}, 1e-2 at {r['reached']}", flush=True)
    cost = iteration_cost(a.cost_game) if a.cost_game else []
    for c in cost:
        print(f"cost on {c['game']}: {c['sampling']} {c['ms_per_iteration']:.1f} ms ({c['of_exact']:.2f} x exact)")
    thesis = []
    if a.thesis_seconds > 0:
        for game in a.thesis_games:
            its, eps = THESIS[game]
            if game in kept_thesis:
                thesis.append(kept_thesis[game])
                continue
            form = THESIS_FORM.get(game, "generic")
            r = curve(game, "cfr", "chance/touched" + (":public" if form == "public" else ""), 1, 0, a.thesis_seconds)
            t, n, _, nash, _ = r["points"][-1]
            thesis.append({"game": game, "form": form, "iterations": n, "seconds": t, "eps_percent": 100 * nash,
                           "iterations_per_second": n / t, "thesis_iterations": its, "thesis_eps_percent": eps,
                           "points": r["points"]})
            print(f"thesis setting {game}: {n} iterations in {t:.0f} s, eps {100 * nash:.4f}%", flush=True)
    rows = summarize(runs)
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "torch": torch.__version__, "command": command("sampling.py", argv)}
    body = (f"Made by `{meta['command']}` on {meta['machine']}, torch {meta['torch']}, {meta['date']}. "
            f"Each run has the solving-time budget given with its game (it stops at the first evaluation past "
            f"it); sampled runs draw K samples per estimate, over {a.seeds} seeds.\n\n" + table(rows, seconds, cost, thesis))
    os.makedirs(a.out, exist_ok=True)
    plot(runs, os.path.join(a.out, "sampling.png"))
    if not a.no_readme and os.path.exists(os.path.join(a.out, "sampling.png")):
        publish_picture(os.path.join(a.out, "sampling.png"))
    return write(a, "sampling", {**meta, "rows": rows, "runs": runs, "cost": cost, "thesis": thesis}, body,
                 "sampling-table")


def write(a, stem: str, data, body: str, section: str) -> int:
    """OUT/STEM.json and OUT/STEM.md, the table printed and put in the README's `section`."""
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, f"{stem}.json"), "w") as f:
        json.dump(data, f, indent=1)
    with open(os.path.join(a.out, f"{stem}.md"), "w") as f:
        f.write(body)
    print(body)
    if not a.no_readme:
        replace_section(section, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
