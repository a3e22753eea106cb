"""Battleship (games/battleship.py) against OpenSpiel's: the same tree node for node and the same
information states, and policies that export with the same exploitability."""

import pytest

import tensorcfr
from tensorcfr import games
from test_goofspiel import openspiel_walk

SPECS = ["battleship(board_width=2,board_height=2,ship_sizes=(1,),ship_values=(1.0,),num_shots=2)",
         "battleship(board_width=2,board_height=2,ship_sizes=(1,1),ship_values=(1.0,2.0),num_shots=2)",
         "battleship(board_width=2,board_height=2,ship_sizes=(2,),ship_values=(1.5,),num_shots=3)",
         "battleship(board_width=3,board_height=1,ship_sizes=(2,),ship_values=(1.0,),num_shots=2,allow_repeated_shots=True)",
         # a placement that leaves no room for the next ship is not offered
         "battleship(board_width=1,board_height=3,ship_sizes=(1,2),ship_values=(1.0,1.0),num_shots=2,"
         "allow_repeated_shots=True)"]


@pytest.mark.parametrize("spec", SPECS)
def test_the_tree_and_a_policy_are_openspiels(spec):
    pyspiel = pytest.importorskip("pyspiel")
    from tensorcfr.io.interop import to_openspiel_policy

    theirs = pyspiel.load_game(games.make(spec).openspiel_twin())
    cg = tensorcfr.compile(spec)
    sizes = cg.sizes()
    assert (sizes["histories"], sizes["terminals"], 0, sizes["decision_nodes"], sum(sizes["infosets"])) == \
        openspiel_walk(theirs)
    s = tensorcfr.Solver(cg, "dcfr", device="cpu")
    s.step(30)
    ours = s.evaluate()["average"].exploitability.item()
    assert abs(ours - pyspiel.exploitability(theirs, to_openspiel_policy(cg, s.average_policy()))) < 1e-12


def test_the_value_of_one_ship_of_one_cell_is_an_eighth():
    # 2 x 2, one ship of one cell each, 2 shots each, player 0 first. Placing and shooting
    # uniformly is an equilibrium (every cell alike), and then player 0 hits first 1/4, player 1
    # (3/4)(1/4), player 0's second shot (3/4)(3/4)(1/3), player 1's (3/4)(3/4)(2/3)(1/3):
    # 1/4 - 3/16 + 3/16 - 1/8 = 1/8
    from tensorcfr.lp import solve_lp

    assert solve_lp(SPECS[0]).value == pytest.approx(1 / 8, abs=1e-9)


@pytest.mark.parametrize("bad, part", [
    ("battleship(board_width=0)", "board_width"), ("battleship(num_shots=0)", "num_shots"),
    ("battleship(ship_sizes=(3,),ship_values=(1.0,))", "does not fit"),
    ("battleship(board_width=2,board_height=2,ship_sizes=(2,2,2),ship_values=(1,1,1))", "need 6 cells"),
    ("battleship(board_width=2,board_height=2,ship_sizes=(2,2),ship_values=(1,-1))", "ship_values"),
    ("battleship(loss_multiplier=2.0)", "not zero-sum")])
def test_bad_parameters_are_one_line_errors_naming_them(bad, part):
    with pytest.raises(games.GameError, match=part) as e:
        games.make(bad)
    assert "\n" not in str(e.value)


def test_a_board_too_large_is_refused_before_its_walk():
    # the size hint is a lower bound (each player's shots before any fleet can sink) ...
    for spec in SPECS:
        hint, exact = games.make(spec).size_hint()
        assert not exact and 1 <= hint <= tensorcfr.compile(spec).num_histories
    # ... which refuses a 6 x 6 board at once, naming the bound, instead of walking for hours
    with pytest.raises(tensorcfr.TensorCFRError, match=r"at least 2e\+12 histories"):
        tensorcfr.compile("battleship(board_width=6,board_height=6,ship_sizes=(2,3),ship_values=(1,1),num_shots=10)",
                          max_memory="1G")
