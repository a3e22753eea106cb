"""Command line: `tensorcfr solve | compare | resume | eval | play | info | games`.

Flags mirror the Python API (`Solver`, `train`). Bad input prints one line
`tensorcfr: error: ...` and exits with code 2, never a traceback. A run stopped by Ctrl-C or
SIGTERM saves a checkpoint, says how to resume, and exits with 130 or 143.

Example:
    $ tensorcfr solve kuhn --algo cfr+ --iterations 1000 --json
    $ tensorcfr solve leduc --algo dcfr --time-limit 2h --checkpoint-every 1000 --save-policy leduc.json
    $ tensorcfr resume runs/leduc__dcfr__0__20261122-101500
    $ tensorcfr eval leduc leduc.json
    $ tensorcfr play leduc leduc.json
    $ tensorcfr solve ficha_domino --algo conditional-rm --runs 10 --iterations 100000
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import threading
import time

import torch

from tensorcfr import games as games_pkg

from tensorcfr.cli.parser import NOT_SETTINGS, build_parser, compile_limits
from tensorcfr.errors import TensorCFRError, short_name
from tensorcfr.memory import keep_freed_memory
from tensorcfr.io.files import dumps
from tensorcfr.io.policies import check_policy_path

def _lp(args) -> int:
    from tensorcfr.compiler import compile as compile_game
    from tensorcfr.lp import solve_lp
    from tensorcfr.io.policies import write_policy

    if args.save_policy is not None:
        check_policy_path(args.save_policy)
    cg = compile_game(args.game, **compile_limits(args))
    r = solve_lp(cg)
    out = {"game": cg.name, "value": r.value, "nash_conv": r.nash_conv, "seconds": round(r.seconds, 3),
           "sequences": [tp.num_sequences - 1 for tp in cg.treeplexes]}
    if args.save_policy:
        write_policy(args.save_policy, {"average": r.policy, "current": r.policy}, algorithm="lp", iteration=0)
        out["policy_file"] = args.save_policy
    if args.json:
        print(dumps(out))
    else:
        print(f"{cg.name}: value {r.value:+.12f}  NashConv of the LP's strategies {r.nash_conv:.2e}  "
              f"({r.seconds:.3f} s in HiGHS)")
    return 0


# -- info ------------------------------------------------------------------------------------------
def _info(args) -> int:
    from tensorcfr.compiler import compile as compile_game

    from tensorcfr.compiler import host_estimate
    from tensorcfr.compiler.sizes import available_memory, estimate_bytes

    from tensorcfr.devices import resolve_device

    t0 = time.perf_counter()
    resolve_device(args.device)  # a device that is not there: its one-line error, not a "compiled: no"
    g = games_pkg.make(args.game)
    hint = g.size_hint()  # known without building the tree
    sizes = {"game": g.name}
    limits = compile_limits(args)
    if hint is not None:
        # in the form it compiles in and the solve's dtype (--dtype, float64 by default), as a
        # solve's limits hold it: the isomorphic flop spot's 10.5 GB at float64, 6.6 GB at float32
        need = host_estimate(g, form=limits["form"], max_histories=limits["max_histories"],
                             max_memory=limits["max_memory"], device=args.device, dtype=args.dtype)
        sizes.update(histories_closed_form=hint[0] if hint[1] else None, histories_at_least=hint[0],
                     estimated_bytes=estimate_bytes(hint[0]) if need is None else need,
                     available_bytes=available_memory())
    try:
        cg = compile_game(g, **limits, device=args.device, dtype=args.dtype)
    except TensorCFRError as e:
        if hint is None:
            raise
        sizes["compiled"] = f"no: {e}"  # the estimate is the answer
    else:
        sizes = {**sizes, "game": cg.name, **cg.sizes(), "compile_seconds": round(time.perf_counter() - t0, 3)}
    if args.json:
        print(dumps(sizes))
    else:
        from tensorcfr.compiler.sizes import approx

        width = max(map(len, sizes))
        for k, v in sizes.items():
            print(f"{k:<{width}}  {approx(v) if isinstance(v, int) and not isinstance(v, bool) else v}")
    return 0


# -- solve, compare, resume ------------------------------------------------------------------------
class _StopFlag:
    """SIGINT / SIGTERM ask the loop to stop at its next check (a second Ctrl-C aborts at once)."""

    def __init__(self):
        self.signal = None

    def __enter__(self):
        self.old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        for s in self.old:
            signal.signal(s, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal = signum

    def __call__(self) -> bool:
        return self.signal is not None

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)


def _make_solver(args, algo: str):
    """A tree `Solver`, or `RegretMatching` for a normal-form procedure; an option the chosen
    kind does not have is an error."""
    from tensorcfr.normal_form import RegretMatching, is_procedure
    from tensorcfr.run.solver import Solver

    game = args.game if len(args.game) > 1 else args.game[0]
    sampling = getattr(args, "sampling", None)
    tree = dict(updates=args.updates, averaging=args.averaging, delay=args.delay, alpha=args.alpha,
                beta=args.beta, gamma=args.gamma, eta=args.eta, weights=args.weights,
                capture=getattr(args, "capture", None), sampling=sampling,
                samples=getattr(args, "samples", None), epsilon=getattr(args, "epsilon", None),
                update_scope=getattr(args, "update_scope", None))
    if sampling in (None, "none"):
        for flag in ("samples", "epsilon", "update_scope"):
            if tree[flag] is not None:
                raise TensorCFRError(f"--{flag.replace('_', '-')} needs --sampling (chance, external or outcome)")
    elif tree["epsilon"] is not None and sampling != "outcome":
        raise TensorCFRError("--epsilon is outcome sampling's exploration: it needs --sampling outcome")
    normal = dict(mu=args.mu, runs=args.runs)
    if args.mu is not None and not is_procedure(algo):  # rtcfr+'s regulariser weight (another rule refuses it)
        tree["mu"] = normal.pop("mu")
    both = dict(regret_tolerance=getattr(args, "regret_tolerance", None))  # (rm and rm+ among the procedures)
    mine, other = (normal, tree) if is_procedure(algo) else (tree, normal)
    mine = {**mine, **both}
    given = sorted(k for k, v in other.items() if v is not None)
    if given:
        raise TensorCFRError(f"{algo} has no option(s) {', '.join('--' + k for k in given)}")
    if is_procedure(algo):
        return RegretMatching(game, algo, device=args.device, dtype=args.dtype, seed=args.seed,
                              deterministic=getattr(args, "deterministic", False), **mine)
    return Solver.from_spec(game, run_spec(args, algo, {k: v for k, v in mine.items() if v is not None}))


def run_spec(args, algo: str, settings: dict):
    """The `RunSpec` of a tree algorithm's run from the command's flags (and the algorithm's
    own `settings`): the one place the CLI's run is checked and its algorithm parsed.

    Example:
        >>> args = build_parser().parse_args(["solve", "leduc", "--algo", "dcfr", "--device", "cpu"])
        >>> run_spec(args, "dcfr", {"alpha": 2.0}).config.alpha
        2.0
    """
    from tensorcfr.run.spec import RunSpec

    limits = compile_limits(args)
    return RunSpec.of(algo, device=args.device, dtype=args.dtype, deterministic=getattr(args, "deterministic", False),
                      distributed=getattr(args, "distributed", False), seed=getattr(args, "seed", 0),
                      form=limits["form"], max_histories=limits["max_histories"], max_memory=limits["max_memory"],
                      threads=getattr(args, "threads", "auto"), **settings)


def _save_policy(path: str, solver) -> str:
    """Write the solver's strategies to `path`; returns the layout ("keys" or "public",
    `io.policies.write_policy`)."""
    from tensorcfr.io.policies import write_policy

    return write_policy(path, {"average": solver.average_policy(), "current": solver.current_policy(copy=False)},
                        algorithm=solver.config.name, iteration=solver.iteration)


def _train_run(args, algo: str, run_dir: str | None, checkpoint: dict | None = None) -> dict:
    """Build the solver, (re)load its checkpoint, train with logging, stopping and checkpoints."""
    from tensorcfr.run.checkpoints import CHECKPOINT, save_checkpoint, write_run_file
    from tensorcfr.run.training import Progress, TrainOptions, log_config, train

    solver = _make_solver(args, algo)
    solver.check_numbers(args.iterations)  # before the header: the run's regrets and weights fit the dtype
    pot = _pot(args.game[0]) if len(args.game) == 1 else None  # a poker spot's, for its units
    if args.save_policy and solver.batch_size > 1:  # before training, not after it
        raise TensorCFRError("--save-policy saves one strategy: run a single game and setting")
    if args.save_policy:
        from tensorcfr.io.policies import policy_layout

        policy_layout(solver.game, args.save_policy)  # a .json too large to write fails now, not after training
    config = {**solver.describe(), "iterations": args.iterations, "eval_every": args.eval_every}
    loop_state = None
    if checkpoint is not None:
        solver.load_state_dict(checkpoint["solver"])
        checkpoint["solver"] = None  # its tensors map the file: unmapped now, not when the run ends
        loop_state = checkpoint["loop"]
        if loop_state.get("eval_every"):
            args.eval_every = loop_state["eval_every"]
    writer = None
    if run_dir is not None:
        from torch.utils.tensorboard import SummaryWriter  # imported late: it is slow to import

        try:
            writer = SummaryWriter(run_dir)
            if checkpoint is None:
                policy = os.path.abspath(args.save_policy) if args.save_policy else None
                write_run_file(run_dir, {"args": {k: v for k, v in vars(args).items() if k not in NOT_SETTINGS},
                                         "algo": algo, "config": config, "save_policy": policy})
                log_config(writer, config, args.track_infosets)
        except OSError as e:  # a full disk before the first iteration
            raise TensorCFRError(f"cannot write the TensorBoard events in {run_dir} ({e.strerror or e}); "
                                 "nothing was run") from None

    def save(state):
        save_checkpoint(os.path.join(run_dir, CHECKPOINT), {"solver": solver.state_dict(copy=False), "loop": state,
                                                            "algo": algo, "iteration": solver.iteration})

    def line(row):
        print(f"{row['iteration']:>10}  {row['exploitability']:>14.6e}  {row['exploitability_current']:>14.6e}"
              f"  {row['game_value']:>+12.6f}  {row['ms_per_iteration']:>10.3f}", flush=True)

    if not args.json:
        if checkpoint is not None:
            print(f"tensorcfr resume: {run_dir} at iteration {solver.iteration}")
            if solver.iteration >= args.iterations:
                print(f"already done: {solver.iteration} of {args.iterations} iterations; nothing to run "
                      f"(--iterations N continues it to N in all)")
        print("tensorcfr solve: " + " ".join(f"{k}={_shown(k, v)}" for k, v in config.items()))
        if run_dir is not None:  # on stderr: stdout keeps its one-line-per-evaluation shape
            print(f"run directory: {run_dir}", file=sys.stderr)
        print(f"{'iteration':>10}  {'exploitability':>14}  {'(current)':>14}  {'game value':>12}  {'ms/iter':>10}")
    t0 = time.perf_counter()
    with _StopFlag() as stop:
        options = TrainOptions(callback=None if args.json else line, writer=writer, time_limit=args.time_limit,
                               target_exploitability=args.target_exploitability,
                               checkpoint=save if run_dir is not None else None,
                               checkpoint_every=args.checkpoint_every, should_stop=stop,
                               track_infosets=args.track_infosets, histograms=not args.no_histograms,
                               progress=None if args.json or args.quiet else
                               Progress(args.iterations, initial=solver.iteration), loop_state=loop_state)
        def kept() -> str:
            saved = run_dir is not None and os.path.exists(os.path.join(run_dir, CHECKPOINT))
            return (f"the last checkpoint in {run_dir} is intact: tensorcfr resume {run_dir}" if saved else
                    "no checkpoint was written yet" if run_dir else "no run directory (--no-log): nothing saved")
        try:
            rows = train(solver, max(args.iterations - solver.iteration, 0), args.eval_every, options)
        except (MemoryError, torch.cuda.OutOfMemoryError):
            raise TensorCFRError(f"out of memory at iteration {solver.iteration}; {kept()}") from None
        except OSError as e:  # TensorBoard's writer on a full disk, a folder gone read-only or removed
            raise TensorCFRError(f"cannot write the TensorBoard events in {run_dir} at iteration {solver.iteration} "
                                 f"({e.strerror or e}); {kept()}") from None
    wall = time.perf_counter() - t0
    if writer is not None:
        try:
            writer.close()
        except OSError as e:
            raise TensorCFRError(f"cannot write the TensorBoard events in {run_dir} ({e.strerror or e}); "
                                 f"the run is done and its checkpoint is intact") from None
    last = rows[-1]
    out = {"game": solver.game.name, "algorithm": solver.config.name, "iterations": solver.iteration,
           "stopped": rows.stopped,
           "exploitability": last["exploitability"], "nash_conv": last["nash_conv"],
           "game_value": last["game_value"], "exploitability_current": last["exploitability_current"],
           "nash_conv_current": last["nash_conv_current"], "game_value_current": last["game_value_current"],
           "seconds": last["seconds"], "wall_seconds": wall,
           "ms_per_iteration": 1000 * last["seconds"] / max(solver.iteration, 1),
           "device": str(solver.device), "threads": solver.threads, "dtype": config["dtype"], "config": config,
           "run_dir": run_dir,
           **({"sampled_fraction": last["sampled_fraction"]} if "sampled_fraction" in last else {}),
           "curve": [{k: r[k] for k in ("iteration", "exploitability", "exploitability_current", "game_value")}
                     for r in rows]}
    if pot is not None:  # a poker spot: the exploitability in its players' units as well
        out.update(pot=pot, exploitability_percent_pot=100 * last["exploitability"] / pot)
        if not args.json:
            # (+ 0.0: a rounding's -1e-14 of a spot with nothing to exploit printed as -0.0000%)
            print(f"exploitability {round(out['exploitability_percent_pot'], 4) + 0.0:.4f}% of the pot ({pot:g})")
    if solver.batch_size > 1:
        from tensorcfr.run.training import evaluation_row

        ev = solver.evaluate()
        out["members"] = [{"member": name, **evaluation_row(solver, b, ev)} for b, name in enumerate(solver.member_names())]
        if not args.json:
            for m in out["members"]:
                print(f"  {short_name(m['member'])}: exploitability {m['exploitability']:.6e}  "
                      f"game value {m['game_value']:+.6f}")
    if args.save_policy:
        out["policy_layout"] = _save_policy(args.save_policy, solver)
        out["policy_file"] = args.save_policy
        if not args.json:
            print(f"policy saved to {args.save_policy}" + (
                " (by public infoset and type; `tensorcfr eval` and `tensorcfr.io.policies.read_policy` read it)"
                if out["policy_layout"] == "public" else ""))
    if rows.stopped == "interrupted":
        out["signal"] = stop.signal
        where = f"checkpoint saved in {run_dir}; continue with: tensorcfr resume {run_dir}" if run_dir else \
            "no run directory (--no-log): nothing saved"
        print(f"tensorcfr: interrupted at iteration {solver.iteration}; {where}", file=sys.stderr)
    elif rows.stopped != "iterations" and not args.json:
        print(f"stopped at iteration {solver.iteration}: {rows.stopped.replace('_', ' ')} reached")
    return out


def _shown(key: str, value) -> str:
    """A setting of the run's header line, each game's name cut to 120 characters, a batch of
    more than three games as its count, its first and its last (a batch of 1,000 hold'em spots
    named each, ranges and all, would print megabytes).

    Example:
        >>> _shown("batch", ["a", "b", "c", "d"]), _shown("batch", ["kuhn"]), _shown("dtype", "float64")
        ("[4 games: 'a', ..., 'd']", "['kuhn']", 'float64')
    """
    if key == "batch" and isinstance(value, (list, tuple)):
        if len(value) > 3:
            return f"[{len(value)} games: {short_name(value[0])!r}, ..., {short_name(value[-1])!r}]"
        return str([short_name(v) for v in value])
    return short_name(value) if key == "game" and isinstance(value, str) else str(value)


def _summary_table(results: list[dict]) -> None:
    w = max(12, *(len(r["algorithm"]) for r in results))
    print(f"\n{'algorithm':<{w}}  {'iterations':>10}  {'seconds':>8}  {'exploitability':>14}  {'(current)':>14}")
    for r in results:
        print(f"{r['algorithm']:<{w}}  {r['iterations']:>10}  {r['seconds']:>8.2f}  {r['exploitability']:>14.6e}"
              f"  {r['exploitability_current']:>14.6e}")


def _exit_code(results: list[dict]) -> int:
    sig = next((r.get("signal") for r in results if r.get("signal")), None)
    return 0 if sig is None else 128 + int(sig)


def _join_group(args, resuming: bool = False) -> int:
    """With --distributed, join torchrun's process group (`distributed.init_from_environment`)
    and return this rank; rank 0 prints, logs, checkpoints and saves the policy, the others
    only compute (their stdout is discarded). Without it, 0. A distributed run resumed outside
    torchrun continues as one process (its checkpoint holds the whole state)."""
    if not getattr(args, "distributed", False):
        return 0
    import torch.distributed as dist

    from tensorcfr.operators.distributed import init_from_environment

    if resuming and not dist.is_initialized() and "RANK" not in os.environ:
        print("tensorcfr: a distributed run resumed outside torchrun: continuing as one process", file=sys.stderr)
        args.distributed = False
        return 0
    rank, args.device = init_from_environment(args.device)
    if args.no_log:  # no rank writes histograms, so none computes them (they are collectives)
        args.no_histograms = True
    if rank != 0:
        sys.stdout = open(os.devnull, "w")
        args.save_policy = None
    return rank


def _solve(args, compare: bool = False) -> int:
    from tensorcfr.run.checkpoints import check_logdir, compare_name, new_run_dir

    if args.save_policy and len(args.algo) > 1:
        raise TensorCFRError("--save-policy with several algorithms would overwrite one file: run them one by one")
    if args.checkpoint_every and args.no_log:
        raise TensorCFRError("--checkpoint-every needs a run directory: drop --no-log")
    if isinstance(args.target_exploitability, str):  # "0.5%pot": in chips, before anything is stored
        args.target_exploitability = _pot_target(args.game, args.target_exploitability)
    rank = _join_group(args)
    logdir = None if args.no_log or rank else args.logdir
    if args.save_policy is not None:  # outputs checked before the work, not after it
        check_policy_path(args.save_policy)
    if logdir is not None:
        check_logdir(logdir)
    game_name = _game_name(args.game)
    plan = None
    if compare and logdir is not None:  # one parent directory: one TensorBoard view overlays the algorithms
        logdir = new_run_dir(logdir, compare_name(game_name, args.seed))
        # the comparison's own file: `tensorcfr resume` on the parent continues every algorithm
        plan = {"format": "tensorcfr-compare", "version": 1, "algos": list(args.algo), "runs": {},
                "args": {k: v for k, v in vars(args).items() if k not in NOT_SETTINGS}}
    results = _run_algorithms(args, args.algo, logdir, game_name, plan)
    return _report(args, results, logdir, compare)


@functools.lru_cache(maxsize=8)
def _pot(spec: str) -> float | None:
    """The pot of a poker spot (`games.holdem`), None for a game without one."""
    return getattr(games_pkg.make(spec), "pot", None)


def _pot_target(specs: list[str], text: str) -> float:
    """--target-exploitability "X%pot" in chips: X / 100 of the games' pot."""
    pots = {spec: _pot(spec) for spec in specs}
    lacking = [spec for spec, pot in pots.items() if pot is None]
    if lacking:
        raise TensorCFRError(f"--target-exploitability {text}: a share of the pot needs a poker spot "
                             f"(holdem_river, holdem_turn, holdem_flop); {lacking[0]} has no pot")
    if len(set(pots.values())) > 1:
        raise TensorCFRError(f"--target-exploitability {text}: the games' pots differ ({sorted(set(pots.values()))}); "
                             "give the target in chips")
    return float(text[:-len("%pot")]) / 100 * next(iter(pots.values()))


def _game_name(specs: list[str]) -> str:
    """The name of a run's game in its directory's name: the spec, or the first spec and how many follow."""
    return specs[0] if len(specs) == 1 else f"{specs[0]}+{len(specs) - 1}"


def _run_algorithms(args, algos: list[str], logdir: str | None, game_name: str, plan: dict | None,
                    done: dict | None = None) -> list[dict]:
    """Train each algorithm in turn (a comparison's `plan` records each run directory as it
    starts); `done` maps algorithms to run directories to resume instead of starting."""
    from tensorcfr.run.checkpoints import member_name, new_run_dir, run_name, write_compare_file

    results = []
    for algo in algos:
        if done and algo in done:  # a comparison resumed: this algorithm's run continues
            results.append(_continue_run(done[algo], args.json, args.iterations, args.time_limit,
                                         quiet=args.quiet))
        else:
            # a comparison's runs are named by algorithm: its directory names the game and time
            name = member_name(algo, args.seed) if plan is not None else run_name(game_name, algo, args.seed)
            run_dir = new_run_dir(logdir, name) if logdir is not None else None
            if plan is not None:
                plan["runs"][algo] = run_dir
                write_compare_file(logdir, plan)
            results.append(_train_run(args, algo, run_dir))
        if results[-1].get("signal"):
            if plan is not None:
                print(f"tensorcfr: the comparison stopped; continue every algorithm with: tensorcfr resume {logdir}",
                      file=sys.stderr)
            break
    return results


def _report(args, results: list[dict], logdir: str | None, compare: bool) -> int:
    if args.json:
        print(dumps(results[0] if len(results) == 1 and not compare else {"runs": results, "logdir": logdir}))
    elif len(results) > 1 or compare:
        _summary_table(results)
        if compare and logdir is not None:
            print(f"\nTensorBoard: tensorboard --logdir {logdir}")
    return _exit_code(results)


def _stored_args(run_dir: str, info: dict) -> argparse.Namespace:
    """The settings of run.json, checked by the `solve` parser itself: they are turned back into
    the command line they came from and parsed, so a missing, mistyped or out-of-range value is
    the same one-line error a bad option is."""
    stored = info.get("args")
    if not isinstance(stored, dict) or not isinstance(info.get("algo"), str):
        raise TensorCFRError(f"{run_dir}/run.json: 'args' must be an object and 'algo' a string")
    argv: list[str] = []
    for action in build_parser().solve._actions:
        if action.dest not in stored or action.dest == "help":
            continue
        value = stored[action.dest]
        ok = (isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value)
              if action.nargs in ("+", "*") else
              isinstance(value, bool) if action.nargs == 0 else
              value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool)))
        if not ok:
            raise TensorCFRError(f"{run_dir}/run.json: setting {action.dest!r} has the wrong type: {value!r}")
        if not action.option_strings:  # the positional game specs
            argv = [str(v) for v in value] + argv
        elif action.nargs == 0:
            argv += [action.option_strings[0]] if value else []
        elif value is not None and value != []:
            argv += [action.option_strings[0], *(str(v) for v in (value if isinstance(value, list) else [value]))]
    if "game" not in stored:
        raise TensorCFRError(f"{run_dir}/run.json: the game is missing")
    parser = build_parser()
    parser.error = lambda message: (_ for _ in ()).throw(  # noqa: E731 - as an error naming the file
        TensorCFRError(f"{run_dir}/run.json: {message}"))
    parser.solve.error = parser.error
    parsed = parser.parse_args(["solve", *argv])
    if "form" not in stored:  # a run from before the public-tree form: its checkpoint is the generic form's
        parsed.form = "generic"
    elif parsed.form == "auto" and isinstance(info.get("config"), dict):  # a run's own run.json (not a
        # comparison's plan, whose runs not yet started take today's rule): the form it was compiled in
        config = info["config"]
        if config.get("form") in ("generic", "public"):
            parsed.form = config["form"]
        else:  # a run from before the form was recorded: "auto" took the public form wherever a game had it
            from tensorcfr.compiler import has_public_form, members_of

            parsed.form = "public" if all(has_public_form(g) for g in members_of(parsed.game)) else "generic"
    for k, v in stored.items():  # settings the parser does not know (older or newer runs) are kept
        if not hasattr(parsed, k):
            setattr(parsed, k, v)
    return parsed


def _resume_comparison(args) -> int:
    """Continue a stopped `compare`: each algorithm's run resumes where it stopped, and the
    algorithms it had not reached yet start."""
    from tensorcfr.run.checkpoints import CHECKPOINT, read_compare_file

    plan = read_compare_file(args.run_dir)
    run_args = _stored_args(args.run_dir, {"args": plan["args"], "algo": plan["algos"][0]})
    run_args.json, run_args.save_policy, run_args.quiet = args.json, None, args.quiet
    if args.iterations is not None:
        run_args.iterations = args.iterations
    if args.time_limit is not None:
        run_args.time_limit = args.time_limit
    done = {a: d for a, d in plan["runs"].items() if d and os.path.exists(os.path.join(d, CHECKPOINT))}
    results = _run_algorithms(run_args, plan["algos"], args.run_dir, _game_name(run_args.game), plan, done)
    return _report(run_args, results, args.run_dir, True)


def _continue_run(run_dir: str, json_out: bool, iterations: int | None, time_limit: float | None,
                  save_policy: str | None = None, quiet: bool = False) -> dict:
    """Continue one run directory from its checkpoint, with its own settings (run.json, checked)
    unless `iterations`, `time_limit` or `save_policy` say otherwise."""
    from tensorcfr.run.checkpoints import CHECKPOINT, check_checkpoint, load_checkpoint, lock_run_dir, read_run_file

    info = read_run_file(run_dir)
    run_args = _stored_args(run_dir, info)
    ckpt = check_checkpoint(load_checkpoint(os.path.join(run_dir, CHECKPOINT)), run_dir)
    if ckpt.get("algo") not in (None, info["algo"]):  # the regrets of one algorithm continued by another
        raise TensorCFRError(f"{run_dir}: run.json names algorithm {info['algo']!r} but the checkpoint was "
                             f"written by {ckpt['algo']!r}; restore run.json or start a new run")
    stored = info.get("save_policy")  # the run's policy file, unless this resume names another
    if stored is not None and not isinstance(stored, str):
        raise TensorCFRError(f"{run_dir}/run.json: 'save_policy' must be a file name, got {stored!r}")
    run_args.json, run_args.save_policy, run_args.quiet = json_out, save_policy or stored, quiet
    if run_args.save_policy:
        check_policy_path(run_args.save_policy)
    if iterations is not None:
        done = ckpt.get("iteration")
        if isinstance(done, int) and iterations < done:
            raise TensorCFRError(f"resume --iterations {iterations}: {run_dir} has done {done} iterations already; "
                                 f"--iterations counts from the run's start (e.g. --iterations {done + iterations} "
                                 f"for {iterations} more)")
        run_args.iterations = iterations
    if time_limit is not None:
        run_args.time_limit = time_limit
    if _join_group(run_args, resuming=True):  # another rank of a distributed run: it reads the checkpoint, rank 0 writes
        return _train_run(run_args, info["algo"], None, checkpoint=ckpt)
    with lock_run_dir(run_dir):  # a second resume of the same run is refused, not interleaved
        return _train_run(run_args, info["algo"], run_dir, checkpoint=ckpt)


def _resume(args) -> int:
    from tensorcfr.run.checkpoints import COMPARE_FILE

    if os.path.exists(os.path.join(args.run_dir, COMPARE_FILE)):
        if args.save_policy is not None:
            raise TensorCFRError("--save-policy: resume one algorithm's run directory to save its policy")
        return _resume_comparison(args)
    out = _continue_run(args.run_dir, args.json, args.iterations, args.time_limit, args.save_policy)
    if args.json:
        print(dumps(out))
    return _exit_code([out])


# -- eval, play ------------------------------------------------------------------------------------
def _eval(args) -> int:
    from tensorcfr.compiler import compile as compile_game
    from tensorcfr.evaluation import evaluate
    from tensorcfr.cli.play import exact_value
    from tensorcfr.io.policies import read_policy

    if len(args.policies) > 2:
        raise TensorCFRError("eval takes one policy file, or two (A against B)")
    cg = compile_game(args.game, **_form_for(args))
    if len(args.policies) == 1:
        ev = evaluate(cg, read_policy(cg, args.policies[0], args.strategy)).as_dict()
        out = {"game": cg.name, "policy": args.policies[0], "strategy": args.strategy, **ev}
        text = (f"{cg.name}, {args.policies[0]} ({args.strategy} strategy):\n"
                f"  exploitability  {ev['exploitability']:.9g}\n  NashConv        {ev['nash_conv']:.9g}\n"
                f"  game value      {ev['game_value']:+.9g}  (p0's expected payoff in self-play)\n"
                f"  best responses  {ev['best_response'][0]:+.9g} (p0), {ev['best_response'][1]:+.9g} (p1)")
    else:
        a, b = (_table(cg, p, args.strategy) for p in args.policies)
        first, second = exact_value(cg, a, b), -exact_value(cg, b, a)
        out = {"game": cg.name, "policy_a": args.policies[0], "policy_b": args.policies[1], "strategy": args.strategy,
               "value_a_as_p0": first, "value_a_as_p1": second, "value_a": (first + second) / 2,
               # the keys of before the players were numbered p0/p1 in every output, kept for scripts
               "value_a_as_player1": first, "value_a_as_player2": second}
        text = (f"{cg.name}: expected payoff of A ({args.policies[0]}) against B ({args.policies[1]}), exact:\n"
                f"  A as p0: {first:+.9g}\n  A as p1: {second:+.9g}\n"
                f"  mean over seats: {(first + second) / 2:+.9g}")
    print(dumps(out) if args.json else text)
    return 0


def _form_for(args) -> dict:
    """compile()'s keywords for reading `args.policies`: under --form auto, the form a file by
    public infoset and type was written from (its arrays are that form's)."""
    from tensorcfr.io.policies import policy_info

    limits = compile_limits(args)
    if limits["form"] == "auto":
        limits["form"] = next((f for f in (policy_info(p).get("form") for p in args.policies) if f), "auto")
    return limits


def _table(cg, path: str, which: str) -> dict:
    """{infoset: {action: p}} of a policy file, checked against the compiled game `cg` (a file
    that does not fit fails here, not mid-game; one in the public layout is read through `cg`,
    which names its infosets)."""
    from tensorcfr.evaluation import Policy
    from tensorcfr.io.policies import policy_info, policy_table, read_policy

    if policy_info(path).get("layout") == "public":
        return read_policy(cg, path, which).to_dict()
    table = policy_table(path, which)
    Policy.from_dict(cg, table)
    return table


def _play(args) -> int:
    from tensorcfr.compiler import compile as compile_game
    from tensorcfr.cli.play import exact_value, interactive, simulate

    if len(args.policies) > 2:
        raise TensorCFRError("play takes one policy file (you play against it) or two (A against B)")
    cg = compile_game(args.game, **_form_for(args))
    tables = [_table(cg, p, args.strategy) for p in args.policies]
    if len(tables) == 1:
        results = interactive(args.game, tables[0], seat=args.seat, seed=args.seed, rounds=args.games)
        if args.json:
            print(dumps({"game": cg.name, "games": len(results), "payoffs": results}))
        return 0
    exact = exact_value(cg, *tables)
    seed = 0 if args.seed is None else args.seed
    r = simulate(args.game, *tables, games=args.games or 10_000, seed=seed)
    out = {"game": cg.name, "policy_a": args.policies[0], "policy_b": args.policies[1], **r, "exact": exact,
           "ci95_contains_exact": r["ci95"][0] <= exact <= r["ci95"][1]}
    if args.json:
        print(dumps(out))
    else:
        print(f"{cg.name}: A ({args.policies[0]}) as p0 against B ({args.policies[1]}), "
              f"{r['games']:,} games, seed {seed}")
        print(f"  mean payoff of A  {r['mean']:+.6f}  (95% CI {r['ci95'][0]:+.6f} .. {r['ci95'][1]:+.6f}, "
              f"standard error {r['std_error']:.6f})")
        print(f"  exact value       {exact:+.6f}")
    return 0


def _plot(args) -> int:
    from tensorcfr.cli.plot import plot_runs

    print(plot_runs(args.runs, args.out, args.x, args.which))
    return 0


def _plot_strategy(args) -> int:
    from tensorcfr.cli.strategy import plot_strategy, public_names_needed
    from tensorcfr.io.policies import policy_info, policy_table

    game = games_pkg.make(args.game)
    saved_for = policy_info(args.policy).get("game")
    if saved_for is not None and saved_for != game.name:
        raise TensorCFRError(f"{args.policy} is a policy of {saved_for}, not of {game.name}")
    # of a file by public infoset, only the infosets the picture reads (a flop's 9.6e7 would not fit)
    table = policy_table(args.policy, args.strategy, keep=public_names_needed(game, args.at, args.match))
    title = f"{game.name}: {args.strategy} strategy of {os.path.basename(args.policy)}"
    print(plot_strategy(game, table, args.out, title=title, at=args.at, match=args.match,
                        max_infosets=args.max_infosets))
    return 0


def _quiet_writer_thread(hook):
    """A `threading.excepthook` that leaves an OSError of TensorBoard's writer thread (a full
    disk) unprinted: the main thread meets the same error at the writer's next call and says it
    in one line; anything else goes to `hook`."""
    def quiet(info):
        if not (issubclass(info.exc_type, OSError) and type(info.thread).__name__ == "_AsyncWriterThread"):
            hook(info)
    return quiet


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not getattr(threading.excepthook, "tensorcfr", False):
        threading.excepthook = _quiet_writer_thread(threading.excepthook)
        threading.excepthook.tensorcfr = True
    try:
        if args.command == "games":
            print("\n".join(games_pkg.available()))
            return 0
        keep_freed_memory()  # CPU iterations reuse their temporaries (tensorcfr/memory.py)
        handler = {"lp": _lp, "info": _info, "solve": _solve, "compare": lambda a: _solve(a, compare=True),
                   "resume": _resume, "eval": _eval, "play": _play, "plot": _plot,
                   "plot-strategy": _plot_strategy}[args.command]
        return handler(args)
    except (TensorCFRError, games_pkg.GameError) as e:
        print(f"tensorcfr: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tensorcfr: interrupted", file=sys.stderr)
        return 130
    except (MemoryError, torch.cuda.OutOfMemoryError) as e:  # numpy's, the CPU's and CUDA's
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"tensorcfr: error: out of memory ({first[:200]}); a smaller game or --max-memory; a run's last "
              "checkpoint is intact: tensorcfr resume RUN_DIR continues it", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    finally:
        _leave_group()


def _leave_group() -> None:
    """Destroy a process group this run joined before the interpreter exits: left to the exit's
    destructors, gloo's worker threads were torn down while joinable on about 1 exit in 8
    (`terminate called without an active exception`, SIGABRT, after a correct run)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
