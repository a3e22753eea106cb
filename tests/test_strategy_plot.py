"""Strategy pictures: the numbers behind them equal a walk of the whole game tree with a random
strategy, and the command draws files that are not blank."""

import json

import numpy as np
import pytest
from cli_run import cli  # in this process: `main` as the console script calls it

import tensorcfr
from tensorcfr import games
from tensorcfr.cli.strategy import _hand_class, dice_calls, hand_grid
from tensorcfr.games import CHANCE, TERMINAL


def random_table(game, seed=0):
    """A strategy with random probabilities at every infoset (a Dirichlet draw each)."""
    rng = np.random.default_rng(seed)
    table = tensorcfr.Policy.uniform(tensorcfr.compile(game)).to_dict()
    return {k: dict(zip(row, rng.dirichlet(np.ones(len(row))))) for k, row in table.items()}


def walk(game, table, visit):
    """Call visit(state, key, reach) at every decision node, `reach` the probability that chance
    and both players' strategies lead there."""
    stack = [(game.initial_state(), 1.0)]
    while stack:
        s, reach = stack.pop()
        p = game.player(s)
        if p == TERMINAL or reach == 0.0:
            continue
        if p == CHANCE:
            stack += [(game.next_state(s, a), reach * q) for a, q in game.chance_outcomes(s)]
            continue
        key = game.infoset_key(s)
        visit(s, key, reach)
        stack += [(game.next_state(s, a), reach * table[key][a]) for a in game.legal_actions(s)]


@pytest.mark.parametrize("spec", ["liars_dice(faces=3)", "liars_dice(numdice=2, faces=2)", "dudo(3,1,1)"])
def test_dice_calls_equal_a_walk_of_the_tree(spec):
    g = games.make(spec)
    table = random_table(g)
    rolls, bids, calls = dice_calls(g, table)
    num = [np.zeros_like(c) for c in calls]
    den = [np.zeros_like(c) for c in calls]
    call = "dudo" if spec.startswith("dudo") else "Liar"

    def visit(s, key, reach):
        roll, _, rest = key.replace("|", " ", 1).partition(" ")
        history = rest.replace(",", " ").split()
        if history:
            p = len(history) % 2
            cell = rolls[p].index(roll), bids.index(history[-1])
            num[p][cell] += reach * table[key][call]
            den[p][cell] += reach

    walk(g, table, visit)
    for p in (0, 1):
        expected = np.where(den[p] > 0, num[p] / np.where(den[p] > 0, den[p], 1), np.nan)
        np.testing.assert_allclose(calls[p], expected, rtol=1e-12, atol=1e-12)
        assert np.isfinite(calls[p]).sum() > len(bids)  # most cells are reached


@pytest.mark.parametrize("spec, lines", [
    ('holdem_river(board=Ks7d2c9h4s, range0="AA,KK,AKs,72o", range1="QQ+,AK,97s", bets=(1,allin))',
     ["", "check", "bet 1", "check bet 1", "bet 1 raise 1"]),
    ('holdem_turn(board=Ks7d2c9h, range0="AA,K7s", range1="99,AKs", bets=(1,), cap=1)',
     ["", "check", "check check/", "bet 1 call/check"]),
])
def test_hand_grid_equals_a_walk_of_the_tree(spec, lines):
    g = games.make(spec)
    table = random_table(g, seed=1)
    visits = []  # (infoset key, reach) of every decision node
    walk(g, table, lambda s, key, reach: visits.append((key, reach)))
    for at in lines:
        player, actions, freq = hand_grid(g, table, at)
        num, den = np.zeros((13, 13, len(actions))), np.zeros((13, 13))
        for key, reach in visits:
            hand, _, line = key.split("|")
            if line == at:
                cell = _hand_class(hand)
                num[cell] += reach * np.array([table[key][a] for a in actions])
                den[cell] += reach
        expected = np.where(den[..., None] > 0, num / np.where(den > 0, den, 1)[..., None], np.nan)
        np.testing.assert_allclose(freq, expected, rtol=1e-10, atol=1e-12, err_msg=at)
        assert np.isfinite(freq[..., 0]).sum() >= 2


def test_plot_strategy_draws_each_kind_and_refuses_bad_input(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    spot = 'holdem_river(board=Ks7d2c9h4s, range0="AA,KK,AKs", range1="QQ+,AK", bets=(1,allin))'
    for name, game, extra in [("kuhn", "kuhn", []), ("dice", "liars_dice(faces=3)", []), ("spot", spot, ["--at", "check"]),
                              ("leduc", "leduc", ["--match", "^K"])]:
        policy = tmp_path / f"{name}.json"
        r = cli("solve", game, "--iterations", "50", "--no-log", "--quiet", "--save-policy", str(policy))
        assert r.returncode == 0, r.stderr
        out = tmp_path / f"{name}.png"
        r = cli("plot-strategy", game, str(policy), "--out", str(out), *extra)
        assert r.returncode == 0 and r.stdout.strip() == str(out), r.stderr
        img = imread(str(out))[..., :3]  # not blank: many colours, not one
        assert img.shape[0] > 200 and img.std() > 0.05 and len(np.unique(img.reshape(-1, 3), axis=0)) > 20
    bad = [(["kuhn", str(tmp_path / "leduc.json")], "is a policy of leduc, not of kuhn"),
           ([spot, str(tmp_path / "spot.json"), "--at", "check raise 7"], "is not a betting line"),
           (["leduc", str(tmp_path / "leduc.json"), "--match", "(["], "is not a regular expression"),
           (["leduc", str(tmp_path / "leduc.json"), "--match", "^nothing"], "no infoset key matches")]
    for args, message in bad:
        r = cli("plot-strategy", *args, "--out", str(tmp_path / "bad.png"))
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert json.loads((tmp_path / "kuhn.json").read_text())["game"] == "kuhn"
