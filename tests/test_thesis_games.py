"""The thesis' games: exact sizes, rules spot-checks, values, and clear errors."""

import math

import pytest

from tensorcfr import games
import tensorcfr
from tensorcfr.games.domino import Domino
from tensorcfr.games.dudo import Dudo, multisets

REFERENCE = {  # thesis node count (one deal node at the root) and infosets with >= 2 actions
    "ocp(3)": (55, 12), "ocp(12)": (1189, 48), "ocp(50)": (22051, 200),
    "dudo(4,1,1)": (8177, 512), "dudo(5,1,1)": (51176, 2560),
    "domino(2,2)": (1357, 102),  # compact model: the thesis' infosets, the reference's compact nodes
}


@pytest.mark.parametrize("spec", REFERENCE)
def test_sizes_equal_the_thesis(spec):
    s = tensorcfr.compile(spec).sizes()
    assert (s["histories"], s["infosets_with_choice"]) == REFERENCE[spec]


@pytest.mark.parametrize("n", [2, 3, 7, 20])
def test_ocp_sizes_follow_the_closed_form(n):
    s = tensorcfr.compile(f"ocp({n})").sizes()
    assert (s["histories"], s["infosets_with_choice"]) == (9 * n * (n - 1) + 1, 4 * n)


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_dudo_sizes_follow_the_closed_form(k):
    bids, ms = 2 * k, math.comb(k, 1)
    s = tensorcfr.compile(f"dudo({k},1,1)").sizes()
    assert s["histories"] == ms * ms * (2 ** (bids + 1) - 1) + 1
    assert s["infosets_with_choice"] == 2 * ms * 2 ** (bids - 2)


def test_thesis_spelling_and_kuhn_is_ocp3():
    assert games.make("OCP(12)").name == "ocp(12)" and games.make("Dudo(4,1,1)").name == "dudo(4,1,1)"
    ocp3 = tensorcfr.Solver("ocp(3)", "dcfr", device="cpu")
    ocp3.step(1000)
    assert abs(ocp3.evaluate()["average"].game_value.item() + 1 / 18) < 1e-4


def test_dudo_multisets_are_a_distribution():
    rolls = multisets(4, 3)
    assert len(rolls) == math.comb(4 + 3 - 1, 3) and abs(sum(p for _, p in rolls) - 1) < 1e-15
    assert dict(rolls)[(1, 1, 2)] == 3 / 64


def _play(game, actions):
    s = game.initial_state()
    for a in actions:
        assert a in (dict(game.chance_outcomes(s)) if game.player(s) == games.CHANCE else game.legal_actions(s)), a
        s = game.next_state(s, a)
    return s


def test_dudo_challenge_rules():
    g = Dudo(4, 1, 2, continuation=lambda a, b: {(1, 1): -0.125}[(a, b)])
    # player 1 holds a 3, player 2 holds 1 and 3: two 3s show
    # a bid of exactly two 3s, challenged by player 2: exact count, the caller loses a die;
    # player 2 then bids first in Dudo(4,1,1), so player 1 receives -V(1, 1)
    assert g.utilities(_play(g, ["3|13", "2x3", "dudo"])) == (0.125, -0.125)
    # the same bid made by player 2 and challenged by player 1: player 1 loses its only die
    assert g.utilities(_play(g, ["3|13", "1x1", "2x3", "dudo"])) == (-1.0, 1.0)
    # three 3s bid, two show: the bidder (player 1) loses
    assert g.utilities(_play(g, ["3|13", "3x3", "dudo"])) == (-1.0, 1.0)
    # after the top bid only dudo is legal; bids must rise
    s = _play(g, ["3|13", "3x4"])
    assert g.legal_actions(s) == ("dudo",)
    assert g.legal_actions(_play(g, ["3|13", "2x4"])) == ("3x1", "3x2", "3x3", "3x4", "dudo")
    assert "dudo" not in g.legal_actions(_play(g, ["3|13"]))  # player 1 must open with a bid


def test_dudo_needs_continuation_values():
    g = Dudo(4, 2, 1)  # the class alone: no values given
    with pytest.raises(games.GameError, match=r"value of dudo\(4,1,1\)"):
        g.utilities(_play(g, ["11|1", "3x4", "dudo"]))  # the bidder loses: V(1, 1)


def test_games_import_nothing_of_the_solver_and_dudo_takes_its_values_as_data():
    """The games package knows no solver: none of its modules imports tensorcfr (but for the
    old top-level name's hand-over in __init__), Dudo takes its continuation values as a
    mapping, and `games.make("dudo(...)")` supplies them through the factory tensorcfr
    registers (solving the smaller games); a Dudo built bare says what it needs."""
    import ast
    import pathlib

    from tensorcfr.games.dudo import Dudo

    for path in (pathlib.Path(__file__).parent.parent / "games").glob("*.py"):
        tree = ast.parse(path.read_text())
        guarded = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)
                   for n in ast.walk(node)}
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad = [n for n in names if n.split(".")[0] in ("tensorcfr", "torch")] if id(node) not in guarded else []
            assert not bad, f"{path.name}:{node.lineno} imports {bad}"
    assert Dudo(4, 2, 1, values={(1, 1): -0.125}).payoff(0) == -0.125
    with pytest.raises(games.GameError, match=r"payoffs need the value of dudo\(4,1,1\).*games.make"):
        Dudo(4, 2, 1).payoff(0)
    assert games.make("dudo(4,2,1)").payoff(0) == pytest.approx(-0.125, abs=1e-6)  # V(1, 1) of Dudo(4,1,1)


def test_domino_rules():
    g = Domino(2, 2)
    # player 1: 00, 12; player 2: 01, 22; pack: 02, 11
    s = _play(g, ["00,12|01,22"])
    assert g.legal_actions(s) == ("00", "12")  # any tile opens
    s = _play(g, ["00,12|01,22", "00"])
    assert g.legal_actions(s) == ("01L",)  # ends 0|0: only "left"; 22 does not fit: must play 01
    s = _play(g, ["00,12|01,22", "00", "01L"])  # ends 1|0
    assert g.legal_actions(s) == ("12L",)
    s = _play(g, ["00,12|01,22", "00", "01L", "12L"])  # player 1's hand is empty: wins 2+2 pips
    assert g.player(s) == games.TERMINAL and g.utilities(s) == (4.0, -4.0)
    # a player who cannot play draws (a chance node) and must play the drawn tile if it fits
    s = _play(g, ["00,12|11,22", "00"])  # player 2 has no 0: draws from {01, 02}
    assert g.player(s) == games.CHANCE and dict(g.chance_outcomes(s)) == {"01": 0.5, "02": 0.5}
    s2 = g.next_state(s, "02")
    assert g.legal_actions(s2) == ("02L",)
    # with one tile each, the opening empties player 1's hand: it wins player 2's pips
    g = Domino(1, 1)
    s = _play(g, ["01|11", "01"])
    assert g.player(s) == games.TERMINAL and g.utilities(s) == (2.0, -2.0)


def test_domino_block_scores_the_opponents_pips():
    # a block: player 1 (00, 01) and player 2 (02, 11), pack {12, 22}
    g = Domino(2, 2)
    path = ["00,01|02,11", "01", "02L", "12", "12R", "22", "22L"]  # ends 2|2 after both draws
    s = _play(g, path)
    assert g.legal_actions(s) == ("pass",) and g.player(s) == 0  # 00 does not fit, the pack is empty
    s = _play(g, path + ["pass", "pass"])  # two passes with an empty pack: blocked
    assert g.player(s) == games.TERMINAL
    assert g.utilities(s) == (2.0, -2.0)  # player 1 holds 0 pips, player 2 holds 11: player 1 wins 2


@pytest.mark.parametrize("bad, msg", [("ocp(1)", "n >= 2"), ("dudo(0,1,1)", "faces must be"),
                                      ("dudo(4,0,1)", "dice1 must be"), ("domino(2,9)", "cannot deal hands of 9"),
                                      ("domino(0,1)", "max_pips must be")])
def test_bad_parameters_give_clear_errors(bad, msg):
    with pytest.raises(games.GameError, match=msg):
        games.make(bad)


@pytest.mark.parametrize("spec, value, tol", [("ocp(12)", -49 / 792, 1e-4), ("dudo(4,1,1)", -1 / 8, 1e-4),
                                              ("domino(2,2)", 2.4, 1e-4)])
def test_values(spec, value, tol):
    s = tensorcfr.Solver(spec, "dcfr", device="cpu")
    s.step(1000)
    ev = s.evaluate()["average"]
    assert abs(ev.game_value.item() - value) < tol and ev.nash_conv.item() < 1e-4


@pytest.mark.slow
def test_dudo_value_chain_reproduces_the_lp_values():
    from tensorcfr.run.continuation import dudo_chain

    assert [e["game"] for e in dudo_chain(4, 2, 1)] == ["dudo(4,1,1)"]
    assert abs(dudo_chain(4, 2, 1)[0]["value"] + 1 / 8) < 1e-7
    for spec, exact in [("dudo(4,1,2)", -65 / 128), ("dudo(4,2,1)", 14977 / 27136)]:
        s = tensorcfr.Solver(spec, "dcfr", device="cpu")
        s.step(2000)
        ev = s.evaluate()["average"]
        assert abs(ev.game_value.item() - exact) < 1e-4, spec
