"""Bad input from a careless or hostile user (issue 21): each case is refused before any work
with one line naming the culprit and exit code 2 at the CLI, or a `TensorCFRError` (a
`games.GameError`) in the library; never a traceback, never a run on NaN settings."""

import math

import pytest

import games
import tensorcfr
from tensorcfr.cli import main


def cli(capsys, *args):
    """(exit code, stderr) of the CLI run in-process."""
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's own errors
        code = e.code
    err = capsys.readouterr().err.strip()
    return code, err


@pytest.mark.parametrize("args,message", [
    (["--alpha", "nan"], "alpha must be a finite number"),
    (["--alpha", "1e999"], "alpha must be a finite number"),
    (["--gamma", "inf"], "gamma must be a finite number"),
    (["--gamma=-1e308"], "gamma must be >= 0"),
])
def test_bad_numbers_on_the_command_line(capsys, args, message):
    code, err = cli(capsys, "solve", "kuhn", "--algo", "dcfr", "--iterations", "5", "--no-log", *args)
    assert code == 2 and message in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("algo,message", [
    ("oftrl(eta=float('nan'))", "cannot parse algorithm"),  # not a literal
    ("dcfr(alpha=1e999)", "alpha must be a finite number"),
    ("dcfr(alpha=())", "non-empty tuple"),
    ("oftrl(eta=())", "non-empty tuple"),
    ("oftrl(eta=1e308)", "eta must be positive and <= 1e+09"),
    ("oftrl(eta=0)", "eta must be positive"),
    ("cfr(delay=2.5)", "delay must be a non-negative integer"),
])
def test_bad_algorithm_parameters(capsys, algo, message):
    code, err = cli(capsys, "solve", "kuhn", "--algo", algo, "--iterations", "5", "--no-log")
    assert code == 2 and message in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("option,value", [("--eta", "nan"), ("--eta", "1e308")])
def test_bad_step_size_on_the_command_line(capsys, option, value):
    code, err = cli(capsys, "solve", "kuhn", "--algo", "oftrl", "--iterations", "5", "--no-log", option, value)
    assert code == 2 and "eta must be" in err


@pytest.mark.parametrize("spec", ["kuhn(ante='x')", "kuhn(ante=(1,2))"])
def test_bad_game_parameters(capsys, spec):
    code, err = cli(capsys, "solve", spec, "--iterations", "5", "--no-log")
    assert code == 2 and "bad parameters for kuhn" in err and len(err.splitlines()) == 1


class NaNChance(games.Game):
    name = "nan-chance"

    def initial_state(self):
        return ()

    def player(self, s):
        return games.CHANCE if s == () else games.TERMINAL

    def chance_outcomes(self, s):
        return [("a", math.nan), ("b", 1.0)]

    def next_state(self, s, a):
        return (a,)

    def utilities(self, s):
        return (1.0, -1.0)


class ShortUtilities(NaNChance):
    name = "short-utilities"

    def chance_outcomes(self, s):
        return [("a", 0.5), ("b", 0.5)]

    def utilities(self, s):
        return (1.0,)


class StringUtilities(ShortUtilities):
    name = "string-utilities"

    def utilities(self, s):
        return ("1", "-1")


@pytest.mark.parametrize("game,message", [(NaNChance(), r"chance probabilities \[nan, 1.0\] do not sum to 1"),
                                          (ShortUtilities(), r"utilities \(1.0,\) are not two finite numbers"),
                                          (StringUtilities(), r"are not two finite numbers")])
def test_broken_games_are_refused_by_every_check(game, message):
    with pytest.raises(tensorcfr.TensorCFRError, match=message):
        tensorcfr.compile(game)
    with pytest.raises(games.GameError, match=message):
        games.check_game(game)


def test_bad_library_arguments():
    cg = tensorcfr.compile("kuhn")
    solver = tensorcfr.Solver(cg, "cfr", device="cpu")
    cases = [(lambda: tensorcfr.compile(None), "a game is a spec string"),
             (lambda: tensorcfr.compile(42), "a game is a spec string"),
             (lambda: tensorcfr.Policy.from_dict(cg, None), "expected {infoset key"),
             (lambda: tensorcfr.Policy.from_dict(cg, {"J:": {"pass": None, "bet": 1.0}}), "not all numbers"),
             (lambda: tensorcfr.train(solver, 2.5), "iterations must be an integer"),
             (lambda: tensorcfr.train(solver, 10, eval_every=-3), "eval_every must be >= 1"),
             (lambda: tensorcfr.train(solver, 10, checkpoint=print, checkpoint_every=-1), "checkpoint_every must be >= 0"),
             (lambda: tensorcfr.train(solver, 10, time_limit=math.nan), "time_limit must be a finite number"),
             (lambda: tensorcfr.RegretMatching("rps", "conditional-rm", mu=math.inf, device="cpu"), "mu must be")]
    for call, message in cases:
        with pytest.raises(tensorcfr.TensorCFRError, match=message.replace("{", r"\{")):
            call()
    assert solver.iteration == 0  # nothing ran
