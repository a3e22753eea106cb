"""Goofspiel (games/goofspiel.py) against OpenSpiel's: the same tree node for node, the same
information states, policies that export with the same exploitability, and a value of 0 (the
game is symmetric)."""

import pytest

import tensorcfr
from tensorcfr import games
from tensorcfr.lp import solve_lp

SPECS = ["goofspiel(num_cards=3)", "goofspiel(num_cards=4)", "goofspiel(num_cards=4,points_order=descending)",
         "goofspiel(num_cards=4,points_order=ascending,returns_type=point_difference)"]


def openspiel_walk(game):
    """(histories, terminals, chance nodes, decision nodes, infosets) of OpenSpiel's tree."""
    counts, keys, stack = [0, 0, 0, 0], set(), [game.new_initial_state()]
    while stack:
        s = stack.pop()
        counts[0] += 1
        if s.is_terminal():
            counts[1] += 1
            continue
        if s.is_chance_node():
            counts[2] += 1
            stack.extend(s.child(a) for a, _ in s.chance_outcomes())
            continue
        counts[3] += 1
        keys.add(s.information_state_string())
        stack.extend(s.child(a) for a in s.legal_actions())
    return (*counts, len(keys))


@pytest.mark.parametrize("spec", SPECS)
def test_the_tree_is_openspiels(spec):
    pyspiel = pytest.importorskip("pyspiel")
    g = games.make(spec)
    sizes = tensorcfr.compile(spec, form="generic").sizes()
    ours = (sizes["histories"], sizes["terminals"], sizes["chance_nodes"], sizes["decision_nodes"], sum(sizes["infosets"]))
    assert ours == openspiel_walk(pyspiel.load_game(g.openspiel_twin()))
    assert g.size_hint() == (sizes["histories"], True)


@pytest.mark.parametrize("spec", SPECS[1:])
def test_a_policy_exports_to_openspiel_with_our_exploitability(spec):
    """The export walks OpenSpiel's tree beside ours (players, deals, payoffs and infoset
    strings checked) and OpenSpiel's exploitability of the export is ours."""
    pyspiel = pytest.importorskip("pyspiel")
    from tensorcfr.io.interop import to_openspiel_policy

    s = tensorcfr.Solver(spec, "dcfr", device="cpu")
    s.step(50)
    ours = s.evaluate()["average"].exploitability.item()
    theirs = pyspiel.exploitability(pyspiel.load_game(games.make(spec).openspiel_twin()),
                                    to_openspiel_policy(s.game, s.average_policy()))
    assert abs(ours - theirs) < 1e-12


@pytest.mark.parametrize("spec", ["goofspiel(num_cards=4)", "goofspiel(num_cards=5,points_order=descending)"])
def test_the_symmetric_game_is_worth_zero(spec):
    # the players are interchangeable (their bids are simultaneous in the game; the turn-based
    # tree hides player 0's bid from player 1), so the value is 0
    assert abs(solve_lp(spec).value) < 1e-9


def test_the_size_formula_counts_goofspiel_7():
    # Goofspiel-7 with descending points as the GPU solvers measure it: 47.5 million nodes
    assert games.make("goofspiel(num_cards=7,points_order=descending)").size_hint() == (47_506_635, True)
    assert games.make("goofspiel(num_cards=5,points_order=descending)").size_hint() == (
        tensorcfr.compile("goofspiel(num_cards=5,points_order=descending)").num_histories, True)


@pytest.mark.parametrize("bad, part", [("goofspiel(num_cards=0)", "num_cards"), ("goofspiel(num_cards=1)", "num_cards"),
                                       ("goofspiel(points_order=sideways)", "points_order"),
                                       ("goofspiel(returns_type=total_points)", "not zero-sum"),
                                       ("goofspiel(imp_info=False)", "imp_info")])
def test_bad_parameters_are_one_line_errors_naming_them(bad, part):
    with pytest.raises(games.GameError, match=part) as e:
        games.make(bad)
    assert "\n" not in str(e.value)


def test_cfr_plays_openspiels_cfr_iterates():
    """OpenSpiel's CFRSolver (alternating updates) on its Goofspiel and `cfr` with alternating
    updates on ours: the same average strategy's exploitability after each of 8 iterations."""
    pyspiel = pytest.importorskip("pyspiel")
    spec = "goofspiel(num_cards=4,points_order=descending)"
    theirs_game = pyspiel.load_game(games.make(spec).openspiel_twin())
    theirs = pyspiel.CFRSolver(theirs_game)
    ours = tensorcfr.Solver(spec, "cfr", updates="alternating", device="cpu")
    for _ in range(8):
        theirs.evaluate_and_update_policy()
        ours.step()
        expected = pyspiel.exploitability(theirs_game, theirs.average_policy())
        assert abs(ours.evaluate()["average"].exploitability.item() - expected) < 1e-12
