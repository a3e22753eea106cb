"""Monte-Carlo CFR on tensors (`tensorcfr.sampling`): the chance tree, unbiased estimates (exactly,
by enumerating every deal and pure strategy, and statistically), the same regrets as a plainly
recursive MCCFR fed the same draws, convergence, reproducible resume, clear errors."""

from __future__ import annotations

import itertools
import json

import pytest
import torch

from tensorcfr import games
import tensorcfr
from mccfr_oracle import RecursiveMCCFR
from tensorcfr.errors import TensorCFRError
from tensorcfr.operators.payoff import PayoffOperator
from tensorcfr.spaces import treeplex
from draws import FixedDraws, per_sample
from tensorcfr.sampling.generic import Estimator, RandomDraws, ranges

RANDOM = ["random(seed=3)", "random(seed=11)", "random(seed=29)"]


def random_profile(cg, seed, dtype=torch.float64, device="cpu"):
    """A random behavioural strategy per player [1, S_p] (column 0 = 1) and its plan."""
    g = torch.Generator().manual_seed(seed)
    sigma = []
    for tp in cg.treeplexes:
        w = torch.rand(1, tp.num_sequences, generator=g, dtype=dtype) + 0.05
        s = tp.normalize(w.to(device))
        s[:, 0] = 1
        sigma.append(s)
    return sigma, [tp.sequence_form(s) for tp, s in zip(cg.treeplexes, sigma)]


def deals(ct):
    """Every outcome of the chance draws: [(probability, {class: uniform})], by recursion over
    the drawn classes. A class's nodes share one uniform, so its cells are those between the
    cumulative probabilities of all its nodes; a uniform in the middle of a cell stands for it."""
    def expand(pending):
        if not pending:
            yield 1.0, {}
            return
        c, rest = pending[0], pending[1:]
        nodes = range(int(ct.class_nodes[c]), int(ct.class_nodes[c + 1]))
        if not nodes:
            yield from expand(rest)
            return
        cuts = sorted({0.0, 1.0} | {float(ct.cum_prob[o]) for j in nodes
                                     for o in range(int(ct.node_first[j]), int(ct.node_first[j] + ct.node_count[j]) - 1)})
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            if hi - lo <= 0:
                continue
            u = (lo + hi) / 2
            children = []
            for j in nodes:
                first, n = int(ct.node_first[j]), int(ct.node_count[j])
                i = next((i for i in range(n - 1) if u < float(ct.cum_prob[first + i])), n - 1)
                children.append(first + i)
            for pr, us in expand(rest + children):
                yield (hi - lo) * pr, {c: u, **us}
    return list(expand([0]))


def fixed_chance(ct, us: dict) -> torch.Tensor:
    table = torch.full((1, ct.num_classes), 0.5, dtype=torch.float64)
    for c, u in us.items():
        table[0, c] = u
    return table


@pytest.mark.parametrize("game", ["kuhn", "leduc", "dudo(4,1,1)", "liars_dice(faces=3)", *RANDOM])
def test_chance_tree_same_from_both_walks_and_sums_to_the_payoff_matrix(game):
    g = games.make(game)
    methods = ["per-node"] + (["vectorized"] if tensorcfr.compiler.vector_form(g) is not None else [])
    trees = [tensorcfr.compile(game, chance=True, method=m) for m in methods]
    for cg in trees[1:]:
        for f in ("class_parent", "class_prob", "class_nodes", "node_class", "node_first", "node_count",
                  "class_entries", "payoff_seq", "payoff"):
            assert torch.equal(getattr(cg.chance, f), getattr(trees[0].chance, f)), f
    cg = trees[0]
    ct = cg.chance
    # each entry's utility times its class's chance probability, summed per (s0, s1): the payoff matrix
    cls = torch.repeat_interleave(torch.arange(ct.num_classes), ct.class_entries.diff())
    s1 = cg.treeplexes[1].num_sequences
    got = torch.zeros(cg.treeplexes[0].num_sequences * s1, dtype=torch.float64)
    got.index_add_(0, ct.payoff_seq[0] * s1 + ct.payoff_seq[1], ct.payoff[0] * ct.reach[cls])
    want = torch.zeros_like(got)
    want[cg.payoff_seq[0].long() * s1 + cg.payoff_seq[1].long()] = cg.payoff[0]
    assert torch.allclose(got, want, rtol=0, atol=1e-12)
    # every chance node's outcomes sum to 1
    last = ct.cum_prob[ct.node_first + ct.node_count - 1]
    assert torch.allclose(last, torch.ones(ct.num_chance_nodes, dtype=torch.float64))


@pytest.mark.parametrize("game", ["kuhn", "leduc", *RANDOM])
def test_chance_sampling_averaged_over_every_deal_is_exact(game, device):
    cg = tensorcfr.compile(game, chance=True).to(device)
    est = Estimator(cg, "chance", samples=1)
    op = PayoffOperator.of(cg, torch.float64)
    sigma, xs = random_profile(cg, seed=5, device=device)
    outcomes = deals(cg.chance)
    assert sum(pr for pr, _ in outcomes) == pytest.approx(1.0, abs=1e-12)
    if game == "leduc":
        assert len(outcomes) == 120  # 6 x 5 cards dealt, then one of the 4 left on the board
    for p in (0, 1):
        mean = sum(pr * est.values(p, sigma, xs, FixedDraws(fixed_chance(cg.chance, us)))[0] for pr, us in outcomes)
        assert torch.allclose(mean, op.cfv(p, xs[1 - p]), rtol=0, atol=1e-12)


def test_external_sampling_averaged_over_every_deal_and_pure_strategy_is_exact(device):
    cg = tensorcfr.compile("kuhn", chance=True).to(device)
    est = Estimator(cg, "external", samples=1)
    op = PayoffOperator.of(cg, torch.float64)
    sigma, xs = random_profile(cg, seed=2, device=device)
    outcomes = deals(cg.chance)
    for p in (0, 1):
        tp = cg.treeplexes[1 - p]
        probs = [sigma[1 - p][0, int(tp.infoset_offsets[i]):int(tp.infoset_offsets[i + 1])].tolist()
                 for i in range(tp.num_infosets)]
        mean = 0
        for choice in itertools.product(*[range(len(pr)) for pr in probs]):  # 2^6 pure strategies
            weight, u = 1.0, []
            for pr, a in zip(probs, choice):
                weight *= pr[a]
                u.append(sum(pr[:a]) + pr[a] / 2)  # inside action a's interval
            player_u = [None, None]
            player_u[1 - p] = torch.tensor(u, dtype=torch.float64).reshape(1, 1, -1)
            for pr_deal, us in outcomes:
                g, avg = est.values(p, sigma, xs, FixedDraws(fixed_chance(cg.chance, us), player_u))
                mean = mean + weight * pr_deal * g
        assert torch.allclose(mean, op.cfv(p, xs[1 - p]), rtol=0, atol=1e-12)
        assert torch.equal(avg, xs[p])  # external sampling averages the exact plan


@pytest.mark.parametrize("scheme", ["chance", "external", "outcome"])
@pytest.mark.parametrize("game", ["leduc", *RANDOM])
def test_mean_of_20000_estimates_is_within_5_standard_errors(game, scheme):
    cg = tensorcfr.compile(game, chance=True)
    op = PayoffOperator.of(cg, torch.float64)
    sigma, xs = random_profile(cg, seed=7)
    chunk, n = 5000, 20000
    est = Estimator(cg, scheme, samples=chunk, pooled=False)
    draws = RandomDraws(seed=13)
    for p in (0, 1):
        total = sq = 0
        avg_total = 0
        for _ in range(n // chunk):
            each, avg = per_sample(est, p, sigma, xs, draws)  # [1, K, S_p] both
            total = total + each.sum(1)[0]
            sq = sq + (each ** 2).sum(1)[0]
            avg_total = avg_total + avg.sum(1)[0]
        mean = total / n
        exact = op.cfv(p, xs[1 - p])[0]
        checked = torch.ones_like(exact, dtype=torch.bool)
        if scheme == "outcome":
            # Outcome sampling reaches one terminal per sample, so a sequence's estimate is
            # nonzero with a probability known in closed form, P(s) = sum over s's entries of
            # reach(class) y(other's sequence) x'(s). On Leduc 951 of its 1,074 sequences expect
            # fewer than 25 of 20,000 samples: there the mean is a Poisson count, not normal,
            # and 5 SE means nothing (their unbiasedness is what the exact test on Kuhn checks).
            ct = cg.chance
            cls = torch.repeat_interleave(torch.arange(ct.num_classes), ct.class_entries.diff())
            x_mixed = cg.treeplexes[p].sequence_form(est.exploring(p, sigma[p]))[0]
            hit = torch.zeros_like(exact).index_add_(
                0, ct.payoff_seq[p], ct.reach[cls] * xs[1 - p][0, ct.payoff_seq[1 - p]]) * x_mixed
            checked = n * hit >= 25
            assert int(checked.sum()) >= min(100, int((hit > 0).sum()) // 2)
        se = ((sq / n - mean ** 2).clamp(min=0) / (n - 1)).sqrt()
        err = (mean - exact).abs()
        bad = checked & (err > 5 * se + 1e-12)
        assert not bool(bad.any()), f"player {p}: worst {float((err / (se + 1e-300))[checked].max()):.1f} SE"
        assert bool((se > 0).any())  # the estimates do vary
        if scheme == "outcome":  # the stochastically weighted average estimates the plan
            assert torch.allclose(avg_total / n, xs[p][0], atol=0.05)


@pytest.mark.parametrize("algo,plus", [("cfr", False), ("cfr+", True)])
@pytest.mark.parametrize("scheme", ["external", "outcome"])
@pytest.mark.parametrize("game", ["kuhn", "random(seed=11)"])
def test_regrets_equal_a_recursive_mccfr_fed_the_same_draws(game, scheme, algo, plus, device):
    s = tensorcfr.Solver(game, algo, device=device, sampling=scheme, samples=1, seed=4, updates="alternating")
    log = s.draws.log = []
    oracle = RecursiveMCCFR(games.make(game), scheme, plus=plus, epsilon=s.estimator.epsilon)
    keys = [tp.infoset_keys for tp in s.game.treeplexes]
    for _ in range(20):
        log.clear()
        s.step()
        events = iter(log)
        for p in (0, 1):  # each traversal draws the chance classes, the other player, then (outcome) its own
            chance_u, ev = {}, next(events)
            while ev[0] == "chance":
                chance_u.update({int(c): float(u) for k, c, u in zip(*ev[1:]) if int(k) == 0})
                ev = next(events)
            assert ev[1] == 1 - p
            other = dict(zip(keys[1 - p], ev[2][0, 0].tolist()))
            own = dict(zip(keys[p], next(events)[2][0, 0].tolist())) if scheme == "outcome" else {}
            oracle.traverse(p, chance_u, own, other)
        for p, tp in enumerate(s.game.treeplexes):
            got = s.regrets[p][0].cpu()
            for i, key in enumerate(tp.infoset_keys):
                want = torch.tensor(oracle.regret.get(key, [0.0] * int(tp.num_actions[i])), dtype=torch.float64)
                lo, hi = int(tp.infoset_offsets[i]), int(tp.infoset_offsets[i + 1])
                assert torch.allclose(got[lo:hi], want, rtol=1e-12, atol=1e-12), (s.iteration, key)


def test_outcome_sampling_averaged_over_every_deal_and_both_pure_strategies_is_exact(device):
    """Kuhn: 6 deals x 64 pure strategies of the other player (from sigma) x 64 of the
    traverser (from the exploring strategy), 24,576 samples in one batch, each weighted by
    its probability: the estimates and the stochastically weighted plans average to the exact
    values and plan."""
    cg = tensorcfr.compile("kuhn", chance=True).to(device)
    op = PayoffOperator.of(cg, torch.float64)
    sigma, xs = random_profile(cg, seed=3, device=device)
    outcomes = deals(cg.chance)
    for p in (0, 1):
        probe = Estimator(cg, "outcome", samples=1, epsilon=0.6)
        strategies = [sigma[0], sigma[1]]
        strategies[p] = probe.exploring(p, sigma[p])

        def pure(q, strategies=strategies):  # [(probability, uniforms [I_q])] of every pure strategy of q
            tp = cg.treeplexes[q]
            probs = [strategies[q][0, int(tp.infoset_offsets[i]):int(tp.infoset_offsets[i + 1])].tolist()
                     for i in range(tp.num_infosets)]
            out = []
            for choice in itertools.product(*[range(len(pr)) for pr in probs]):
                w, u = 1.0, []
                for pr, a in zip(probs, choice):
                    w *= pr[a]
                    u.append(sum(pr[:a]) + pr[a] / 2)
                out.append((w, u))
            return out
        combos = list(itertools.product(outcomes, pure(1 - p), pure(p)))
        weight = torch.tensor([d[0] * o[0] * m[0] for d, o, m in combos], dtype=torch.float64, device=device)
        chance_u = torch.cat([fixed_chance(cg.chance, d[1]) for d, _, _ in combos])
        player_u = [None, None]
        player_u[1 - p] = torch.tensor([o[1] for _, o, _ in combos], dtype=torch.float64)[None]
        player_u[p] = torch.tensor([m[1] for _, _, m in combos], dtype=torch.float64)[None]
        est = Estimator(cg, "outcome", samples=len(combos), epsilon=0.6, pooled=False)
        each, avg = per_sample(est, p, sigma, xs, FixedDraws(chance_u, tuple(player_u)))  # [1, K, S_p]
        assert weight.sum().item() == pytest.approx(1.0, abs=1e-12)
        assert torch.allclose((weight[:, None] * each[0]).sum(0), op.cfv(p, xs[1 - p])[0], rtol=0, atol=1e-12)
        assert torch.allclose((weight[:, None] * avg[0]).sum(0), xs[p][0], rtol=0, atol=1e-12)


def test_external_sampling_cfr_plus_solves_kuhn(device):
    """2,000 iterations of 16 samples each (K = 1 needs about 16,000 here)."""
    s = tensorcfr.Solver("kuhn", "cfr+", device=device, sampling="external", samples=16, seed=0)
    s.step(2000)
    assert float(s.evaluate()["average"].exploitability[0]) < 1e-2


def test_chance_sampled_dcfr_reaches_the_value_of_dudo_4_1_1(device):
    """1,000 iterations of 16 sampled deals each (the game has 16; K = 1 is still 0.015 away
    after 3,000)."""
    s = tensorcfr.Solver("dudo(4,1,1)", "dcfr", device=device, sampling="chance", samples=16, seed=0)
    s.step(1000)
    ev = s.evaluate()["average"]
    assert abs(float(ev.game_value[0]) - (-1 / 8)) < 1e-2


@pytest.mark.parametrize("scheme", ["chance", "external", "outcome"])
def test_a_sampled_run_resumes_bit_identically(scheme, device):
    # (deterministic: on CUDA the scatter-adds' atomics sum in any order, so two runs agree bit
    # for bit only with deterministic kernels; without, chance sampling differed on an H200)
    kw = dict(device=device, sampling=scheme, samples=2, deterministic=True)
    straight = tensorcfr.Solver("leduc", "dcfr", seed=9, **kw)
    straight.step(12)
    first = tensorcfr.Solver("leduc", "dcfr", seed=9, **kw)
    first.step(5)
    saved = first.state_dict()
    second = tensorcfr.Solver("leduc", "dcfr", seed=9, **kw)
    second.load_state_dict(saved)
    second.step(7)
    for a, b in zip(straight.state_dict()["state"], second.state_dict()["state"]):
        for k in a:
            assert torch.equal(a[k], b[k])
    assert torch.equal(straight.average[0], second.average[0])
    other = tensorcfr.Solver("leduc", "dcfr", seed=10, **kw)
    other.step(12)
    assert not torch.equal(other.regrets[0], straight.regrets[0])  # the seed matters


def test_sampled_fraction_of_one_deal():
    s = tensorcfr.Solver("dudo(4,1,1)", "cfr", device="cpu", sampling="chance", samples=1)
    s.step(3)
    assert s.sampled_fraction == pytest.approx(1 / 16)  # 16 deals, each as many entries
    assert s.describe()["sampling"] == "chance"


@pytest.mark.parametrize("form,scope,expected", [("generic", "all", 65536), ("generic", "touched", 1),
                                                 ("public", "all", 1)])
def test_default_samples_follow_the_form_and_the_update(form, scope, expected):
    """Pooled samples cost about one sample's work, so the generic form's full update draws
    65,536 unless told; a touched update and the public-tree form draw one; a checkpoint's
    settings say which."""
    s = tensorcfr.Solver("dudo(4,1,1)", "cfr+", device="cpu", sampling="external", form=form, update_scope=scope)
    assert s.estimator.samples == expected and s.describe()["samples"] == expected
    assert getattr(s.estimator, "pooled", False) == (expected > 1)


@pytest.mark.parametrize("algo", ["cfr", "cfr+"])
@pytest.mark.parametrize("scheme", ["chance", "external", "outcome"])
@pytest.mark.parametrize("game,form", [("leduc", "generic"), ("random(seed=11)", "generic"), ("leduc", "public"),
                                       ("liars_dice(numdice=2,faces=2)", "public")])
def test_touched_update_equals_the_full_update(game, form, scheme, algo, device, monkeypatch):
    """update_scope='touched' updates only the part of each treeplex above the entries drawn
    (the public-tree form: the type columns drawn); for cfr and cfr+ a zero value leaves
    regrets alone, so regrets and strategies equal the full update's, iteration by iteration
    (the same draws: the same seed), where both sum in the same order. On CUDA, where
    `index_add_`'s atomics add in any order, a regret that is 0 in exact arithmetic came out on
    either side of it and regret matching then played a pure strategy or a uniform one (Leduc,
    chance sampling, cfr+: regrets within 1e-12, strategies not, H100, 2026-11-27): there the
    sums are deterministic ones. (A regret tolerance would not do: the touched update refuses it,
    as its scale moves with what is not touched.) The generic treeplex's path table (a GPU's, for
    small games) takes the whole treeplex's values up the paths, in another order than the level
    loop that a part, made for one iteration, takes: with the table forced on the CPU this case
    failed so too (Leduc, chance, cfr+). Both run the level loop here."""
    monkeypatch.setattr(treeplex, "PATH_DEVICES", ())
    kw = dict(device=device, sampling=scheme, samples=3, seed=5, form=form, deterministic=device != "cpu")
    full = tensorcfr.Solver(game, algo, **kw)
    part = tensorcfr.Solver(game, algo, update_scope="touched", **kw)
    for _ in range(20):
        full.step()
        part.step()
        for p in (0, 1):
            assert torch.allclose(part.regrets[p], full.regrets[p], rtol=0, atol=1e-12)
            assert torch.allclose(part.sigma[p], full.sigma[p], rtol=0, atol=1e-12)
    assert part.describe()["update_scope"] == "touched" and bool((full.regrets[0] != 0).any())


@pytest.mark.parametrize("samples", [1, 3])
@pytest.mark.parametrize("scheme", ["chance", "external", "outcome"])
@pytest.mark.parametrize("game", ["leduc", "dudo(4,1,1)"])
def test_kept_parts_give_the_same_run_as_parts_made_anew(game, scheme, samples):
    """`sampling.PartCache`: a run that keeps the touched parts equals, bit for bit, one whose
    cache keeps nothing it can drop (budget 0: every part made anew); Dudo(4,1,1)'s deals (one
    class, a slice of the entries, when K = 1) make at most one part per hand: 4 a player;
    with K = 3 on Leduc the cache gives up keeping."""
    kw = dict(device="cpu", sampling=scheme, samples=samples, seed=2, update_scope="touched")
    kept, anew = tensorcfr.Solver(game, "cfr+", **kw), tensorcfr.Solver(game, "cfr+", **kw)
    anew.estimator._parts.budget = 0
    for _ in range(25):
        kept.step()
        anew.step()
        for p in (0, 1):
            assert torch.equal(kept.regrets[p], anew.regrets[p]) and torch.equal(kept.sigma[p], anew.sigma[p])
            assert torch.equal(kept.average[p], anew.average[p])
    cache = kept.estimator._parts
    assert len(anew.estimator._parts._kept) <= 1  # budget 0: only the newest part stays, if any
    if samples == 1:
        assert cache.hits > 0 and anew.estimator._parts.misses > cache.misses
        if game == "dudo(4,1,1)":
            assert cache.misses <= 8 and cache.hits == 4 * 25 - cache.misses
    elif game == "leduc":  # 3 of 120 deals and boards seldom come again: past 64 misses it keeps nothing
        assert cache.misses >= 64 and cache.hits * 8 < cache.misses and not cache._kept and cache.bytes == 0


def test_a_kept_part_is_never_served_for_other_sequences():
    """Two arrays of sequences with the same key (count, sum and position-weighted sum): the
    second replaces the first, and the first's slice name then leads to a part made anew for
    its own sequences, not to the second's."""
    from tensorcfr.sampling.generic import PartCache
    from tensorcfr.spaces.treeplex import touched

    tp = tensorcfr.compile("leduc").treeplexes[0]
    a, b = torch.tensor([2, 1, 1, 2]) * 5, torch.tensor([1, 2, 2, 1]) * 5  # sums 30, 30; weighted 75, 75
    cache = PartCache()
    first = cache.get(tp, a, span=(0, 4))
    assert cache.get(tp, a, span=(0, 4)) is first and cache.hits == 1
    second = cache.get(tp, b)
    assert second is not first and torch.equal(second.seqs, b) and cache.misses == 2
    again = cache.get(tp, a, span=(0, 4))
    assert torch.equal(again.seqs, a) and cache.misses == 3
    # the same sequences in another order: the positions of the entries differ
    assert torch.equal(again.where, touched(tp, a)[3](a)) and not torch.equal(again.where, second.where)


@pytest.mark.parametrize("game", ["leduc", "dudo(4,1,2)", "random(seed=3)"])
def test_a_touched_part_is_a_treeplex_of_its_own(game):
    """`treeplex.touched`: plans and values on the part equal the whole treeplex's there, for
    values that are 0 outside the sequences the part is built from."""
    from tensorcfr.spaces.treeplex import touched

    cg = tensorcfr.compile(game)
    g = torch.Generator().manual_seed(0)
    for tp in cg.treeplexes:
        sigma = tp.normalize(torch.rand(2, tp.num_sequences, generator=g, dtype=torch.float64))
        x = tp.sequence_form(sigma)
        for n in (1, 5, 50):
            seqs = torch.randint(1, tp.num_sequences, (n,), generator=g)
            sub, ids, infosets, where = touched(tp, seqs)
            assert bool((ids[1:] > ids[:-1]).all()) and torch.equal(ids[where(seqs)], seqs)
            assert torch.equal(sub.sequence_form(sigma[:, ids]), x[:, ids])
            values = torch.zeros_like(x)
            values[:, seqs] = torch.rand(2, n, dtype=torch.float64, generator=g)
            q, v = tp.bottom_up(values, sigma)
            q_sub, v_sub = sub.bottom_up(values[:, ids], sigma[:, ids])
            assert torch.allclose(q_sub, q[:, ids], rtol=0, atol=1e-14)
            assert torch.allclose(v_sub, v[:, infosets], rtol=0, atol=1e-14)


def test_touched_chance_sampled_cfr_plus_reaches_the_value_of_dudo_4_1_1(device):
    """Its average adds an infoset's plan when a sample touches it (1,000 iterations of 16 deals).
    A profile's value lies within its NashConv (twice its exploitability) of the game's value."""
    s = tensorcfr.Solver("dudo(4,1,1)", "cfr+", device=device, sampling="chance", samples=16, seed=0,
                         update_scope="touched")
    s.step(1000)
    ev = s.evaluate()["average"]
    gap = float(ev.exploitability[0])
    assert gap < 2e-2 and abs(float(ev.game_value[0]) - (-1 / 8)) <= float(ev.nash_conv[0]) == pytest.approx(2 * gap)


def test_ranges():
    idx, owner = ranges(torch.tensor([3, 7, 0]), torch.tensor([2, 0, 3]))
    assert idx.tolist() == [3, 4, 0, 1, 2] and owner.tolist() == [0, 0, 2, 2, 2]


@pytest.mark.parametrize("kwargs,message", [
    (dict(sampling="importance"), "sampling must be one of"),
    (dict(sampling="chance", samples=0), "samples must be a whole number"),
    (dict(sampling="outcome", epsilon=0.0), "epsilon"),
    (dict(sampling="chance", capture="static"), "only eager iterations sample"),
    (dict(sampling="chance", seed=1.5), "seed must be a whole number"),
    (dict(update_scope="touched"), "needs sampling"),
    (dict(sampling="chance", update_scope="some"), "update_scope must be one of"),
    (dict(sampling="chance", update_scope="touched", alpha=1.5, beta=0.0), "exact for cfr and cfr"),
])
def test_clear_errors(kwargs, message):
    with pytest.raises(TensorCFRError, match=message):
        tensorcfr.Solver("kuhn", "cfr", device="cpu", **kwargs)


def test_a_compiled_game_without_its_chance_tree_is_refused():
    with pytest.raises(TensorCFRError, match="chance=True"):
        tensorcfr.Solver(tensorcfr.compile("kuhn"), "cfr", device="cpu", sampling="chance")


def test_cli_sampled_run_resumes_bit_identically_and_logs_the_fraction(tmp_path, capsys):
    from resume_check import resume_equals_straight
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from tensorcfr.cli.commands import main

    args = ["solve", "dudo(4,1,1)", "--algo", "cfr+", "--sampling", "outcome", "--samples", "3", "--epsilon", "0.5",
            "--seed", "7", "--device", "cpu", "--json", "--logdir", str(tmp_path), "--eval-every", "10"]
    assert main([*args, "--iterations", "20"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["config"]["sampling"] == "outcome" and first["config"]["epsilon"] == 0.5
    assert 0 < first["sampled_fraction"] <= 3 / 16 + 1e-12  # at most 3 of the 16 deals per estimate
    _, straight = resume_equals_straight(main, capsys, args, first["run_dir"], 40, tmp_path)
    events = EventAccumulator(straight["run_dir"]).Reload()
    assert [e.step for e in events.Scalars("perf/sampled_fraction")] == [10, 20, 30, 40]


@pytest.mark.parametrize("argv,message", [
    (["--samples", "4"], "--samples needs --sampling"),
    (["--sampling", "external", "--epsilon", "0.5"], "it needs --sampling outcome"),
    (["--sampling", "chance", "--capture", "cuda-graph"], "only eager iterations sample"),
    (["--sampling", "chance", "--algo", "rm"], "has no option"),
    (["--update-scope", "touched"], "--update-scope needs --sampling"),
    (["--sampling", "chance", "--update-scope", "touched", "--algo", "dcfr"], "not dcfr"),
])
def test_cli_sampling_errors(argv, message, capsys):
    from tensorcfr.cli.commands import main

    game = "rps" if "rm" in argv else "kuhn"
    assert main(["solve", game, "--no-log", "--iterations", "2", "--device", "cpu", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_device_estimate_counts_the_chance_tree():
    from tensorcfr.compiler.sizes import device_estimate_bytes

    plain, sampled = tensorcfr.compile("leduc"), tensorcfr.compile("leduc", chance=True)
    ct = sampled.chance
    extra = sum(t.numel() * t.element_size() for t in vars(ct).values())
    a, b = device_estimate_bytes(plain, 1, torch.float64), device_estimate_bytes(sampled, 1, torch.float64)
    assert b["game"] - a["game"] == extra and extra >= ct.num_entries * (2 * 8 + 8)


# -- pooled samples (K > 1): counts drawn down the trees ----------------------------------------

@pytest.mark.parametrize("game", ["leduc", "random(seed=3)"])
def test_pooled_counts_are_those_of_k_pure_strategies(game):
    """`_count_plans`: every infoset splits exactly the count that reaches it among its actions,
    never onto an action of probability 0, and the counts over K average, across 2,000 draws,
    to the realisation plan within 5 standard errors on every sequence."""
    from tensorcfr.sampling.generic import _count_plans, _level_padded

    cg = tensorcfr.compile(game)
    sigma, xs = random_profile(cg, seed=5)
    draws, K, n = RandomDraws(seed=2), 8, 2000
    for tp, sg, x in zip(cg.treeplexes, sigma, xs):
        sg = sg.clone()
        first = tp.infoset_offsets[:-1][tp.num_actions > 1]
        sg[0, first] = 0  # the first action of every infoset with a choice never played
        sg = tp.normalize(sg)
        sg[:, 0] = 1
        x = tp.sequence_form(sg)
        levels = _level_padded(tp)
        total = sq = 0
        for _ in range(n):
            y = _count_plans(tp, sg, K, draws, levels)[0]
            split = torch.zeros(tp.num_infosets, dtype=y.dtype).index_add_(0, tp.slot_infoset, y[1:])
            assert y[0] == K and torch.equal(split, y[tp.infoset_parent])
            assert torch.equal(y, y.round()) and bool((y >= 0).all()) and bool((y[first] == 0).all())
            total, sq = total + y / K, sq + (y / K) ** 2
        mean = total / n
        se = ((sq / n - mean ** 2).clamp(min=0) / (n - 1)).sqrt()
        assert bool(((mean - x[0]).abs() <= 5 * se + 1e-12).all())


def test_pooled_chance_counts_split_every_node_and_average_to_the_reach():
    """`Estimator.pooled_classes` on Leduc: K samples in class 0; at each chance node a class's
    count splits exactly among the node's outcomes; the counts over K average to each class's
    reach (2,000 draws, 5 standard errors)."""
    cg = tensorcfr.compile("leduc", chance=True)
    ct, K, n = cg.chance, 16, 2000
    est, draws = Estimator(cg, "chance", samples=K), RandomDraws(seed=4)
    total, sq = torch.zeros(ct.num_classes, dtype=torch.float64), torch.zeros(ct.num_classes, dtype=torch.float64)
    for _ in range(n):
        m, c = est.pooled_classes(draws)
        count = torch.zeros(ct.num_classes, dtype=torch.float64).index_add_(0, torch.from_numpy(c), torch.from_numpy(m))
        assert count[0] == K and len(set(c.tolist())) == len(c)
        for j in range(ct.num_chance_nodes):
            first, k = int(ct.node_first[j]), int(ct.node_count[j])
            assert count[first:first + k].sum() == count[int(ct.node_class[j])]
        total, sq = total + count / K, sq + (count / K) ** 2
    mean = total / n
    se = ((sq / n - mean ** 2).clamp(min=0) / (n - 1)).sqrt()
    assert bool(((mean - ct.reach).abs() <= 5 * se + 1e-12).all())


@pytest.mark.parametrize("scheme", ["chance", "external", "outcome"])
@pytest.mark.parametrize("game", ["leduc", "random(seed=11)"])
def test_pooled_estimates_are_unbiased(game, scheme):
    """Pooled estimates (K = 64: every drawn deal against the mean of the K pure strategies):
    the mean of 1,000 lies within 5 standard errors of the exact counterfactual values on every
    sequence a sample reaches at least 25 times in expectation; outcome sampling's weighted
    plan averages to the plan."""
    cg = tensorcfr.compile(game, chance=True)
    op = PayoffOperator.of(cg, torch.float64)
    sigma, xs = random_profile(cg, seed=7)
    K, n = 64, 1000
    est, draws = Estimator(cg, scheme, samples=K), RandomDraws(seed=21)
    assert est.pooled
    for p in (0, 1):
        total = sq = avg_total = 0
        for _ in range(n):
            g, avg = est.values(p, sigma, xs, draws)
            total, sq, avg_total = total + g[0], sq + g[0] ** 2, avg_total + avg[0]
        mean, exact = total / n, op.cfv(p, xs[1 - p])[0]
        checked = torch.ones_like(exact, dtype=torch.bool)
        if scheme == "outcome":  # as in the 20,000-estimate test: rarely reached sequences are Poisson
            ct = cg.chance
            cls = torch.repeat_interleave(torch.arange(ct.num_classes), ct.class_entries.diff())
            x_mixed = cg.treeplexes[p].sequence_form(est.exploring(p, sigma[p]))[0]
            hit = torch.zeros_like(exact).index_add_(
                0, ct.payoff_seq[p], ct.reach[cls] * xs[1 - p][0, ct.payoff_seq[1 - p]]) * x_mixed
            checked = n * K * hit >= 25
            assert int(checked.sum()) >= int((hit > 0).sum()) // 2  # most sequences are held to it
            assert torch.allclose(avg_total / n, xs[p][0], atol=0.05)
        se = ((sq / n - mean ** 2).clamp(min=0) / (n - 1)).sqrt()
        bad = checked & ((mean - exact).abs() > 5 * se + 1e-12)
        assert not bool(bad.any()) and bool((se > 0).any())


def test_pooled_external_sampling_cfr_plus_solves_leduc():
    """Pooled external sampling (K = 65,536) with CFR+: below 5e-3 on Leduc in 500 iterations
    (1.2 s here), where 16 samples drawn one by one stayed above 6e-2 after 15 s."""
    s = tensorcfr.Solver("leduc", "cfr+", device="cpu", sampling="external", samples=65536, seed=0)
    assert s.estimator.pooled
    s.step(500)
    assert float(s.evaluate()["average"].exploitability[0]) < 5e-3
