"""Evaluation against known values and against brute force over pure strategies."""

import itertools
import math
import random
import weakref

import pytest
import torch

from tensorcfr import games
import tensorcfr
from oracle import expected_value


def random_policy(cg, seed):
    rng = random.Random(seed)
    table = {}
    for tp in cg.treeplexes:
        for key, acts in zip(tp.infoset_keys, tp.action_names):
            w = [rng.random() ** 2 for _ in acts]
            table[key] = {a: x / sum(w) for a, x in zip(acts, w)}
    return table


def brute_force_best_response(game, cg, table, player):
    """max over the player's pure strategies of its expected payoff, by enumeration."""
    tp = cg.treeplexes[player]
    best = -math.inf
    for choice in itertools.product(*tp.action_names):
        pure = dict(table)
        for key, acts, a in zip(tp.infoset_keys, tp.action_names, choice):
            pure[key] = {b: float(a == b) for b in acts}
        v = expected_value(game, pure)
        best = max(best, v if player == 0 else -v)
    return best


def test_uniform_nash_conv_known_values(device):
    for spec, value in [("kuhn", 11 / 12), ("leduc", 4.747222222222222)]:
        cg = tensorcfr.compile(spec).to(device)
        assert tensorcfr.evaluate(cg, tensorcfr.Policy.uniform(cg)).nash_conv.item() == pytest.approx(value, abs=1e-12)


def small_random_specs():
    out = []
    for seed in range(40):
        spec = f"random(seed={seed},max_depth=5)"
        cg = tensorcfr.compile(spec)
        sizes = [math.prod(len(a) for a in tp.action_names) for tp in cg.treeplexes]
        if max(sizes) <= 2048 and min(tp.num_infosets for tp in cg.treeplexes) >= 2:
            out.append(spec)
    return out[:8]


SMALL_RANDOM = small_random_specs()


def test_enough_small_random_games_for_brute_force():
    assert len(SMALL_RANDOM) == 8


@pytest.mark.parametrize("spec", ["kuhn"] + SMALL_RANDOM)
def test_best_response_equals_brute_force(spec, device):
    game = games.make(spec)
    cg = tensorcfr.compile(spec).to(device)
    for seed in range(3):
        table = random_policy(cg, seed)
        ev = tensorcfr.evaluate(cg, tensorcfr.Policy.from_dict(cg, table))
        for p in (0, 1):
            assert ev.best_response[p].item() == pytest.approx(brute_force_best_response(game, cg, table, p), abs=1e-12)
        assert ev.game_value.item() == pytest.approx(expected_value(game, table), abs=1e-12)
        assert ev.exploitability.item() == pytest.approx(ev.nash_conv.item() / 2)


def test_policy_dict_round_trip_and_errors():
    cg = tensorcfr.compile("kuhn")
    table = random_policy(cg, 1)
    back = tensorcfr.Policy.from_dict(cg, table).to_dict()
    assert all(abs(back[k][a] - table[k][a]) < 1e-12 for k in table for a in table[k])
    missing = {k: v for k, v in table.items() if k != "Q:pb"}
    with pytest.raises(tensorcfr.TensorCFRError, match="infoset 'Q:pb' is missing"):
        tensorcfr.Policy.from_dict(cg, missing)
    with pytest.raises(tensorcfr.TensorCFRError, match=r"infoset 'J:' has actions \['bet', 'fold'\]"):
        tensorcfr.Policy.from_dict(cg, {**table, "J:": {"fold": 0.5, "bet": 0.5}})
    with pytest.raises(tensorcfr.TensorCFRError, match="do not sum to 1"):
        tensorcfr.Policy.from_dict(cg, {**table, "J:": {"pass": 0.7, "bet": 0.7}})
    with pytest.raises(tensorcfr.TensorCFRError, match="unknown infosets"):
        tensorcfr.Policy.from_dict(cg, {**table, "X:": {"pass": 1.0}})


@pytest.mark.parametrize("form", ["generic", "public"])
def test_an_evaluation_keeps_no_solver_sized_memory(form):
    # its numbers are [B] tensors of their own, not views of a [B, S] array of values (which,
    # on Dudo(6,2,2), would keep 1.4 GB a number alive)
    s = tensorcfr.Solver(tensorcfr.compile("leduc", form=form), "cfr")
    s.step(3)
    for ev in s.evaluate().values():
        for t in (*ev.best_response, ev.nash_conv, ev.game_value):
            assert t.untyped_storage().nbytes() == t.numel() * t.element_size()


@pytest.mark.parametrize("form", ["generic", "public"])
def test_an_evaluation_holds_one_plan_and_one_values_array_at_a_time(form):
    """`evaluate_plan_list` makes player 0's plan, player 1's values from it, then drops the
    plan before player 1's plan is made, and player 1's values before player 0's are made (a
    flop spot's evaluation peaked 1.1 GB over its solver's state at float32 with both plans and
    a values array alive at once); its numbers are `evaluate_plans`' with both plans given."""
    from tensorcfr.evaluation import evaluate_plan_list, evaluate_plans, infoset_gaps

    cg = tensorcfr.compile("leduc", form=form)
    policy = tensorcfr.Policy.from_dict(cg, random_policy(tensorcfr.compile("leduc"), 5))
    refs, seen = {}, []

    def plan(p):
        refs[f"plan {p}"] = weakref.ref(t := cg.treeplexes[p].sequence_form(policy.sigma[p]))
        return t

    class Watched:
        def __init__(self, op):
            self.op = op

        def cfv(self, p, other, out=None):
            seen.append((p, sorted(k for k, r in refs.items() if r() is not None)))
            refs[f"values {p}"] = weakref.ref(g := self.op.cfv(p, other, out=out))
            return g

    ev = evaluate_plan_list(cg, [lambda: plan(0), lambda: plan(1)], Watched(cg.operator(torch.float64)))
    assert seen == [(1, ["plan 0"]), (0, ["plan 1"])]
    want = evaluate_plans(cg, *policy.sequence_form())
    for a, b in ((ev.nash_conv, want.nash_conv), (ev.game_value, want.game_value), *zip(ev.best_response,
                                                                                          want.best_response)):
        assert a.item() == pytest.approx(b.item(), abs=1e-13)
    # with the gaps, which need a player's plan beside its values: player 0 first, each plan made
    # when it is needed (y twice), still never both plans beside a values array (the isomorphic
    # flop spot's evaluation with gaps took 958 MB over its iteration's peak with x alive to the
    # end, 588 after); the numbers are those without the gaps and the gaps those on their own
    refs.clear()
    seen.clear()
    ev_gaps = evaluate_plan_list(cg, [lambda: plan(0), lambda: plan(1)], Watched(cg.operator(torch.float64)), gaps=True)
    assert seen == [(0, ["plan 1"]), (1, ["plan 0"])]
    assert refs["values 0"]() is None and refs["plan 0"]() is None and refs["plan 1"]() is None
    for a, b in ((ev_gaps.nash_conv, ev.nash_conv), (ev_gaps.game_value, ev.game_value),
                 *zip(ev_gaps.best_response, ev.best_response)):
        assert torch.equal(a, b)
    alone = infoset_gaps(cg, policy)
    assert all(torch.equal(a, b) for a, b in zip(ev_gaps.infoset_gaps, alone))


@pytest.mark.parametrize("entries", [1, 40, 1 << 22])
@pytest.mark.parametrize("spec", ["leduc", ["kuhn", "kuhn(ante=2)"]])
@pytest.mark.parametrize("form", ["generic", "public"])
def test_the_gaps_a_stretch_at_a_time_are_the_whole_arrays(monkeypatch, entries, spec, form):
    # each form's `infoset_gaps` gathers the parent reach and sums the sequences' products a
    # stretch of infosets at a time (`GAP_ENTRIES` entries): the numbers of the whole-array
    # formula x[parent(j)] v_j - sum_a x(j, a) q(j, a), on a batch of games too
    from tensorcfr.spaces import public, treeplex

    monkeypatch.setattr(public, "GAP_ENTRIES", entries)
    monkeypatch.setattr(treeplex, "GAP_ENTRIES", entries)
    cg = tensorcfr.compile(spec, form=form)
    generic = tensorcfr.compile(spec if isinstance(spec, str) else spec[0])
    plans = tensorcfr.Policy.from_dict(cg, random_policy(generic, 3)).sequence_form()
    op = cg.operator(torch.float64)
    for p, tp in enumerate(cg.treeplexes):
        x = plans[p]
        q, v = tp.bottom_up(op.cfv(p, plans[1 - p]))  # a best response's values
        want = tp.parent_reach(x) * v - tp.segment_sum(q * x)
        got = tp.infoset_gaps(q.clone(), v.clone(), x)
        assert got.shape == want.shape == (cg.batch_size, tp.num_infosets)
        torch.testing.assert_close(got, want, rtol=1e-14, atol=1e-14)
        assert float(want.abs().max()) > 0.01  # (gaps to hold: a random strategy's are not all 0)


@pytest.mark.parametrize("form", ["generic", "public"])
def test_a_policy_of_one_member_is_evaluated_on_every_game_of_a_batch(form):
    # a policy of one member (a file's, `Policy.uniform`'s) on a batch of games gives each game's
    # own figures, as on the game alone: the generic form's sparse products read member 0's payoff
    # only, and the batch's evaluation was the first game's alone
    specs = ["kuhn", "kuhn(ante=2)", "kuhn(ante=3)"]
    cg = tensorcfr.compile(specs, form=form)
    table = random_policy(tensorcfr.compile("kuhn"), 4)
    policy = tensorcfr.Policy.from_dict(cg, table)
    assert policy.sigma[0].shape[0] == 1
    ev = tensorcfr.evaluate(cg, policy)
    assert ev.nash_conv.shape == (3,)
    for b, spec in enumerate(specs):
        solo = tensorcfr.compile(spec, form=form)
        want = tensorcfr.evaluate(solo, tensorcfr.Policy.from_dict(solo, table))
        for f in ("nash_conv", "game_value"):
            assert getattr(ev, f)[b].item() == pytest.approx(getattr(want, f).item(), abs=1e-12), (spec, f)
    assert len({round(float(v), 9) for v in ev.nash_conv}) == 3  # (three games, three figures)
