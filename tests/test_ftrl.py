"""Sequence-form FTRL with dilated entropy and its optimistic form: closed forms on a matrix
game (Hedge; and CFR as regret matching), equality with the recursive float64 oracle
iteration by iteration, weights by hand, batching, float32 safety and Kuhn convergence."""

import itertools
import math

import pytest
import torch

from tensorcfr import games
import tensorcfr
from oracle import RecursiveFTRL
from tensorcfr.spaces import treeplex as T
from test_solvers_vs_oracle import assert_tables_close
from exact import same

A = [[3.0, -1.0, 0.5, -2.0], [-1.0, 2.0, -0.5, 1.0], [0.0, -1.5, 1.0, 0.25]]  # a 3x4 matrix game


def _normalised(weights):
    total = sum(weights)
    return [w / total for w in weights]


def _values(payoff, x, y):
    """Each row's payoff against y and each column's (negated) payoff against x."""
    rows, cols = range(len(payoff)), range(len(payoff[0]))
    return ([sum(payoff[i][j] * y[j] for j in cols) for i in rows],
            [-sum(payoff[i][j] * x[i] for i in rows) for j in cols])


def hedge(payoff, eta, steps, optimistic=False):
    """Simultaneous (optimistic) multiplicative weights, by hand: strategies after each step."""
    rows, cols = len(payoff), len(payoff[0])
    x, y = [1.0 / rows] * rows, [1.0 / cols] * cols
    ux, uy = [0.0] * rows, [0.0] * cols
    out = []
    for _ in range(steps):
        gx, gy = _values(payoff, x, y)
        ux = [u + g for u, g in zip(ux, gx)]
        uy = [u + g for u, g in zip(uy, gy)]
        k = 2 if optimistic else 1
        x = _normalised([math.exp(eta * (u + (k - 1) * g)) for u, g in zip(ux, gx)])
        y = _normalised([math.exp(eta * (u + (k - 1) * g)) for u, g in zip(uy, gy)])
        out.append((x, y))
    return out


def regret_matching(payoff, steps):
    """Simultaneous regret matching on a matrix game, by hand."""
    rows, cols = len(payoff), len(payoff[0])
    x, y = [1.0 / rows] * rows, [1.0 / cols] * cols
    rx, ry = [0.0] * rows, [0.0] * cols
    out = []
    for _ in range(steps):
        gx, gy = _values(payoff, x, y)
        vx, vy = sum(a * b for a, b in zip(x, gx)), sum(a * b for a, b in zip(y, gy))
        rx = [r + g - vx for r, g in zip(rx, gx)]
        ry = [r + g - vy for r, g in zip(ry, gy)]
        pos = lambda r: [max(v, 0.0) for v in r]  # noqa: E731
        x = _normalised(pos(rx)) if sum(pos(rx)) > 0 else [1.0 / rows] * rows
        y = _normalised(pos(ry)) if sum(pos(ry)) > 0 else [1.0 / cols] * cols
        out.append((x, y))
    return out


def _current(solver):
    table = solver.current_policy().to_dict()
    return list(table["row"].values()), list(table["col"].values())


@pytest.mark.parametrize("optimistic", [False, True])
def test_ftrl_on_a_matrix_game_is_hedge(optimistic, device):
    eta = 0.7
    solver = tensorcfr.Solver(games.matrix(A), "oftrl" if optimistic else "ftrl", eta=eta, device=device)
    for t, (x, y) in enumerate(hedge(A, eta, 30, optimistic), 1):
        solver.step()
        sx, sy = _current(solver)
        assert max(abs(a - b) for a, b in zip(sx + sy, x + y)) < 1e-12, f"iteration {t}"


def test_weights_scale_the_step_on_a_one_level_game(device):
    """With no infosets below, kroer17 weights are 2 and farina21 weights 1: eta/2 and eta."""
    runs = {w: tensorcfr.Solver(games.matrix(A), "oftrl", eta=e, weights=w, device=device)
            for w, e in [("unit", 0.5), ("kroer17", 1.0), ("farina21", 0.5)]}
    for s in runs.values():
        s.step(10)
    ref = runs["unit"].sigma
    for w in ("kroer17", "farina21"):
        for p in (0, 1):
            assert torch.allclose(runs[w].sigma[p], ref[p], rtol=0, atol=1e-14), w


def test_cfr_on_a_matrix_game_is_regret_matching(device):
    solver = tensorcfr.Solver(games.matrix(A), "cfr", device=device)
    for t, (x, y) in enumerate(regret_matching(A, 30), 1):
        solver.step()
        sx, sy = _current(solver)
        assert max(abs(a - b) for a, b in zip(sx + sy, x + y)) < 1e-12, f"iteration {t}"


def test_dilated_entropy_weights_on_kuhn_by_hand():
    """Player 0's root infosets ('J:') each have one infoset below 'pass' ('J:pb'); player 1's
    infosets have none below."""
    tp0, tp1 = tensorcfr.compile("kuhn").treeplexes
    expect = {"unit": (1, 1), "farina21": (1 + 1, 1), "kroer17": (2 + 2 * 2, 2)}
    for scheme, (root, leaf) in expect.items():
        w0 = dict(zip(tp0.infoset_keys, tensorcfr.dilated_entropy_weights(tp0, scheme).tolist()))
        assert w0 == {k: float(root if k.endswith(":") else leaf) for k in tp0.infoset_keys}, scheme
        w1 = tensorcfr.dilated_entropy_weights(tp1, scheme)
        assert w1.tolist() == [float(1 if scheme != "kroer17" else 2)] * tp1.num_infosets, scheme


CONFIGS = [dict(optimistic=o, weights=w, updates=u)
           for o, w, u in itertools.product([False, True], ["unit", "farina21", "kroer17"],
                                            ["simultaneous", "alternating"])]
CONFIG_IDS = [f"{'o' if c['optimistic'] else ''}ftrl-{c['weights']}-{c['updates'][:3]}" for c in CONFIGS]


def check_against_oracle(spec, opts, iterations, device, eta=1.5, averaging="uniform", gamma=None):
    oracle = RecursiveFTRL(games.make(spec), eta=eta, averaging=averaging, gamma=gamma, **opts)
    config = tensorcfr.FTRLConfig("test", eta=eta, averaging=averaging, gamma=gamma, **opts)
    solver = tensorcfr.Solver(spec, config, device=device, dtype="float64")
    for t in range(1, iterations + 1):
        oracle.iterate()
        solver.step()
        assert_tables_close(solver.current_policy().to_dict(), oracle.current_policy(), "current strategy", t)
        assert_tables_close(solver.average_policy().to_dict(), oracle.average_policy(), "average strategy", t)


@pytest.mark.parametrize("opts", CONFIGS, ids=CONFIG_IDS)
def test_kuhn_matches_oracle_for_20_iterations(opts, device):
    check_against_oracle("kuhn", opts, 20, device)


@pytest.mark.parametrize("seed", range(12))
def test_random_games_match_oracle_for_20_iterations(seed, device):
    opts = CONFIGS[seed % len(CONFIGS)]
    check_against_oracle(f"random(seed={seed})", opts, 20, device, eta=0.5 + seed / 4)


def test_leduc_and_power_averaging_match_oracle(device):
    check_against_oracle("leduc", dict(optimistic=True, weights="farina21", updates="alternating"), 3, device,
                         eta=20.0, averaging="power", gamma=2.0)


def test_presets_match_oracle(device):
    for name in ("ftrl", "oftrl"):
        c = tensorcfr.PRESETS[name]
        opts = dict(optimistic=c.optimistic, weights=c.weights, updates=c.updates)
        check_against_oracle("random(seed=3)", opts, 20, device, eta=c.eta, averaging=c.averaging)


def test_batched_step_sizes_equal_solo_runs(device):
    etas = (0.5, 1.0, 2.0, 4.0, 8.0)
    batch = tensorcfr.Solver("leduc", "oftrl", eta=etas, device=device, deterministic=True)
    batch.step(20)
    assert batch.member_names()[2] == "leduc eta=2"
    for b, eta in enumerate(etas):
        solo = tensorcfr.Solver("leduc", "oftrl", eta=eta, device=device, deterministic=True)
        solo.step(20)
        for p in (0, 1):
            assert same(batch.state.rule[p].utility[b], solo.state.rule[p].utility[0], device)
            assert torch.allclose(batch.sigma[p][b], solo.sigma[p][0], rtol=0, atol=1e-15)
            assert torch.allclose(batch.average[p][b], solo.average[p][0], rtol=0, atol=1e-14)


def test_softmax_is_finite_at_float32_after_a_long_run(device):
    """After 10^5 iterations cumulative utilities reach ~10^5 x the largest value; a naive
    exp overflows float32 beyond ~88. The shifted softmax stays finite and normalised."""
    tp = tensorcfr.compile("leduc").treeplexes[0].to(device)
    torch.manual_seed(0)
    u = (torch.randn(3, tp.num_sequences, device=device) * 1e6).float()
    tau = torch.full((3, tp.num_infosets), 1 / 64, device=device)
    sigma, value = T.softmax_bottom_up(tp, u, tau)
    assert torch.isfinite(sigma).all() and torch.isfinite(value).all()
    sums = T.segment_sum(tp, sigma)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-5)
    # the value is the regularised best-response value: at least the plain best response
    q, _ = T.bottom_up(tp, u.double(), None)
    assert (value.double() >= q[:, 0] - 1e-6 * q[:, 0].abs()).all()


def test_float32_oftrl_stays_finite_and_tracks_float64(device):
    a = tensorcfr.Solver("kuhn", "oftrl", device=device, dtype="float32")
    b = tensorcfr.Solver("kuhn", "oftrl", device=device, dtype="float64")
    a.step(300)
    b.step(300)
    ea, eb = a.evaluate(), b.evaluate()
    assert all(torch.isfinite(s).all() for s in a.sigma)
    assert abs(ea["average"].exploitability.item() - eb["average"].exploitability.item()) < 1e-4


def test_oftrl_last_iterate_on_kuhn_after_2000_iterations(device):
    """The preset's documented step size (eta = 2, unit weights): the last iterate converges."""
    s = tensorcfr.Solver("kuhn", "oftrl", device=device)
    assert s.config.eta == 2.0
    s.step(2000)
    ev = s.evaluate()
    assert ev["current"].exploitability.item() < 1e-3
    assert abs(ev["current"].game_value.item() + 1 / 18) < 1e-3


def test_ftrl_options_and_errors():
    assert tensorcfr.make_config("oftrl(eta=3, weights='kroer17')").weights == "kroer17"
    for bad, msg in [("ftrl(eta=0)", "must be positive"), ("ftrl(weights='x')", "weights must be one of"),
                     ("ftrl(alpha=1)", "unknown option"), ("oftrl(eta=(1,2), gamma=(1,2,3))", "one length")]:
        with pytest.raises(tensorcfr.TensorCFRError, match=msg):
            tensorcfr.make_config(bad)
    with pytest.raises(tensorcfr.TensorCFRError, match="keeps no regrets"):
        tensorcfr.Solver("kuhn", "ftrl", device="cpu").regrets  # noqa: B018


@pytest.mark.parametrize("weights, ratio", [("unit", 2.0), ("farina21", math.sqrt(2)), ("kroer17", 2 ** (1 / 3))])
def test_first_iterate_minimises_the_dilated_entropy(weights, ratio, device):
    """At Kuhn's root infosets 'pass' leads to one more binary infoset, worth beta_child log 2
    of entropy: pass/bet = exp(beta_child log 2 / beta_root) = 2 (unit), 2^(1/2) (farina21:
    beta 2 over 1), 2^(2/6) (kroer17: beta 6 over 2), whatever the step size."""
    s = tensorcfr.Solver("kuhn", "ftrl", weights=weights, eta=3.0, device=device)
    first = s.current_policy().to_dict()["J:"]
    assert first["pass"] / first["bet"] == pytest.approx(ratio, rel=1e-12)
    assert s.current_policy().to_dict()["J:pb"] == {"pass": 0.5, "bet": 0.5}
