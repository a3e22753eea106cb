"""Normal-form games and regret matching (issue 6): LP values, the course notes' hand-worked
first step, regret matching equal to CFR on the one-level tree, the sampled procedures equal
to a plain-Python reference draw by draw, exact stopping, and convergence."""

import functools

import pytest
import torch

from tensorcfr import games
import tensorcfr
from oracle import reference_normal_form
from tensorcfr import normal_form as nf

ZERO_SUM = {"rps": 0.0, "matching_pennies": 0.0, "ficha_domino": 1 / 3, "blotto(5,3)": 0.0}
RANDOM = games.matrix(torch.randn(4, 5, generator=torch.Generator().manual_seed(3)).tolist(), name="random4x5")


@pytest.mark.parametrize("spec,value", ZERO_SUM.items())
def test_lp_value_and_equilibrium(spec, value):
    v, x, y = nf.lp_solve(spec)
    assert v == pytest.approx(value, abs=1e-9)
    A, B = nf.payoff_tensors(spec)
    ev = nf.evaluate_profile(A, B, torch.tensor([x], dtype=A.dtype), torch.tensor([y], dtype=A.dtype))
    assert ev.nash_conv.item() < 1e-9 and ev.game_value.item() == pytest.approx(value, abs=1e-9)


def test_game_shapes_and_payoffs():
    assert len(games.make("blotto(5,3)").rows) == 21 and len(games.make("blotto(soldiers=5,fields=3)").cols) == 21
    g = games.make("blotto(5,3)")
    assert g.utilities(("3-1-1", "2-2-1"))[0] == 0.0  # one field won, one lost, one tied
    assert g.utilities(("3-2-0", "2-1-2")) == (1.0, -1.0)  # wins two fields, loses one
    f = games.make("ficha_domino")
    assert (len(f.rows), len(f.cols)) == (7, 6)
    assert f.utilities(("a1a2", "a2")) == (-1.0, 1.0) and f.utilities(("a1b1", "a2")) == (1.0, -1.0)
    b = games.make("biased_rps")
    assert not b.zero_sum and b.utilities(("S", "P")) == (3.0, -1.0)
    assert games.make("battle_of_sexes").utilities(("football", "football")) == (1.0, 2.0)
    pd = games.make("prisoners_dilemma")
    assert pd.utilities(("defect", "cooperate")) == (0.0, -3.0)


def test_biased_rps_first_step_by_hand(device):
    """The course notes: after iteration 1 (uniform play) player 1's regrets are (0, -1/3, 1/3),
    player 2's (-1/3, 2/3, -1/3), so the next strategies are pure S and pure P."""
    for procedure in ("rm", "rm+"):
        rm = nf.RegretMatching("biased_rps", procedure, device=device)
        rm.step(1)
        assert rm.regrets[0][0].tolist() == pytest.approx([0, -1 / 3, 1 / 3], abs=1e-15)
        assert rm.regrets[1][0].tolist() == pytest.approx([-1 / 3, 2 / 3, -1 / 3], abs=1e-15)
        assert rm.strategy[0][0].tolist() == [0.0, 0.0, 1.0] and rm.strategy[1][0].tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("spec", ["rps", "ficha_domino", "blotto(5,3)", RANDOM])
@pytest.mark.parametrize("procedure,plus", [("rm", False), ("rm+", True)])
def test_regret_matching_equals_cfr_on_the_one_level_tree(spec, procedure, plus, device):
    # regrets exactly 0 (or tied) in exact arithmetic round to +-1e-17 in an order that depends on
    # the kernels (on CUDA, ficha_domino's strategies were 0.19 apart): the tolerance reads them as 0
    rm = nf.RegretMatching(spec, procedure, device=device, regret_tolerance=1e-12)
    cfr = tensorcfr.Solver(spec, tensorcfr.CFRConfig("cfr", plus=plus, updates="simultaneous", averaging="uniform",
                                                     regret_tolerance=1e-12), device=device)
    for _ in range(25):  # RM+ on Blotto amplifies rounding ~1.6x per iteration (2e-8 by t = 40)
        rm.step(1)
        cfr.step(1)
        for p in (0, 1):  # one infoset per player: sequence 1.. are its actions in order
            torch.testing.assert_close(rm.strategy[p], cfr.sigma[p][:, 1:], rtol=0, atol=1e-10)
            torch.testing.assert_close(rm.average_strategy()[p], cfr.average_policy().sigma[p][:, 1:], rtol=0, atol=1e-10)
    a, b = rm.evaluate(), cfr.evaluate()
    for k in ("average", "current"):
        for f in ("nash_conv", "exploitability", "game_value"):
            torch.testing.assert_close(getattr(a[k], f), getattr(b[k], f), rtol=0, atol=1e-10)


def _uniforms(seed, runs, iterations):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(2, runs, generator=g, dtype=torch.float64) for _ in range(iterations)]


@pytest.mark.parametrize("procedure", nf.SAMPLED)
@pytest.mark.parametrize("spec", ["biased_rps", "ficha_domino", "blotto(4,3)"])
def test_sampled_procedures_equal_the_reference_draw_by_draw(procedure, spec, device):
    runs, T = 3, 150
    rm = nf.RegretMatching(spec, procedure, runs=runs, seed=7, device=device)
    g = games.make(spec)
    plays = []
    for _ in range(T):
        j, l = rm._iterate()
        plays.append((j.tolist(), l.tolist()))
    us = _uniforms(7, runs, T)
    for b in range(runs):
        ref_plays, ref_regrets, ref_strategy = reference_normal_form(
            g.payoff, g.payoff_col, procedure, [(u[0, b].item(), u[1, b].item()) for u in us])
        assert [(j[b], l[b]) for j, l in plays] == ref_plays
        for p in (0, 1):
            assert rm.regrets[p][b].tolist() == pytest.approx(ref_regrets[p], abs=1e-9)
            assert rm.strategy[p][b].tolist() == pytest.approx(ref_strategy[p], abs=1e-9)


def test_conditional_rm_user_inertia_matches_reference():
    g = games.make("rps")
    rm = nf.RegretMatching("rps", "conditional-rm(mu=10)", seed=1, device="cpu")
    rm.step(200)
    ref = reference_normal_form(g.payoff, g.payoff_col, "conditional-rm",
                                [(u[0, 0].item(), u[1, 0].item()) for u in _uniforms(1, 1, 200)], mu=10.0)
    assert rm.strategy[0][0].tolist() == pytest.approx(ref[2][0], abs=1e-12)


@pytest.mark.parametrize("procedure", nf.PROCEDURES)
def test_seeded_runs_are_reproducible(procedure):
    runs = 4 if procedure in nf.SAMPLED else 1
    a, b = (nf.RegretMatching("blotto(5,3)", procedure, runs=runs, seed=5, device="cpu") for _ in range(2))
    a.step(300), b.step(300)
    assert torch.equal(a.Z, b.Z)
    if procedure in nf.SAMPLED:
        c = nf.RegretMatching("blotto(5,3)", procedure, runs=runs, seed=6, device="cpu")
        c.step(300)
        assert not torch.equal(a.Z, c.Z)
        assert len({tuple(z.flatten().tolist()) for z in a.Z}) == runs  # the runs differ


@pytest.mark.parametrize("procedure", ["sampled-rm", "rm"])
def test_run_stops_each_member_exactly(procedure):
    runs = 5 if procedure in nf.SAMPLED else 1
    spec = "matching_pennies" if procedure == "sampled-rm" else "ficha_domino"
    # the sampled runs stop at 820-3,975 (seed 2): three members in one chunk, the others in two more
    target = 0.02 if procedure in nf.SAMPLED else 0.01
    out = nf.RegretMatching(spec, procedure, runs=runs, seed=2, device="cpu").run(60_000, target, chunk=777)
    assert bool(out["reached"].all())
    fresh = nf.RegretMatching(spec, procedure, runs=runs, seed=2, device="cpu")
    worst = lambda b: float(torch.maximum(fresh.regrets[0][b].amax(), fresh.regrets[1][b].amax())) / fresh.iteration  # noqa: E731
    for b in out["iterations"].argsort().tolist():
        T = int(out["iterations"][b])
        if T - 1 >= max(fresh.iteration, 1):  # not below the target one iteration earlier
            fresh.step(T - 1 - fresh.iteration)
            assert worst(b) >= target
        fresh.step(T - fresh.iteration)
        torch.testing.assert_close(out["Z"][b], fresh.joint()[b], rtol=0, atol=1e-12)
        assert worst(b) < target


def test_joint_regrets_agree_with_the_procedures_own_regrets():
    rm = nf.RegretMatching("biased_rps", "conditional-rm", runs=6, seed=0, device="cpu")
    rm.step(500)
    r = nf.joint_regrets(rm.A, rm.B, rm.joint())
    for p in (0, 1):
        torch.testing.assert_close(r[f"unconditional_p{p}"], (rm.regrets[p].amax(1) / 500).clamp(min=0))
        torch.testing.assert_close(r[f"conditional_p{p}"], (rm.conditional[p] / 500).amax((1, 2)))


@pytest.mark.parametrize("spec", ZERO_SUM)
def test_rm_plus_reaches_1e_3(spec, device):
    """RM+ (simultaneous, uniform average) from uniform play: rps and matching pennies start at
    the equilibrium; Ficha vs Dominó needs 81,371 iterations, Blotto(5,3) 401."""
    if spec == "blotto(5,3)" and device == "cuda":
        pytest.skip("401 is the CPU's trajectory: Blotto amplifies rounding ~1.6x an iteration, and an H100's "
                    "kernels round otherwise (0.008 at 401; first below 1e-3 at 13,361)")
    iterations = {"rps": 1, "matching_pennies": 1, "ficha_domino": 81_371, "blotto(5,3)": 401}[spec]
    rm = nf.RegretMatching(spec, "rm+", device=device)
    rm.step(iterations)
    ev = rm.evaluate()["average"]
    assert ev.exploitability.item() < 1e-3
    assert ev.game_value.item() == pytest.approx(ZERO_SUM[spec], abs=2e-3)


@pytest.mark.parametrize("spec", ZERO_SUM)
@pytest.mark.parametrize("procedure", nf.SAMPLED)
def test_sampled_play_approaches_equilibrium(spec, procedure, device):
    """10 seeded runs of 5,000 plays. In a zero-sum game the NashConv of the empirical marginals
    is exactly the sum of the two players' unconditional regrets. Hart and Mas-Colell bound the
    expected regret by O(t^-1/2) for sampled-rm and invariant-rm; measured at seed 0 the worst run
    has NashConv 0.074 after 5,000 plays (0.032 after 20,000), the test allows 0.1, and the runs'
    mean must fall from 1,000 plays to 5,000. Conditional-rm with inertia is much slower (the
    thesis needed millions of plays): its largest conditional regret, 0.186 at worst measured
    after 5,000 plays (0.10 after 20,000), must be below 0.25 and its mean below the one after
    1,000 plays. (The twelve cases' 20,000 plays took 100 s of the suite, 2026-11-28.)"""
    rm = nf.RegretMatching(spec, procedure, runs=10, seed=0, device=device)
    rm.step(1000)
    early, early_ev = rm.regret_summary(), rm.evaluate()["average"]
    rm.step(4000)
    ev, r = rm.evaluate()["average"], rm.regret_summary()
    raw = sum(rm.regrets[p].amax(1) for p in (0, 1)) / rm.iteration
    torch.testing.assert_close(ev.nash_conv, raw, rtol=0, atol=1e-12)
    if procedure == "conditional-rm":
        late_c = torch.maximum(r["conditional_p0"], r["conditional_p1"])
        early_c = torch.maximum(early["conditional_p0"], early["conditional_p1"])
        assert late_c.max().item() < 0.25 and late_c.mean().item() < early_c.mean().item()
    else:
        assert ev.nash_conv.max().item() < 0.1 and ev.nash_conv.mean().item() < early_ev.nash_conv.mean().item()


@pytest.mark.parametrize("procedure", ["conditional-rm", "invariant-rm"])
def test_conditional_procedures_reach_correlated_equilibrium_in_battle_of_sexes(procedure, device):
    rm = nf.RegretMatching("battle_of_sexes", procedure, runs=8, seed=0, device=device)
    rm.step(5000)
    r = rm.regret_summary()
    assert torch.maximum(r["conditional_p0"], r["conditional_p1"]).max().item() < 0.01


def test_conditional_rm_plays_distributions():
    rm = nf.RegretMatching("blotto(5,3)", "conditional-rm", runs=4, device="cpu")
    for _ in range(300):
        rm.step(1)
        for p in rm.strategy:
            assert p.min().item() >= 0 and torch.allclose(p.sum(1), torch.ones(4, dtype=p.dtype))


def test_invariant_vector_balances_the_regret_chain():
    D = torch.rand(5, 4, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64) - 0.3
    D = D * (1 - torch.eye(4, dtype=D.dtype))
    q = nf._invariant(D, 1)
    M = D.clamp(min=0)
    inflow, outflow = (q[:, :, None] * M).sum(1), q * M.sum(2)
    torch.testing.assert_close(inflow, outflow, rtol=1e-6, atol=1e-12)
    torch.testing.assert_close(q.sum(1), torch.ones(5, dtype=q.dtype))


def test_evaluate_profile_equals_the_tree_evaluation():
    cg = tensorcfr.compile("ficha_domino")
    g = torch.Generator().manual_seed(1)
    x, y = torch.rand(3, 7, generator=g, dtype=torch.float64), torch.rand(3, 6, generator=g, dtype=torch.float64)
    x, y = x / x.sum(1, keepdim=True), y / y.sum(1, keepdim=True)
    one = torch.ones(3, 1, dtype=x.dtype)
    tree = tensorcfr.evaluate(cg, tensorcfr.Policy(cg, (torch.cat([one, x], 1), torch.cat([one, y], 1))))
    A, B = nf.payoff_tensors("ficha_domino")
    mine = nf.evaluate_profile(A, B, x, y)
    for f in ("nash_conv", "exploitability", "game_value"):
        torch.testing.assert_close(getattr(mine, f), getattr(tree, f))


def test_clear_errors():
    with pytest.raises(tensorcfr.TensorCFRError, match="kuhn is not a matrix game"):
        nf.RegretMatching("kuhn", "rm")
    with pytest.raises(tensorcfr.TensorCFRError, match="battle_of_sexes is general-sum"):
        tensorcfr.compile("battle_of_sexes")
    with pytest.raises(tensorcfr.TensorCFRError, match="unknown procedure"):
        nf.RegretMatching("rps", "rm++")
    with pytest.raises(tensorcfr.TensorCFRError, match="mu is the positive inertia"):
        nf.RegretMatching("rps", "rm", mu=3)
    with pytest.raises(tensorcfr.TensorCFRError, match="deterministic"):
        nf.RegretMatching("rps", "rm+", runs=3)
    with pytest.raises(tensorcfr.TensorCFRError, match="one shape"):
        nf.RegretMatching(["rps", "matching_pennies"], "rm")
    with pytest.raises(tensorcfr.TensorCFRError, match="not zero-sum"):
        nf.lp_solve("prisoners_dilemma")
    with pytest.raises(games.GameError, match="rectangle"):
        games.matrix([[1, 2], [3]])


def test_a_batch_of_games_runs_as_one(device):
    specs = [games.matrix([[1, -1], [-1, 1]]), games.matrix([[2, -1], [-1, 1]], name="skewed")]
    both = nf.RegretMatching(specs, "sampled-rm", runs=3, seed=4, device=device)
    both.step(50)
    assert both.batch_size == 6 and both.member_names()[3] == "skewed run=0"
    assert both.Z.sum((1, 2)).tolist() == [50.0] * 6


def test_cli_solves_matrix_games(capsys):
    from tensorcfr.cli.commands import main
    import json

    assert main(["solve", "ficha_domino", "--algo", "rm+", "--iterations", "2000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algorithm"] == "rm+" and out["game_value"] == pytest.approx(1 / 3, abs=1e-2)
    assert {"exploitability", "nash_conv", "exploitability_current", "curve"} <= set(out)
    assert main(["solve", "battle_of_sexes", "--algo", "conditional-rm", "--runs", "3", "--iterations", "500",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["members"]) == 3
    assert main(["solve", "rps", "--algo", "cfr+", "--runs", "3"]) == 2
    assert "cfr+ has no option(s) --runs" in capsys.readouterr().err
    assert main(["solve", "rps", "--algo", "rm", "--eta", "1"]) == 2


@functools.lru_cache(maxsize=None)
def _exact_rm(A, iterations):
    """Regret matching (simultaneous, both players) in exact rational arithmetic on the matrix
    game A (player 0's payoffs, zero-sum): the strategies after each iteration."""
    from fractions import Fraction

    A = [[Fraction(a) for a in row] for row in A]
    m, n = len(A), len(A[0])
    x, y = [Fraction(1, m)] * m, [Fraction(1, n)] * n
    rx, ry = [Fraction(0)] * m, [Fraction(0)] * n

    def match(r):
        pos = [max(v, Fraction(0)) for v in r]
        total = sum(pos)
        return [p / total for p in pos] if total > 0 else [Fraction(1, len(r))] * len(r)

    out = []
    for _ in range(iterations):
        ux = [sum(A[i][j] * y[j] for j in range(n)) for i in range(m)]
        uy = [-sum(A[i][j] * x[i] for i in range(m)) for j in range(n)]
        vx, vy = sum(a * b for a, b in zip(x, ux)), sum(a * b for a, b in zip(y, uy))
        rx = [r + u - vx for r, u in zip(rx, ux)]
        ry = [r + u - vy for r, u in zip(ry, uy)]
        x, y = match(rx), match(ry)
        out.append((x, y))
    return out


@pytest.mark.parametrize("tolerance", [None, 1e-12])
def test_regret_tolerance_follows_the_exact_trajectory(tolerance, device):
    """Ficha vs Dominó's first iteration leaves every regret of the first player exactly 0; in floats
    three of them come out as 5.6e-17, and plain regret matching then plays those three
    actions instead of uniformly, leaving the exact trajectory at once. With the tolerance the
    float run follows exact (rational) regret matching for 20 iterations."""
    if tolerance is None and device != "cpu":
        pytest.skip("which rounding a GPU's kernels leave is theirs: the CPU's 5.6e-17 is the measured case")
    g = games.make("ficha_domino")
    exact = _exact_rm(tuple(map(tuple, g.payoff)), 20)
    cfr = tensorcfr.Solver("ficha_domino", tensorcfr.CFRConfig("cfr", updates="simultaneous", averaging="uniform",
                                                               regret_tolerance=tolerance), device=device)
    apart = []
    for x, y in exact:
        cfr.step(1)
        apart.append(max(float((cfr.sigma[0][0, 1:].cpu() - torch.tensor([float(v) for v in x], dtype=torch.float64))
                               .abs().max()),
                         float((cfr.sigma[1][0, 1:].cpu() - torch.tensor([float(v) for v in y], dtype=torch.float64))
                               .abs().max())))
    if tolerance is None:
        assert apart[0] > 0.1  # off the exact path after one iteration
    else:
        assert max(apart) < 1e-12


def test_regret_tolerance_is_an_option_of_rm_and_rm_plus_only():
    assert nf.make_procedure("rm+", regret_tolerance=1e-12).regret_tolerance == 1e-12
    with pytest.raises(tensorcfr.TensorCFRError, match="option of rm and rm\\+, not of sampled-rm"):
        nf.make_procedure("sampled-rm", regret_tolerance=1e-12)
    for bad in (-1e-3, 1.0, True):
        with pytest.raises(tensorcfr.TensorCFRError, match="regret_tolerance must be a number"):
            nf.make_procedure("rm", regret_tolerance=bad)
