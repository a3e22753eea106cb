"""Regenerate the thesis' extensive-form tables: every OCP, Dudo and Domino row that fits a
2-core CPU, solved to NashConv <= 1e-4 (the thesis' epsilon = 100 x NashConv <= 0.01%).

    python experiments/thesis_tables.py                  # every row, README table updated
    python experiments/thesis_tables.py --rows "ocp(12)" "dudo(4,1,1)" --no-readme
    python experiments/thesis_tables.py --large --resume   # adds OCP(5000), Dudo(6,1,2), Dudo(6,2,1), Dudo(5,2,2)

For each row it compiles the game, runs the algorithm with `tensorcfr.train` until NashConv <=
--target (or --minutes pass, read at evaluations, which the NashConv trend places), logs the
curves to TensorBoard (`--logdir`, one run per row, the tags of `tensorcfr.run.training.TAGS`)
and writes the table as Markdown and JSON into --out after every row, so an interrupted run
keeps what it finished: `--resume` skips those rows and continues a
row cut short from its last checkpoint (saved every --checkpoint-minutes and at the time limit,
removed once the row reaches the target). Dudo's
continuation values are solved first (tensorcfr.run.continuation) and listed under the table.
Before the rows it measures which algorithm reaches the target fastest on four mid-size
rows (`--probe`), and the table says which algorithm it used.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import time
from dataclasses import MISSING, dataclass, field, fields

import torch

from tensorcfr import games
import tensorcfr
from tensorcfr.games.dudo import Dudo
from tensorcfr.run.continuation import dudo_chain
from tensorcfr.devices import resolve_device
from tensorcfr.run.training import Trend, open_writer

from readme_section import command, replace_section

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "reference", "thesis-reference.json")  # a copy of ../shared/reference
ROWS = ["ocp(3)", "ocp(12)", "ocp(50)", "ocp(200)", "ocp(1000)",
        "dudo(4,1,1)", "dudo(4,1,2)", "dudo(4,2,1)", "dudo(4,2,2)", "dudo(5,1,1)", "dudo(5,1,2)", "dudo(5,2,1)",
        "dudo(6,1,1)", "domino(2,2)", "domino(3,2)", "domino(3,3)", "domino(3,4)"]
# The rows the thesis could not solve (10^7 to 10^9 histories, compiled level by level); run with --large.
LARGE_ROWS = ["ocp(5000)", "dudo(6,1,2)", "dudo(6,2,1)", "dudo(5,2,2)"]
# The thesis' largest game (1.5e10 histories): the public-tree form only, hours on the CPU; --largest.
LARGEST_ROWS = ["dudo(6,2,2)"]
MAX_ITERATIONS = 10**9  # a row runs to its target or its --minutes
LP_MAX_SEQUENCES = 100_000  # both players' sequences: the "exact (LP)" column's games (seconds to a minute each)
LP_MAX_HISTORIES = 5_000_000  # past this (by the closed form), a game is not even compiled for the LP
PROBE_ROWS = ["ocp(50)", "dudo(5,1,1)", "dudo(4,2,1)", "domino(2,2)"]
PROBE_ALGOS = ["dcfr", "cfr+", "pcfr+", "lcfr"]


def arg(default, help: str = "", **kw):  # noqa: A002
    """A field of `Args` that is also its command-line option (see `parse_args`)."""
    factory = {"default_factory": lambda: list(default)} if isinstance(default, list) else {"default": default}
    return field(**factory, metadata={"help": help, **kw})


@dataclass
class Args:
    """The script's settings: each field is one option, `--name-with-dashes` (a bool that
    defaults to True is turned off by `--no-name`)."""

    rows: list[str] = arg(ROWS, "game specs (default: every row that fits)", nargs="+")
    algo: str = arg("dcfr", "algorithm preset or spec (default dcfr: see --probe)")
    target: float = arg(1e-4, "stop at this NashConv")
    minutes: float = arg(30.0, "time limit per row, compile included")
    device: str = arg("auto", "auto (cuda where available), cpu or cuda")
    dtype: str = arg("float64", "float64 or float32 (Dudo(6,2,2) fits 20 GB at float32)")
    form: str = arg("auto", "compiled form: auto (the public-tree form where the game has it), generic or public",
                    choices=["auto", "generic", "public"])
    out: str = arg(os.path.join(HERE, "results"), "where the table's JSON and Markdown go")
    logdir: str = arg(os.path.join(HERE, "..", "runs", "thesis"), "TensorBoard runs")
    reference: str = arg(REFERENCE, "thesis-reference.json")
    readme: bool = arg(True, "do not rewrite the README table")
    resume: bool = arg(False, "keep rows already in OUT/thesis_table.json")
    probe: bool = arg(True, "skip the algorithm probe")
    large: bool = arg(False, f"add the rows {', '.join(LARGE_ROWS)} (10^7 to 10^9 histories)")
    largest: bool = arg(False, f"add the rows {', '.join(LARGEST_ROWS)} (1.5e10 histories; hours: "
                               "use --checkpoint-minutes and --resume)")
    lp: bool = arg(True, "skip the sequence-form LP of the rows that fit (the 'exact (LP)' column)")
    max_memory: str = arg("auto", "refuse a row whose compiled game and solve would need more (BYTES such as 20G, "
                                  "auto: the available memory, or none)")
    checkpoint_minutes: float = arg(5.0, "save an unfinished row's solver this often (OUT/checkpoints/); "
                                         "--resume continues it")


def parse_args(argv=None) -> Args:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in fields(Args):
        default = f.default_factory() if f.default is MISSING else f.default
        flag = "--" + f.name.replace("_", "-")
        if isinstance(default, bool):
            p.add_argument(f"--no-{f.name.replace('_', '-')}" if default else flag, dest=f.name,
                           action="store_false" if default else "store_true", help=f.metadata["help"])
        else:
            p.add_argument(flag, type=type(default) if not isinstance(default, list) else str, default=default,
                           help=f.metadata["help"], **{k: v for k, v in f.metadata.items() if k != "help"})
    args = Args(**vars(p.parse_args(argv)))
    try:  # bad input ends here, before any row runs, not as a traceback minutes later
        resolve_device(args.device)
        for spec in args.rows:
            games.make(spec)
    except (tensorcfr.TensorCFRError, games.GameError) as e:
        p.error(str(e))
    if args.large:
        args.rows = args.rows + [r for r in LARGE_ROWS if r not in args.rows]
    if args.largest:
        args.rows = args.rows + [r for r in LARGEST_ROWS if r not in args.rows]
    return args


def thesis_name(spec: str) -> str:
    """'dudo(4,1,2)' -> 'Dudo(4,1,2)' as the reference writes it."""
    name, rest = spec.split("(", 1) if "(" in spec else (spec, "")
    known = {"ocp": "OCP", "dudo": "Dudo", "domino": "Domino"}  # a game outside the thesis keeps its name
    return known[name] + "(" + rest if name in known else spec


def checkpoint_path(args: Args, name: str) -> str:
    return os.path.join(args.out, "checkpoints", f"{name}.pt")


def loop_of_old_checkpoint(ckpt: dict) -> dict:
    """`train`'s loop state from a checkpoint of this script's first format (its evaluation
    points as (iteration, NashConv), the solving seconds, and where the next evaluation fell)."""
    points = [(int(t), float(e)) for t, e in ckpt.get("points", [])]
    rows = [{"iteration": t, "nash_conv": e, "exploitability": e / 2} for t, e in points]
    nxt = ckpt.get("next_eval")
    if nxt is None:
        nxt = (points[-1][0] if points else 0) + int(ckpt.get("next_chunk", 10))
    return {"rows": rows, "solving": float(ckpt.get("solving", 0.0)), "next_eval": int(nxt)}


def solve_row(spec: str, args: Args, writer_dir: str | None) -> dict:
    """Compile and solve one game until NashConv <= target; returns the row's figures."""
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()  # peak_gpu_mb: this row's
    t0 = time.perf_counter()
    game = games.make(spec)
    chain = dudo_chain(game.faces, *game.dice) if isinstance(game, Dudo) else []
    t_chain = time.perf_counter() - t0
    cg = tensorcfr.compile(game, form=args.form, max_memory=None if args.max_memory == "none" else args.max_memory,
                           dtype=args.dtype)
    t_compile = time.perf_counter() - t0 - t_chain
    solver = tensorcfr.Solver(cg, args.algo, device=args.device, dtype=args.dtype)
    ckpt_path = checkpoint_path(args, game.name)
    before, loop = 0.0, None  # what earlier, interrupted runs did: seconds, and train's loop state
    # mapped, not read: the state is copied in from the file, never held twice in memory
    ckpt = (torch.load(ckpt_path, weights_only=True, mmap=True) if args.resume and os.path.exists(ckpt_path)
            else None)
    if ckpt is not None and (ckpt.get("form", "generic"), ckpt.get("dtype", "float64")) != (cg.form, args.dtype):
        print(f"  {spec}: {ckpt_path} holds a {ckpt.get('form', 'generic')} {ckpt.get('dtype', 'float64')} run, "
              f"not {cg.form} {args.dtype}: starting afresh", flush=True)
        ckpt = None
    if ckpt is not None:
        solver.load_state_dict(ckpt["solver"])
        before, loop = float(ckpt.get("seconds", 0.0)), ckpt.get("loop") or loop_of_old_checkpoint(ckpt)
        t_compile = ckpt.get("compile_seconds", t_compile)
        print(f"  {spec}: continuing from iteration {solver.iteration} ({ckpt_path})", flush=True)
        del ckpt  # unmaps the file
    writer = open_writer(writer_dir, spec, solver.config.name) if writer_dir else None
    deadline = t0 + 60 * args.minutes
    past = {"deadline": False}  # read at evaluations only: a chunk runs to its evaluation, as a row's points must

    def save(state):
        os.makedirs(os.path.dirname(ckpt_path), exist_ok=True)
        torch.save({"solver": solver.state_dict(copy=False), "form": cg.form, "dtype": args.dtype,
                    "seconds": before + time.perf_counter() - t0, "compile_seconds": t_compile, "loop": state},
                   ckpt_path + ".tmp")
        os.replace(ckpt_path + ".tmp", ckpt_path)

    def show(row):
        if writer is not None:
            writer.add_scalar("perf/seconds", row["seconds"], row["iteration"])
        print(f"  {spec}: {row['iteration']:>6} it  NashConv {row['nash_conv']:.3e}  value {row['game_value']:+.6f}"
              f"  {row['seconds']:7.1f} s", flush=True)
        past["deadline"] = time.perf_counter() > deadline

    # the one training loop: evaluations by the NashConv trend (exploitability = NashConv / 2),
    # the solver saved every --checkpoint-minutes, inside a chunk too
    rows = tensorcfr.train(solver, MAX_ITERATIONS, eval_every=Trend(args.target / 2),
                           target_exploitability=args.target / 2, callback=show, writer=writer, histograms=False,
                           checkpoint=save, checkpoint_seconds=60 * args.checkpoint_minutes,
                           should_stop=lambda: past["deadline"], loop_state=loop)
    row, solving = rows[-1], rows[-1]["seconds"]
    if row["nash_conv"] <= args.target and os.path.exists(ckpt_path):
        os.remove(ckpt_path)  # reached: nothing to continue (else the last save is where --resume goes on)
    if writer is not None:
        writer.close()
    sizes = cg.sizes()
    return {"game": game.name, "histories": sizes["histories"], "infosets": sizes["infosets_with_choice"],
            "algorithm": solver.config.name, "iterations": solver.iteration,
            "seconds": round(before + time.perf_counter() - t0, 1), "solve_seconds": round(solving, 1),
            "compile_seconds": round(t_compile, 1), "chain_seconds": round(t_chain, 1),
            "device": str(solver.device), "form": cg.form, "dtype": args.dtype,
            # the process's peak so far (rows run earlier in the same process count too)
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "peak_gpu_mb": (round(torch.cuda.max_memory_allocated(solver.device) / 2**20)
                            if solver.device.type == "cuda" else None),
            "value": row["game_value"], "nash_conv": row["nash_conv"],
            "eps_percent": 100 * row["nash_conv"], "solved": 100 * row["nash_conv"] < 1,
            "reached_target": row["nash_conv"] <= args.target, "value_chain": chain}


def lp_row(spec: str) -> dict:
    """The exact value of `spec` by the sequence-form LP (`tensorcfr.lp`, the generic form),
    where both players' sequences number at most `LP_MAX_SEQUENCES`; {} otherwise."""
    from tensorcfr.lp import solve_lp

    hint = games.make(spec).size_hint()
    if hint is not None and hint[0] > LP_MAX_HISTORIES:  # no generic compile of a game the LP cannot take
        return {}
    cg = tensorcfr.compile(spec)
    if sum(tp.num_sequences for tp in cg.treeplexes) > LP_MAX_SEQUENCES:
        return {}
    r = solve_lp(cg)
    print(f"  {spec}: LP value {r.value:+.7f} (NashConv of its strategies {r.nash_conv:.1e}, {r.seconds:.1f} s)",
          flush=True)
    return {"lp_value": r.value, "lp_nash_conv": r.nash_conv, "lp_seconds": round(r.seconds, 1)}


def probe(args: Args) -> list[dict]:
    """Iterations and solving seconds to NashConv <= target for each algorithm on a few rows."""
    out = []
    for spec in PROBE_ROWS:
        cg = tensorcfr.compile(spec, form=args.form)
        for algo in PROBE_ALGOS:
            s = tensorcfr.Solver(cg, algo, device=args.device, dtype=args.dtype)
            solving = 0.0
            while True:
                t0 = time.perf_counter()
                s.step(50)
                solving += time.perf_counter() - t0
                nc = s.evaluate()["average"].nash_conv.item()
                if nc <= args.target or s.iteration >= 5000:
                    break
            out.append({"game": spec, "algorithm": algo, "iterations": s.iteration, "seconds": round(solving, 3),
                        "nash_conv": nc})
            print(f"  probe {spec} {algo}: {s.iteration} it, {solving:.2f} s", flush=True)
    return out


def fmt_thesis(t: dict | None) -> str:
    if not t:
        return ""
    return f"{t['iterations']:,} it, u {t['value']:g}, ε {t['eps_percent']:g}%{'' if t['solved'] else ' (not solved)'}"


def markdown(rows: list[dict], reference: dict, probe_rows: list[dict], meta: dict) -> str:
    lines = [f"Every row solved by `{meta['algorithm']}` on {meta['device']} ({meta['machine']}), "
             f"{meta['date']}; target NashConv ≤ {meta['target']:g} (ε ≤ {100 * meta['target']:g}%). "
             "ε = 100 × NashConv, the thesis' measure; solved = ε < 1%. Time = wall clock for the row: "
             "continuation values, compiling and solving; compile = of which compiling (a cached compiled "
             "game loads instead).", "",
             "| game | histories | infosets | algorithm | iterations | time (s) | compile (s) | device | u(σ) | ε (%) "
             "| solved | thesis, 10 h | thesis, 200 h | exact (LP) |",
             "|---|---:|---:|---|---:|---:|---:|---|---:|---:|---|---|---|---:|"]
    for r in rows:
        ref = reference.get(thesis_name(r["game"]), {})
        known = ref.get("exact_value_fraction") or (f"{ref['exact_value']:g}" if "exact_value" in ref else "")
        if "lp_value" in r:  # the LP, in player 0's sign as u(σ); the reference's fraction beside it
            exact = f"{r['lp_value']:+.7f}" + (f" ({known})" if known else "")
        else:
            exact = f"{known} (reference)" if known else ""
        lines.append(f"| {thesis_name(r['game'])} | {r['histories']:,} | {r['infosets']:,} | {r['algorithm']} | "
                     f"{r['iterations']:,} | {r['seconds']:.1f} | {r.get('compile_seconds', 0):.1f} | {r['device']} | "
                     f"{r['value']:+.6f} | "
                     f"{r['eps_percent']:.2e} | {'yes' if r['solved'] else 'no'} | {fmt_thesis(ref.get('thesis_10h'))} | "
                     f"{fmt_thesis(ref.get('thesis_200h'))} | {exact} |")
    chains = {e["game"]: e for r in rows for e in r.get("value_chain", [])}
    if chains:
        lines += ["", "Dudo's continuation values V(a, b) (first bidder's value of Dudo(K, a, b)), solved "
                  "smallest first and plugged into the larger games' payoffs: " +
                  "; ".join(f"{thesis_name(g)} = {e['value']:+.7f} (NashConv {e['nash_conv']:.0e})"
                            for g, e in sorted(chains.items()))]
    if probe_rows:
        lines += ["", f"Choosing the algorithm: iterations and solving seconds to NashConv ≤ {meta['target']:g}:", "",
                  "| game | " + " | ".join(PROBE_ALGOS) + " |", "|---|" + "---:|" * len(PROBE_ALGOS)]
        for spec in PROBE_ROWS:
            cells = {p["algorithm"]: p for p in probe_rows if p["game"] == spec}
            cell = lambda a: f"{cells[a]['iterations']} it, {cells[a]['seconds']:.2f} s" if a in cells else ""  # noqa: E731, B023
            lines.append(f"| {thesis_name(spec)} | " + " | ".join(cell(a) for a in PROBE_ALGOS) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    args = parse_args(argv)
    tensorcfr.keep_freed_memory()  # CPU iterations reuse their temporaries (tensorcfr/memory.py)
    with open(args.reference) as f:
        reference = {g["game"]: g for g in json.load(f)["games"]}
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "thesis_table.json")
    done, existing = {}, []  # rows not to solve again (--resume); every row the file holds
    if os.path.exists(json_path):
        kept = json.load(open(json_path))
        existing = kept["rows"]
        if args.resume:
            done, done_date = {r["game"]: r for r in kept["rows"]}, kept["meta"]["date"]
    probe_rows = probe(args) if args.probe else (json.load(open(json_path)).get("probe", []) if done else [])
    device = str(resolve_device(args.device))
    meta = {"algorithm": args.algo, "device": device, "target": args.target,
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs" if device == "cpu" else torch.cuda.get_device_name(),
            "date": datetime.date.today().isoformat(), "torch": torch.__version__}
    names = [games.make(spec).name for spec in args.rows]

    def merged(rows: list[dict]) -> list[dict]:
        """The file's rows with this run's in their places: a row the file lacks goes before the
        first file row named after it in --rows, else at the end (`--rows "dudo(6,2,2)"` alone
        must not drop the table's other rows)."""
        out = list(existing)
        for r in rows:
            at = next((i for i, o in enumerate(out) if o["game"] == r["game"]), None)
            if at is not None:
                out[at] = r
                continue
            later = names[names.index(r["game"]) + 1:] if r["game"] in names else []
            out.insert(next((i for i, o in enumerate(out) if o["game"] in later), len(out)), r)
        return out

    def save(rows: list[dict]) -> str:
        rows = merged(rows)
        md = markdown(rows, reference, probe_rows, meta)
        with open(json_path + ".tmp", "w") as f:
            json.dump({"meta": meta, "rows": rows, "probe": probe_rows}, f, indent=1)
        os.replace(json_path + ".tmp", json_path)
        with open(os.path.join(args.out, "thesis_table.md"), "w") as f:
            f.write(md)
        return md

    rows, solved_now = [], False
    for spec in args.rows:
        name = games.make(spec).name  # "OCP(12)" and "ocp(12)" are one row
        if name in done and not os.path.exists(checkpoint_path(args, name)):
            rows.append(done[name])
            if args.lp and "lp_value" not in done[name]:  # a row kept from a run before the LP column
                print(f"{spec}:", flush=True)
                rows[-1] = {**done[name], **lp_row(spec)}
                save(rows)
            continue
        print(f"{spec}:", flush=True)
        solved_now = True
        rows.append({**solve_row(spec, args, args.logdir), **(lp_row(spec) if args.lp else {})})
        save(rows)  # after every row: an interrupted run keeps what it finished
    if done and not solved_now:  # every row kept (an LP pass at most): they were solved on the file's date
        meta["date"] = done_date
    md = save(rows)  # with the kept rows after the last one solved
    print(md)
    if args.readme:
        replace_section("thesis-table", f"Made by `{command('thesis_tables.py', argv)}`.\n\n{md}")


if __name__ == "__main__":
    main()
