"""Milliseconds per iteration: tensorcfr against OpenSpiel's C++ CFRSolver / CFRPlusSolver and
LiteEFG, on the same games, in this one script.

Games: Kuhn, Leduc and Liar's Dice as OpenSpiel ships them (ours compile to the same trees),
OCP(1000), Dudo(6,1,1), Dudo(4,2,2), which OpenSpiel runs from our Gambit `.efg` export
(`tensorcfr.io.interop.to_efg`), and OpenSpiel games through the importer (`openspiel:...`:
Leduc, against the built-in one, Goofspiel with 4 cards and Oshi-Zumo, simultaneous-move games
in OpenSpiel's turn-based form, which both sides run). Every solver, ours and the peers', is
timed by `measure` (warm-up iterations, then blocks; median and fastest block) and runs the
same iterations from the same start; tensorcfr's rows "as the peers" run on one thread
(`--threads`) and update alternately like OpenSpiel's solvers, so the exploitabilities after the
run must agree: the table shows both, as a check that the same thing was computed. Rows
"solve default" run what `tensorcfr solve GAME --algo ALGO` runs (`--no-default-rows` skips them).

Peers that are not installed are skipped, saying so: `pip install -e ".[bench]"` installs
OpenSpiel; LiteEFG (PyPI `liteefg`, built from source) is used where importable; noregret
(PyPI `noregret`, Python >= 3.12) runs in its own interpreter, named by `--noregret-python`
or $NOREGRET_PYTHON (`noregret_peer.py`), on the games OpenSpiel ships. A peer run stops
after `--peer-seconds` of iterations; its ms/iteration is still measured.

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
from peak import added_peak
from readme_section import command, replace_section

# game -> (OpenSpiel name or "efg", iterations timed)
GOOFSPIEL7 = "goofspiel(num_cards=7,points_order=descending)"
BATTLESHIP = "battleship(board_width=2,board_height=2,ship_sizes=(1,1),ship_values=(1.0,2.0),num_shots=2)"
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
    # the native Goofspiel and Battleship, against OpenSpiel's own (only when named: the default
    # table stays the one the README summarises)
    "goofspiel(num_cards=5,points_order=descending)": ("goofspiel(num_cards=5,imp_info=True,points_order=descending)", 20),
    "goofspiel(num_cards=6,points_order=descending)": ("goofspiel(num_cards=6,imp_info=True,points_order=descending)", 5),
    # the GPU solvers' large games (noregret times both on an H100): no peer runs them here
    GOOFSPIEL7: ("goofspiel(num_cards=7,imp_info=True,points_order=descending)", 20),
    "rhode_island(royal=True)": ("efg", 20),
    BATTLESHIP: ("battleship(board_width=2,board_height=2,ship_sizes=[1;1],ship_values=[1.0;2.0],num_shots=2,"
         "allow_repeated_shots=False,loss_multiplier=1.0)", 20),
}
NAMED_ONLY = ("dudo(5,2,2)", "goofspiel(num_cards=5,points_order=descending)",
              "goofspiel(num_cards=6,points_order=descending)", BATTLESHIP, GOOFSPIEL7, "rhode_island(royal=True)")
DEFAULT_GAMES = [g for g in GAMES if g not in NAMED_ONLY]


WARMUP = 2  # untimed iterations before every solver's timed ones (a capture or a compile happens here)
BLOCKS = 5  # timed blocks per solver; the median block is the row's figure, the fastest beside it
DEVICES = ("cpu", "cuda", "cuda-graph", "cpu-compile", "cuda-compile")  # tensorcfr's rows: device[-capture]
# what each peer runs, as the table labels it: OpenSpiel's C++ solvers update alternately
# (alternating_updates=true in cfr.h); LiteEFG's CFR graph updates both players at once,
# its CFRplus one player after the other (LiteEFG/baselines/CFR.py, CFRplus.py); noregret's
# README runs nr.CFR simultaneously and nr.CFR_plus alternately
PEERS = {"openspiel": {"cfr": "CFRSolver, alternating", "cfr+": "CFRPlusSolver, alternating"},
         "liteefg": {"cfr": "baselines.CFR, simultaneous", "cfr+": "baselines.CFRplus, alternating"},
         "noregret": {"cfr": "nr.CFR, simultaneous", "cfr+": "nr.CFR_plus, alternating"}}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def measure(step, iterations: int, budget_s: float | None = None, wait=lambda: None) -> dict:
    """The one way every solver here is timed, ours and the peers': `step(n)` runs n
    iterations; WARMUP of them run untimed first (a first iteration pays for caches, page
    faults, a compile or a capture: OpenSpiel's first Liar's Dice CFR+ iteration took 240
    against 86 ms for the next ones), then `iterations` in up to BLOCKS blocks, each timed alone; the row's ms an
    iteration is the median block's, the fastest block beside it. `budget_s` cuts the timed
    iterations to about that long at the warm-up's pace; `wait` waits for queued device work.

    Example:
        >>> r = measure(lambda n: time.sleep(0.001 * n), 10)
        >>> r["iterations"], r["warmup"], len(r["ms_blocks"]), r["ms_min"] <= r["ms"]
        (10, 2, 5, True)
    """
    t0 = time.perf_counter()
    step(WARMUP)
    wait()
    pace = (time.perf_counter() - t0) / WARMUP
    n = iterations if budget_s is None or pace * iterations <= budget_s else max(1, int(budget_s / pace))
    k = min(BLOCKS, n)
    blocks = []
    for m in [n // k + (i < n % k) for i in range(k)]:
        wait()
        t0 = time.perf_counter()
        step(m)
        wait()
        blocks.append(1000 * (time.perf_counter() - t0) / m)
    return {"ms": statistics.median(blocks), "ms_min": min(blocks), "ms_blocks": blocks, "iterations": n,
            "warmup": WARMUP}


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


def time_tensorcfr(game, algo: str, iterations: int, device: str, dtype: str | None, bandwidth_mb: int = 512,
                   threads: int | str = 1, default: bool = False) -> dict:
    """Our ms per iteration (`measure`) on `device`: "cpu", "cuda", "cuda-graph" (CUDA, the
    iteration captured as a CUDA graph) or "cpu-compile" / "cuda-compile" (the iteration
    through `torch.compile`), alternating updates like the peers. `default`: the solver as
    `tensorcfr solve GAME --algo ALGO` builds it instead, every other setting its default
    (form, device, capture, threads, dtype and the preset's own updates)."""
    def run():
        if default:
            solver = tensorcfr.Solver(game, algo)
        else:
            dev, _, mode = device.partition("-")
            capture = {"": "none", "graph": "cuda-graph", "compile": "compile"}[mode]
            solver = tensorcfr.Solver(game, algo, device=dev, dtype=dtype, updates="alternating", capture=capture,
                                      threads=threads)
        return solver, measure(solver.step, iterations, wait=lambda: sync(solver.device))

    (solver, out), peak = added_memory(run, device.startswith("cuda"))
    t0 = time.perf_counter()
    ev = solver.evaluate()["average"]
    sync(solver.device)
    eval_ms = 1000 * (time.perf_counter() - t0)
    floor_ms = 1000 * bytes_per_iteration(solver.game, solver.dtype) / copy_bandwidth(solver.device, bandwidth_mb)
    return {**out, "exploitability": ev.exploitability.item(), "evaluate_ms": eval_ms, "floor_ms": floor_ms,
            "x_floor": out["ms"] / floor_ms, "peak_mb": peak, "threads": solver.threads, "capture": solver.capture,
            "form": solver.game.form, "updates": solver.config.updates, "device": str(solver.device),
            "sizes": {k: solver.game.sizes()[k] for k in ("histories", "payoff_nonzeros")},
            "dtype": str(solver.dtype).replace("torch.", "")}


def added_memory(work, cuda: bool = False):
    """(work(), the peak memory in MB it added): resident memory (`peak.added_peak`), or on a
    GPU the CUDA allocator's peak over what it held before."""
    if not cuda:
        return added_peak(work)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = work()
    torch.cuda.synchronize()
    return out, (torch.cuda.max_memory_allocated() - before) / 2**20


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
    """OpenSpiel's C++ solver as its documentation runs it (`evaluate_and_update_policy` in a
    loop, `pyspiel.exploitability` of `average_policy()` after), timed by `measure`."""
    import pyspiel

    def run():
        solver = (pyspiel.CFRSolver if algo == "cfr" else pyspiel.CFRPlusSolver)(g)

        def step(n):
            for _ in range(n):
                solver.evaluate_and_update_policy()

        return solver, measure(step, iterations, budget_s)

    (solver, out), peak = added_peak(run)
    out["peak_mb"] = peak
    t0 = time.perf_counter()
    # the same iterations as ours: only then are the two exploitabilities comparable
    expl = pyspiel.exploitability(g, solver.average_policy()) if out["iterations"] == iterations else None
    return {**out, "exploitability": expl, "evaluate_ms": 1000 * (time.perf_counter() - t0)}


def time_liteefg(g, algo: str, iterations: int, budget_s: float) -> dict | None:
    """LiteEFG's baseline graph as its `baselines/utils.py` trains it (`update_graph`, then
    `update_strategy` with no best response per iteration), timed by `measure`."""
    try:
        import LiteEFG
    except ImportError:
        return None
    def run():
        with contextlib.redirect_stdout(io.StringIO()):  # its constructors print banners
            graph = (LiteEFG.baselines.CFR if algo == "cfr" else LiteEFG.baselines.CFRplus).graph()
            env = LiteEFG.OpenSpielEnv(g, traverse_type="Enumerate")  # converts the tree once (Python)
            env.set_graph(graph)

        def step(n):
            for _ in range(n):
                graph.update_graph(env)
                env.update_strategy(graph.current_strategy(), update_best=False)

        return measure(step, iterations, budget_s)

    out, peak = added_peak(run)
    return {**out, "peak_mb": peak}


def time_noregret(name: str, algo: str, iterations: int, budget_s: float, python: str | None,
                  cuda: bool = False) -> dict | None:
    """noregret as its README runs it, in its own interpreter (`noregret_peer.py`, which times
    its iterations as `measure` does; `cuda`: its CUDA kernel, `nr.CUDAKer`); None without an
    interpreter or on a game OpenSpiel does not ship (our `.efg` exports)."""
    if not python or name == "efg":
        return None
    import subprocess

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "noregret_peer.py")
    r = subprocess.run([python, script, name, algo, str(iterations), "--budget", str(budget_s)]
                       + (["--cuda"] if cuda else []), capture_output=True, text=True)
    if r.returncode:
        print(f"noregret on {name} failed: {r.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def _ms(r: dict | None) -> str:
    """"median (fastest block)" of a `measure` result, or "not run"."""
    return f"{r['ms']:.3f} ({r['ms_min']:.3f})" if r else "not run"


def _mb(r: dict | None) -> str:
    """A run's added peak memory in MB, or "-" (not run, or not measurable here)."""
    mb = r.get("peak_mb") if r else None
    return "-" if mb is None else f"{mb:,.0f}" if mb >= 10 else f"{mb:.1f}"


def markdown(rows: list[dict], machine: str, stamp: str) -> str:
    """The table of `bench.md` and of the benchmark page."""
    nr = any(r.get("noregret") for r in rows)  # noregret's columns only where it ran
    nr_kernel = "CUDA" if any((r.get("noregret") or {}).get("cuda") for r in rows) else "CPU"
    lines = [f"Measured {stamp} on {machine}. Every solver is timed alike: {WARMUP} untimed iterations, then "
             f"the iterations listed in {BLOCKS} blocks; ms/it is the median block's, the fastest block's in "
             "brackets; speed-ups compare medians. The peers run as they ship: OpenSpiel's C++ "
             f"{PEERS['openspiel']['cfr']} / {PEERS['openspiel']['cfr+']} and LiteEFG's {PEERS['liteefg']['cfr']} / "
             f"{PEERS['liteefg']['cfr+']}, single-threaded"
             + (f"; noregret's {PEERS['noregret']['cfr']} / {PEERS['noregret']['cfr+']} on its {nr_kernel} kernel"
                + (", whose sparse products take MKL's default threads" if nr_kernel == "CPU" else "") if nr else "")
             + " (a peer stopped early shows how many iterations it ran). tensorcfr "
             "rows marked *as the peers* update alternately with the threads listed; rows marked *solve default* "
             "run what `tensorcfr solve GAME --algo ALGO` runs, every setting its default (form, capture, threads "
             "and dtype chosen by the library, the preset's own updates). Exploitability after the run: ours / "
             "OpenSpiel's" + (" / noregret's" if nr else "") + " (equal when the same iterations ran alternately). "
             "× floor: our time over the bytes-moved floor. Peak MB: the most memory each solver's run added to "
             "its process at once, building the solver and iterating (resident memory; GPU memory on a GPU row; "
             "the game's tree or compile before it not counted).",
             "",
             "| game | histories | algorithm | tensorcfr run | form | device | dtype | threads | iterations "
             "| tensorcfr ms/it | × floor | OpenSpiel C++ ms/it | speed-up | LiteEFG ms/it | speed-up "
             + ("| noregret ms/it | speed-up | exploitability (ours / OpenSpiel / noregret) |" if nr else
                "| exploitability (ours / OpenSpiel) |")
             + f" peak MB (ours / OpenSpiel / LiteEFG{' / noregret' if nr else ''}) |",
             "|---|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if nr else "")
             + "---|---|"]
    for r in rows:
        o, p, lt = r["tensorcfr"], r["openspiel"], r["liteefg"]
        peer = _ms(p) + (f" ({p['iterations']} it)" if p and p["iterations"] != r["iterations"] else "")
        lite = _ms(lt) + (f" ({lt['iterations']} it)" if lt and lt["iterations"] != r["iterations"] else "")
        theirs = f"{p['exploitability']:.6g}" if p and p["exploitability"] is not None else "-"
        expl = f"{o['exploitability']:.6g} / {theirs}"
        q = r.get("noregret")
        extra = ""
        if nr:
            extra = (f" {_ms(q)}" + (f" ({q['iterations']} it)" if q and q["iterations"] != r["iterations"] else "")
                     + f" | {r['speedup_vs_noregret']:.1f}x |" if q else " not run | - |")
            expl += f" / {q['exploitability']:.6g}" if q else " / -"
        up_os = f"{r['speedup_vs_openspiel']:.1f}x" if p else "-"
        up_lite = f"{r['speedup_vs_liteefg']:.1f}x" if lt else "-"
        run = f"solve default ({o['updates']})" if r.get("default") else "as the peers"
        peaks = " / ".join(_mb(x) for x in [o, p, lt] + ([q] if nr else []))
        lines.append(f"| {r['game']} | {r['histories']:,} | {r['algorithm']} | {run} | {r.get('form', 'generic')} "
                     f"| {r['device']} | {r['dtype']} | {o.get('threads', '-')} | {r['iterations']} | {_ms(o)} "
                     f"| {o['x_floor']:.1f} | {peer} | {up_os} | {lite} | {up_lite} |{extra} {expl} | {peaks} |")
    return "\n".join(lines) + "\n"


def row(game, form, sizes, algo, device, dtype, iterations, compile_s, ours, peers) -> dict:
    """One table row: our timing beside the peers' (each a `measure` result or None)."""
    peer, lite, nr = peers
    out = {"game": game, "form": form, "histories": sizes["histories"], "nonzeros": sizes["payoff_nonzeros"],
           "algorithm": algo, "device": device, "dtype": dtype, "iterations": iterations, "compile_s": compile_s,
           "tensorcfr": ours, "openspiel": peer, "liteefg": lite,
           "speedup_vs_openspiel": peer["ms"] / ours["ms"] if peer else None,
           "speedup_vs_liteefg": lite["ms"] / ours["ms"] if lite else None,
           "noregret": nr, "speedup_vs_noregret": nr["ms"] / ours["ms"] if nr else None}
    print(json.dumps(out), flush=True)
    return out


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
    ap.add_argument("--noregret-max-histories", type=int, default=2_000_000,
                    help="noregret converts OpenSpiel trees in Python too (nr.to_efg): skip it on larger games")
    ap.add_argument("--noregret-python", default=os.environ.get("NOREGRET_PYTHON"),
                    help="a Python >= 3.12 with noregret installed, which runs noregret_peer.py (default: "
                         "$NOREGRET_PYTHON; none: noregret is skipped)")
    ap.add_argument("--noregret-cuda", action="store_true", help="noregret's CUDA kernel (nr.CUDAKer), as on a GPU")
    ap.add_argument("--compile-max-histories", type=int, default=1_000_000,
                    help="time capture='compile' on games up to this size (it pays on small games)")
    ap.add_argument("--devices", nargs="+", choices=DEVICES, default=None,
                    help="tensorcfr rows to time (default: cpu and cpu-compile, and the cuda ones where CUDA is)")
    ap.add_argument("--threads", type=int, default=1,
                    help="tensorcfr's CPU threads in the rows run as the peers (default 1: the peers are "
                         "single-threaded); the solve-default rows take the library's choice")
    ap.add_argument("--no-default-rows", dest="default_rows", action="store_false",
                    help="skip the rows that run tensorcfr solve's defaults")
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
    tensorcfr.keep_freed_memory()  # CPU iterations reuse their temporaries (tensorcfr/memory.py)
    devices = ["cpu"] + (["cuda", "cuda-graph"] if torch.cuda.is_available() else [])
    wanted = args.devices or devices + [f"{d}-compile" for d in devices if "-" not in d]
    if any(d.startswith("cuda") for d in wanted) and not torch.cuda.is_available():
        ap.error("CUDA is not available: --devices takes cpu and cpu-compile here")
    for device in sorted({d.partition("-")[0] for d in wanted}):
        bw = copy_bandwidth(torch.device(device), args.bandwidth_mb)
        print(f"copy bandwidth on {device}: {bw / 1e9:.1f} GB/s", flush=True)
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
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
        peers = {}  # algorithm -> (OpenSpiel, LiteEFG, noregret): timed once for every form
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
                                   if g is not None and histories <= args.liteefg_max_histories else None,
                                   time_noregret(name, algo, iterations, args.peer_seconds, args.noregret_python,
                                                 args.noregret_cuda)
                                   if not args.no_peers and histories <= args.noregret_max_histories else None)
                small = sizes["histories"] <= args.compile_max_histories
                for device in [d for d in wanted if small or not d.endswith("-compile")]:
                    for dtype in args.dtypes:
                        ours = time_tensorcfr(cg, algo, iterations, device, dtype, args.bandwidth_mb, args.threads)
                        rows.append(row(game, form, sizes, algo, device, dtype, iterations, compile_s, ours,
                                        peers[algo]))
            del cg
        for algo in args.algos if args.default_rows else []:
            # what `tensorcfr solve GAME --algo ALGO` runs: its own compile, form, threads and capture
            ours = time_tensorcfr(game, algo, iterations, "", None, args.bandwidth_mb, default=True)
            if algo not in peers:
                peers[algo] = (None, None, None)
            rows.append({**row(game, ours["form"], ours["sizes"], algo, ours["device"], ours["dtype"], iterations,
                               None, ours, peers[algo]), "default": True})
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


SUMMARY_GAMES = {"kuhn": "Kuhn", "leduc": "Leduc", "liars_dice": "Liar's Dice"}


def summary(rows: list[dict], stamp: str) -> str | None:
    """The README's short table: CFR+ at float64 on one CPU thread, eager and compiled, beside
    the peers, for Kuhn, Leduc and Liar's Dice (None when the run lacks those rows)."""
    pick = {(r["game"], r["device"]): r for r in rows if r["algorithm"] == "cfr+" and r["dtype"] == "float64"
            and not r.get("default") and r["device"] in ("cpu", "cpu-compile") and r["game"] in SUMMARY_GAMES}
    if not any((g, "cpu") in pick for g in SUMMARY_GAMES):
        return None
    lines = [f"Speed against the peers on the same iterations (`python experiments/bench.py`, {stamp}, CPU, "
             f"every solver on one thread, {WARMUP} untimed iterations then the median of {BLOCKS} timed blocks, "
             "CFR+, float64; ms an iteration):", "",
             "| game | histories | tensorcfr | tensorcfr compiled | OpenSpiel C++ | LiteEFG |",
             "|---|---:|---:|---:|---:|---:|"]
    for game, label in SUMMARY_GAMES.items():
        eager, compiled = pick.get((game, "cpu")), pick.get((game, "cpu-compile"))
        if eager is None:
            continue
        cell = lambda r: f"{r['ms']:.3f}" if r else "–"  # noqa: E731
        lines.append(f"| {label} | {eager['histories']:,} | {cell(eager['tensorcfr'])} "
                     f"| {cell(compiled['tensorcfr'] if compiled else None)} | {cell(eager['openspiel'])} "
                     f"| {cell(eager['liteefg'])} |")
    return "\n".join(lines) + "\n"


def write_tables(rows, machine, stamp, args) -> None:
    md = markdown(rows, machine, stamp) + "\nTargets, checked against the rows above:\n\n" + targets_markdown(rows)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(md)
    print(md)
    if args.readme:
        argv = [a for a in sys.argv[1:] if a != "--render-only"]  # the run that measured, not the redraw
        replace_section(args.readme_section, f"Made by `{command('bench.py', argv)}`.\n\n{md}")
        short = summary(rows, stamp)
        if short and args.readme_section == "bench-table":
            replace_section("bench-summary", short)


if __name__ == "__main__":
    main()
