"""The training loop shared by the CLI and the Python API: iterate, evaluate, log, stop, checkpoint.

Example:
    >>> import tensorcfr
    >>> s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> rows = tensorcfr.train(s, iterations=100, eval_every=50)
    >>> [r["iteration"] for r in rows], rows.stopped
    ([50, 100], 'iterations')
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import torch

from tensorcfr.operators.distributed import agree
from tensorcfr.errors import TensorCFRError
from tensorcfr.run.protocol import IterativeSolver
from tensorcfr.run.histograms import Quotient, add_histogram
from tensorcfr.updates.validate import number, optional

# Scalar tags written at every evaluation: identical for every algorithm, so one
# TensorBoard view overlays them.
TAGS = {
    "exploitability/average": "exploitability",
    "exploitability/current": "exploitability_current",
    "nash_conv/average": "nash_conv",
    "nash_conv/current": "nash_conv_current",
    "value/average": "game_value",
    "value/current": "game_value_current",
    "best_response/p0": "best_response_p0",
    "best_response/p1": "best_response_p1",
    "regret/max_p0": "regret_max_p0",
    "regret/max_p1": "regret_max_p1",
    "regret/conditional_p0": "regret_conditional_p0",  # normal-form procedures only
    "regret/conditional_p1": "regret_conditional_p1",
    "perf/ms_per_iteration": "ms_per_iteration",
    "perf/iterations_per_second": "iterations_per_second",
    "perf/sampled_fraction": "sampled_fraction",  # Monte-Carlo runs only
}
FINITE_KEYS = ("exploitability", "exploitability_current", "game_value", "game_value_current")  # or the run stops
HPARAM_METRICS = ("exploitability/average", "exploitability/current", "value/average")
# log10 of the curves that span decades, beside the raw ones: on TensorBoard's default linear
# axis the raw curves of every algorithm lie flat on 0 after the first few percent of a run
LOG10_TAGS = {"exploitability/log10_average": "exploitability", "exploitability/log10_current": "exploitability_current",
              "nash_conv/log10_average": "nash_conv", "nash_conv/log10_current": "nash_conv_current"}
DEFAULT_POINTS = 30  # evaluations of a run by default (log-spaced from iteration 1)


class TrainResult(list):
    """The evaluation rows (member 0's), plus `stopped`: why the loop ended — "iterations",
    "time_limit", "target" (exploitability of the average at or below the target) or
    "interrupted" (`should_stop` said so)."""

    stopped: str = "iterations"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def evaluation_row(solver: IterativeSolver, member: int = 0, ev: dict | None = None) -> dict:
    """One row of figures for batch member `member` at the solver's current iteration
    (`ev`: the result of `solver.evaluate()`, when already computed)."""
    ev = ev or solver.evaluate()
    avg, cur = ev["average"].as_dict(member), ev["current"].as_dict(member)
    row = {"iteration": solver.iteration,
           "exploitability": avg["exploitability"], "exploitability_current": cur["exploitability"],
           "nash_conv": avg["nash_conv"], "nash_conv_current": cur["nash_conv"],
           "game_value": avg["game_value"], "game_value_current": cur["game_value"],
           "best_response_p0": avg["best_response"][0], "best_response_p1": avg["best_response"][1]}
    for k, v in solver.regret_summary().items():
        row[f"regret_{k}"] = float(v[min(member, v.shape[0] - 1)])
    fraction = getattr(solver, "sampled_fraction", None)
    if fraction is not None:
        row["sampled_fraction"] = fraction
    return row


def tracked_strategies(solver: IterativeSolver, keys, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
    """{infoset key: {"average" | "current": {action: probability}}} for the infosets `keys`;
    an unknown key is an error that lists some known ones."""
    if not keys:
        return {}
    known = solver.infoset_keys()
    missing = [k for k in keys if k not in set(known)]
    if missing:
        raise TensorCFRError(f"--track-infosets: unknown infoset(s) {missing} in {solver.game.name}; "
                             f"some known keys: {known[:8]}")
    return solver.strategies(keys, member)


def log_config(writer, config: dict, track_infosets: Sequence[str] = ()) -> None:
    """The resolved configuration as a text summary at step 0, as TensorBoard hparams (whose
    metrics are the `HPARAM_METRICS` scalars: the HParams view compares variants) and a Custom
    Scalars layout (`layout`).

    Example:
        >>> import tempfile
        >>> from torch.utils.tensorboard import SummaryWriter
        >>> with tempfile.TemporaryDirectory() as d:
        ...     w = SummaryWriter(d); log_config(w, {"algorithm": "cfr+", "iterations": 10}); w.close()
    """
    from tensorboard.plugins.hparams import summary_v2 as hp

    writer.add_text("config", "```\n" + json.dumps(config, indent=1) + "\n```", 0)
    flat = {k: (v if isinstance(v, (int, float, str, bool)) else json.dumps(v)) for k, v in config.items()
            if v is not None}
    fw = writer.file_writer
    fw.add_summary(hp.hparams_config_pb([hp.HParam(k) for k in flat], [hp.Metric(m) for m in HPARAM_METRICS]))
    fw.add_summary(hp.hparams_pb(flat))
    writer.add_custom_scalars(layout(track_infosets))


def layout(track_infosets: Sequence[str] = ()) -> dict:
    """TensorBoard's Custom Scalars layout of a run: the log10 exploitability and NashConv of the
    average and current strategies (each chart overlays the runs shown, so a `compare`'s
    algorithms share one), and one chart per tracked infoset with all its actions.

    Example:
        >>> sorted(layout(["K:pb"])["strategy"])
        ['K:pb (average)', 'K:pb (current)']
    """
    import re

    out = {"convergence": {
        "exploitability, log10 (average)": ["Multiline", ["^exploitability/log10_average$"]],
        "exploitability, log10 (current)": ["Multiline", ["^exploitability/log10_current$"]],
        "NashConv, log10 (average)": ["Multiline", ["^nash_conv/log10_average$"]],
        "game value (average)": ["Multiline", ["^value/average$"]]}}
    if track_infosets:
        out["strategy"] = {f"{key} ({which})": ["Multiline", [f"^strategy/{re.escape(key)}/[^/]+/{which}$"]]
                           for key in track_infosets for which in ("average", "current")}
    return out


def _log(writer, solver, rows_by_member: list[dict], track: dict, histograms: dict | None) -> None:
    step = solver.iteration
    for b, row in enumerate(rows_by_member):
        suffix = f"/member{b}" if b else ""
        for tag, key in TAGS.items():
            if key in row:  # FTRL keeps no regrets; only matrix games have conditional ones
                writer.add_scalar(tag + suffix, row[key], step)
        for tag, key in LOG10_TAGS.items():
            if key in row and row[key] > 0:  # an exact 0 has no logarithm: no point rather than -inf
                writer.add_scalar(tag + suffix, math.log10(row[key]), step)
    for key, by in track.items():
        for which, probs in by.items():
            for action, p in probs.items():
                writer.add_scalar(f"strategy/{key}/{action}/{which}", p, step)
    for name, values in (histograms or {}).items():  # member 0's
        if values.numel():  # (counted by a C loop: numpy's took 2.3 s an evaluation on a flop spot)
            # as float32, each array read where it lies (a `Quotient`: no float32 or divided copy)
            add_histogram(writer, f"histogram/{name}", values if isinstance(values, Quotient) else Quotient(values), step)


class Progress:
    """A progress bar on a terminal (tqdm: iterations, rate and time left smoothed over the
    run, the last exploitability beside them), on stderr by default; nothing when the stream
    is not a terminal (the caller prints plain lines) or `enabled` is False.

    Example:
        >>> import io
        >>> bar = Progress(100, stream=io.StringIO(), enabled=True)
        >>> bar.update(50, exploitability=1e-3)
        >>> "50/100" in bar.stream.getvalue() and "1.000e-03" in bar.stream.getvalue()
        True
        >>> bar.status("saving the checkpoint")
        >>> "saving the checkpoint" in bar.stream.getvalue()
        True
    """

    def __init__(self, total: int, stream=None, enabled: bool | None = None, initial: int = 0):
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = (isatty is not None and isatty()) if enabled is None else enabled
        self.bar, self.postfix = None, ""
        if self.enabled:
            from tqdm import tqdm

            # smoothing: the rate is an average that leans on recent chunks (a run's first
            # iterations are slower: capture, compile), so the time left settles quickly
            self.bar = tqdm(total=total, initial=min(initial, total), file=self.stream, unit="it", leave=False,
                            dynamic_ncols=True, mininterval=0.2, smoothing=0.1)

    def update(self, iteration: int, exploitability: float | None = None) -> None:
        """Move the bar to `iteration` (tqdm measures the rate itself), showing
        `exploitability` when given."""
        if self.bar is None:
            return
        self.bar.update(max(0, min(iteration, self.bar.total) - self.bar.n))
        if exploitability is not None:  # an evaluation (rare): drawn at once
            self.postfix = f"exploitability {exploitability:.3e}"
            self.bar.set_postfix_str(self.postfix)

    def status(self, text: str | None) -> None:
        """Show `text` beside the bar while something other than iterations takes the time (a
        flop spot's 1.5-GB checkpoint takes seconds); None: the last exploitability again."""
        if self.bar is not None:
            self.bar.set_postfix_str(self.postfix if text is None else text)

    def clear(self) -> None:
        """Hide the bar (before a line is printed); the next update draws it again."""
        if self.bar is not None:
            self.bar.clear()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Every:
    """Evaluate every `k` iterations (and at the end).

    Example:
        >>> Every(50).next(120, [])
        150
    """

    def __init__(self, k: int):
        self.k = k

    def next(self, iteration: int, points: list[tuple[int, float]]) -> int:
        return (iteration // self.k + 1) * self.k

    def __repr__(self) -> str:
        return str(self.k)


class LogSpaced:
    """Evaluate at iterations spaced evenly on a log axis, `per_decade` a decade (at 10: 1, 2,
    3, 4, 5, 6, 8, 10, 13, 16, 20, 25, ...), so a curve on a log axis has points everywhere.

    Example:
        >>> s = LogSpaced(); [s.next(i, []) for i in (0, 10, 100, 1000)]
        [1, 13, 126, 1259]
        >>> len(LogSpaced.for_run(300).points(300))  # the default: at least 30 points a run
        30
    """

    def __init__(self, per_decade: int = 10):
        self.per_decade = per_decade

    @classmethod
    def for_run(cls, iterations: int, points: int = DEFAULT_POINTS) -> "LogSpaced":
        """The sparsest spacing (10 a decade or more) that gives `points` evaluations in
        `iterations`, or one per iteration in a shorter run."""
        per_decade = 10
        while len(cls(per_decade).points(iterations)) < min(points, iterations) and per_decade < 10 * points:
            per_decade += 1
        return cls(per_decade)

    def next(self, iteration: int, points: list[tuple[int, float]]) -> int:
        j = math.floor(self.per_decade * math.log10(max(iteration, 1))) if iteration >= 1 else -1
        while True:
            j += 1
            at = round(10 ** (j / self.per_decade))
            if at > iteration:
                return at

    def points(self, iterations: int) -> list[int]:
        """The evaluations of a run of `iterations` (`train` also evaluates at its end)."""
        out, it = [], 0
        while it < iterations:
            it = min(self.next(it, []), iterations)
            out.append(it)
        return out

    def __repr__(self) -> str:
        return "log" if self.per_decade == 10 else f"log:{self.per_decade}"


class Trend:
    """Evaluate where the exploitability's trend says the target will be crossed: twice the last
    gap, at most `most` iterations (an evaluation costs about 2 iterations, so often early and
    less later), but no further than 5% past the iteration where the power law through the last
    two evaluations meets the target, and at least `least` (the rule of the thesis tables:
    Dudo(5,2,2), NashConv 4.7e-4 at 310 and 1.07e-4 at 510, target 1e-4 of NashConv: the next
    evaluation falls at 549, not 710).

    Example:
        >>> Trend(1e-4).next(510, [(310, 4.725e-4), (510, 1.073e-4)])
        549
    """

    def __init__(self, target: float, first: int = 10, most: int = 200, least: int = 10):
        self.target, self.first, self.most, self.least = target, first, most, least

    def next(self, iteration: int, points: list[tuple[int, float]]) -> int:
        if not points:
            return iteration + self.first
        gap = points[-1][0] - points[-2][0] if len(points) >= 2 else points[-1][0]
        return iteration + self.step(points, gap)

    def step(self, points: list[tuple[int, float]], gap: int) -> int:
        """Iterations from the last evaluation to the next, `gap` the last one's."""
        step = min(max(2 * gap, self.least), self.most)
        if len(points) >= 2:
            (t1, e1), (t2, e2) = points[-2:]
            if t2 > t1 and e1 > e2 > self.target > 0:
                slope = math.log(e1 / e2) / math.log(t2 / t1)
                meets = t2 * (e2 / self.target) ** (1 / slope)
                step = max(self.least, min(step, math.ceil(1.05 * meets) - t2))
        return step

    def __repr__(self) -> str:
        return "trend"


def schedule(eval_every, iterations: int, target: float | None):
    """The evaluation schedule of `train(eval_every=...)`: a whole number k (`Every`), "log"
    (`LogSpaced`, 10 a decade) or "log:N" (N a decade), "trend" (`Trend`, which needs a target),
    a schedule object, or None: with a target the trend, else log-spaced from iteration 1 with
    at least 30 points (`LogSpaced.for_run`).

    Example:
        >>> schedule(100, 1000, None), schedule("log", 1000, None), schedule(None, 1000, 1e-3)
        (100, log, trend)
        >>> schedule(None, 1000, None)
        log:11
    """
    if eval_every is None:
        return Trend(target) if target is not None else LogSpaced.for_run(iterations)
    if hasattr(eval_every, "next"):
        return eval_every
    if isinstance(eval_every, str) and (eval_every == "log" or eval_every.startswith("log:")):
        return LogSpaced(parse_log(eval_every))
    if eval_every == "trend":
        if target is None:
            raise TensorCFRError("eval_every='trend' (--eval-every trend) places evaluations where the trend crosses the "
                                  "target: give target_exploitability (--target-exploitability)")
        return Trend(target)
    return Every(optional("eval_every", eval_every, lo=1, integer=True))


def parse_log(text: str) -> int:
    """The points a decade of "log" (10) or "log:N" (N, a whole number from 1 to 1000).

    Example:
        >>> parse_log("log"), parse_log("log:20")
        (10, 20)
    """
    if text == "log":
        return 10
    n = text.partition(":")[2]
    if not n.isdigit() or not 1 <= int(n) <= 1000:
        raise TensorCFRError(f"eval_every {text!r}: expected log or log:N with N a whole number from 1 to 1000")
    return int(n)


STOP_ON = ("average", "current", "either")  # whose exploitability the target is held to


@dataclass
class TrainOptions:
    """How `train` evaluates, logs, stops and checkpoints (every field optional).

    eval_every:  where to evaluate (`schedule`): every k iterations, "log" or "log:N"
                 (log-spaced), "trend" (where the target will be crossed; the default with a
                 target), or a schedule object; default: log-spaced, 30 points or more
    callback:    called with member 0's row at each evaluation
    writer:      a `SummaryWriter` receiving the scalars of `TAGS` at the iteration as step
                 (members after the first with a `/member{b}` suffix), the strategies of
                 `track_infosets` as `strategy/{key}/{action}/{average|current}` and, with
                 `histograms`, the solver's `histograms()` as `histogram/{name}`
    time_limit:  stop after this many seconds
    target_exploitability: stop once the exploitability of `stop_on` is at or below it
                 (checked at evaluations)
    stop_on:     "average" (default), "current", or "either" (whichever profile first)
    should_stop: stop when it turns true (checked about every 0.2 s)
    checkpoint:  called with the loop state every `checkpoint_every` iterations, every
                 `checkpoint_seconds` of solving, and at the end;
                 passing that state back as `loop_state` (with the solver's `load_state_dict`)
                 continues the run exactly
    progress:    a `Progress` bar to update

    Example:
        >>> TrainOptions(eval_every=10, time_limit=60.0).histograms
        True
    """

    eval_every: int | str | Any = None
    callback: Callable[[dict], None] | None = None
    writer: Any = None
    time_limit: float | None = None
    target_exploitability: float | None = None
    stop_on: str = "average"
    checkpoint: Callable[[dict], None] | None = None
    checkpoint_every: int | None = None
    checkpoint_seconds: float | None = None
    should_stop: Callable[[], bool] | None = None
    track_infosets: Sequence[str] = ()
    histograms: bool = True
    progress: Progress | None = None
    loop_state: dict | None = None


def train(solver: IterativeSolver, iterations: int, eval_every: int | None = None,
          options: TrainOptions | None = None, **fields) -> TrainResult:
    """Run up to `iterations` more iterations, evaluating by the schedule `eval_every` (every k,
    "log", "trend": see `schedule`; default log-spaced from iteration 1, at least 30 points, or
    the trend with a target) and at the end; `options` (a `TrainOptions`, or its fields as keywords) says how to log,
    stop and checkpoint.

    Each evaluation produces a row (see `evaluation_row`, plus `ms_per_iteration`,
    `iterations_per_second` and `seconds`, the solving time so far without evaluations) per
    batch member. The loop stops early on `time_limit`, `target_exploitability` (met by every
    batch member) or `should_stop`. Returns member 0's rows (all of them, those of `loop_state` included) as a
    `TrainResult`.
    """
    try:
        opts = replace(options or TrainOptions(), **fields)
    except TypeError as e:
        raise TensorCFRError(f"train: {e}") from None
    iterations = number("iterations", iterations, lo=0, integer=True)
    opts = replace(opts, checkpoint_every=optional("checkpoint_every", opts.checkpoint_every, lo=0, integer=True),
                   checkpoint_seconds=optional("checkpoint_seconds", opts.checkpoint_seconds, lo=0),
                   time_limit=optional("time_limit", opts.time_limit, lo=0),
                   target_exploitability=optional("target_exploitability", opts.target_exploitability))
    if opts.stop_on not in STOP_ON:
        raise TensorCFRError(f"train: stop_on must be one of {', '.join(STOP_ON)}, got {opts.stop_on!r}")
    plan = schedule(eval_every if eval_every is not None else opts.eval_every, iterations, opts.target_exploitability)
    writer, checkpoint, checkpoint_every, progress = opts.writer, opts.checkpoint, opts.checkpoint_every, opts.progress
    track = list(opts.track_infosets)
    tracked_strategies(solver, track)  # an unknown key fails now, not at the first evaluation
    state = dict(opts.loop_state or {"rows": [], "solving": 0.0})
    rows = TrainResult(state["rows"])
    target_iteration = solver.iteration + iterations
    solver.check_numbers(target_iteration)  # before any work: the whole run's regrets and weights fit the dtype
    # the last checkpoint written (a resumed run's own), named when a non-finite value stops the run
    saved_at = solver.iteration if opts.loop_state is not None else None
    started, chunk = time.perf_counter(), 1
    since_eval, since_eval_time = 0, 0.0
    target = opts.target_exploitability
    key = {"average": ("exploitability",), "current": ("exploitability_current",),
           "either": ("exploitability", "exploitability_current")}[opts.stop_on]

    # (iteration, the stop rule's exploitability) so far: of the batch's furthest member, so that
    # a batch stops when every member meets the target (a resumed run starts from member 0's rows)
    gaps = [(r["iteration"], min(r[k] for k in key)) for r in rows]

    def points() -> list[tuple[int, float]]:
        return gaps

    # where the next evaluation falls: a resumed run goes on with the one it had planned
    next_eval = state.get("next_eval") or plan.next(solver.iteration, points())
    last_save = time.perf_counter()

    def snapshot():
        return {"rows": list(rows), "solving": state["solving"], "eval_every": repr(plan) if not isinstance(plan, Every)
                else plan.k, "next_eval": next_eval}

    def stop_if_not_finite(member_rows=()) -> None:
        """A NaN or an infinity in the state (or in an evaluation) stops the run before it is
        logged or saved, so the last checkpoint stays the last finite one."""
        what = solver.non_finite()
        if what is None and not all(math.isfinite(r[k]) for r in member_rows for k in FINITE_KEYS if k in r):
            what = "the evaluation (exploitability or game value)"
        if what is not None:
            kept = (f"the checkpoint of iteration {saved_at} is kept" if saved_at is not None
                    else "no checkpoint was written")
            raise TensorCFRError(f"iteration {solver.iteration}: NaN or infinite values in {what} "
                                 f"({str(getattr(solver, 'dtype', '')).replace('torch.', '')} overflowed?); "
                                 f"the run stops and {kept}")

    def save():
        nonlocal saved_at, last_save
        stop_if_not_finite()
        if progress is not None:
            progress.status("saving the checkpoint")
        checkpoint(snapshot())
        if progress is not None:
            progress.status(None)
        saved_at, last_save = solver.iteration, time.perf_counter()

    # the histograms' best responses are collectives in a distributed run: every rank computes
    # them (the CLI turns them off on every rank with --no-log), rank 0 writes them
    histograms = opts.histograms and (writer is not None or getattr(solver, "distributed", False))

    def evaluate_now() -> dict:
        nonlocal since_eval, since_eval_time
        ev = solver.evaluate(infoset_gaps=histograms)
        member_rows = []
        for b in range(solver.batch_size):
            row = evaluation_row(solver, b, ev)
            n, dt = max(since_eval, 1), max(since_eval_time, 1e-12)
            row.update(ms_per_iteration=1000 * dt / n, iterations_per_second=n / dt, seconds=state["solving"])
            member_rows.append(row)
        stop_if_not_finite(member_rows)
        since_eval, since_eval_time = 0, 0.0
        rows.append(member_rows[0])
        gaps.append((member_rows[0]["iteration"], max(min(r[k] for k in key) for r in member_rows)))
        hist = solver.histograms(0, ev, quotients=True) if histograms else None
        if writer is not None:
            _log(writer, solver, member_rows, tracked_strategies(solver, track), hist)
        if progress is not None:
            progress.update(solver.iteration, member_rows[0]["exploitability"])
            progress.clear()
        if opts.callback is not None:
            opts.callback(member_rows[0])
        return member_rows[0]

    while solver.iteration < target_iteration:
        interrupted, out_of_time = agree(solver, opts.should_stop is not None and opts.should_stop(),
                                         opts.time_limit is not None and time.perf_counter() - started >= opts.time_limit)
        if interrupted:
            rows.stopped = "interrupted"
            break
        if out_of_time:
            rows.stopped = "time_limit"
            break
        it = solver.iteration
        bounds = [target_iteration - it, max(next_eval - it, 1), chunk]
        if checkpoint is not None and checkpoint_every:
            bounds.append(checkpoint_every - it % checkpoint_every)
        n = min(bounds)
        _sync(solver.device)
        t0 = time.perf_counter()
        solver.step(n)
        _sync(solver.device)
        dt = time.perf_counter() - t0
        state["solving"] += dt
        since_eval, since_eval_time = since_eval + n, since_eval_time + dt
        chunk = max(1, min(chunk * 2, n * 2)) if dt < 0.2 else max(1, chunk // 2)  # stop checks ~5 per second
        if progress is not None:
            progress.update(solver.iteration)
        if solver.iteration >= next_eval or solver.iteration == target_iteration:
            evaluate_now()
            next_eval = plan.next(solver.iteration, points())
            if target is not None and gaps[-1][1] <= target:
                rows.stopped = "target"
                break
        due = checkpoint_every and solver.iteration % checkpoint_every == 0
        if checkpoint is not None and (due or (opts.checkpoint_seconds is not None
                                              and time.perf_counter() - last_save >= opts.checkpoint_seconds)):
            save()
    if checkpoint is not None and saved_at != solver.iteration:  # (not twice: a flop spot's takes seconds)
        save()  # before a closing evaluation, so a resumed run's rows match
    if rows.stopped in ("interrupted", "time_limit") and (not rows or rows[-1]["iteration"] != solver.iteration):
        evaluate_now()
    if progress is not None:  # (after the last save and evaluation: the bar says what takes the time)
        progress.close()
    if writer is not None:
        writer.flush()
    return rows


def open_writer(logdir: str, game: str, algo: str, seed: int = 0):
    """A SummaryWriter on a fresh `logdir/{game}__{algo}__{seed}__{time}`."""
    from torch.utils.tensorboard import SummaryWriter  # imported late: it is slow to import

    from tensorcfr.run.checkpoints import new_run_dir, run_name

    return SummaryWriter(new_run_dir(logdir, run_name(game, algo, seed)))
