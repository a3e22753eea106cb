"""Numbers past the dtype and strict JSON (issue 35 items 2-3): each hole found by hand has a
test that failed before its fix; the payoff's magnitude, which the range checks stand on,
equals a plain walk of the game tree in both forms."""

import json
import math
import os

import pytest
import torch

import tensorcfr
from tensorcfr import games
from tensorcfr.games import efg as efg_reader
from tensorcfr.games import CHANCE, TERMINAL
from tensorcfr.errors import TensorCFRError
from tensorcfr.memory import all_finite
from cli_run import error_line, run_cli
from tensorcfr.io.files import dumps, refuse_constant
from tensorcfr.run import numbers
from tensorcfr.run.training import train

EFG = 'EFG 2 R "t" { "P1" "P2" } ""\np "" 1 1 "" { "a" "b" } 0\nt "" 1 "" { U0 U1 }\nt "" 2 "" { 1 -1 }\n'


def one_line(code, err, *words):
    """Exit 2 and one error line holding each of `words`."""
    line = error_line(err)
    assert code == 2, err
    for w in words:
        assert w in line, line


def efg(tmp_path, u0, u1, name="t.efg"):
    path = tmp_path / name
    path.write_text(EFG.replace("U0", u0).replace("U1", u1))
    return f"efg:{path}"


# -- the .efg reader -------------------------------------------------------------------------
@pytest.mark.parametrize("u0,u1,words", [
    ("1e400", "-1e400", ["line 3", "a payoff 1e400 is out of float64's range"]),  # was an OverflowError traceback
    ("1e-400", "0", ["line 3", "1e-400"]),  # would be read as 0: another game
    ("1e999999999", "1", ["line 3", "1e999999999"]),  # Fraction would expand 10^999999999 (minutes)
])
def test_numbers_past_float64_in_an_efg_file_are_one_line(capsys, tmp_path, u0, u1, words):
    code, _, err = run_cli(capsys, "solve", efg(tmp_path, u0, u1), "--iterations", "3", "--no-log")
    one_line(code, err, *words)


def test_payoffs_that_overflow_summed_along_a_path_are_refused(tmp_path):
    """Outcomes on inner nodes add to the payoffs below them: 1e308 twice is past float64."""
    text = ('EFG 2 R "t" { "P1" "P2" } ""\np "" 1 1 "" { "a" "b" } 1 "o" { 1e308 -1e308 }\n'
            't "" 1\nt "" 2 "" { 1 -1 }\n')
    with pytest.raises(games.GameError, match="summed along the path to node 'a'.*out of float64's range"):
        efg_reader.from_text(text, "t.efg")


def test_exact_numbers_within_range_are_kept():
    text = EFG.replace("U0", "1/3").replace("U1", "-1/3")
    assert efg_reader.from_text(text, "t.efg").utilities(1) == (1 / 3, -1 / 3)


# -- the payoff's magnitude ------------------------------------------------------------------
def walk_extent(game):
    """(sum, largest, smallest nonzero) of chance(z) |u0(z)| over the terminals, recursively."""
    terms = []

    def go(state, chance):
        p = game.player(state)
        if p == TERMINAL:
            v = chance * abs(game.utilities(state)[0])
            if v:
                terms.append(v)
        elif p == CHANCE:
            for a, pr in game.chance_outcomes(state):
                go(game.next_state(state, a), chance * pr)
        else:
            for a in game.legal_actions(state):
                go(game.next_state(state, a), chance)
    go(game.initial_state(), 1.0)
    return sum(terms), max(terms), min(terms)


@pytest.mark.parametrize("spec", ["kuhn", "leduc", "ocp(5)", "dudo(3,1,1)", "liars_dice(faces=3)",
                                  "holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)"])
def test_the_payoff_extent_equals_a_tree_walk_in_both_forms(spec):
    """Every entry of a generic payoff is one terminal's chance × utility; the public form counts
    each class's matrix once per terminal of the class (the sum over the terminals again)."""
    total, largest, smallest = walk_extent(games.make(spec))
    for form in ("generic", "public"):
        e = tensorcfr.compile(spec, form=form).payoff_extent()
        assert e.total == pytest.approx(total, rel=1e-12), form
        # an entry may sum several terminals (a generic entry: those with one pair of last
        # sequences), so it is at least the largest terminal's and at most the smallest's
        assert e.largest >= largest * (1 - 1e-12) and e.smallest <= smallest * (1 + 1e-12), form
    assert tensorcfr.compile("kuhn").payoff_extent().total == 7.0  # 6 deals of 1/6, |u| 1 + 1 + 2 + 1 + 2


def test_the_ranked_public_form_counts_every_pair():
    """OCP's ranked deal keeps (a, b) per class: the extent is that of the full matrices."""
    from tensorcfr.compiler.public import compile_public

    ranked, dense = compile_public("ocp(7)", ranked=True), compile_public("ocp(7)")
    assert ranked.ranked and not dense.ranked
    a, b = ranked.payoff_extent(), dense.payoff_extent()
    assert (a.total, a.largest, a.smallest) == pytest.approx((b.total, b.largest, b.smallest), rel=1e-12)


# -- payoffs the dtype cannot hold -------------------------------------------------------------
def test_payoffs_past_float32_are_refused_naming_the_terminals(capsys, tmp_path):
    """Before: NaN exploitability, an infinite game value and exit 0."""
    game = efg(tmp_path, "1e300", "-1e300")
    code, out, err = run_cli(capsys, "solve", game, "--iterations", "5", "--no-log", "--dtype", "float32", "--json")
    one_line(code, err, "1e+300", "float32", "reached by P1#1/a of player 0")
    assert out == ""  # before any work: no header, no row
    code, out, _ = run_cli(capsys, "solve", game, "--iterations", "5", "--no-log", "--dtype", "float64", "--json")
    assert code == 0 and math.isfinite(json.loads(out)["exploitability"])


def test_payoffs_near_float64s_edge_are_refused():
    path_game = efg_reader.from_text(EFG.replace("U0", "1e308").replace("U1", "-1e308"), "edge.efg")
    with pytest.raises(tensorcfr.TensorCFRError, match="sum to 1e\\+308.*past float64 range"):
        tensorcfr.Solver(path_game, "cfr+", device="cpu")


def test_payoffs_that_vanish_in_float32_are_refused(tmp_path):
    game = efg(tmp_path, "1e-50", "-1e-50")
    with pytest.raises(tensorcfr.TensorCFRError, match="1e-50 .*rounds to 0 in float32"):
        tensorcfr.Solver(game, "cfr+", device="cpu", dtype="float32")
    tensorcfr.Solver(game, "cfr+", device="cpu", dtype="float64").step(3)


def test_matrix_games_are_held_to_the_same_range():
    from tensorcfr.games.matrix import MatrixGame

    g = MatrixGame([[1e300, -1e300], [-1e300, 1e300]], name="big")
    with pytest.raises(tensorcfr.TensorCFRError, match="float32"):
        tensorcfr.RegretMatching(g, "rm", device="cpu", dtype="float32")
    rm = tensorcfr.RegretMatching(g, "rm", device="cpu", dtype="float64")
    with pytest.raises(tensorcfr.TensorCFRError, match="regrets of rm reach"):
        rm.step(10**8)  # 2 x 1e8 x 1e300: past float64
    assert rm.iteration == 0


# -- runs whose numbers would grow past the dtype --------------------------------------------
def test_regrets_that_would_overflow_within_the_iterations_are_refused_up_front(capsys, tmp_path):
    game = efg(tmp_path, "1e30", "-1e30")
    code, out, err = run_cli(capsys, "solve", game, "--iterations", "100000000", "--no-log", "--dtype", "float32")
    one_line(code, err, "cumulative regrets of cfr+", "100000000 iterations", "float32")
    assert out == ""
    code, out, _ = run_cli(capsys, "solve", game, "--iterations", "100", "--no-log", "--dtype", "float32", "--json")
    assert code == 0 and math.isfinite(json.loads(out)["game_value"])


def test_average_weights_that_would_overflow_are_refused(capsys):
    """t^20 passes float32's 3.4e38 before t = 90: power averaging with gamma=20 for 100 iterations."""
    code, _, err = run_cli(capsys, "solve", "kuhn", "--algo", "dcfr(gamma=20)", "--iterations", "100", "--no-log",
                       "--dtype", "float32")
    one_line(code, err, "average strategy's weights of dcfr", "power averaging", "float32")
    s = tensorcfr.Solver("kuhn", "dcfr(gamma=20)", device="cpu", dtype="float32")
    s.step(40)  # 40 * 40^20 = 4.4e33: within
    with pytest.raises(tensorcfr.TensorCFRError, match="weights"):
        s.step(60)
    assert s.iteration == 40
    with pytest.raises(tensorcfr.TensorCFRError, match="weights"):
        train(tensorcfr.Solver("kuhn", "dcfr(gamma=20)", device="cpu", dtype="float32"), iterations=100)
    tensorcfr.Solver("kuhn", "dcfr(gamma=20)", device="cpu", dtype="float64").step(100)


def test_the_checks_read_the_bound_first_and_the_exact_total_only_where_it_would_refuse():
    """A payoff extent whose total is counted on demand (a card game without dense matrices:
    `PayoffExtent.bound`): the checks give the verdicts and messages of the exact total, and
    count it only where the bound alone would refuse; a solver's start passes on the bound."""
    from tensorcfr.compiler import public as compiler_public
    from tensorcfr.forms import PayoffExtent
    from tensorcfr.run.numbers import horizon_problem, payoff_problem
    from tensorcfr.updates.rules import make_config

    counted = []
    lazy = lambda: PayoffExtent(lambda: counted.append(1) or 1e30, 1.0, 1.0, bound=4e30)  # noqa: E731
    exact = PayoffExtent(1e30, 1.0, 1.0)
    cfr = make_config("cfr+")
    for t in (10**5, 5 * 10**6, 10**8):  # within the bound; past the bound, within the total; past both
        e = lazy()
        counted.clear()
        assert horizon_problem(cfr, e, torch.float32, t) == horizon_problem(cfr, exact, torch.float32, t)
        assert counted == ([] if t == 10**5 else [1])
    assert horizon_problem(cfr, lazy(), torch.float32, 5 * 10**6) is None
    assert "payoffs summing to 1e+30" in horizon_problem(cfr, lazy(), torch.float32, 10**8)
    counted.clear()
    assert payoff_problem(lazy(), torch.float32) is None and counted == []
    too_big = PayoffExtent(lambda: counted.append(1) or 1e38, 1.0, 1.0, bound=2e38)
    assert "sum to 1e+38" in payoff_problem(too_big, torch.float32) and counted == [1]
    with pytest.MonkeyPatch.context() as mp:  # a spot without its dense matrices: the card extent
        mp.setattr(compiler_public, "DENSE_ENTRIES", 0)
        cg = tensorcfr.compile("holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,), cap=1, ranks=AKQJT9, suits=sh)",
                               form="public", cache=False)
    s = tensorcfr.Solver(cg, "dcfr", dtype="float32")
    s.step(2)
    assert cg.payoff_weights is None and s.extent.upper == s.extent.bound  # started and stepped on the bound
    assert s.extent.total <= s.extent.bound


def test_the_regret_and_weight_bounds_hold_on_a_run():
    """The bounds the check assumes hold on a real run (Leduc, CFR, 50 iterations): every
    cumulative regret within 2 (T + 1) L, every average sum within the T of uniform weights."""
    s = tensorcfr.Solver("leduc", "cfr", device="cpu", dtype="float64")
    s.step(50)
    bound = 2 * (50 + 1) * s.extent.total
    assert max(float(r.abs().max()) for r in s.regrets) <= bound
    assert max(float(a.max()) for a in s.average) <= 50


# -- a NaN met anyway ------------------------------------------------------------------------
def poison_after(monkeypatch, k):
    """Solver.step writes a NaN into player 1's regrets once iteration k is passed."""
    step = tensorcfr.Solver.step

    def poisoned(self, n=1):
        step(self, n)
        if self.iteration > k:
            self.state.rule[1].regrets[0, 1] = float("nan")
    monkeypatch.setattr(tensorcfr.Solver, "step", poisoned)


def test_a_nan_stops_the_run_naming_the_iteration_and_tensor_and_keeps_the_last_checkpoint(
        capsys, tmp_path, monkeypatch):
    poison_after(monkeypatch, 12)
    logdir = tmp_path / "runs"
    code, out, err = run_cli(capsys, "solve", "kuhn", "--algo", "cfr", "--iterations", "40", "--eval-every", "5",
                         "--checkpoint-every", "10", "--logdir", str(logdir), "--quiet")
    assert err.splitlines()[0].startswith("run directory:")  # said at the start, as every logged run does
    one_line(code, err, "iteration 15: NaN or infinite values in the regrets of player 1",
             "the checkpoint of iteration 10 is kept")
    assert "nan" not in out.lower()  # no row of NaNs was printed
    run_dir, = glob_runs(logdir)
    assert tensorcfr.run.checkpoints.load_checkpoint(os.path.join(run_dir, "checkpoint.pt"))["iteration"] == 10
    monkeypatch.undo()
    code, out, err = run_cli(capsys, "resume", run_dir, "--json")
    assert code == 0 and json.loads(out)["iterations"] == 40, err


def glob_runs(logdir):
    return [os.path.join(logdir, d) for d in os.listdir(logdir)]


def test_a_nan_with_no_checkpoint_says_so(monkeypatch):
    poison_after(monkeypatch, 2)
    with pytest.raises(TensorCFRError, match="iteration 5: NaN or infinite values in the regrets of player 1 .*no c"):
        train(tensorcfr.Solver("kuhn", "cfr+", device="cpu"), iterations=20, eval_every=5)


def test_a_nan_in_an_evaluation_alone_stops_the_run(monkeypatch):
    """The state may be finite and an evaluation not (a best response that overflows)."""
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    evaluate = s.evaluate

    def bad(**kw):
        ev = evaluate(**kw)
        ev["average"].game_value[:] = float("inf")
        return ev
    monkeypatch.setattr(s, "evaluate", bad)
    with pytest.raises(tensorcfr.TensorCFRError, match="iteration 4: NaN or infinite values in the evaluation"):
        train(s, iterations=10, eval_every=4)


def test_non_finite_names_the_first_bad_tensor():
    big = torch.zeros(3 << 24)
    big[-1] = float("inf")
    assert numbers.non_finite({"a": torch.zeros(4), "b": big, "c": torch.tensor([float("nan")])}) == "b"
    assert numbers.non_finite({"ints": torch.arange(3), "empty": torch.zeros(0, 3)}) is None


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
def test_all_finite_is_isfinite_all_wherever_the_bad_entry_lies(dtype):
    # the vectorised reductions read blocks of 8, 16 or 32 entries and a tail: a NaN or an
    # infinity at each block's edges, in the tail, alone or among many, in a strided view
    for size in (1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65, 4099, 100_003):
        x = torch.randn(size, generator=torch.Generator().manual_seed(size)).to(dtype)
        assert all_finite(x)
        for p in sorted({0, 1, 7, 8, 15, 16, 31, size // 2, size - 2, size - 1} & set(range(size))):
            for v in (float("nan"), float("inf"), -float("inf")):
                y = x.clone()
                y[p] = v
                assert all_finite(y) is bool(torch.isfinite(y).all()) is False, (size, p, v)
        y = x.clone()
        y[::3] = float("nan")
        assert not all_finite(y)
    strided = torch.randn(40, 40).to(dtype)[:, ::3]
    assert all_finite(strided)
    strided[7, 5] = float("-inf")
    assert not all_finite(strided)


# -- strict JSON -----------------------------------------------------------------------------
def strict(text):
    return json.loads(text, parse_constant=refuse_constant)


def test_dumps_writes_null_for_numbers_that_are_not_finite():
    assert strict(dumps({"a": [float("nan"), 1.0, {"b": float("-inf")}], "c": (2,)})) == \
        {"a": [None, 1.0, {"b": None}], "c": [2]}
    with pytest.raises(tensorcfr.TensorCFRError, match="NaN or infinite"):
        dumps({"a": float("nan")}, strict=True)
    with pytest.raises(ValueError, match="NaN is not a JSON number"):
        strict('{"a": NaN}')


def test_every_json_output_and_file_parses_strictly(capsys, tmp_path):
    logdir, policy = tmp_path / "runs", tmp_path / "p.json"
    outputs = []
    for argv in (["solve", "kuhn", "--iterations", "20", "--logdir", str(logdir), "--save-policy", str(policy)],
                 ["compare", "kuhn", "--algo", "cfr", "cfr+", "--iterations", "10", "--logdir", str(logdir)],
                 ["info", "kuhn"], ["lp", "kuhn"], ["eval", "kuhn", str(policy)],
                 ["solve", "rps", "--algo", "rm", "--iterations", "10", "--no-log"]):
        code, out, err = run_cli(capsys, *argv, "--json")
        assert code == 0, (argv, err)
        outputs.append(strict(out))
    run_dir = outputs[0]["run_dir"]
    code, out, err = run_cli(capsys, "resume", run_dir, "--iterations", "30", "--json")
    assert code == 0, err
    strict(out)
    files = [policy, os.path.join(run_dir, "run.json")]
    files += [os.path.join(d, f) for d, _, fs in os.walk(logdir) for f in fs if f == "compare.json"]
    assert len(files) == 3
    for f in files:
        with open(f) as fh:
            strict(fh.read())
    assert not [f for _, _, fs in os.walk(tmp_path) for f in fs if ".tmp" in f]  # no temporary left behind


def test_range_weights_are_relative_at_any_scale():
    """Weights of 1e-300 each used to vanish in the deal's products ("nothing can be dealt");
    a range scaled by any factor is the same game."""
    spot = "holdem_river(board=AsKhQsJh9s, ranks=AKQJ9T, suits=shd, range0='{}', range1='TT,QQ,JJ:0.5')"
    values = []
    for r in ("TT,QQ,JJ:0.5", "TT:1e-300,QQ:1e-300,JJ:5e-301", "TT:1e300,QQ:1e300,JJ:5e299"):
        s = tensorcfr.Solver(spot.format(r), "cfr+", device="cpu")
        s.step(20)
        values.append(float(s.evaluate()["average"].game_value[0]))
    assert values == pytest.approx([values[0]] * 3, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("bets", ["(0.5, 1e-300)", "(1e-7,)"])
def test_bet_sizes_too_small_to_change_the_bet_are_refused(bets):
    """Found by the readers' fuzz: a raise of 1e-300 of the pot vanished in the chips already in,
    and the betting tree recursed without end (RecursionError)."""
    with pytest.raises(games.GameError, match="a bet size must be a finite fraction of the pot >= 1e-06"):
        games.make(f"holdem_river(board=AsKhQsJh9s, ranks=AKQJ9T, suits=sh, bets={bets}, raises={bets})")
    games.make("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9T, suits=sh, bets=(1e-6,), raises=(1e-6,))")
