"""The thesis' regret-matching table, regenerated: four zero-sum matrix games, three sampled
procedures (A conditional regret matching with inertia, B the invariant probability vector,
C unconditional regret matching on realised play), plus expected-value regret matching and
RM+ as further columns.

    python experiments/regret_matching_table.py                 # writes results/ and the README table
    python experiments/regret_matching_table.py --games rps --max-iterations 20000 --no-readme

Each cell is 10 runs (one batch, seeds drawn from one generator; the deterministic rm and rm+
run once), each stopping at the first iteration at which both players' unconditional regret
of the play so far is below 0.005, as in the thesis; a run that has not stopped by
--max-iterations is reported as not reached, with its figures at that point. Reported per
cell, averaged over the runs: the row player's expected payoff under the empirical joint
play, the NashConv of the empirical marginals (the thesis' eps; in a zero-sum game it equals
the sum of the two unconditional regrets), iterations, and the batch's seconds and time per
iteration (all runs advance together, so per run it is a tenth of that).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import torch

from tensorcfr import normal_form as nf

from readme_section import command, replace_section

HERE = os.path.dirname(os.path.abspath(__file__))
GAMES = ["rps", "matching_pennies", "ficha_domino", "blotto(5,3)"]
PROCEDURES = ["conditional-rm", "invariant-rm", "sampled-rm", "rm", "rm+"]
LABEL = {"conditional-rm": "A conditional (inertia)", "invariant-rm": "B invariant vector",
         "sampled-rm": "C unconditional", "rm": "RM (expected)", "rm+": "RM+ (expected)"}
TITLE = {"rps": "RPS", "matching_pennies": "Matching pennies", "ficha_domino": "Ficha vs Dominó",
         "blotto(5,3)": "Blotto(5,3)"}
# The thesis' table (experiments/reference/thesis-reference.json, normal_form_thesis_table):
# (expected payoff, eps, seconds, iterations) for procedures A, B, C.
THESIS = {
    "rps": [(0.000012, 0.006, 12.198, 4_519_054), (0.000004, 0.010, 0.345, 6_601), (0.000022, 0.009, 0.049, 19_321)],
    "matching_pennies": [(0, 0.006, 10.276, 3_892_550), (0, 0.006, 0.777, 25_617), (0, 0.008, 0.042, 16_261)],
    "ficha_domino": [(0.333, 0.010, 319.179, 108_319_272), (0.334, 0.007, 11.275, 75_250),
                     (0.334, 0.004, 0.237, 84_319)],
    "blotto(5,3)": [(0.000219, 0.010, 875.533, 190_222_305), (0.000150, 0.010, 70.453, 58_794),
                    (0.000024, 0.009, 0.166, 48_614)],
}


def cell(game: str, procedure: str, runs: int, target: float, max_iterations: int, seed: int, device: str) -> dict:
    n = runs if procedure in nf.SAMPLED else 1
    rm = nf.RegretMatching(game, procedure, runs=n, seed=seed, device=device)
    out = rm.run(max_iterations, target_regret=target)
    Z = out["Z"]
    ev = nf.evaluate_profile(rm.A, rm.B, Z.sum(2), Z.sum(1))
    regrets = nf.joint_regrets(rm.A, rm.B, Z)
    mean = lambda t: float(t.double().mean())  # noqa: E731
    return {"game": game, "procedure": procedure, "runs": n, "reached": int(out["reached"].sum()),
            "iterations": mean(out["iterations"]), "iterations_max": int(out["iterations"].max()),
            "value": mean((rm.A * Z).sum((1, 2))), "nash_conv": mean(ev.nash_conv),
            "nash_conv_max": float(ev.nash_conv.max()), "exploitability": mean(ev.exploitability),
            "conditional_regret": mean(torch.maximum(regrets["conditional_p0"], regrets["conditional_p1"])),
            "seconds": out["seconds"], "batch_iterations": rm.iteration,
            "us_per_iteration": 1e6 * out["seconds"] / max(rm.iteration, 1)}


def markdown(rows: list[dict], args, cmd: str) -> str:
    lines = [f"`{cmd}` — {args.runs} runs per sampled cell, stop at unconditional regret < {args.target} "
             f"(at most {args.max_iterations:,} iterations); {platform.processor() or platform.machine()}, "
             f"{torch.get_num_threads()} threads, {time.strftime('%Y-%m-%d')}. "
             "Ours: mean over runs; seconds and µs/it are for the whole batch of runs. "
             "Thesis: its C++ figures per run.", "",
             "| game | procedure | payoff | NashConv | iterations | reached | seconds | µs/it | "
             "thesis payoff | thesis eps | thesis iterations | thesis seconds |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        th = THESIS.get(r["game"], [])
        k = PROCEDURES.index(r["procedure"])
        t = [f"{th[k][0]:g}", f"{th[k][1]:.3f}", f"{th[k][3]:,}", f"{th[k][2]:g}"] if k < len(th) else ["—"] * 4
        lines.append(f"| {TITLE.get(r['game'], r['game'])} | {LABEL[r['procedure']]} | {round(r['value'], 6) + 0.0:+.6f} | "
                     f"{r['nash_conv']:.4f} | {r['iterations']:,.0f} | {r['reached']}/{r['runs']} | "
                     f"{r['seconds']:.2f} | {r['us_per_iteration']:.0f} | " + " | ".join(t) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=GAMES)
    p.add_argument("--procedures", nargs="+", default=PROCEDURES, choices=PROCEDURES)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--target", type=float, default=0.005, help="stop at this unconditional regret")
    p.add_argument("--max-iterations", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--no-readme", action="store_true")
    p.add_argument("--render-only", action="store_true",
                   help="rewrite the Markdown (and README) table from the JSON of an earlier run")
    args = p.parse_args(argv)
    cmd = command("regret_matching_table.py", argv)
    os.makedirs(args.out, exist_ok=True)
    if args.render_only:
        with open(os.path.join(args.out, "regret_matching_table.json")) as f:
            saved = json.load(f)
        return _finish(saved["rows"], argparse.Namespace(**{**vars(args), **saved.get("args", {})}),
                       saved["command"], args)
    rows = []
    for game in args.games:
        value = nf.lp_solve(game)[0]
        print(f"{game}: LP value {value:+.6f}", flush=True)
        for procedure in args.procedures:
            r = cell(game, procedure, args.runs, args.target, args.max_iterations, args.seed, args.device)
            r["lp_value"] = value
            rows.append(r)
            print(f"  {procedure:<15} payoff {r['value']:+.6f}  NashConv {r['nash_conv']:.4f}  iterations "
                  f"{r['iterations']:>12,.0f}  reached {r['reached']}/{r['runs']}  {r['seconds']:.2f} s", flush=True)
            with open(os.path.join(args.out, "regret_matching_table.json"), "w") as f:
                json.dump({"command": cmd, "target": args.target, "max_iterations": args.max_iterations,
                           "args": {"runs": args.runs, "target": args.target, "max_iterations": args.max_iterations},
                           "date": time.strftime("%Y-%m-%d"), "rows": rows}, f, indent=1)
    return _finish(rows, args, cmd, args)


def _finish(rows: list[dict], settings, cmd: str, args) -> int:
    md = markdown(rows, settings, cmd.replace(" --no-readme", "").replace(" --render-only", ""))
    with open(os.path.join(args.out, "regret_matching_table.md"), "w") as f:
        f.write(md)
    print(md)
    if not args.no_readme:
        replace_section("rm-table", md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
