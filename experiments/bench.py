"""Milliseconds per iteration: tensorcfr against OpenSpiel's C++ CFRSolver / CFRPlusSolver and
LiteEFG, on the same games, in this one script.

Games: Kuhn, Leduc and Liar's Dice as OpenSpiel ships them (ours compile to the same trees),
OCP(1000), Dudo(6,1,1), Dudo(4,2,2), which OpenSpiel runs from our Gambit `.efg` export
(`tensorcfr.io.interop.to_efg`), and OpenSpiel games through the importer (`openspiel:...`:
Leduc, against the built-in one, Goofspiel with 4 cards and Oshi-Zumo, simultaneous-move games
in OpenSpiel's turn-based form, which both sides run). Every solver runs the same number of iterations from the same
start, and both CFR implementations update alternately, so their exploitabilities after the
run must agree: the table shows both, as a check that the same thing was computed.

Peers that are not installed are skipped, saying so: `pip install -e ".[bench]"` installs
OpenSpiel; LiteEFG (PyPI `liteefg`, built from source) is used where importable. A peer run
stops after `--peer-seconds` of iterations; its ms/iteration is still measured.

Games up to `--compile-max-histories` also get rows with the iteration through
`torch.compile` ("cpu-compile"). On a machine with CUDA it adds GPU rows, eager ("cuda"),
with the iteration captured as a CUDA graph ("cuda-graph") and compiled ("cuda-compile"),
and reports the GPU time as a multiple of the
bytes-moved floor: the bytes one iteration must at least read and write (`bytes_per_iteration`)
over the device's copy bandwidth, measured here. CPU rows report the same multiple.

    python experiments/bench.py                             # every game, cfr and cfr+
    python experiments/bench.py --games kuhn leduc --algos cfr+
    python experiments/bench.py --games liars_dice "dudo(4,2,2)" "dudo(5,2,2)" --forms generic public \
        --readme-section bench-public                       # the public-tree form against the generic one

`--forms generic public` times each game in both compiled forms (`tensorcfr.compile(form=)`);
the generic form is skipped past `--generic-max-histories` (Dudo(5,2,2): 18.9 GB).

Writes `bench.json` and `bench.md` into `--out`.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import statistics
import sys
import time

import torch

from tensorcfr import games
import tensorcfr
from readme_section import command, replace_section

# game -> (OpenSpiel name or "efg", iterations timed)
GAMES = {
    "kuhn": ("kuhn_poker", 1000),
    "leduc": ("leduc_poker", 100),
    "liars_dice": ("liars_dice", 20),
    "ocp(1000)": ("efg", 5),
    "dudo(6,1,1)": ("efg", 20),
    "dudo(4,2,2)": ("efg", 3),
    "dudo(5,2,2)": ("efg", 3),  # only when named: no peer runs it, and the generic form needs 18.9 GB
    # OpenSpiel's games through the importer (`openspiel:`): OpenSpiel runs its own tree
    "openspiel:leduc_poker": ("leduc_poker", 100),  # against the built-in leduc above
    "openspiel:goofspiel(num_cards=4,imp_info=True,points_order=descending)":
        ("goofspiel(num_cards=4,imp_info=True,points_order=descending)", 20),
    "openspiel:oshi_zumo(coins=6,size=2,horizon=6)": ("oshi_zumo(coins=6,size=2,horizon=6)", 20),
}
DEFAULT_GAMES = [g for g in GAMES if g != "dudo(5,2,2)"]


BLOCKS = 5  # timed blocks per tensorcfr row
DEVICES = ("cpu", "cuda", "cuda-graph", "cpu-compile", "cuda-compile")  # tensorcfr's rows: device[-capture]


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


_BANDWIDTH: dict[str, float] = {}


def copy_bandwidth(device: torch.device, mbytes: int = 512) -> float:
    """Bytes per second of a large copy on `device` (read + write counted), best of 5, once per device."""
    if str(device) not in _BANDWIDTH:
        x = torch.ones(mbytes * 2 ** 20 // 8, dtype=torch.float64, device=device)
        y = torch.zeros_like(x)
        best = float("inf")
        for _ in range(6):
            sync(device)
            t0 = time.perf_counter()
            y.copy_(x)
            sync(device)
            best = min(best, time.perf_counter() - t0)
        _BANDWIDTH[str(device)] = 2 * x.numel() * 8 / best
    return _BANDWIDTH[str(device)]


def bytes_per_iteration(cg, dtype: torch.dtype) -> int:
    """A lower bound on the memory traffic of one CFR iteration: per player, the payoff read
    once, the other player's plan read and the values written, and five per-sequence tensors
    (regrets, strategy, realisation plan, average, sequence values) read and written once each.
    The payoff: generic form, a value and an int32 column index per nonzero and an int32 row
    offset per sequence; public-tree form, the payoff matrices and two int64 sequence indices
    per terminal public node."""
    e = torch.finfo(dtype).bits // 8
    sizes = cg.sizes()
    z = sizes["payoff_nonzeros"]
    s = [tp.num_sequences for tp in cg.treeplexes]
    total = 0
    for p in (0, 1):
        payoff = (z * e + 16 * sizes["public_terminals"] if cg.form == "public" else z * (e + 4) + 4 * s[p])
        total += payoff + e * (s[1 - p] + s[p]) + 5 * 2 * e * s[p]
    return total


def time_tensorcfr(cg, algo: str, iterations: int, device: str, dtype: str, bandwidth_mb: int = 512) -> dict:
    """Our ms per iteration on `device`: "cpu", "cuda", "cuda-graph" (CUDA, the iteration
    captured as a CUDA graph) or "cpu-compile" / "cuda-compile" (the iteration through
    `torch.compile`); the first two iterations of a captured or compiled run, which capture or
    compile it, are not timed."""
    device, _, mode = device.partition("-")
    capture = {"": "none", "graph": "cuda-graph", "compile": "compile"}[mode]
    warm = tensorcfr.Solver(cg, algo, device=device, dtype=dtype, updates="alternating", capture=capture)
    warm.step(2)  # allocator, caches (and a compile's code cache)
    del warm  # one solver's state at a time: Dudo(5,2,2)'s is gigabytes
    solver = tensorcfr.Solver(cg, algo, device=device, dtype=dtype, updates="alternating", capture=capture)
    untimed = 2 if capture != "none" and iterations > 2 else 0
    solver.step(untimed)
    # the timed iterations in up to 5 blocks, the median block counted: one slow block (another
    # process, a page-fault burst) does not make the row
    n = iterations - untimed
    k = min(BLOCKS, n)
    per_iteration = []
    for m in [n // k + (i < n % k) for i in range(k)]:
        sync(solver.device)
        t0 = time.perf_counter()
        solver.step(m)
        sync(solver.device)
        per_iteration.append(1000 * (time.perf_counter() - t0) / m)
    ms = statistics.median(per_iteration)
    t0 = time.perf_counter()
    ev = solver.evaluate()["average"]
    sync(solver.device)
    eval_ms = 1000 * (time.perf_counter() - t0)
    floor_ms = 1000 * bytes_per_iteration(solver.game, solver.dtype) / copy_bandwidth(solver.device, bandwidth_mb)
    return {"ms": ms, "ms_blocks": per_iteration, "exploitability": ev.exploitability.item(), "evaluate_ms": eval_ms,
            "floor_ms": floor_ms, "x_floor": ms / floor_ms}


def openspiel_game(game: str, name: str):
    import pyspiel

    if name != "efg":
        g = pyspiel.load_game(name)
        if g.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
            g = pyspiel.convert_to_turn_based(g)  # what the importer compiles, and CFRSolver needs
        return g
    from tensorcfr.io.interop import to_efg

    return pyspiel.load_efg_game(to_efg(game))


def time_openspiel(g, algo: str, iterations: int, budget_s: float) -> dict:
    import pyspiel

    solver = (pyspiel.CFRSolver if algo == "cfr" else pyspiel.CFRPlusSolver)(g)
    t0, done = time.perf_counter(), 0
    while done < iterations and (done == 0 or time.perf_counter() - t0 < budget_s):
        solver.evaluate_and_update_policy()
        done += 1
    ms = 1000 * (time.perf_counter() - t0) / done
    t0 = time.perf_counter()
    expl = pyspiel.exploitability(g, solver.average_policy()) if done == iterations else None
    return {"ms": ms, "iterations": done, "exploitability": expl, "evaluate_ms": 1000 * (time.perf_counter() - t0)}


def time_liteefg(g, algo: str, iterations: int, budget_s: float) -> dict | None:
    try:
        import LiteEFG
    except ImportError:
        return None
    with contextlib.redirect_stdout(io.StringIO()):  # its constructors print banners
        graph = (LiteEFG.baselines.CFR if algo == "cfr" else LiteEFG.baselines.CFRplus).graph()
        env = LiteEFG.OpenSpielEnv(g, traverse_type="Enumerate")  # converts the tree once (Python)
        env.set_graph(graph)
    t0, done = time.perf_counter(), 0
    while done < iterations and (done == 0 or time.perf_counter() - t0 < budget_s):
        graph.update_graph(env)
        env.update_strategy(graph.current_strategy(), update_best=False)  # no best response per iteration
        done += 1
    ms = 1000 * (time.perf_counter() - t0) / done
    return {"ms": ms, "iterations": done}


def markdown(rows: list[dict], machine: str, stamp: str) -> str:
    """The table of `bench.md` and of the README's benchmark section."""
    lines = [f"Measured {stamp} on {machine}. Alternating updates for every solver; iterations per game as "
             "listed (a peer stopped early shows how many it ran); tensorcfr's ms/it is the median of 5 timed blocks. "
             "Exploitability after the run: ours / "
             "OpenSpiel's (they agree when the same iterations ran). × floor: time over the bytes-moved floor.",
             "",
             "| game | histories | algorithm | device | dtype | iterations | tensorcfr ms/it | × floor "
             "| OpenSpiel C++ ms/it | speed-up | LiteEFG ms/it | speed-up | exploitability (ours / OpenSpiel) | form |",
             "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        o, p, lt = r["tensorcfr"], r["openspiel"], r["liteefg"]
        peer = (f"{p['ms']:.3f}" + (f" ({p['iterations']} it)" if p["iterations"] != r["iterations"] else "")
                if p else "not run")
        lite = f"{lt['ms']:.3f}" if lt else "not run"
        theirs = f"{p['exploitability']:.6g}" if p and p["exploitability"] is not None else "-"
        expl = f"{o['exploitability']:.6g} / {theirs}"
        up_os = f"{r['speedup_vs_openspiel']:.1f}x" if p else "-"
        up_lite = f"{r['speedup_vs_liteefg']:.1f}x" if lt else "-"
        lines.append(f"| {r['game']} | {r['histories']:,} | {r['algorithm']} | {r['device']} | {r['dtype']} | "
                     f"{r['iterations']} | {o['ms']:.3f} | {o['x_floor']:.1f} | {peer} | "
                     f"{up_os} | {lite} | {up_lite} | {expl} | {r.get('form', 'generic')} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=DEFAULT_GAMES, choices=list(GAMES))
    ap.add_argument("--forms", nargs="+", default=["generic"], choices=["generic", "public"],
                    help="compiled forms to time (public: the public-tree form, where the game has it)")
    ap.add_argument("--generic-max-histories", type=int, default=100_000_000,
                    help="skip the generic form of larger games (Dudo(5,2,2), 4.7e8 histories, needs 18.9 GB)")
    ap.add_argument("--readme-section", default="bench-table", help="the README section the table goes to")
    ap.add_argument("--algos", nargs="+", default=["cfr", "cfr+"], choices=["cfr", "cfr+"])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"], choices=["float64", "float32"])
    ap.add_argument("--peer-seconds", type=float, default=60.0, help="stop a peer's run after this long")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peer-max-histories", type=int, default=2_000_000,
                    help="skip the peers on larger OCP and Dudo games (read from our .efg export): "
                         "OpenSpiel's CFRSolver on OCP(1000) takes over 6 minutes to build and run once")
    ap.add_argument("--liteefg-max-histories", type=int, default=2_000_000,
                    help="LiteEFG converts OpenSpiel trees in Python: skip it on larger games")
    ap.add_argument("--compile-max-histories", type=int, default=1_000_000,
                    help="time capture='compile' on games up to this size (it pays on small games)")
    ap.add_argument("--devices", nargs="+", choices=DEVICES, default=None,
                    help="tensorcfr rows to time (default: cpu and cpu-compile, and the cuda ones where CUDA is)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--bandwidth-mb", type=int, default=512, help="size of the copy that measures bandwidth")
    ap.add_argument("--no-readme", dest="readme", action="store_false", help="do not rewrite the README table")
    ap.add_argument("--render-only", action="store_true", help="redraw bench.md and the README from OUT/bench.json")
    args = ap.parse_args(argv)
    if args.render_only:
        with open(os.path.join(args.out, "bench.json")) as f:
            data = json.load(f)
        write_tables(data["rows"], data["machine"], data["date"], args)
        return
    if args.threads:
        torch.set_num_threads(args.threads)
    tensorcfr.keep_freed_memory()  # CPU iterations reuse their temporaries (tensorcfr/memory.py)
    devices = ["cpu"] + (["cuda", "cuda-graph"] if torch.cuda.is_available() else [])
    wanted = args.devices or devices + [f"{d}-compile" for d in devices if "-" not in d]
    if any(d.startswith("cuda") for d in wanted) and not torch.cuda.is_available():
        ap.error("CUDA is not available: --devices takes cpu and cpu-compile here")
    for device in sorted({d.partition("-")[0] for d in wanted}):
        bw = copy_bandwidth(torch.device(device), args.bandwidth_mb)
        print(f"copy bandwidth on {device}: {bw / 1e9:.1f} GB/s", flush=True)
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
               f" ({torch.get_num_threads()} threads)"
               + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))
    try:
        import pyspiel  # noqa: F401
        have_openspiel = not args.no_peers
    except ImportError:
        have_openspiel = False
        print("OpenSpiel (pyspiel) is not installed: skipping it; pip install -e '.[bench]'")
    try:
        import LiteEFG  # noqa: F401
    except ImportError:
        print("LiteEFG is not installed: skipping it; pip install liteefg")
    rows = []
    for game in args.games:
        name, iterations = GAMES[game]
        if game.startswith("openspiel:"):
            try:
                import pyspiel  # noqa: F401, F811
            except ImportError:
                print(f"{game}: needs OpenSpiel (pip install -e '.[bench]'): skipped")
                continue
        hint = games.make(game).size_hint()  # (None for the small games without a closed form)
        histories = hint[0] if hint else 0
        forms = [f for f in args.forms if f == "public" or histories <= args.generic_max_histories]
        if forms != args.forms:
            print(f"{game}: {histories:,} histories, past --generic-max-histories: the generic form skipped", flush=True)
        peer_fits = name != "efg" or histories <= args.peer_max_histories
        g = openspiel_game(game, name) if have_openspiel and peer_fits else None
        peers = {}  # algorithm -> (OpenSpiel, LiteEFG): timed once for every form
        for form in forms:
            t0 = time.perf_counter()
            cg = tensorcfr.compile(game, form=form)
            compile_s = time.perf_counter() - t0
            sizes = cg.sizes()
            print(f"{game} ({form}): {sizes['histories']:,} histories, {sizes['payoff_nonzeros']:,} nonzeros, "
                  f"compiled in {compile_s:.1f} s", flush=True)
            for algo in args.algos:
                if algo not in peers:
                    peers[algo] = (time_openspiel(g, algo, iterations, args.peer_seconds) if g is not None else None,
                                   time_liteefg(g, algo, iterations, args.peer_seconds)
                                   if g is not None and histories <= args.liteefg_max_histories else None)
                peer, lite = peers[algo]
                small = sizes["histories"] <= args.compile_max_histories
                for device in [d for d in wanted if small or not d.endswith("-compile")]:
                    for dtype in args.dtypes:
                        ours = time_tensorcfr(cg, algo, iterations, device, dtype, args.bandwidth_mb)
                        row = {"game": game, "form": form, "histories": sizes["histories"],
                               "nonzeros": sizes["payoff_nonzeros"], "algorithm": algo, "device": device,
                               "dtype": dtype, "iterations": iterations, "compile_s": compile_s, "tensorcfr": ours,
                               "openspiel": peer, "liteefg": lite,
                               "speedup_vs_openspiel": peer["ms"] / ours["ms"] if peer else None,
                               "speedup_vs_liteefg": lite["ms"] / ours["ms"] if lite else None}
                        rows.append(row)
                        print(json.dumps(row), flush=True)
            del cg
    stamp = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump({"date": stamp, "machine": machine, "rows": rows}, f, indent=1)
    write_tables(rows, machine, stamp, args)


LARGE = 100_000  # "from Liar's Dice up" (294,883 histories): the CPU targets apply from 10^5 histories


def targets(rows: list[dict]) -> list[dict]:
    """The project's speed targets checked against the measured rows: for each, a dict with
    `target`, `result` (the figure of the row that does worst, and which row) and `met` (True,
    False, or None where nothing measured it). CPU bars use the eager `cpu` rows (the default); GPU bars the
    fastest GPU form (cuda, cuda-graph or cuda-compile) of each game, algorithm and dtype.

    Example:
        >>> row = lambda d, ms, os: {"game": "g", "histories": 10**6, "algorithm": "cfr", "dtype": "float64",
        ...     "device": d, "tensorcfr": {"ms": ms, "x_floor": 2.0}, "openspiel": {"ms": os}, "liteefg": None,
        ...     "speedup_vs_openspiel": os / ms, "speedup_vs_liteefg": None}
        >>> [t["met"] for t in targets([row("cpu", 10.0, 80.0), row("cuda", 0.5, 80.0)])]
        [True, None, None, True, True]
    """
    def worst(rs, key, pick):
        rs = [r for r in rs if key(r) is not None]
        return pick(rs, key=key) if rs else None

    def where(r):
        return f"{r['game']}, {r['algorithm']}, {r['dtype']}, {r['device']}"

    out = []
    cpu = [r for r in rows if r["device"] == "cpu" and r["histories"] >= LARGE]
    unpaired = sorted({r["game"] for r in cpu if r["openspiel"] is None})
    for peer, bar in (("openspiel", 5.0), ("liteefg", 1.0)):
        r = worst(cpu, lambda r: r[f"speedup_vs_{peer}"], min)  # noqa: B023 (called at once)
        name = "OpenSpiel C++" if peer == "openspiel" else "LiteEFG"
        out.append({"target": f"CPU, from 10^5 histories: ≥ {bar:g}× {name}" if bar > 1 else
                    f"CPU, from 10^5 histories: ahead of {name}",
                    "result": (f"smallest {r[f'speedup_vs_{peer}']:.1f}× ({where(r)})" if r else "no peer ran")
                    + (f"; no peer run on {', '.join(unpaired)}" if unpaired and r else ""),
                    "met": (r[f"speedup_vs_{peer}"] >= bar if bar > 1 else r[f"speedup_vs_{peer}"] > 1) if r else None})
    best: dict[tuple, dict] = {}  # (game, algorithm, dtype) -> its fastest GPU row
    for r in rows:
        k = (r["game"], r["algorithm"], r["dtype"])
        if r["device"].startswith("cuda") and (k not in best or r["tensorcfr"]["ms"] < best[k]["tensorcfr"]["ms"]):
            best[k] = r
    gpu = list(best.values())
    if not gpu:
        out.append({"target": "GPU: small games < 100 µs an iteration, ≥ 100× OpenSpiel C++ on the largest "
                              "game both run, large games ≤ 3× the bytes-moved floor",
                    "result": "not measured: no CUDA device in this run", "met": None})
        return out
    small = worst([r for r in gpu if r["histories"] < LARGE], lambda r: r["tensorcfr"]["ms"], max)
    out.append({"target": "GPU, games under 10^5 histories: < 100 µs an iteration",
                "result": f"slowest {1000 * small['tensorcfr']['ms']:.0f} µs ({where(small)})" if small else "none run",
                "met": small["tensorcfr"]["ms"] < 0.1 if small else None})
    paired = [r for r in gpu if r["openspiel"] is not None]
    top = max((r["histories"] for r in paired), default=None)
    r = worst([r for r in paired if r["histories"] == top], lambda r: r["speedup_vs_openspiel"], min)
    out.append({"target": "GPU: ≥ 100× OpenSpiel C++ on the largest game both run",
                "result": f"smallest {r['speedup_vs_openspiel']:.1f}× ({where(r)})" if r else "no peer ran",
                "met": r["speedup_vs_openspiel"] >= 100 if r else None})
    r = worst([r for r in gpu if r["histories"] >= 1_000_000], lambda r: r["tensorcfr"]["x_floor"], max)
    out.append({"target": "GPU, games from 10^6 histories: ≤ 3× the bytes-moved floor",
                "result": f"largest {r['tensorcfr']['x_floor']:.1f}× ({where(r)})" if r else "none run",
                "met": r["tensorcfr"]["x_floor"] <= 3 if r else None})
    return out


def targets_markdown(rows: list[dict]) -> str:
    lines = ["| target | measured | met |", "|---|---|---|"]
    for t in targets(rows):
        lines.append(f"| {t['target']} | {t['result']} | {({True: 'yes', False: 'no', None: '-'})[t['met']]} |")
    return "\n".join(lines) + "\n"


def write_tables(rows, machine, stamp, args) -> None:
    md = markdown(rows, machine, stamp) + "\nTargets, checked against the rows above:\n\n" + targets_markdown(rows)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(md)
    print(md)
    if args.readme:
        argv = [a for a in sys.argv[1:] if a != "--render-only"]  # the run that measured, not the redraw
        replace_section(args.readme_section, f"Made by `{command('bench.py', argv)}`.\n\n{md}")


if __name__ == "__main__":
    main()
