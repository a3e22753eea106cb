"""RTCFR+ (`rtcfr+`, `tensorcfr.RTConfig`): iteration by iteration equal to a recursive
reference on Kuhn and random games, through reference updates and halvings of the
perturbation, in both update schedules."""

import pytest

import tensorcfr
from oracle import RecursiveRTCFR
from test_solvers_vs_oracle import assert_tables_close, solver_tables

# a short period and a perturbation large enough to matter, so that 20 iterations see the
# reference renewed and the perturbation halved several times
OPTS = [dict(mu=0.05, perturbation=1e-3, period=5),
        dict(mu=0.2, perturbation=0.01, period=3, floor=0.0, updates="simultaneous", averaging="uniform"),
        dict(mu=1e-3, perturbation=1e-10, period=4, delay=2)]


@pytest.mark.parametrize("spec", ["kuhn", "random(seed=3)", "random(seed=7)", "random(seed=14)"])
@pytest.mark.parametrize("opts", OPTS, ids=["alternating", "simultaneous-no-floor", "defaults-delay"])
def test_rtcfr_matches_the_recursive_reference(spec, opts, device):
    ref = RecursiveRTCFR(tensorcfr.games.make(spec), **opts)
    solver = tensorcfr.Solver(spec, tensorcfr.make_config("rtcfr+", **opts), device=device, dtype="float64")
    for t in range(1, 21):
        ref.iterate()
        solver.step()
        cur, avg, reg = solver_tables(solver)
        assert_tables_close(cur, ref.current_policy(), "current strategy", t)
        assert_tables_close(avg, ref.average_policy(), "average strategy", t)
        assert_tables_close(reg, {k: dict(zip(ref.actions[k], r)) for k, r in ref.regret.items()},
                            "cumulative regret", t)


def test_mu_zero_and_no_perturbation_is_cfr_plus():
    a = tensorcfr.Solver("leduc", "rtcfr+(mu=0, perturbation=0, floor=0)", device="cpu", dtype="float64")
    b = tensorcfr.Solver("leduc", "cfr+", device="cpu", dtype="float64")
    a.step(30)
    b.step(30)
    for p in (0, 1):
        assert (a.sigma[p] - b.sigma[p]).abs().max() == 0
        assert (a.regrets[p] - b.regrets[p]).abs().max() == 0


def test_a_batch_of_rtcfr_settings_equals_solo_runs():
    mus, ps = (1e-3, 0.01, 0.1), (1e-10, 1e-3, 0.0)
    batch = tensorcfr.Solver("kuhn", tensorcfr.make_config("rtcfr+", mu=mus, perturbation=ps, period=4),
                             device="cpu", dtype="float64")
    batch.step(12)
    for b in range(3):
        solo = tensorcfr.Solver("kuhn", tensorcfr.make_config("rtcfr+", mu=mus[b], perturbation=ps[b], period=4),
                                device="cpu", dtype="float64")
        solo.step(12)
        for p in (0, 1):
            assert (batch.sigma[p][b] - solo.sigma[p][0]).abs().max() < 1e-14


@pytest.mark.parametrize("bad, msg", [("rtcfr+(mu=-1)", "mu"), ("rtcfr+(period=0)", "period"),
                                      ("rtcfr+(period=2.5)", "period"), ("rtcfr+(floor=-1)", "floor"),
                                      ("rtcfr+(perturbation=-0.1)", "perturbation"),
                                      ("rtcfr+(perturbation=0.6)", "perturbation")])
def test_bad_rtcfr_settings_are_one_line_errors(bad, msg):
    with pytest.raises(tensorcfr.TensorCFRError, match=msg):
        tensorcfr.make_config(bad)


def test_a_perturbation_too_large_for_the_game_is_refused():
    # Leduc's first infosets have three actions: 3 x 0.4 > 1 would leave no probability to give
    with pytest.raises(tensorcfr.TensorCFRError, match=r"perturbation must be < 1/3"):
        tensorcfr.Solver("leduc", "rtcfr+(perturbation=0.4)", device="cpu")
