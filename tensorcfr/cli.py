"""Command line: `tensorcfr solve GAME ...` and `tensorcfr info GAME`.

Flags mirror the Python API (`Solver`, `train`). Bad input prints one line
`tensorcfr: error: ...` and exits with code 2, never a traceback.

Example:
    $ tensorcfr solve kuhn --algo cfr+ --iterations 1000 --json
    $ tensorcfr solve ficha_domino --algo conditional-rm --runs 10 --iterations 100000
    $ tensorcfr info leduc --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import games as games_pkg

from .errors import TensorCFRError
from .normal_form import PROCEDURES
from .solvers import AVERAGING, PRESETS, UPDATES, WEIGHTS


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2
        self.exit(2, f"tensorcfr: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tensorcfr", description="Solve two-player zero-sum imperfect-information games "
                "with CFR as tensor operations.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("solve", help="run a solver and report exploitability and game value")
    s.add_argument("game", nargs="+", metavar="GAME",
                   help="game spec, e.g. kuhn, 'kuhn(ante=2)', leduc; several specs over one tree "
                        "are solved together as a batch")
    s.add_argument("--algo", nargs="+", default=["cfr+"],
                   help=f"algorithm preset(s): {', '.join(PRESETS)} (default cfr+); parameters as "
                        "'dcfr(alpha=1.5,beta=0,gamma=2)'; several run one after another with the same "
                        f"evaluation points. Matrix games also take the normal-form procedures "
                        f"{', '.join(PROCEDURES)}")
    s.add_argument("--iterations", type=_positive_int, default=1000)
    s.add_argument("--eval-every", type=_positive_int, default=None,
                   help="evaluate every K iterations (default: iterations / 10)")
    s.add_argument("--updates", choices=UPDATES, default=None, help="override the preset's schedule")
    s.add_argument("--averaging", choices=AVERAGING, default=None, help="override the preset's averaging")
    s.add_argument("--delay", type=int, default=None, help="averaging delay in iterations")
    s.add_argument("--alpha", type=float, default=None, help="discount of positive regrets (DCFR)")
    s.add_argument("--beta", type=float, default=None, help="discount of negative regrets (DCFR)")
    s.add_argument("--gamma", type=float, default=None, help="average weights t^gamma")
    s.add_argument("--eta", type=float, default=None, help="FTRL step size (ftrl, oftrl; default 2)")
    s.add_argument("--weights", choices=WEIGHTS, default=None,
                   help="FTRL dilated-entropy weights (default unit)")
    s.add_argument("--mu", type=float, default=None, help="inertia of conditional-rm (default (m-1) x payoff range)")
    s.add_argument("--seed", type=int, default=None, help="random seed of the sampled procedures (default 0)")
    s.add_argument("--runs", type=_positive_int, default=None,
                   help="independent runs of a sampled procedure, as one batch (default 1)")
    s.add_argument("--device", default="auto", help="cpu, cuda or auto (default)")
    s.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    s.add_argument("--logdir", default=None, help="write TensorBoard scalars under this directory")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a table")

    i = sub.add_parser("info", help="print the sizes of a compiled game")
    i.add_argument("game", metavar="GAME")
    i.add_argument("--json", action="store_true")
    sub.add_parser("games", help="list the registered games")
    return p


def _info(args) -> int:
    from .compiler import compile as compile_game

    t0 = time.perf_counter()
    cg = compile_game(args.game)
    sizes = {"game": cg.name, **cg.sizes(), "compile_seconds": round(time.perf_counter() - t0, 3)}
    if args.json:
        print(json.dumps(sizes))
    else:
        width = max(map(len, sizes))
        for k, v in sizes.items():
            print(f"{k:<{width}}  {v}")
    return 0


def _solve(args) -> int:
    results = [_solve_one(args, algo) for algo in args.algo]
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else {"runs": results}))
    elif len(results) > 1:
        w = max(12, *(len(r["algorithm"]) for r in results))
        print(f"\n{'algorithm':<{w}}  {'iterations':>10}  {'seconds':>8}  {'exploitability':>14}  {'(current)':>14}")
        for r in results:
            print(f"{r['algorithm']:<{w}}  {r['iterations']:>10}  {r['seconds']:>8.2f}  {r['exploitability']:>14.6e}"
                  f"  {r['exploitability_current']:>14.6e}")
    return 0


def _make_solver(args, algo: str):
    """A tree `Solver`, or `RegretMatching` for a normal-form procedure; an option the chosen
    kind does not have is an error."""
    from .normal_form import RegretMatching, is_procedure
    from .solvers import Solver

    game = args.game if len(args.game) > 1 else args.game[0]
    tree = dict(updates=args.updates, averaging=args.averaging, delay=args.delay, alpha=args.alpha,
                beta=args.beta, gamma=args.gamma, eta=args.eta, weights=args.weights)
    normal = dict(mu=args.mu, seed=args.seed, runs=args.runs)
    mine, other = (normal, tree) if is_procedure(algo) else (tree, normal)
    given = sorted(k for k, v in other.items() if v is not None)
    if given:
        raise TensorCFRError(f"{algo} has no option(s) {', '.join('--' + k for k in given)}")
    if is_procedure(algo):
        return RegretMatching(game, algo, device=args.device, dtype=args.dtype, **mine)
    return Solver(game, algo, device=args.device, dtype=args.dtype, **mine)


def _solve_one(args, algo: str) -> dict:
    from .training import evaluation_row, open_writer, train

    solver = _make_solver(args, algo)
    config = {**solver.describe(), "iterations": args.iterations}
    writer = open_writer(args.logdir, solver.game.name, solver.config.name) if args.logdir else None
    if writer is not None:
        writer.add_text("config", json.dumps(config, indent=1).replace("\n", "  \n"), 0)

    def line(row):
        print(f"{row['iteration']:>10}  {row['exploitability']:>14.6e}  {row['exploitability_current']:>14.6e}"
              f"  {row['game_value']:>+12.6f}  {row['ms_per_iteration']:>10.3f}", flush=True)

    if not args.json:
        print("tensorcfr solve: " + " ".join(f"{k}={v}" for k, v in config.items()))
        print(f"{'iteration':>10}  {'exploitability':>14}  {'(current)':>14}  {'game value':>12}  {'ms/iter':>10}")
    t0 = time.perf_counter()
    rows = train(solver, args.iterations, args.eval_every, callback=None if args.json else line, writer=writer)
    wall = time.perf_counter() - t0
    if writer is not None:
        writer.close()
    last = rows[-1]
    out = {"game": solver.game.name, "algorithm": solver.config.name, "iterations": solver.iteration,
           "exploitability": last["exploitability"], "nash_conv": last["nash_conv"],
           "game_value": last["game_value"], "exploitability_current": last["exploitability_current"],
           "nash_conv_current": last["nash_conv_current"], "game_value_current": last["game_value_current"],
           "seconds": last["seconds"], "wall_seconds": wall,
           "ms_per_iteration": 1000 * last["seconds"] / solver.iteration,
           "device": str(solver.device), "dtype": config["dtype"], "config": config,
           "curve": [{k: r[k] for k in ("iteration", "exploitability", "exploitability_current", "game_value")}
                     for r in rows]}
    if solver.batch_size > 1:
        ev = solver.evaluate()
        out["members"] = [{"member": name, **evaluation_row(solver, b, ev)} for b, name in enumerate(solver.member_names())]
        if not args.json:
            for m in out["members"]:
                print(f"  {m['member']}: exploitability {m['exploitability']:.6e}  game value {m['game_value']:+.6f}")
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "games":
            print("\n".join(games_pkg.available()))
            return 0
        return _info(args) if args.command == "info" else _solve(args)
    except (TensorCFRError, games_pkg.GameError) as e:
        print(f"tensorcfr: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tensorcfr: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
