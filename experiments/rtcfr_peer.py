"""`rtcfr+` side by side with the authors' own RTCFR+ (Meng et al., NeurIPS 2025), a LiteEFG
graph in github.com/menglinjian/NeurIPS-2025-RTCFR (`main.py`, class `RTCFRPlusGraph`, its
default parameters): the NashConv of both last iterates at the same iterations, and where
they part.

    git clone https://github.com/menglinjian/NeurIPS-2025-RTCFR /tmp/rtcfr
    python experiments/rtcfr_peer.py --repo /tmp/rtcfr --game kuhn_poker --iterations 1,10,100,1000

The authors' graph is imported from their checkout (it needs `LiteEFG`, `pyspiel` and `tqdm`)
and run as their `train` function runs it: `update_graph` each iteration, the exploitability of
`current_strategy()` summed over both players (NashConv). tensorcfr runs the same game loaded
from OpenSpiel at float64. Prints one line per iteration asked for, and the largest difference.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

import torch

import tensorcfr


def theirs(repo: str, game: str, its: list[int]) -> dict[int, float]:
    """The authors' graph on `game`: {iteration: NashConv of its last iterate}."""
    import LiteEFG
    import pyspiel

    spec = importlib.util.spec_from_file_location("rtcfr_main", os.path.join(repo, "main.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # (its training loop runs only as a script)
    graph = module.RTCFRPlusGraph()
    env = LiteEFG.OpenSpielEnv(pyspiel.load_game(game), traverse_type="Enumerate", regenerate=False)
    env.set_graph(graph)
    out = {}
    for t in range(1, max(its) + 1):
        graph.update_graph(env)
        env.update_strategy(graph.current_strategy(), update_best=False)
        if t in its:
            out[t] = float(sum(env.exploitability(graph.current_strategy(), "last-iterate")))
    return out


def ours(game: str, its: list[int]) -> dict[int, float]:
    solver = tensorcfr.Solver(f"openspiel:{game}", "rtcfr+", device="cpu", dtype=torch.float64, threads=1)
    out = {}
    for t in its:
        solver.step(t - solver.iteration)
        out[t] = float(solver.evaluate()["current"].nash_conv[0])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="a checkout of menglinjian/NeurIPS-2025-RTCFR")
    ap.add_argument("--game", default="kuhn_poker", help="OpenSpiel game name")
    ap.add_argument("--iterations", default="1,10,100,1000", help="comma-separated iterations to compare at")
    a = ap.parse_args(argv)
    its = sorted({int(x) for x in a.iterations.split(",")})
    if not os.path.exists(os.path.join(a.repo, "main.py")):
        ap.error(f"--repo {a.repo!r} has no main.py (clone menglinjian/NeurIPS-2025-RTCFR)")
    them, us = theirs(a.repo, a.game, its), ours(a.game, its)
    print(f"{'iteration':>10} {'RTCFR+ (authors)':>22} {'tensorcfr rtcfr+':>22} {'difference':>11}")
    for t in its:
        print(f"{t:>10} {them[t]:>22.15g} {us[t]:>22.15g} {abs(them[t] - us[t]):>11.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
