"""The command line's flags: `build_parser()` builds the `tensorcfr` argument parser, `compile_limits` turns
a command's size flags into `tensorcfr.compile`'s keywords; each flag is checked as it is
read (one line `tensorcfr: error: ...`, exit 2).

Example:
    >>> args = build_parser().parse_args(["solve", "kuhn", "--iterations", "10"])
    >>> args.game, args.iterations, compile_limits(args)["form"]
    (['kuhn'], 10, 'auto')
"""

from __future__ import annotations

import argparse
import os

from tensorcfr.errors import TensorCFRError
from tensorcfr.normal_form import PROCEDURES
from tensorcfr.sampling.generic import EPSILON_DEFAULT, SCHEMES, UPDATE_SCOPES
from tensorcfr.spaces.treeplex import WEIGHTS
from tensorcfr.updates.capture import CAPTURE
from tensorcfr.updates.rules import AVERAGING, PRESETS, UPDATES

NOT_SETTINGS = ("command", "json", "quiet", "save_policy", "logdir", "no_log")  # per invocation, not part of a run
# (the policy file is kept in run.json beside the settings, as "save_policy", so a resumed run rewrites it)


class _Help(argparse.HelpFormatter):
    """Help text that shows each flag's default where the text does not already say it."""

    def _get_help_string(self, action):
        text = action.help or ""
        quiet = (None, False, [], argparse.SUPPRESS)
        if "default" in text or action.default in quiet or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message):  # one line, exit code 2
        self.exit(2, f"tensorcfr: error: {message}\n")

    def convert_arg_line_to_args(self, line: str) -> list[str]:
        """An argument file's line (`@FILE`): one argument, stripped; blank lines and lines that
        start with # give none."""
        line = line.strip()
        return [] if not line or line.startswith("#") else [line]


def _threads(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected auto or a whole number >= 1, got {text!r}") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _eval_every(text: str) -> int | str:
    """--eval-every: a whole number >= 1, "log", "log:N" or "trend" (`tensorcfr.run.training.schedule`)."""
    if text == "trend":
        return text
    if text == "log" or text.startswith("log:"):
        from tensorcfr.run.training import parse_log

        try:
            parse_log(text)
        except TensorCFRError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text
    return _positive_int(text)


def _duration(text: str) -> float:
    from tensorcfr.run.checkpoints import parse_duration

    try:
        return parse_duration(text)
    except TensorCFRError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _target(text: str):
    """A positive number, or a share of a poker spot's pot such as "0.5%pot" (kept as text: the
    solve command turns it into chips once it knows the game)."""
    t = text.strip().lower().replace(" ", "")
    if t.endswith("%pot"):
        try:
            share = float(t[:-4])
        except ValueError:
            share = -1.0
        if not (0 < share < float("inf")):
            raise argparse.ArgumentTypeError(f"expected a positive share of the pot such as 0.5%pot, got {text!r}")
        return t
    return _positive_float(text)


def _max_memory(text: str):
    from tensorcfr.compiler.sizes import parse_bytes

    try:
        return parse_bytes(text)
    except TensorCFRError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _size_flags(s: argparse.ArgumentParser, form: bool = True) -> None:
    """The limits of every command that compiles (tensorcfr/sizes.py), and the compiled form."""
    if form:
        s.add_argument("--form", choices=("auto", "generic", "public"), default="auto",
                       help="compiled form: public (the [public node x type] form of games dealt once: kuhn, "
                            "ocp, leduc, dudo, liars_dice), generic (one sparse payoff matrix), auto "
                            "(default: the library's rule, tensorcfr.compiler.choose: public from 10^6 "
                            "histories (on CUDA, card games aside, from 2^24 where the generic form fits the device), for a "
                            "ranked deal (OCP from 256 cards) or where only it fits, else generic)")
    s.add_argument("--max-histories", type=_positive_int, default=None, metavar="N",
                   help="refuse a game of more than N histories (default: no count limit)")
    s.add_argument("--max-memory", type=_max_memory, default="auto", metavar="BYTES",
                   help="refuse a game whose compile and solve need more than BYTES (e.g. 16G), auto (default: "
                        "the available memory less 256 MiB) or none")


def compile_limits(args) -> dict:
    """compile()'s keywords from a command's flags (a command without --form compiles generic)."""
    return {"max_histories": getattr(args, "max_histories", None), "max_memory": getattr(args, "max_memory", "auto"),
            "form": getattr(args, "form", None) or "generic"}


def _training_flags(s: argparse.ArgumentParser, several_algos_default: list[str]) -> None:
    s.add_argument("game", nargs="+", metavar="GAME",
                   help="game spec, e.g. kuhn, 'kuhn(ante=2)', leduc; several specs over one tree "
                        "are solved together as a batch (@FILE: the specs in FILE, one a line)")
    s.add_argument("--algo", nargs="+", default=several_algos_default,
                   help=f"algorithm preset(s): {', '.join(PRESETS)}; parameters as "
                        "'dcfr(alpha=1.5,beta=0,gamma=2)'; several run one after another with the same "
                        f"evaluation points. Matrix games also take the normal-form procedures "
                        f"{', '.join(PROCEDURES)}")
    s.add_argument("--iterations", type=_positive_int, default=1000, metavar="N", help="iterations to run")
    s.add_argument("--eval-every", type=_eval_every, default=None, metavar="K|log|log:N|trend",
                   help="evaluate every K iterations, at log-spaced iterations (log: 10 a decade, log:N: N), or "
                        "where the exploitability's trend crosses --target-exploitability (trend); default: trend "
                        "with a target, else log-spaced from iteration 1, at least 30 points")
    s.add_argument("--updates", choices=UPDATES, default=None, help="override the preset's schedule")
    s.add_argument("--averaging", choices=AVERAGING, default=None, help="override the preset's averaging")
    s.add_argument("--delay", type=int, default=None, help="averaging delay in iterations")
    s.add_argument("--alpha", type=float, default=None, help="discount of positive regrets (DCFR)")
    s.add_argument("--beta", type=float, default=None, help="discount of negative regrets (DCFR)")
    s.add_argument("--gamma", type=float, default=None, help="average weights t^gamma")
    s.add_argument("--regret-tolerance", type=float, default=None,
                   help="CFR family, rm and rm+: regrets within this fraction of their scale count as 0, so rounding "
                        "(CPU/GPU, eager/compiled, generic/public form) cannot flip a tie (e.g. 1e-12; default off)")
    s.add_argument("--eta", type=float, default=None, help="FTRL step size (ftrl, oftrl; default 2)")
    s.add_argument("--weights", choices=WEIGHTS, default=None,
                   help="FTRL dilated-entropy weights (default unit)")
    s.add_argument("--mu", type=float, default=None, help="inertia of conditional-rm (default (m-1) x payoff range); "
                   "the regulariser's weight of rtcfr+ (default 1e-3)")
    s.add_argument("--seed", type=int, default=0,
                   help="random seed of the sampled procedures, and part of the run's name (default 0)")
    s.add_argument("--runs", type=_positive_int, default=None,
                   help="independent runs of a sampled procedure, as one batch (default 1)")
    s.add_argument("--sampling", choices=SCHEMES, default=None,
                   help="Monte-Carlo CFR (tree algorithms): chance (sample the deal and every chance outcome, the "
                        "thesis' method), external (also the other player's actions), outcome (one terminal per "
                        "sample); none (default): exact iterations. Evaluation stays exact; generic form")
    s.add_argument("--samples", type=_positive_int, default=None, metavar="K",
                   help="with --sampling: samples per estimate (default 65536 in the generic form with "
                        "--update-scope all, pooled: an estimate costs about one sample's work at any K; "
                        "else 1)")
    s.add_argument("--update-scope", choices=UPDATE_SCOPES, default=None,
                   help="with --sampling: all (default) updates every sequence each iteration; touched updates "
                        "only what the sample touches (cfr and cfr+; an iteration then costs what it samples)")
    s.add_argument("--epsilon", type=float, default=None, metavar="E",
                   help=f"with --sampling outcome: exploration of the sampled player, in (0, 1] "
                        f"(default {EPSILON_DEFAULT})")
    s.add_argument("--device", default="auto", help="cpu, cuda (or cuda:N) or auto (default: cuda where there is one)")
    s.add_argument("--threads", type=_threads, default="auto", metavar="N",
                   help="CPU threads of the iteration: auto takes one for a small game, else every core that other "
                        "work leaves free (a thread sharing a core with another process slows every step); a "
                        "number sets it")
    s.add_argument("--dtype", choices=("float32", "float64"), default="float64",
                   help="floating-point type of the regrets, strategies and values")
    s.add_argument("--capture", choices=CAPTURE, default=None,
                   help="auto (default): cuda-graph on a GPU where memory allows, else none; cuda-graph: "
                        "record one iteration as a CUDA graph and replay it; compile: torch.compile the "
                        "iteration (small games, CPU or GPU: fastest an iteration, after seconds of "
                        "compiling); static: the in-place form both use, run eagerly; none: eager")
    s.add_argument("--distributed", action="store_true",
                   help="under torchrun: each rank keeps 1/N of the payoff operator and the values are summed "
                        "over the ranks (torch.distributed: NCCL on GPUs, gloo on CPUs); rank 0 logs and saves")
    s.add_argument("--deterministic", action="store_true",
                   help="on CUDA, sums in a fixed order (torch's deterministic kernels), so a run repeats and "
                        "resumes bit for bit; costs time (see the README); the CPU always is")
    s.add_argument("--time-limit", type=_duration, default=None, metavar="T",
                   help="stop after T (seconds, or e.g. 90m, 2h, 1h30m); a checkpoint is saved")
    s.add_argument("--target-exploitability", type=_target, default=None, metavar="E",
                   help="stop once the average strategy's exploitability is at most E (checked at evaluations); "
                        "in a poker spot also a share of the pot, e.g. 0.5%%pot")
    s.add_argument("--checkpoint-every", type=_positive_int, default=None, metavar="N",
                   help="save a checkpoint in the run directory every N iterations (always at the end "
                        "and when stopped)")
    s.add_argument("--track-infosets", nargs="+", default=[], metavar="KEY",
                   help="log these infosets' current and average strategies to TensorBoard")
    s.add_argument("--no-histograms", action="store_true",
                   help="skip the regret and per-infoset exploitability histograms")
    s.add_argument("--logdir", default=os.environ.get("TENSORCFR_LOGDIR", "runs"),
                   help="TensorBoard runs and checkpoints go to LOGDIR/{game}__{algo}__{seed}__{time} "
                        "(default runs, or $TENSORCFR_LOGDIR)")
    s.add_argument("--no-log", action="store_true", help="write no run directory (no TensorBoard, no checkpoints)")
    s.add_argument("--save-policy", default=None, metavar="FILE",
                   help="write the average and current policy to FILE (.json, or .npz for large games)")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    s.add_argument("--quiet", action="store_true", help="no progress bar (it is drawn on stderr, on a terminal only)")
    _size_flags(s)


def build_parser() -> argparse.ArgumentParser:
    # @FILE reads arguments from FILE, one a line: a batch of a thousand hold'em spots with
    # ranges is some 3.5 MB of specs, past what a command line may hold (2 MiB on Linux)
    p = _Parser(prog="tensorcfr", description="Solve two-player zero-sum imperfect-information games "
                "with CFR as tensor operations. An argument @FILE stands for the lines of FILE, one "
                "argument a line (blank lines and # comments skipped): a batch of many game specs.",
                fromfile_prefix_chars="@")
    from tensorcfr import __version__

    p.add_argument("--version", action="version", version=f"tensorcfr {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p.solve = sub.add_parser("solve", help="run a solver and report exploitability and game value")
    _training_flags(p.solve, ["cfr+"])
    _training_flags(sub.add_parser("compare", help="run several algorithms with identical evaluation points "
                                   "into one log directory and print a table"), ["cfr", "cfr+", "dcfr"])

    r = sub.add_parser("resume", help="continue a stopped run from its checkpoint")
    r.add_argument("run_dir", metavar="RUN_DIR")
    r.add_argument("--iterations", type=_positive_int, default=None, metavar="N",
                   help="the total to reach, counted from the run's start (default: the run's own); below the "
                        "iterations done it is an error")
    r.add_argument("--time-limit", type=_duration, default=None, metavar="T",
                   help="stop after T more (default: the run's own limit, counted afresh)")
    r.add_argument("--save-policy", default=None, metavar="FILE", help="write the policy to FILE at the end "
                   "(default: the run's own file, if it had one)")
    r.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    r.add_argument("--quiet", action="store_true", help="no progress bar")

    e = sub.add_parser("eval", help="exploitability of a saved policy, or the exact value of one policy against another")
    e.add_argument("game", metavar="GAME")
    e.add_argument("policies", nargs="+", metavar="POLICY", help="one policy file, or two (A against B)")
    e.add_argument("--strategy", choices=("average", "current"), default="average",
                   help="which strategy of the files (default average)")
    e.add_argument("--json", action="store_true", help="print one JSON object")
    _size_flags(e)

    pl = sub.add_parser("play", help="simulate POLICY_A against POLICY_B, or play against POLICY yourself")
    pl.add_argument("game", metavar="GAME")
    pl.add_argument("policies", nargs="+", metavar="POLICY",
                    help="two files: A (p0, first to act) against B (p1), sampled; one file: you play against it")
    pl.add_argument("--games", type=_positive_int, default=None,
                    help="games to simulate (default 10000), or to play against the policy (default: until q)")
    pl.add_argument("--seed", type=int, default=None, help="random seed (default 0 for simulations)")
    pl.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat against a policy (0: first to act)")
    pl.add_argument("--strategy", choices=("average", "current"), default="average",
                    help="which strategy of the files")
    pl.add_argument("--json", action="store_true", help="print one JSON object")
    _size_flags(pl)

    lp = sub.add_parser("lp", help="the exact value and an equilibrium by the sequence-form LP (scipy's HiGHS; "
                        "games up to about 10^5 sequences)")
    lp.add_argument("game", metavar="GAME")
    lp.add_argument("--save-policy", default=None, metavar="FILE", help="write the equilibrium (.json or .npz)")
    lp.add_argument("--json", action="store_true", help="print one JSON object")
    _size_flags(lp, form=False)  # the LP is built from the generic form

    i = sub.add_parser("info", help="print the sizes of a compiled game (and, first, what it would need)")
    i.add_argument("game", metavar="GAME")
    i.add_argument("--json", action="store_true", help="print one JSON object")
    i.add_argument("--device", default="auto",
                   help="the device a solve would run on, for --form auto's rule: cpu, cuda or auto (default)")
    i.add_argument("--dtype", choices=("float32", "float64"), default="float64",
                   help="the floating-point type a solve would run in, for estimated_bytes (as solve's --dtype)")
    _size_flags(i)
    sub.add_parser("games", help="list the registered games")

    pt = sub.add_parser("plot", help="draw runs' exploitability curves on log axes (needs matplotlib: the plot extra)")
    pt.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories, or a comparison's directory")
    pt.add_argument("--out", default="exploitability.png", metavar="FILE",
                    help="the picture to write (.png, .pdf, .svg)")
    pt.add_argument("--x", choices=("iterations", "seconds"), default="iterations",
                    help="the horizontal axis: iterations, or wall-clock seconds since the first evaluation")
    pt.add_argument("--which", choices=("average", "current", "nash_conv"), default="average",
                    help="the curve: exploitability of the average or current strategy, or NashConv")

    ps = sub.add_parser("plot-strategy", help="draw a saved strategy: per-infoset action bars; for Liar's Dice and "
                        "Dudo the probability of calling per roll and bid; for hold'em the 13 x 13 hand grid "
                        "(needs matplotlib: the plot extra)")
    ps.add_argument("game", metavar="GAME")
    ps.add_argument("policy", metavar="POLICY", help="a policy file (.json or .npz) of GAME")
    ps.add_argument("--out", default="strategy.png", metavar="FILE", help="the picture to write (.png, .pdf, .svg)")
    ps.add_argument("--strategy", choices=("average", "current"), default="average",
                    help="which strategy of the file")
    ps.add_argument("--at", default="", metavar="LINE",
                    help="hold'em: the betting line whose decision to draw, as in the infoset keys (e.g. 'check', "
                         "'bet 1', 'check check/'); default: the first decision")
    ps.add_argument("--match", default=None, metavar="REGEX",
                    help="draw action bars for the infosets whose key matches REGEX (any game)")
    ps.add_argument("--max-infosets", type=_positive_int, default=40, metavar="N",
                    help="action bars: at most N infosets")
    return p


# -- lp ----------------------------------------------------------------------------------------------
