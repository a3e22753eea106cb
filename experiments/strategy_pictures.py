"""The docs' strategy pictures: Liar's Dice's calls per roll and bid, and the 13 x 13 grid of a
full-range river spot, each drawn from a policy solved here by `tensorcfr plot-strategy`'s code.

    python experiments/strategy_pictures.py                 # writes into experiments/results
    python experiments/strategy_pictures.py --out /tmp/pictures

Writes strategy_liars_dice.png and strategy_holdem_river.png into --out and copies them into
docs/assets; prints what each solve reached.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

import tensorcfr
from tensorcfr import games
from tensorcfr.cli.strategy import plot_strategy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from readme_section import publish_picture  # noqa: E402

SPOT = "holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2)"


def solve(spec: str, algo: str, iterations: int, dtype: str = "float64") -> tuple[tensorcfr.Solver, float]:
    solver = tensorcfr.Solver(spec, algo, dtype=dtype)
    solver.step(iterations)
    return solver, solver.evaluate()["average"].exploitability.item()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)

    solver, e = solve("liars_dice", "cfr+", 2000)
    path = plot_strategy(games.make("liars_dice"), solver.average_policy().to_dict(),
                         os.path.join(args.out, "strategy_liars_dice.png"),
                         title=f"liars_dice: CFR+, 2,000 iterations, exploitability {e:.1e}")
    print(f"liars_dice: exploitability {e:.2e} after 2,000 CFR+ iterations -> {publish_picture(path)}")

    solver, e = solve(SPOT, "dcfr", 400, dtype="float32")
    pot = games.make(SPOT).pot
    path = plot_strategy(games.make(SPOT), solver.average_policy().to_dict(),
                         os.path.join(args.out, "strategy_holdem_river.png"),
                         title=f"{SPOT}: DCFR, 400 iterations, exploitability {100 * e / pot:.2f}% of the pot")
    print(f"river spot: exploitability {100 * e / pot:.3f}% of the pot after 400 DCFR iterations -> {publish_picture(path)}")


if __name__ == "__main__":
    main()
