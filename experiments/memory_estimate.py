"""The host-memory estimate that `--max-memory` is held against, checked against the measured peak.

For each game (a spec, `SPEC*N` for a batch of N copies of one game, or `boards*N` for N hold'em
river spots on random boards of their own, as `holdem_batch.py --boards` makes them) and form,
a fresh Python process imports tensorcfr, then compiles the game, builds a DCFR solver on the
CPU, runs 3 iterations and one evaluation; the peak is the process's high-water mark of resident
memory over that work less what it held before it (`peak.added_peak`: what the work takes
from the available memory the limit reads), and the estimate is
`tensorcfr.compiler.host_estimate`. The target: estimate / peak from 1.0 (never below the peak, so a game
that does not fit is refused before it is built) to 1.5 (not so cautious that a game that fits
is refused). The same work peaks differently from one process to the next (the hold'em turn
spot at float64: 1.5 to 3.0 GB over 13 runs, 2026-11-29), so each row runs `--repeats` times and the estimate is held to
the highest peak; the ratio column gives it against the highest and the lowest.

    python experiments/memory_estimate.py                       # the default games, float32 and float64
    python experiments/memory_estimate.py --games "dudo(5,1,2):public" --dtypes float64
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# the isomorphic flop spot of the hold'em tutorial
FLOP = ("holdem_flop(board=Td9d6h, pot=60, stack=370, bets=(0.5,), cap=1, "
        "range0='22+,A2s+,A8o+,K7s+,K9o+,Q8s+,Q9o+,J8s+,J9o+,T8+,97+,86+,75+,64s+,65o,54,43s', "
        "range1='22+,A4s+,A9o+,K9s+,KTo+,Q9s+,QTo+,J9+,T9,98s,87s,76s,65s', suit_isomorphism=True)")
DEFAULT_GAMES = [
    f"{FLOP}:public",
    "holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2):public",
    "holdem_river(board=AhJd8c5s2h, pot=10, stack=50, bets=(0.33,1,allin), cap=3, range0='22+,A2s+,KTo+', "
    "range1='random'):public",
    "holdem_turn(board=Ks7d2c9h, pot=10, stack=100, bets=(0.5,1,allin), cap=2):public",
    "holdem_turn(board=Qh8c3d5s, pot=20, stack=80, bets=(0.33,0.75,allin), cap=2):public",
    "boards*100:public",
    "boards*200:public",
    "boards*300:public",
    "rhode_island(royal=True):public",
    "dudo(4,2,2):public",
    "dudo(4,2,2):generic",
    "dudo(5,2,2):public",
    "dudo(6,1,2):public",
    "ocp(2000):public",
    "ocp(2000):generic",
    # measured after the fit of 2026-11-29, which no constant was chosen on (the guide's second table)
    "boards*50:public",
    "boards*1000:public",
    "dudo(5,1,2):public",
    "holdem_turn(board=Jc8d5h2s, pot=12, stack=60, bets=(0.75,allin), cap=2, range0='22+,A2s+,K9s+,ATo+', "
    "range1='random'):public",
    "liars_dice:public",
    "holdem_river(board=2c5d9hJsKc, pot=8, stack=40, bets=(0.25,0.75,allin), cap=3):public",
]


def members(spec: str) -> list[str] | str:
    """The specs a row compiles: `boards*N`, `SPEC*N` or one spec."""
    name, star, n = spec.rpartition("*")
    if not star or not n.isdigit():
        return spec
    if name == "boards":
        sys.path.insert(0, HERE)
        from holdem_batch import spots

        return spots(int(n), seed=0, board=None)
    return [name] * int(n)


def measure(spec: str, form: str, dtype: str, threads: int) -> dict:
    """One row, in this process (which should be fresh)."""
    import torch

    import tensorcfr
    from tensorcfr.compiler import host_estimate

    sys.path.insert(0, HERE)
    from peak import added_peak

    game = members(spec)
    estimate = host_estimate(game, form=form, dtype=dtype)
    times = {}

    def work():
        t0 = time.perf_counter()
        # (the generic form's disk cache off: a first run walks the game)
        cg = tensorcfr.compile(game, form=form, max_memory=None, **({"cache": False} if form == "generic" else {}))
        times["compile_s"] = time.perf_counter() - t0
        s = tensorcfr.Solver(cg, "dcfr", dtype=getattr(torch, dtype), threads=threads, capture="none")
        s.step(3)
        s.evaluate()
        times["total_s"] = time.perf_counter() - t0
        return cg.sizes()

    sizes, peak_mb = added_peak(work)
    row = {"game": spec, "form": form, "dtype": dtype, "peak_mb": peak_mb,
           "estimate_mb": None if estimate is None else estimate / 2**20, **times,
           "sizes": {k: v for k, v in sizes.items() if isinstance(v, (int, float))}}
    return row


def table(rows: list[dict]) -> str:
    lines = ["| game | form | dtype | peak MB | estimate MB | estimate / peak | seconds |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lo, hi = r["peaks_mb"][0], r["peaks_mb"][-1]
        peak = f"{hi:,.0f}" if hi - lo < 0.5 else f"{lo:,.0f}–{hi:,.0f}"
        est = "–" if r.get("estimate_mb") is None else f"{r['estimate_mb']:,.0f}"
        ratio = "–" if "estimate_over_peak" not in r else "–".join(
            dict.fromkeys(f"{x:.2f}" for x in r["estimate_over_peak"]))
        lines.append(f"| `{r['game']}` | {r['form']} | {r['dtype']} | {peak} | {est} | {ratio} | {r['total_s']:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=DEFAULT_GAMES, help="SPEC:FORM, SPEC*N:FORM or boards*N:FORM")
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=3,
                    help="fresh processes per row: the peak of one solve varies from run to run (a kept heap's holes)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a child process's row: SPEC:FORM:DTYPE
    args = ap.parse_args(argv)
    if args.one:
        spec, form, dtype = args.one.rsplit(":", 2)
        print(json.dumps(measure(spec, form, dtype, args.threads)))
        return 0
    rows = []
    for item in args.games:
        spec, _, form = item.rpartition(":")
        for dtype in args.dtypes:
            runs = []
            for _ in range(args.repeats):
                out = subprocess.run([sys.executable, __file__, "--one", f"{spec}:{form}:{dtype}", "--threads",
                                      str(args.threads)], capture_output=True, text=True)
                if out.returncode:
                    print(f"{spec} ({form}, {dtype}) failed:\n{out.stderr[-2000:]}", file=sys.stderr)
                    break
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            if not runs:
                continue
            row = max(runs, key=lambda r: r["peak_mb"])  # the worst run, which the estimate must cover
            row["peaks_mb"] = sorted(r["peak_mb"] for r in runs)
            if row.get("estimate_mb"):
                row["estimate_over_peak"] = [row["estimate_mb"] / p for p in (row["peaks_mb"][-1], row["peaks_mb"][0])]
            rows.append(row)
            print(json.dumps(rows[-1]), flush=True)
    print(f"\n{platform.machine()}, {os.cpu_count()} CPUs, {args.threads} threads, "
          f"{time.strftime('%Y-%m-%d')}\n\n{table(rows)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
