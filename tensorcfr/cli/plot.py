"""`tensorcfr plot RUN_DIR ...`: exploitability curves of finished or running runs, read back
from their TensorBoard events, on log axes, each run with its own colour and line style
(matplotlib, the `plot` extra).

Example:
    >>> runs_of(["/nonexistent"])
    Traceback (most recent call last):
    ...
    tensorcfr.errors.TensorCFRError: plot: /nonexistent is not a run directory (no TensorBoard events in it or in its runs)
"""

from __future__ import annotations

import glob
import os

from tensorcfr.errors import TensorCFRError

TAGS = {"average": "exploitability/average", "current": "exploitability/current",
        "nash_conv": "nash_conv/average"}
STYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), (0, (5, 2, 1, 2, 1, 2))]


def pyplot(command: str):
    """matplotlib's pyplot on the file-only backend, or a one-line error naming `command` and
    the extra that brings it."""
    try:
        import matplotlib
    except ImportError:
        raise TensorCFRError(f"{command} needs matplotlib: pip install 'tensorcfr[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, out: str, command: str) -> str:
    """Write `fig` to `out` and close it; a path that cannot be written is a one-line error."""
    import matplotlib.pyplot as plt

    try:
        fig.savefig(out)
    except (OSError, ValueError) as e:
        raise TensorCFRError(f"{command}: cannot write {out!r} ({e})") from None
    finally:
        plt.close(fig)
    return out


def runs_of(paths: list[str]) -> list[str]:
    """The run directories named by `paths`: a run itself, or a comparison (or a log
    directory) whose subdirectories are runs."""
    out = []
    for p in paths:
        if glob.glob(os.path.join(p, "events.out.tfevents.*")):
            out.append(p)
            continue
        subs = sorted(d for d in glob.glob(os.path.join(p, "*")) if glob.glob(os.path.join(d, "events.out.tfevents.*")))
        if not subs:
            raise TensorCFRError(f"plot: {p} is not a run directory (no TensorBoard events in it or in its runs)")
        out += subs
    return out


def curve(run_dir: str, tag: str) -> tuple[list[int], list[float], list[float]]:
    """(iterations, seconds since the run's first evaluation, values) of `tag` in a run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(run_dir, size_guidance={"scalars": 0})
    ea.Reload()
    if tag not in ea.Tags()["scalars"]:
        raise TensorCFRError(f"plot: {run_dir} has no {tag!r} scalars")
    events = ea.Scalars(tag)
    t0 = events[0].wall_time
    return [e.step for e in events], [e.wall_time - t0 for e in events], [e.value for e in events]


def plot_runs(paths: list[str], out: str, x: str = "iterations", which: str = "average") -> str:
    """Draw `which` (average, current, nash_conv) of every run in `paths` against `x`
    (iterations or seconds of wall-clock time, evaluations included) into `out` (any format
    matplotlib writes: .png, .pdf, .svg); returns `out`."""
    plt = pyplot("plot")
    runs = runs_of(paths)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for k, run in enumerate(runs):
        its, secs, vals = curve(run, TAGS[which])
        xs = its if x == "iterations" else [max(s, 1e-3) for s in secs]
        pts = [(a, v) for a, v in zip(xs, vals) if v > 0 and a > 0]  # log axes: no 0
        name = os.path.basename(os.path.normpath(run))
        ax.plot([a for a, _ in pts], [v for _, v in pts], linestyle=STYLES[k % len(STYLES)],
                color=f"C{k % 10}", label=name, linewidth=1.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iteration" if x == "iterations" else "wall-clock seconds since the first evaluation")
    ax.set_ylabel({"average": "exploitability (average strategy)", "current": "exploitability (current strategy)",
                   "nash_conv": "NashConv (average strategy)"}[which])
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, out, "plot")
