"""A card game's payoff groups stacked into one call each (`operators.public._stacked`) against
the groups one call each: torch operations an iteration, ms an iteration, and the exploitability
after the runs (which must agree), on one device.

    python experiments/card_stack.py                                   # royal Rhode Island, CPU
    python experiments/card_stack.py --device cuda --games "rhode_island(royal=True)" \
        "holdem_turn(board=Ks7d2c9h, pot=10, stack=100, bets=(0.5,1,allin), cap=2)"

Both solvers are built from one compiled game, one's operator with `stack=True`, the other's
with `stack=False` (`PublicPayoffOperator.of`; by default a GPU stacks every group and the CPU
the dense products'), and take turns, `--repeats` blocks of `--iterations` each, so a
machine whose speed swings does not read as a difference between them; medians are reported.
The operations are counted on the CPU with the compiled loops off (`TENSORCFR_FUSE=0`), torch's
path in CUDA's layout: on a GPU each is a kernel, inside a CUDA graph too, and a group's call is
a dozen of them.
On the CPU the solvers run as shipped otherwise (the groups alone take the C loop where it
serves, the stacked groups torch's path).
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
from torch.utils._python_dispatch import TorchDispatchMode

import tensorcfr
from tensorcfr.operators import cards, public


class _Count(TorchDispatchMode):
    """Counts the torch operations run under it."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


def _solver(cg, algo: str, dtype, device: str, stack: bool, capture: str = "auto"):
    """A solver whose payoff operator stacks every group of one shape, or none (its operator
    replaced before its first iteration, which is what a CUDA graph records)."""
    s = tensorcfr.Solver(cg, algo, dtype=dtype, device=device, capture=capture)
    s.op = public.PublicPayoffOperator.of(s.game, s.dtype, stack=stack)
    return s


def _sync(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def _operations(game: str, algo: str, dtype, stack: bool) -> int:
    """Torch operations of one iteration on the CPU, the compiled loops off and the card
    showdown in CUDA's layout (`cards.TRANSPOSED_DEVICES`)."""
    old, layout = os.environ.get("TENSORCFR_FUSE"), cards.TRANSPOSED_DEVICES
    os.environ["TENSORCFR_FUSE"] = "0"
    cards.TRANSPOSED_DEVICES = ()
    try:
        s = _solver(tensorcfr.compile(game, form="public"), algo, dtype, "cpu", stack)
        s.step(2)
        with _Count() as c:
            s.step(1)
        return c.n
    finally:
        cards.TRANSPOSED_DEVICES = layout
        if old is None:
            del os.environ["TENSORCFR_FUSE"]
        else:
            os.environ["TENSORCFR_FUSE"] = old


def measure(game: str, algo: str, dtype, device: str, iterations: int, repeats: int, capture: str = "auto") -> dict:
    t0 = time.perf_counter()
    cg = tensorcfr.compile(game, form="public")
    compile_s = time.perf_counter() - t0
    solvers = {name: _solver(cg, algo, dtype, device, name == "stacked", capture) for name in ("alone", "stacked")}
    groups = {name: [len(g) for g in s.op.cards[1]] for name, s in solvers.items()}
    for s in solvers.values():
        s.step(3)  # (a CUDA graph records after its first iteration)
    times = {name: [] for name in solvers}
    for _ in range(repeats):
        for name, s in solvers.items():
            _sync(device)
            t = time.perf_counter()
            s.step(iterations)
            _sync(device)
            times[name].append((time.perf_counter() - t) / iterations * 1e3)
    out = {"game": game, "algorithm": algo, "dtype": str(dtype).replace("torch.", ""), "device": device,
           "capture": solvers["stacked"].describe()["capture"], "compile_s": round(compile_s, 2),
           "iterations": 3 + iterations * repeats}
    for name, s in solvers.items():
        out[name] = {"groups_a_player": groups[name], "ms": round(statistics.median(times[name]), 3),
                     "ms_blocks": [round(x, 3) for x in times[name]],
                     "operations": _operations(game, algo, dtype, name == "stacked"),
                     "nash_conv": float(s.evaluate()["average"].nash_conv.max())}
    out["speedup"] = round(out["alone"]["ms"] / out["stacked"]["ms"], 2)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=["rhode_island(royal=True)"])
    ap.add_argument("--algo", default="dcfr")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--capture", default="auto", help="the solvers' capture (auto, none, static, cuda-graph, compile)")
    ap.add_argument("--threads", type=int, default=None, help="torch's CPU threads (default: torch's)")
    ap.add_argument("--iterations", type=int, default=5, help="iterations a block")
    ap.add_argument("--repeats", type=int, default=5, help="blocks of each, taking turns")
    ap.add_argument("--out", default=None, help="a JSON file for the rows")
    a = ap.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    where = torch.cuda.get_device_name() if a.device.startswith("cuda") else f"{os.cpu_count()} cores"
    print(f"{platform.machine()}, {where}, torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)
    rows = []
    for game in a.games:
        row = measure(game, a.algo, getattr(torch, a.dtype), a.device, a.iterations, a.repeats, a.capture)
        rows.append(row)
        print(json.dumps(row), flush=True)
        al, st = row["alone"], row["stacked"]
        print(f"{game}: groups a player {al['groups_a_player']} -> {st['groups_a_player']}, operations an iteration "
              f"{al['operations']:,} -> {st['operations']:,}, {al['ms']} -> {st['ms']} ms an iteration "
              f"({row['speedup']}x), NashConv {al['nash_conv']:.6g} / {st['nash_conv']:.6g}", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
