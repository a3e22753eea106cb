"""Where OpenSpiel is installed (the `bench` extra): our CFR and CFR+ reproduce its C++
solvers' exploitability iteration for iteration on Kuhn and Leduc. OpenSpiel's CFRSolver
updates alternately, so our `cfr` runs with `updates="alternating"` here."""

import pytest

import tensorcfr

pyspiel = pytest.importorskip("pyspiel")


@pytest.mark.parametrize("game, name", [("kuhn", "kuhn_poker"), ("leduc", "leduc_poker")])
@pytest.mark.parametrize("algo", ["cfr", "cfr+"])
def test_same_exploitability_as_openspiel(game, name, algo, device):
    g = pyspiel.load_game(name)
    theirs = (pyspiel.CFRSolver if algo == "cfr" else pyspiel.CFRPlusSolver)(g)
    ours = tensorcfr.Solver(game, algo, device=device, updates="alternating")
    for n in (1, 9, 40):
        for _ in range(n):
            theirs.evaluate_and_update_policy()
        ours.step(n)
        expected = pyspiel.exploitability(g, theirs.average_policy())
        assert ours.evaluate()["average"].exploitability.item() == pytest.approx(expected, abs=1e-9)


def assert_same_exploitability(g, theirs, ours, steps):
    """After each run of `steps` more iterations, our average strategy's exploitability equals
    OpenSpiel's solver's (`theirs` on the pyspiel game g) to 1e-9."""
    for n in steps:
        for _ in range(n):
            theirs.evaluate_and_update_policy()
        ours.step(n)
        expected = pyspiel.exploitability(g, theirs.average_policy())
        assert ours.evaluate()["average"].exploitability.item() == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("algo", ["cfr", "cfr+"])
def test_liars_dice_is_openspiels(algo, device):
    """Our liars_dice is OpenSpiel's tree: same size, same exploitability after each iteration."""
    g = pyspiel.load_game("liars_dice")
    theirs = (pyspiel.CFRSolver if algo == "cfr" else pyspiel.CFRPlusSolver)(g)
    ours = tensorcfr.Solver("liars_dice", algo, device=device, updates="alternating")
    assert ours.game.num_histories == 294_883
    assert_same_exploitability(g, theirs, ours, (1, 2))


@pytest.mark.slow
def test_liars_dice_with_two_dice_is_openspiels():
    """liars_dice(numdice=2, faces=3) is OpenSpiel's liars_dice(numdice=2,dice_sides=3): the same
    663,511 histories and the same exploitability after 1 and 5 iterations (in the public-tree
    form; tests/test_forms.py holds the two forms equal on liars_dice(numdice=2, faces=2)).
    (Ten iterations of OpenSpiel's Python-driven CFR took most of this test's 33 s.)"""
    g = pyspiel.load_game("liars_dice(numdice=2,dice_sides=3)")
    theirs = pyspiel.CFRSolver(g)
    ours = tensorcfr.Solver("liars_dice(numdice=2,faces=3)", "cfr", device="cpu", updates="alternating",
                             form="public")
    assert ours.game.num_histories == 663_511
    assert_same_exploitability(g, theirs, ours, (1, 4))


@pytest.mark.parametrize("game", ["ocp(3)", "dudo(3,1,1)", "random(seed=4)"])
def test_efg_export_is_the_same_game_for_openspiel(game):
    """OpenSpiel's C++ CFR on our `.efg` export reproduces our CFR's exploitability. (Not on
    OCP(5): there, at infoset '1:b' after one iteration, the regrets of pass and bet are equal
    in exact arithmetic, and the rounding of the two sums decides whether regret matching plays
    uniform (ours) or bet (OpenSpiel's); the runs part from iteration 2 on.)"""
    from tensorcfr.io.interop import to_efg

    g = pyspiel.load_efg_game(to_efg(game))
    theirs = pyspiel.CFRSolver(g)
    ours = tensorcfr.Solver(game, "cfr", device="cpu", updates="alternating")
    for _ in range(7):
        theirs.evaluate_and_update_policy()
    ours.step(7)
    expected = pyspiel.exploitability(g, theirs.average_policy())
    assert ours.evaluate()["average"].exploitability.item() == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("spec, twin", [("kuhn", "kuhn_poker"), ("leduc", "leduc_poker"),
                                        ("liars_dice(faces=3)", "liars_dice(dice_sides=3)"),
                                        ("liars_dice(numdice=2, faces=2)", "liars_dice(numdice=2,dice_sides=2)")])
def test_native_policy_exports_to_openspiel(spec, twin):
    """A native game's policy, exported through its twin, has in OpenSpiel the exploitability
    we compute (a policy 30 iterations in, far from equilibrium, so a wrong mapping shows)."""
    from tensorcfr.io.interop import to_openspiel_policy

    s = tensorcfr.Solver(spec, "cfr+")
    s.step(30)
    made = pyspiel.load_game(tensorcfr.games.make(spec).openspiel_twin())
    assert made.get_parameters() == pyspiel.load_game(twin).get_parameters()
    ours = s.evaluate()["average"].exploitability.item()
    assert ours > 1e-4
    theirs = pyspiel.exploitability(pyspiel.load_game(twin), to_openspiel_policy(s.game, s.average_policy()))
    assert theirs == pytest.approx(ours, abs=1e-12)


def test_openspiel_names_are_aliases():
    """OpenSpiel's names and parameters build our twin, with its value; values our game lacks are refused."""
    from tensorcfr import games
    from tensorcfr.io.interop import to_openspiel_policy

    for ours, theirs in [("kuhn", "kuhn_poker(players=2)"), ("leduc", "leduc_poker"),
                         ("liars_dice(faces=3)", "liars_dice(dice_sides=3, bidding_rule=reset-face)")]:
        assert games.make(theirs).name == games.make(ours).name
        assert tensorcfr.compile(theirs).num_histories == tensorcfr.compile(ours).num_histories
    with pytest.raises(games.GameError, match="players=2 only"):
        games.make("kuhn_poker(players=3)")
    cg = tensorcfr.compile("ocp(3)")
    with pytest.raises(tensorcfr.TensorCFRError, match="ocp.3. has no OpenSpiel twin"):
        to_openspiel_policy(cg, tensorcfr.Policy.uniform(cg))
