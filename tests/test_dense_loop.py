"""The public-tree form's dense payoff values in one compiled loop (tensorcfr/operators/dense_loop.py)
against the torch path they replace: each player's counterfactual values against random plans,
and whole runs, on every game of the forms' tests that has dense payoff classes (Dudo, Liar's
Dice, Kuhn, Leduc, OCP, random games, whose terminals may sit on a player's empty sequence, and
a batch of settings), to 1e-12 at float64. Only the CPU: the loop serves nothing else."""

import pytest
import torch

import tensorcfr
from tensorcfr.operators import dense_loop

GAMES = ["kuhn", "ocp(12)", "leduc", "dudo(4,1,2)", "dudo(4,2,1)", "liars_dice(faces=4)",
         "liars_dice(numdice=2,faces=2)", "random_dealt(seed=0)", "random_dealt(seed=1,types=4,depth=5,max_actions=3)",
         "random_dealt(seed=2,types=2,depth=6,max_actions=2)", ("kuhn(ante=1)", "kuhn(ante=2)")]
pytestmark = pytest.mark.skipif(dense_loop._library() is None, reason="no C compiler: torch's passes serve")


def _torch_values(op, player, x):
    """op.cfv by the torch path: the loop told to serve nothing."""
    old = dense_loop.LOOP_ENTRIES
    dense_loop.LOOP_ENTRIES = 1 << 62
    try:
        return op.cfv(player, x)
    finally:
        dense_loop.LOOP_ENTRIES = old


def _random_plans(cg, dtype, seed):
    """Each player's realisation plan [B, S] of a random behavioural strategy."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for sp in cg.treeplexes:
        sigma = sp.normalize(torch.rand(cg.batch_size, sp.num_sequences, generator=gen, dtype=torch.float64))
        out.append(sp.sequence_form(sigma).to(dtype))
    return out


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("game", GAMES, ids=str)
def test_values_equal_the_torch_path(game, dtype):
    cg = tensorcfr.compile(list(game) if isinstance(game, tuple) else game, form="public")
    op = cg.operator(dtype)
    for seed in range(3):
        x = _random_plans(cg, dtype, seed)
        for p in (0, 1):
            got = dense_loop.values(op, p, x[1 - p], least=0)
            assert got is not None, "the loop must take every dense operator"
            want = _torch_values(op, p, x[1 - p])
            assert got.shape == want.shape
            scale = max(1.0, float(want.abs().max()))
            tol = 1e-12 if dtype == torch.float64 else 1e-5
            assert float((got - want).abs().max()) <= tol * scale, (seed, p)


def test_the_empty_sequences_are_the_torch_paths():
    """Random games where a player never moves: every terminal sits on that player's empty
    sequence, whose weight stands for every type of it, and whose values go to column 0."""
    cg = tensorcfr.compile("random_dealt(seed=0)", form="public")
    assert cg.treeplexes[1].num_public_sequences == 0
    op = cg.operator(torch.float64)
    x = _random_plans(cg, torch.float64, 7)
    g1 = dense_loop.values(op, 1, x[0], least=0)
    assert g1.shape == (1, 1) and g1[0, 0] != 0
    assert torch.allclose(g1, _torch_values(op, 1, x[0]), rtol=1e-13, atol=0)
    g0 = dense_loop.values(op, 0, x[1], least=0)
    assert torch.allclose(g0, _torch_values(op, 0, x[1]), rtol=1e-13, atol=1e-15)


def _step_from(a, b, monkeypatch, loop_entries):
    """One iteration of a with the loop and of b without it, a starting from b's state: the two
    paths add the products in orders that can differ in the last bit (torch's matmul takes the
    kernel MKL picks for the machine: an H100 host's 16 cores gave a different one than the
    loop's order), and a regret that is exactly 0 on one path and 1e-17 on the other turns a
    regret-matching strategy from uniform to pure. So the runs are compared one step at a time
    on what the step computes (regrets, averages, each rule's state), never carried apart."""
    a.load_state_dict(b.state_dict())
    monkeypatch.setattr(dense_loop, "LOOP_ENTRIES", loop_entries)
    a.step()
    monkeypatch.setattr(dense_loop, "LOOP_ENTRIES", 1 << 62)
    b.step()


def _close(x: torch.Tensor, y: torch.Tensor) -> bool:
    return float((x - y).abs().max()) <= 1e-10 * max(1.0, float(y.abs().max()))


@pytest.mark.parametrize("algo", ["dcfr", "pcfr+", "mmd"])
@pytest.mark.parametrize("game", ["dudo(4,2,1)", "liars_dice(faces=4)",
                                  "random_dealt(seed=1,types=4,depth=5,max_actions=3)"])
def test_runs_with_the_loop_equal_the_torch_path(game, algo, monkeypatch):
    cg = tensorcfr.compile(game, form="public")
    a = tensorcfr.Solver(cg, algo, dtype=torch.float64, device="cpu")
    b = tensorcfr.Solver(cg, algo, dtype=torch.float64, device="cpu")
    calls = []
    inner = dense_loop.values

    def counted(*args, **kw):
        out = inner(*args, **kw)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(dense_loop, "values", counted)
    for t in range(1, 16):
        _step_from(a, b, monkeypatch, 0)
        sa, sb = a.state_dict(), b.state_dict()
        for p in (0, 1):
            assert _close(sa["average"][p], sb["average"][p]), f"iteration {t}, average of player {p}"
            for name, x in sa["state"][p].items():
                assert _close(x, sb["state"][p][name]), f"iteration {t}, {name} of player {p}"
            if algo == "mmd":  # (a smooth rule: its strategy moves with its values)
                assert _close(sa["sigma"][p], sb["sigma"][p]), f"iteration {t}, sigma of player {p}"
    assert sum(calls) == 2 * 15  # the loop ran for run a's values, each player each iteration
    ea, eb = a.evaluate()["average"], b.evaluate()["average"]
    assert abs(float(ea.nash_conv) - float(eb.nash_conv)) <= 1e-12


def test_the_run_comparison_sees_a_wrong_value_and_not_a_rounding(monkeypatch):
    """The comparison above, checked itself: the loop's values moved by an ulp's worth (1e-15,
    as another machine's kernel rounds) pass; moved by 1e-7 they fail."""
    cg = tensorcfr.compile("dudo(4,2,1)", form="public")
    inner = dense_loop.values
    for shift, passes in ((1e-15, True), (1e-7, False)):
        def moved(*args, shift=shift, **kw):
            out = inner(*args, **kw)
            return None if out is None else out * (1 + shift)
        monkeypatch.setattr(dense_loop, "values", moved)
        a = tensorcfr.Solver(cg, "dcfr", dtype=torch.float64, device="cpu")
        b = tensorcfr.Solver(cg, "dcfr", dtype=torch.float64, device="cpu")
        ok = True
        for _ in range(5):
            _step_from(a, b, monkeypatch, 0)
            sa, sb = a.state_dict(), b.state_dict()
            ok &= all(_close(x, sb["state"][p][k]) for p in (0, 1) for k, x in sa["state"][p].items())
        assert ok == passes, shift


def test_a_batch_of_settings_takes_each_members_matrices():
    cg = tensorcfr.compile(["kuhn(ante=1)", "kuhn(ante=2)"], form="public")
    op = cg.operator(torch.float64)
    x = _random_plans(cg, torch.float64, 3)
    one = x[1][:1]  # one member's plan against both members' payoffs: [2, S] values
    got = dense_loop.values(op, 0, one, least=0)
    assert got.shape[0] == 2
    assert torch.allclose(got, _torch_values(op, 0, one), rtol=0, atol=1e-14)
    assert not torch.allclose(got[0], got[1])  # the antes differ


def test_it_declines_where_torch_serves(monkeypatch):
    cg = tensorcfr.compile("dudo(4,1,2)", form="public")
    op = cg.operator(torch.float64)
    y = _random_plans(cg, torch.float64, 0)[1]
    assert dense_loop.values(op, 0, y) is None  # below LOOP_ENTRIES: Dudo(4,1,2)'s 1,500-odd entries
    assert dense_loop.values(op, 0, y.to(torch.bfloat16), least=0) is None
    assert dense_loop.values(op, 0, torch.cat([y, y], 1)[:, ::2], least=0) is None  # not contiguous
    monkeypatch.setenv("TENSORCFR_FUSE", "0")
    assert dense_loop.values(op, 0, y, least=0) is None


def test_dudo_4_2_2_takes_both_loops_by_default():
    """With the shipped thresholds the loops serve the game sizes they were built for: Dudo(4,2,2)
    (655K entries a player, 10 types) takes the dense payoff loop and the walks, by rows, with
    every thread; Leduc (a few hundred entries) keeps torch's path in the public form."""
    from tensorcfr.spaces import public_loop

    cg = tensorcfr.compile("dudo(4,2,2)", form="public")
    op = cg.operator(torch.float32)
    x, y = (p.float() for p in tensorcfr.Policy.uniform(cg).sequence_form())
    assert dense_loop.values(op, 0, y) is not None and dense_loop.values(op, 1, x) is not None
    for tp, plan in zip(cg.treeplexes, (x, y)):
        assert public_loop.serves(tp, plan)
        assert public_loop.split(tp, regret=True) == (public_loop.BY_ROWS, torch.get_num_threads())
    leduc = tensorcfr.compile("leduc", form="public")
    y = tensorcfr.Policy.uniform(leduc).sequence_form()[1]
    assert dense_loop.values(leduc.operator(torch.float64), 0, y) is None
    assert not public_loop.serves(leduc.treeplexes[0], tensorcfr.Policy.uniform(leduc).sequence_form()[0])
