"""Time uoftcprg's noregret (PyPI `noregret`, Kim and Sandholm's solver) as its README runs it:
`nr.to_efg(KER, nr.OpenSpielGame(KER, NAME))`, a regret minimizer per player
(`nr.CFR`, simultaneous; `nr.CFR_plus`, alternating: the README's PARAMETERS), then one
`nr.regret_minimization(...)` call. Prints one JSON object.

noregret needs Python >= 3.12 and does not import tensorcfr, so `bench.py` runs this file with
the interpreter named by `--noregret-python` (a virtual environment with `pip install noregret`):

    /path/to/py312/bin/python experiments/noregret_peer.py leduc_poker cfr+ 100

Per-iteration times come from the `update` callback, which noregret calls after every
iteration: the first WARMUP iterations are left out and the rest cut into BLOCKS blocks, as
`bench.measure` times every other solver (the median block's ms an iteration, and the fastest).
A run stops after `--budget` seconds of iterations at the warm-up's pace.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from peak import added_peak

WARMUP, BLOCKS = 2, 5  # as bench.py


def turn_based(name: str) -> str:
    """OpenSpiel's name of the game with its simultaneous moves taken in turn (Goofspiel):
    noregret's `OpenSpielGame` reads a node whose player is not 0 or 1 as chance, and a
    simultaneous node then fails in `chance_outcomes`. The turn-based game is the one the
    other peers and tensorcfr's importer solve (`pyspiel.convert_to_turn_based`)."""
    import pyspiel

    if pyspiel.load_game(name).get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return f"turn_based_simultaneous_game(game={name})"
    return name


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("game", help="OpenSpiel game name, e.g. leduc_poker")
    ap.add_argument("algo", choices=["cfr", "cfr+"])
    ap.add_argument("iterations", type=int)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of timed iterations at most")
    ap.add_argument("--cuda", action="store_true", help="noregret's CUDA kernel (nr.CUDAKer) instead of the CPU one")
    args = ap.parse_args(argv)
    import noregret as nr

    R_type, alternation = (nr.CFR, False) if args.algo == "cfr" else (nr.CFR_plus, True)
    stamps: list[float] = []
    total = WARMUP + args.iterations

    if args.cuda:  # (on its CUDA kernel an iteration's kernels may still run: a stamp waits for them)
        import cupy

        sync = cupy.cuda.Device().synchronize
    else:
        def sync():
            pass

    def update():
        sync()
        stamps.append(time.perf_counter())
        done = len(stamps) - 1
        if done == WARMUP + 1:  # one timed iteration in: cut the run to the budget at this pace
            pace = stamps[-1] - stamps[-2]
            nonlocal total
            total = WARMUP + max(1, min(args.iterations, int(args.budget / max(pace, 1e-9))))
        return done >= total

    def run():
        cpu = nr.FPKer()
        t0 = time.perf_counter()
        ker = nr.CUDAKer() if args.cuda else cpu
        game = nr.to_efg(ker, nr.OpenSpielGame(cpu, turn_based(args.game)))
        setup_s = time.perf_counter() - t0
        rows, cols = R_type(ker, game.row_sequence_form_polytope), R_type(ker, game.column_sequence_form_polytope)
        sync()
        stamps.append(time.perf_counter())
        nr.regret_minimization(game, rows, cols, alternation=alternation, prediction=False, iteration_count=total,
                               update=update, progress_bar=False)
        return game, rows, cols, setup_s

    # the peak counts the conversion of OpenSpiel's tree, which noregret's solver holds (resident
    # memory: on its CUDA kernel the GPU's memory is not counted)
    (game, rows, cols, setup_s), peak_mb = added_peak(run)
    times = [b - a for a, b in zip(stamps[WARMUP:-1], stamps[WARMUP + 1:])]  # the timed iterations
    n = len(times)
    k = min(BLOCKS, n)
    sizes = [n // k + (i < n % k) for i in range(k)]
    blocks, start = [], 0
    for m in sizes:
        blocks.append(1000 * sum(times[start:start + m]) / m)
        start += m
    expl = float(game.exploitability(rows.average_strategy, cols.average_strategy))
    print(json.dumps({"ms": statistics.median(blocks), "ms_min": min(blocks), "ms_blocks": blocks, "iterations": n,
                      "warmup": WARMUP, "setup_s": setup_s, "exploitability": expl, "peak_mb": peak_mb,
                      "updates": "alternating" if alternation else "simultaneous", "cuda": args.cuda}))


if __name__ == "__main__":
    main()
