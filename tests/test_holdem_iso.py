"""Hold'em's suit isomorphism (`suit_isomorphism=True`): the public-tree form deals one card of
each class of suits that the board and both ranges leave alike, and the class's other cards
reach the parent as that card's subtree with two suits traded. Held to the full public tree:
the same sizes, best responses, NashConv and game value at every iteration, and each infoset
of the full tree playing what its twin plays, at float64, under regret matching, discounting
and FTRL (whose dilated-entropy weights count the twins' subtrees)."""

import functools

import numpy as np
import pytest
import torch

import tensorcfr
from tensorcfr import games
from tensorcfr.errors import TensorCFRError
from tensorcfr.games.cards import HANDS, card_name, hand_name, suit_swap

ISO = {
    # clubs and spades absent from the flop: a turn card in spades deals its club twin's subtree
    "flop, two suits free": "holdem_flop(board=AdKdQh, pot=4, stack=6, bets=(1,), cap=1, ranks=AKQJ, "
                            "suit_isomorphism=True)",
    # three suits alike on the flop, two on the turn
    "monotone flop": "holdem_flop(board=AdKdQd, pot=4, stack=8, bets=(1,), cap=1, ranks=AKQ, suit_isomorphism=True)",
    "turn": "holdem_turn(board=AdKdQhJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJT, suit_isomorphism=True)",
    # hearts and diamonds hold the aces, clubs and spades the kings: two classes of two
    "paired turn": "holdem_turn(board=AhAdKcKs, pot=4, stack=6, bets=(1,), cap=1, ranks=AKQJT, suit_isomorphism=True)",
}


def _full(spec: str) -> str:
    return spec.replace(", suit_isomorphism=True", "")


@functools.lru_cache(maxsize=None)
def _compiled(spec: str):
    """The public form of `spec`, compiled once for the tests of this module (a flop's takes seconds)."""
    return tensorcfr.compile(spec, form="public")


def _solver(spec: str, algo: str, **opts):
    return tensorcfr.Solver(_compiled(spec), algo, dtype=torch.float64, **opts)


def test_suit_swap_trades_two_suits_and_is_its_own_inverse():
    for a in range(4):
        for b in range(a + 1, 4):
            perm = suit_swap(a, b)
            assert np.array_equal(perm[perm], np.arange(len(HANDS)))
            for h in (0, 77, 1325):
                want = sorted(c - a + b if c % 4 == a else c - b + a if c % 4 == b else c for c in HANDS[h])
                assert HANDS[perm[h]].tolist() == want, (card_name(int(HANDS[h][0])), hand_name(h))


@pytest.mark.parametrize("spec", list(ISO.values()), ids=list(ISO))
def test_the_counts_are_the_full_trees_on_fewer_public_nodes(spec):
    a, b = _compiled(spec).counts, _compiled(_full(spec)).counts
    assert a["public_nodes"] < b["public_nodes"]
    assert {k: v for k, v in a.items() if k != "public_nodes"} == {k: v for k, v in b.items() if k != "public_nodes"}


@pytest.mark.parametrize("spec", list(ISO.values()), ids=list(ISO))
def test_the_size_hint_counts_the_kept_tree(spec):
    """What the memory estimate reads before a build: the public nodes and payoff classes the
    isomorphic tree keeps, exactly."""
    g, sizes = games.make(spec), _compiled(spec).sizes()
    public, types, dense, factors, _ = g.public_size_hint()
    assert (public, types) == (sizes["public_nodes"], tuple(sizes["types"]))
    assert (dense, factors) == (sizes["payoff_classes"] * types[0] * types[1], sizes["payoff_classes"] * sum(types))
    assert g.size_hint() == (sizes["histories"], True)  # the histories are the full game's


def _tables(solver) -> tuple[dict, dict]:
    return solver.current_policy().to_dict(), solver.average_policy().to_dict()


# The twins' values reach their parents in another order than the full tree's sums, so the two
# differ by rounding; FTRL, whose update is smooth, keeps that at 1e-15. Regret matching meets
# regrets that are exactly 0 in exact arithmetic (an all-in and a check of equal value), left at
# 0 or at 1e-17 by either order, and plays all in or checks by that: the tolerance that reads
# rounding-sized regrets as the ties they are (as tests/test_forms.py does between the forms)
TOL = {"ftrl": 1e-12, "cfr+": 1e-10, "dcfr": 1e-10}


@pytest.mark.parametrize("algo", list(TOL))
@pytest.mark.parametrize("spec", list(ISO.values()), ids=list(ISO))
def test_every_iteration_is_the_full_trees(spec, algo):
    opts = {} if algo == "ftrl" else {"regret_tolerance": 1e-12}
    iso, full = (_solver(s, algo, **opts) for s in (spec, _full(spec)))
    game = games.make(spec)
    for t in range(1, 5):
        iso.step()
        full.step()
        ea, eb = iso.evaluate(), full.evaluate()
        for which in ("current", "average"):
            a, b = ea[which], eb[which]
            for x, y, what in ((a.nash_conv, b.nash_conv, "NashConv"), (a.game_value, b.game_value, "game value"),
                               (a.best_response[0], b.best_response[0], "best response 0"),
                               (a.best_response[1], b.best_response[1], "best response 1")):
                assert float(x[0]) == pytest.approx(float(y[0]), abs=TOL[algo]), (which, what, t)
    if algo != "cfr+":
        return
    # each infoset of the full tree plays what its twin, the infoset kept, plays
    for mine, theirs in zip(_tables(iso), _tables(full)):
        assert len(mine) < len(theirs)
        twins = 0
        for key, probs in theirs.items():
            twin = game.canonical_key(key)
            twins += twin != key
            assert mine[twin] == pytest.approx(probs, abs=100 * TOL[algo]), (key, twin)
        assert twins > 0


@pytest.mark.parametrize("spec", list(ISO.values()), ids=list(ISO))
def test_the_weighted_dot_is_the_dot_with_the_sequence_weights(spec, monkeypatch):
    """The game value's sum (`weighted_dot`, a block of rows at a time from each row's weight)
    equals the plain sum of x times the [1, S] weights times g, with blocks of one row and of
    all rows, and each row's weight is its sequences'."""
    import tensorcfr.spaces.treeplex as treeplex

    tp = _compiled(spec).treeplexes[0]
    w, rows = tp.sequence_weights(torch.float64), tp.row_weights(torch.float64)
    assert rows is not None and rows.max() > 1  # some sequence stands for twins
    assert torch.equal(w[0, 0], rows[0]) and torch.equal(tp.rows(w)[0], rows[1:, None].expand(-1, tp.types))
    gen = torch.Generator().manual_seed(7)
    x, g = (torch.rand(2, tp.num_sequences, generator=gen, dtype=torch.float64) for _ in range(2))
    want = (x * w * g).sum(1)
    for chunk in (tp.types, treeplex.DOT_CHUNK):
        monkeypatch.setattr(treeplex, "DOT_CHUNK", chunk)
        assert torch.allclose(tp.weighted_dot(x, g), want, rtol=1e-13, atol=0)
        assert torch.allclose(tp.weighted_dot(x[:1], g), (x[:1] * w * g).sum(1), rtol=1e-13, atol=0)


def test_a_range_that_tells_suits_apart_keeps_every_card():
    spec = ISO["turn"].replace("ranks=AKQJT", "ranks=AKQJT, range0='AcKc,AsKs:0.5,QQ,JJ'")
    assert not games.make(spec).swaps  # clubs and spades differ in player 0's range
    assert _compiled(spec).counts == _compiled(_full(spec)).counts


def test_a_symmetric_range_with_weights_keeps_its_classes():
    spec = ISO["turn"].replace("ranks=AKQJT", "ranks=AKQJT, range0='AcKc,AsKs,QQ:0.5,JJ'")
    assert list(games.make(spec).swaps) == [(0, 3)]
    assert _compiled(spec).counts["public_nodes"] < _compiled(_full(spec)).counts["public_nodes"]
    iso, full = (_solver(s, "ftrl") for s in (spec, _full(spec)))
    iso.step(3)
    full.step(3)
    assert float(iso.evaluate()["average"].nash_conv[0]) == pytest.approx(
        float(full.evaluate()["average"].nash_conv[0]), abs=1e-12)


def test_the_canonical_key_trades_suits_street_by_street():
    spec = ISO["flop, two suits free"]
    g = games.make(spec)
    # the turn Js deals Jc's subtree, clubs and spades traded from there on: the river Qs reads
    # as Qc; with Jc on the board clubs and spades differ, so no class trades them again
    assert g.canonical_key("AsKs|AdKdQh/Js/Qs|check check/check check/check") == \
        "AcKc|AdKdQh/Jc/Qc|check check/check check/check"
    assert g.canonical_key("AsKs|AdKdQh/Jc/Qs|check check/check check/check") == \
        "AsKs|AdKdQh/Jc/Qs|check check/check check/check"
    # the turn Jh is a class of its own (hearts hold the queen); then clubs and spades trade
    assert g.canonical_key("AsKs|AdKdQh/Jh/Qs|check check/check check/check") == \
        "AcKc|AdKdQh/Jh/Qc|check check/check check/check"
    assert g.canonical_key("AsKs|AdKdQh|check") == "AsKs|AdKdQh|check"  # the flop: nothing dealt yet
    cg = _compiled(spec)
    keys = set(cg.treeplexes[1].infoset_keys)
    assert "AcKc|AdKdQh/Jc/Qc|check check/check check/check" in keys
    assert "AsKs|AdKdQh/Js/Qs|check check/check check/check" not in keys
    # a strategy is read at a key the public form does not keep, through its twin
    pol = tensorcfr.Policy.uniform(cg)
    assert pol.infoset("AsKs|AdKdQh/Js/Qs|check check/check check/check") == {"check": 0.5, "bet 1": 0.5}


def test_the_hand_grid_is_the_full_trees():
    from tensorcfr.cli.strategy import hand_grid

    spec = ISO["flop, two suits free"]
    grids = []
    for s in (spec, _full(spec)):
        solver = _solver(s, "ftrl")  # smooth: no rounding-sized regret flips an action (see TOL)
        solver.step(10)
        grids.append(hand_grid(games.make(s), solver.average_policy().to_dict(), "check check/check check/check")[2])
    assert np.isnan(grids[0]).sum() == np.isnan(grids[1]).sum() < grids[0].size
    np.testing.assert_allclose(grids[0], grids[1], atol=1e-12)


def test_sampling_an_isomorphic_spot_is_refused_in_one_line():
    with pytest.raises(TensorCFRError, match="suit_isomorphism=True is not supported") as e:
        tensorcfr.Solver(ISO["turn"], "cfr+", form="public", sampling="chance").step()
    assert "\n" not in str(e.value)


def test_a_bad_suit_isomorphism_is_named():
    with pytest.raises(games.GameError, match="suit_isomorphism must be True or False"):
        games.make("holdem_turn(board=AdKdQhJh, suit_isomorphism=1)")


def test_the_generic_form_solves_the_full_game():
    """The generic form ignores the hint: it walks every card, as the full spot's public form
    counts them (held to the generic form's sizes in tests/test_forms.py)."""
    spec = ISO["monotone flop"]
    a = tensorcfr.compile(spec, form="generic", cache=False)
    assert a.num_histories == _compiled(_full(spec)).counts["histories"]


def test_a_batch_on_boards_of_their_own_is_refused_in_one_line():
    other = ISO["turn"].replace("AdKdQhJh", "AdKcQhJs")  # four suits told apart: no class
    with pytest.raises(TensorCFRError, match="boards of their own") as e:
        tensorcfr.compile([ISO["turn"], other], form="public")
    assert "\n" not in str(e.value)


def test_a_batch_of_isomorphic_spots_solves_as_each_alone():
    specs = [ISO["turn"], ISO["turn"].replace("pot=4", "pot=5")]
    batch = tensorcfr.Solver(tensorcfr.compile(specs, form="public"), "cfr+", dtype=torch.float64)
    batch.step(4)
    ev = batch.evaluate()["average"]
    for b, spec in enumerate(specs):
        alone = tensorcfr.Solver(spec, "cfr+", dtype="float64", form="public")
        alone.step(4)
        assert float(ev.nash_conv[b]) == pytest.approx(float(alone.evaluate()["average"].nash_conv[0]), abs=1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("split", ["columns", "rows"])
def test_the_compiled_regret_walk_adds_the_twins_as_torchs_passes(split, dtype, monkeypatch):
    """The regret walk of `spaces/public_loop.py` (each mirrored infoset's values kept, then
    added permuted into the parents after its level) against torch's passes: the threads
    splitting the columns (two threads), or the rows (one thread, as poker's trees take it). On the
    CPU by name: the walk is the CPU's (on CUDA both runs took torch's passes, whose atomics left a
    float32 regret on either side of 0 and a strategy 0.5 apart, H100, 2026-11-27)."""
    from tensorcfr.spaces import public_loop

    if public_loop._library() is None:
        pytest.skip("no C compiler for the compiled loops")
    spec = ISO["flop, two suits free"]
    if split == "rows":
        monkeypatch.setattr(public_loop, "MIN_TYPES", 1 << 30)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        runs = []
        for least in (0, 1 << 62):  # the walk from the first entry, or never
            monkeypatch.setattr(public_loop, "LOOP_ENTRIES", least)
            solver = tensorcfr.Solver(_compiled(spec), "dcfr", dtype=dtype, regret_tolerance=0, device="cpu")
            solver.step(4)
            runs.append([r.clone() for r in solver.regrets] + [s.clone() for s in solver.sigma])
    finally:
        torch.set_num_threads(threads)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    for a, b in zip(*runs):
        scale = float(b.abs().max())
        assert float((a - b).abs().max()) <= tol * max(scale, 1.0)


def test_play_reads_a_twins_strategy_and_the_exact_value_weighs_the_twins():
    from tensorcfr.cli.play import exact_value, simulate

    spec = ISO["flop, two suits free"]
    game = games.make(spec)
    solver = _solver(spec, "ftrl")  # smooth: twins' strategies stay equal to rounding (see TOL)
    solver.step(5)
    a = solver.average_policy().to_dict()
    b = tensorcfr.Policy.uniform(_compiled(spec)).to_dict()
    exact = exact_value(_compiled(spec), a, b)
    keys = list(tensorcfr.Policy.uniform(_compiled(_full(spec))).to_dict())
    lifted = [{k: t[game.canonical_key(k)] for k in keys} for t in (a, b)]  # each full key plays its twin's
    assert exact == pytest.approx(exact_value(_compiled(_full(spec)), *lifted), abs=1e-12)
    # a spade dealt on the turn reaches keys the tree keeps through their twins only
    out = simulate(spec, a, b, games=1000, seed=1)
    assert abs(out["mean"] - exact) <= 4 * out["std_error"]


def test_infoset_gaps_sum_to_nashconv_with_each_kept_infoset_holding_its_twins():
    from tensorcfr.evaluation import infoset_gaps

    spec = ISO["turn"]
    solver = _solver(spec, "ftrl")
    solver.step(3)
    pol = solver.average_policy()
    gaps, ev = infoset_gaps(solver.game, pol), tensorcfr.evaluate(solver.game, pol)
    assert min(g.min().item() for g in gaps) >= -1e-12
    assert (gaps[0].sum() + gaps[1].sum()).item() == pytest.approx(ev.nash_conv.item(), abs=1e-12)
    # the evaluation's own gaps (what a logged run's histograms take) are these, bit for bit on
    # the CPU; on CUDA to rounding (the rows' scatter-adds are atomics: an H200 gave other bits)
    from exact import same

    device = gaps[0].device.type
    assert all(same(a, b, device) for a, b in zip(solver.evaluate(infoset_gaps=True)["average"].infoset_gaps, gaps))


@pytest.mark.parametrize("name", ["turn", "paired turn"])
def test_parent_reach_and_infoset_weights_equal_their_whole_array_forms(name):
    # the evaluation's histograms read each infoset's parent reach by a gather of the plan's rows
    # and each infoset's twins' count from its first row: the same numbers as a plan with the
    # empty sequence in front (the gather it replaced) and as each infoset's sum of its
    # sequences' weights times a strategy (what it was)
    gen = torch.Generator().manual_seed(5)
    for tp in _compiled(ISO[name]).treeplexes:
        sigma = tp.normalize(torch.rand(2, tp.num_sequences, generator=gen, dtype=torch.float64))
        x = tp.sequence_form(sigma)
        ext = torch.cat([x[:, :1, None].expand(2, 1, tp.types), tp.rows(x)], 1)  # [B, 1 + M, T]
        assert torch.equal(tp.parent_reach(x), ext.index_select(1, tp.infoset_parent_pub).reshape(2, -1))
        w = tp.infoset_weights(torch.float64)
        assert w.shape == (1, tp.num_infosets) and float(w.max()) > 1  # some infosets stand for twins
        torch.testing.assert_close(w.expand(2, -1), tp.segment_sum(tp.sequence_weights(torch.float64) * sigma),
                                   rtol=1e-15, atol=0)
