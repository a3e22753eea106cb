"""Monte-Carlo sampling in the public-tree form (`tensorcfr.sampling.public`): unbiased, exactly,
by enumerating every deal of types and every pure strategy drawn; statistically for the spread;
convergence; resume; the CLI (the touched columns' update equals the full update: in
tests/test_sampling.py, with the generic form's)."""

from __future__ import annotations

import itertools
import json

import pytest
import torch

import tensorcfr
from tensorcfr.operators.public import PublicPayoffOperator
from tensorcfr.compiler.public import compile_public
from tensorcfr.sampling.public import PublicEstimator
from draws import FixedDraws, per_sample
from tensorcfr.sampling.generic import RandomDraws

CHANCE_GAMES = ["kuhn", "leduc", "dudo(4,1,1)", "liars_dice(numdice=2,faces=2)", "ocp(6)"]


def compiled(game):
    return compile_public(game, ranked=True) if game.startswith("ocp") else compile_public(game)


def profile(cg, seed, device="cpu"):
    """A random behavioural strategy per player [1, S_p] and its plan."""
    g = torch.Generator().manual_seed(seed)
    sigma = [tp.normalize(torch.rand(1, tp.num_sequences, generator=g, dtype=torch.float64).to(device) + 0.05)
             for tp in cg.treeplexes]
    return sigma, [tp.sequence_form(s) for tp, s in zip(cg.treeplexes, sigma)]


def deals(cg):
    """Every pair of types chance deals: [(probability, t0, t1, the uniforms [1, 2] that draw it)]."""
    out = []
    if cg.ranked:
        n = cg.treeplexes[0].types
        for a, b in itertools.permutations(range(n), 2):
            u = torch.tensor([[(a + 0.5) / n, (b - (b > a) + 0.5) / (n - 1)]], dtype=torch.float64)
            out.append((1 / (n * (n - 1)), a, b, u))
        return out
    P, cum = cg.deal.reshape(-1).tolist(), 0.0
    for j, pr in enumerate(P):
        if pr > 0:
            out.append((pr, *divmod(j, cg.treeplexes[1].types), torch.tensor([[cum + pr / 2]], dtype=torch.float64)))
        cum += pr
    return out


def pure_strategies(tp, sigma, t):
    """Every pure strategy of column t: [(its probability under sigma, uniforms [1, 1, U] that draw it)]."""
    choices = []
    for u in range(tp.num_public_infosets):
        a, b = tp.public_actions(u)
        choices.append([float(sigma[0, 1 + (e - 1) * tp.types + t]) for e in range(a, b)])
    out = []
    for pick in itertools.product(*[range(len(c)) for c in choices]):
        weight, us = 1.0, []
        for c, a in zip(choices, pick):
            weight *= c[a]
            us.append(sum(c[:a]) + c[a] / 2)  # inside action a's interval
        out.append((weight, torch.tensor(us, dtype=torch.float64).reshape(1, 1, -1)))
    return out


@pytest.mark.parametrize("game", CHANCE_GAMES)
def test_chance_sampling_averaged_over_every_deal_is_exact(game, device):
    cg = compiled(game).to(device)
    est = PublicEstimator(cg, "chance")
    op = PublicPayoffOperator.of(cg, torch.float64)
    sigma, xs = profile(cg, 3, device)
    outcomes = deals(cg)
    assert sum(pr for pr, *_ in outcomes) == pytest.approx(1.0, abs=1e-12)
    for p in (0, 1):
        mean = 0
        for pr, t0, t1, u in outcomes:
            assert est.deals(FixedDraws(u)) == (torch.tensor([t0], device=device), torch.tensor([t1], device=device))
            g, plan = est.values(p, sigma, xs, FixedDraws(u))
            assert torch.equal(plan, xs[p])  # chance sampling averages the exact plan
            own = (t0, t1)[p]
            off = torch.ones(cg.treeplexes[p].types, dtype=torch.bool)
            off[own] = False
            assert not bool(cg.treeplexes[p].rows(g)[:, :, off.to(device)].any())  # one column only
            mean = mean + pr * g
        assert torch.allclose(mean, op.cfv(p, xs[1 - p]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("scheme", ["external", "outcome"])
def test_external_and_outcome_sampling_averaged_over_every_draw_are_exact(scheme, device):
    """Kuhn: every deal, every pure strategy of the other player on its column and (outcome
    sampling) of the player's own from the exploring strategy, each weighted by its probability."""
    cg = compiled("kuhn").to(device)
    est = PublicEstimator(cg, scheme, epsilon=0.5)
    op = PublicPayoffOperator.of(cg, torch.float64)
    sigma, xs = profile(cg, 2, device)
    for p in (0, 1):
        q, sp = 1 - p, cg.treeplexes[p]
        # the exploring strategy eps/|A| + (1 - eps) sigma, per sequence
        mixed = 0.5 * sp.uniform(torch.float64).to(device).expand(-1, sp.types).reshape(1, -1) + 0.5 * sigma[p][:, 1:]
        mixed = torch.cat([sigma[p][:, :1], mixed], 1)
        mean, plan_mean, total = 0, 0, 0.0
        for pr, t0, t1, u in deals(cg):
            others = pure_strategies(cg.treeplexes[q], sigma[q], (t0, t1)[q])
            owns = pure_strategies(sp, mixed, (t0, t1)[p]) if scheme == "outcome" else [(1.0, None)]
            for (w_q, u_q), (w_p, u_p) in itertools.product(others, owns):
                player_u = [None, None]
                player_u[q], player_u[p] = u_q, u_p
                g, plan = est.values(p, sigma, xs, FixedDraws(u, player_u))
                w = pr * w_q * w_p
                mean, plan_mean, total = mean + w * g, plan_mean + w * plan, total + w
        assert total == pytest.approx(1.0, abs=1e-12)
        assert torch.allclose(mean, op.cfv(p, xs[q]), rtol=0, atol=1e-12)
        assert torch.allclose(plan_mean, xs[p], rtol=0, atol=1e-12)  # outcome: the weighted plan is unbiased


def test_chance_estimates_equal_the_generic_forms_deal_by_deal():
    """Dudo(4,1,1) has no chance after the deal: the generic form's 16 deals (classes of its
    chance tree) and the public form's 16 pairs of types give the same 16 estimates, matched
    infoset by infoset."""
    from test_sampling import deals as generic_deals
    from test_sampling import fixed_chance

    from tensorcfr.sampling.generic import Estimator

    cg_p, cg_g = compile_public("dudo(4,1,1)"), tensorcfr.compile("dudo(4,1,1)", chance=True)
    sigma_p, xs_p = profile(cg_p, 4)
    cols = []  # per player: the columns of every (infoset, action) in each form
    for tp, tg in zip(cg_p.treeplexes, cg_g.treeplexes):
        ip, ig = tp.infoset_index(), tg.infoset_index()
        assert set(ip) == set(ig)
        cols.append((torch.tensor([c for k in ip for c in tp.columns(ip[k])]),
                     torch.tensor([c for k in ip for c in tg.columns(ig[k])])))
    sigma_g = []
    for (cp, cg_), s, tg in zip(cols, sigma_p, cg_g.treeplexes):
        sg = torch.ones(1, tg.num_sequences, dtype=torch.float64)
        sg[:, cg_] = s[:, cp]
        sigma_g.append(sg)
    xs_g = [tg.sequence_form(s) for tg, s in zip(cg_g.treeplexes, sigma_g)]
    pub, gen = PublicEstimator(cg_p, "chance"), Estimator(cg_g, "chance")
    for p in (0, 1):
        cp, cg_ = cols[p]
        ours = [pub.values(p, sigma_p, xs_p, FixedDraws(u))[0][0, cp] for _, _, _, u in deals(cg_p)]
        theirs = [gen.values(p, sigma_g, xs_g, FixedDraws(fixed_chance(cg_g.chance, us)))[0][0, cg_]
                  for _, us in generic_deals(cg_g.chance)]
        assert len(ours) == len(theirs) == 16
        for g in theirs:
            assert sum(bool(torch.allclose(g, o, rtol=0, atol=1e-12)) for o in ours) == 1


@pytest.mark.parametrize("scheme", ["chance", "external", "outcome"])
def test_mean_of_20000_estimates_is_within_5_standard_errors(scheme):
    cg = compiled("leduc")
    op = PublicPayoffOperator.of(cg, torch.float64)
    sigma, xs = profile(cg, 7)
    chunk, n = 5000, 20000
    est = PublicEstimator(cg, scheme, samples=chunk)
    draws = RandomDraws(seed=13)
    for p in (0, 1):
        total = sq = avg_total = 0
        for _ in range(n // chunk):
            each, avg = per_sample(est, p, sigma, xs, draws)  # [1, K, S_p] both
            total, sq = total + each.sum(1)[0], sq + (each ** 2).sum(1)[0]
            avg_total = avg_total + avg.sum(1)[0]
        mean, exact = total / n, op.cfv(p, xs[1 - p])[0]
        se = ((sq / n - mean ** 2).clamp(min=0) / (n - 1)).sqrt()
        # outcome sampling: a sequence's estimate is a rare hit where its probability is small
        # (see tests/test_sampling.py); the sequences hit in at least 25 samples are checked
        hits = (each[0] != 0).float().mean(0) * n if scheme == "outcome" else torch.full_like(exact, n)
        checked = hits >= 25
        assert int(checked.sum()) >= 50
        bad = checked & ((mean - exact).abs() > 5 * se + 1e-12)
        assert not bool(bad.any()), f"player {p}: {int(bad.sum())} sequences past 5 SE"
        assert bool((se > 0).any())
        if scheme == "outcome":
            assert torch.allclose(avg_total / n, xs[p][0], atol=0.05)


def test_one_column_and_several_are_taken_and_put_alike():
    """`Touched.take`/`put` read one column as a strided view and several by index: the same."""
    from tensorcfr.sampling.generic import Touched

    tp = compile_public("dudo(4,1,1)").treeplexes[0]
    x = torch.rand(2, tp.num_sequences, dtype=torch.float64)
    for cols in ([2], [0, 3]):
        c = torch.tensor(cols)
        ids = torch.cat([torch.zeros(1, dtype=torch.long),
                         1 + (torch.arange(tp.num_public_sequences)[:, None] * tp.types + c).reshape(-1)])
        part = Touched(tp.with_types(len(cols)), None, None, None, columns=c)
        assert torch.equal(part.take(x), x[:, ids])
        v = torch.rand(2, len(ids), dtype=torch.float64)
        y, want = x.clone(), x.clone()
        part.put(y, v, add=True)
        want[:, ids] += v
        assert torch.equal(y, want)
        part.put(y, v)
        want[:, ids] = v
        assert torch.equal(y, want)


def test_chance_sampled_dcfr_reaches_the_value_of_dudo_4_1_1(device):
    """1,000 iterations of 16 sampled deals each, in the public form."""
    s = tensorcfr.Solver("dudo(4,1,1)", "dcfr", device=device, sampling="chance", samples=16, seed=0, form="public")
    s.step(1000)
    assert abs(float(s.evaluate()["average"].game_value[0]) - (-1 / 8)) < 1e-2
    assert s.sampled_fraction == pytest.approx(1.0)  # 16 deals of 16 pairs an estimate


@pytest.mark.parametrize("scheme", ["chance", "outcome"])
def test_a_public_sampled_run_resumes_bit_identically(scheme, device):
    # on CUDA the public form's scatter-adds sum in any order unless the kernels are deterministic
    kw = dict(device=device, sampling=scheme, samples=2, seed=9, form="public", deterministic=True)
    straight = tensorcfr.Solver("leduc", "dcfr", **kw)
    straight.step(12)
    first = tensorcfr.Solver("leduc", "dcfr", **kw)
    first.step(5)
    second = tensorcfr.Solver("leduc", "dcfr", **kw)
    second.load_state_dict(first.state_dict())
    second.step(7)
    for p in (0, 1):
        assert torch.equal(straight.regrets[p], second.regrets[p])
        assert torch.equal(straight.average[p], second.average[p])


def test_cli_samples_in_the_public_form(tmp_path, capsys):
    from tensorcfr.cli.commands import main

    args = ["solve", "dudo(4,1,1)", "--algo", "cfr+", "--form", "public", "--sampling", "chance",
            "--update-scope", "touched", "--seed", "3", "--device", "cpu", "--json", "--no-log", "--iterations", "20"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["sampling"] == "chance"
    assert out["sampled_fraction"] == pytest.approx(1 / 16)  # one pair of the 16 per estimate
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["curve"] == out["curve"] and again["exploitability"] == out["exploitability"]  # the seed fixes the run
