"""Literature values reached by the solvers; Kuhn's unique equilibrium for player 2."""

import pytest

import tensorcfr


def test_kuhn_value_and_player2_equilibrium(device):
    s = tensorcfr.Solver("kuhn", "cfr+", device=device)
    s.step(2000)
    ev = s.evaluate()["average"]
    assert ev.exploitability.item() < 1e-3
    assert ev.game_value.item() == pytest.approx(-1 / 18, abs=1e-3)
    pol = s.average_policy().to_dict()
    # player 2's equilibrium is unique: after a check it bets J with 1/3; facing a bet it calls Q with 1/3
    assert pol["J:p"]["bet"] == pytest.approx(1 / 3, abs=1e-2)
    assert pol["Q:b"]["bet"] == pytest.approx(1 / 3, abs=1e-2)
    assert pol["K:b"]["bet"] == pytest.approx(1.0, abs=1e-2) and pol["J:b"]["bet"] < 1e-2


def test_leduc_value(device):
    s = tensorcfr.Solver("leduc", "cfr+", device=device)
    s.step(1000)
    ev = s.evaluate()["average"]
    assert ev.exploitability.item() < 1e-3
    assert ev.game_value.item() == pytest.approx(-0.0856064, abs=1e-3)


@pytest.mark.slow
def test_cfr_converges_on_leduc(device):
    s = tensorcfr.Solver("leduc", "cfr", device=device)
    s.step(1000)
    assert s.evaluate()["average"].exploitability.item() < 5e-2


# A Kuhn equilibrium (the alpha = 0 member of player 1's family): P(bet) per infoset.
KUHN_EQUILIBRIUM = {"J:": 0, "Q:": 0, "K:": 0, "J:pb": 0, "Q:pb": 1 / 3, "K:pb": 1,
                    "J:p": 1 / 3, "Q:p": 0, "K:p": 1, "J:b": 0, "Q:b": 1 / 3, "K:b": 1}


def test_cfr_plus_fixed_point_at_kuhn_equilibrium(device):
    """Started at an equilibrium, CFR+'s current strategy does not move."""
    table = {k: {"pass": 1 - b, "bet": b} for k, b in KUHN_EQUILIBRIUM.items()}
    s = tensorcfr.Solver("kuhn", "cfr+", device=device)
    start = tensorcfr.Policy.from_dict(s.game, table)
    assert tensorcfr.evaluate(s.game, start).nash_conv.item() < 1e-12
    for p in (0, 1):  # regrets proportional to the strategy make regret matching+ play it
        s.regrets[p].copy_(start.sigma[p].to(s.regrets[p]))
        s.regrets[p][:, 0] = 0
        s.sigma[p] = start.sigma[p].to(s.regrets[p]).clone()
    for _ in range(5):
        s.step()
        cur = s.current_policy().to_dict()
        assert max(abs(cur[k][a] - table[k][a]) for k in table for a in table[k]) < 1e-12


def test_batched_antes_have_their_own_values(device):
    s = tensorcfr.Solver([f"kuhn(ante={a})" for a in (1, 2)], "cfr+", device=device)
    s.step(1000)
    ev = s.evaluate()["average"]
    assert ev.exploitability.max().item() < 2e-3
    assert ev.game_value[0].item() == pytest.approx(-1 / 18, abs=1e-3)
    assert abs(ev.game_value[1].item() - ev.game_value[0].item()) > 1e-3  # a different game
