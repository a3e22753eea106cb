"""The CFR family as one parametrised update: presets, batched hyper-parameters, convergence."""

from dataclasses import dataclass

import pytest
import torch

import tensorcfr
import tensorcfr.updates.rules
from exact import same


def test_batched_dcfr_settings_equal_solo_runs(device):
    alphas, betas, gammas = (1.0, 1.5, 2.0, 3.0), (0.0, 0.0, -1.0, 0.5), (2.0, 1.0, 2.0, 3.0)
    # deterministic: on CUDA, sums in a fixed order; the tolerance: a regret 0 in exact arithmetic
    # reads 0 however a batched reduction rounds it
    opts = dict(regret_tolerance=1e-12)
    batch = tensorcfr.Solver("leduc", tensorcfr.make_config("dcfr", alpha=alphas, beta=betas, gamma=gammas, **opts),
                             device=device, deterministic=True)
    assert batch.batch_size == 4
    batch.step(30)
    for b in range(4):
        solo = tensorcfr.Solver("leduc", tensorcfr.make_config("dcfr", alpha=alphas[b], beta=betas[b], gamma=gammas[b],
                                                               **opts), device=device, deterministic=True)
        solo.step(30)
        for p in (0, 1):
            assert same(batch.regrets[p][b], solo.regrets[p][0], device)
            assert same(batch.average[p][b], solo.average[p][0], device)
    names = batch.member_names()
    assert names[1] == "leduc alpha=1.5 beta=0 gamma=1"


def test_batched_schedules_equal_solo_runs(device):
    """HS-DCFR with a schedule per batch member (its ends as tuples) equals each run alone."""
    ends = dict(alpha_end=(4.0, 2.0), beta_end=(-3.0, 0.0), gamma_end=(25.0, 2.0))
    opts = dict(regret_tolerance=1e-12, horizon=20)
    batch = tensorcfr.Solver("leduc", tensorcfr.make_config("hs-dcfr", **ends, **opts), device=device,
                             deterministic=True, dtype="float64")
    assert batch.batch_size == 2
    batch.step(30)
    for b in range(2):
        solo = tensorcfr.Solver("leduc", tensorcfr.make_config("hs-dcfr", **{k: v[b] for k, v in ends.items()}, **opts),
                                device=device, deterministic=True, dtype="float64")
        solo.step(30)
        for p in (0, 1):
            assert same(batch.regrets[p][b], solo.regrets[p][0], device)
            assert same(batch.average[p][b], solo.average[p][0], device)
    assert batch.member_names()[1] == "leduc alpha_end=2 beta_end=0 gamma_end=2"


def test_hs_schedules_are_the_papers():
    """HS-DCFR's alpha 1 -> 4, beta -1 -> -3, gamma 30 -> 25 over 1,000 iterations; HS-PCFR+
    schedules gamma only; a scheduled gamma of 30 stays in float32 range (DCFR's discount of
    the sums, not t^30 weights) where the same constant gamma would not."""
    hs = tensorcfr.make_config("hs-dcfr")
    assert (hs.at("alpha", 0), hs.at("beta", 500), hs.at("gamma", 1000), hs.at("gamma", 5000)) == \
        ((1.0,), (-2.0,), (25.0,), (25.0,))
    assert tensorcfr.make_config("hs-pcfr+").alpha is None
    solver = tensorcfr.Solver("kuhn", "hs-pcfr+", dtype="float32")
    solver.step(1000)
    assert solver.evaluate()["average"].exploitability.item() < 1e-4
    with pytest.raises(tensorcfr.TensorCFRError, match="gamma must be"):
        tensorcfr.make_config("pcfr+", gamma=30.0)


def test_algorithm_specs_and_errors():
    assert tensorcfr.make_config("dcfr(alpha=2)").alpha == 2
    assert tensorcfr.make_config("cfr+", gamma=2).averaging == "power"
    assert tensorcfr.make_config("dcfr", averaging="linear").gamma is None
    for bad, msg in [("nope", "unknown algorithm"), ("dcfr(1.5)", "give parameters by name"),
                     ("dcfr(alpha=(1,2),beta=(0,0,0))", "one length"), ("cfr(speed=2)", "unknown option"),
                     ("cfr(alpha=1)", "alpha and beta"), ("dcfr(gamma_end=3)", "needs horizon"),
                     ("dcfr(horizon=10)", "needs one of alpha_end"), ("hs-dcfr(horizon=0)", "horizon must be"),
                     ("hs-dcfr(horizon=2.5)", "horizon must be an integer"),
                     ("hs-dcfr(alpha_end=float('nan'))", "cannot parse|alpha_end must be"),
                     ("hs-dcfr(gamma_end=-1)", "gamma_end must be >= 0"),
                     ("hs-dcfr(gamma_end=(1,2,3), alpha_end=(1,2))", "one length"),
                     ("cfr+(gamma_end=2, horizon=5)", "gamma_end is where gamma's schedule ends and needs gamma")]:
        with pytest.raises(tensorcfr.TensorCFRError, match=msg):
            tensorcfr.make_config(bad)


@pytest.mark.slow
@pytest.mark.parametrize("algo, options, bound", [
    ("cfr", {"updates": "alternating"}, 2e-2),  # OpenSpiel's CFR schedule; simultaneous gives 4.0e-2
    ("lcfr", {}, 1e-2),
    ("cfr+", {}, 1e-3),
    ("dcfr", {}, 5e-4),
    ("pcfr+", {}, 1e-3),
])
def test_leduc_convergence_after_1000_iterations(algo, options, bound, device):
    s = tensorcfr.Solver("leduc", algo, device=device, **options)
    s.step(1000)
    assert s.evaluate()["average"].exploitability.item() < bound


@dataclass(frozen=True)
class PlainRegretMatching(tensorcfr.updates.rules.Schedule):
    """Vanilla CFR written against the rule interface alone, as a user would write a new rule:
    the iterates must be the `cfr` preset's, bit for bit on the CPU."""

    def init_state(self, space, batch, dtype, device):
        return tensorcfr.updates.rules.RegretState(torch.zeros(batch, space.num_sequences, dtype=dtype, device=device))

    def initial_strategy(self, space, st):
        return space.normalize(st.regrets)

    def next_strategy(self, space, st, g, sigma, sc):
        st.regrets[:, 1:].add_(space.instantaneous_regret(g, sigma))
        return space.normalize(st.regrets.clamp(min=0))


@pytest.mark.parametrize("game", ["kuhn", "random(seed=4)"])
def test_a_rule_written_against_the_interface_runs_in_the_solver(game, device):
    mine = tensorcfr.Solver(game, PlainRegretMatching("plain-rm"), device=device)
    preset = tensorcfr.Solver(game, "cfr", device=device)
    for _ in range(15):
        mine.step(1)
        preset.step(1)
        for p in (0, 1):
            assert same(mine.regrets[p], preset.regrets[p], device)
            assert same(mine.sigma[p], preset.sigma[p], device)
            assert same(mine.average[p], preset.average[p], device)


def test_train_options_are_checked():
    s = tensorcfr.Solver("kuhn", "cfr", device="cpu")
    with pytest.raises(tensorcfr.TensorCFRError, match="bogus"):
        tensorcfr.train(s, 10, bogus=1)
    rows = tensorcfr.train(s, 10, options=tensorcfr.TrainOptions(eval_every=5))
    assert [r["iteration"] for r in rows] == [5, 10]


@pytest.mark.parametrize("spec", ["kuhn", "random(seed=3)", "random(seed=8)"])
def test_pdcfr_plus_is_the_papers_update(spec, device):
    """The `pdcfr+` preset (regret matching+ discounted after each update, with PCFR+'s
    prediction) plays the strategies of PDCFR+ as its authors' code writes it, iteration by
    iteration: current and average strategies to 1e-9."""
    from oracle import PaperPDCFRPlus
    from test_solvers_vs_oracle import assert_tables_close

    paper = PaperPDCFRPlus(tensorcfr.games.make(spec))
    solver = tensorcfr.Solver(spec, "pdcfr+", device=device, dtype="float64")
    for t in range(1, 31):
        paper.iterate()
        solver.step()
        assert_tables_close(solver.current_policy().to_dict(), paper.current_policy(), "current strategy", t)
        assert_tables_close(solver.average_policy().to_dict(), paper.average_policy(), "average strategy", t)


def _strategy_arrays_made(s, work) -> list[str]:
    """The factory ops (empty, zeros, ...) that made an array of one of solver s's strategy
    shapes while work() ran."""
    from torch.utils._python_dispatch import TorchDispatchMode

    factories = {"empty", "empty_like", "zeros", "zeros_like", "new_empty", "new_zeros", "empty_strided"}
    shapes, made = {tuple(x.shape) for x in s.state.sigma}, []

    class Made(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if tuple(getattr(out, "shape", ())) in shapes and func._schema.name.split("::")[1].split(".")[0] \
                    in factories:
                made.append(str(func))
            return out
    with Made():
        work()
    return made


@pytest.mark.parametrize("form", ["generic", "public"])
def test_the_iterations_workspace_changes_no_number(form, monkeypatch):
    """On the CPU the exact iteration makes its plans and values in arrays it keeps
    (`iteration._workspace`), not afresh four times an iteration: with every rule (and a batch
    of settings), 6 iterations leave the strategies, averages and rule state bit for bit those of
    a run that makes each array afresh, and a step after the first makes none of the arrays of a
    strategy's shape it made for them (counted by factory op: the rules' own are left)."""
    import tensorcfr.updates.iteration as iteration

    def run(algo, workspace):
        monkeypatch.setattr(iteration, "WORKSPACE", workspace)
        s = tensorcfr.Solver(tensorcfr.compile("leduc", form=form), algo, dtype=torch.float64, capture="none",
                             device="cpu")
        s.step(5)
        made = _strategy_arrays_made(s, lambda: s.step(1))
        tensors = s.state.tensors()
        return [*tensors["sigma"], *tensors["average"], *(t for st in tensors["state"] for t in st.values())], len(made)

    for algo in [*tensorcfr.updates.rules.PRESETS, "dcfr(alpha=(1.5,2))"]:
        (kept, n_kept), (fresh, n_fresh) = run(algo, True), run(algo, False)
        assert len(kept) == len(fresh) and all(same(a, b, "cpu") for a, b in zip(kept, fresh)), algo
        # what the iteration no longer makes: each player's plan and values, and with alternating
        # updates player 0's plan at the start of a step (which a step's last iteration leaves unaveraged)
        simultaneous = tensorcfr.updates.rules.make_config(algo).updates == "simultaneous"
        assert n_fresh - n_kept == (4 if simultaneous else 5), (algo, n_kept, n_fresh)


@pytest.mark.parametrize("form", ["generic", "public"])
@pytest.mark.parametrize("algo", ["dcfr", "cfr(updates=simultaneous)"])
@pytest.mark.parametrize("game", ["leduc", "dudo(3,1,2)"])
def test_an_evaluation_in_the_workspace_changes_no_number(form, algo, game):
    """`Solver.evaluate` makes its plans and values in the iteration's workspace arrays
    (`IterationState.work_room`, each with room for either player's arrays) on the CPU,
    with the infoset gaps too: it then makes no array of a strategy's shape (it made them
    afresh at every evaluation, and freed them, where the players' arrays differ in size, as
    Dudo(3,1,2)'s 1,534 and 3,067 sequences do). It gives the numbers of `tensorcfr.evaluate`
    and `infoset_gaps` on fresh arrays bit for bit, and leaves the next iterations those of a
    run that never evaluated."""
    from tensorcfr.evaluation import infoset_gaps

    cg = tensorcfr.compile(game, form=form)
    make = lambda: tensorcfr.Solver(cg, algo, dtype=torch.float64, capture="none", device="cpu")  # noqa: E731
    s, quiet = make(), make()
    s.step(3)
    quiet.step(3)
    s.evaluate()
    s.step(2)
    quiet.step(2)
    got = []
    for gaps in (False, True):
        made = _strategy_arrays_made(s, lambda: got.append(s.evaluate(infoset_gaps=gaps)))  # noqa: B023
        assert made == [], (gaps, made)
    want = {"average": tensorcfr.evaluate(cg, s.average_policy(), s.op),
            "current": tensorcfr.evaluate(cg, s.current_policy(), s.op)}
    for ev in got:
        for k in want:
            for f in ("nash_conv", "game_value"):
                assert torch.equal(getattr(ev[k], f), getattr(want[k], f)), (k, f)
            assert all(torch.equal(a, b) for a, b in zip(ev[k].best_response, want[k].best_response)), k
    alone = infoset_gaps(cg, s.average_policy(), s.op)
    assert all(torch.equal(a, b) for a, b in zip(got[1]["average"].infoset_gaps, alone))
    s.step(2)
    quiet.step(2)
    a, b = s.state.tensors(), quiet.state.tensors()
    assert all(torch.equal(x, y) for x, y in zip([*a["sigma"], *a["average"]], [*b["sigma"], *b["average"]]))
    assert all(torch.equal(x, b["state"][p][k]) for p, st in enumerate(a["state"]) for k, x in st.items())
