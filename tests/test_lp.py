"""The sequence-form LP (issue 18's `tensorcfr lp`): known exact values, agreement with the
matrix-game LP, strategies whose NashConv is zero to rounding, the CLI."""

import json

import pytest

from tensorcfr import games
import tensorcfr
from tensorcfr.cli.commands import main
from tensorcfr.lp import solve_lp
from tensorcfr.normal_form import lp_solve


@pytest.mark.parametrize("spec,value,tol", [
    ("kuhn", -1 / 18, 1e-12),
    ("leduc", -0.0856064, 1e-7),  # OpenSpiel's and the literature's value, to its printed digits
    ("ocp(12)", -49 / 792, 1e-12),
    ("dudo(4,1,1)", -1 / 8, 1e-12),
    ("domino(2,2)", 12 / 5, 1e-12),
])
def test_known_values(spec, value, tol):
    r = solve_lp(spec)
    assert r.value == pytest.approx(value, abs=tol)
    assert abs(r.nash_conv) < 1e-9  # the LP's strategies are an equilibrium
    assert float(r.evaluation.game_value[0]) == pytest.approx(r.value, abs=1e-9)


@pytest.mark.parametrize("spec", ["rps", "matching_pennies", "ficha_domino", "blotto(3,2)"])
def test_matrix_games_agree_with_the_matrix_lp(spec):
    assert solve_lp(spec).value == pytest.approx(lp_solve(games.make(spec))[0], abs=1e-10)


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_random_games_reach_nash_conv_zero(seed):
    assert abs(solve_lp(f"random(seed={seed})").nash_conv) < 1e-9


def test_cli_json_policy_and_limits(capsys, tmp_path):
    policy = tmp_path / "kuhn-lp.json"
    assert main(["lp", "kuhn", "--json", "--save-policy", str(policy)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"game", "value", "nash_conv", "seconds"} and out["value"] == pytest.approx(-1 / 18)
    assert main(["eval", "kuhn", str(policy), "--json"]) == 0
    assert abs(json.loads(capsys.readouterr().out)["nash_conv"]) < 1e-9
    with pytest.raises(tensorcfr.TensorCFRError, match="more than the LP's"):
        solve_lp("leduc", max_sequences=100)
    with pytest.raises(tensorcfr.TensorCFRError, match="one game at a time"):
        solve_lp(tensorcfr.compile(["kuhn", "kuhn(ante=2)"]))
