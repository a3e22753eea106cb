"""Captured iterations equal eager ones.

`capture="static"` runs the form a CUDA graph records (state updated in place, every scalar
of iteration t read from a device tensor refreshed before the iteration) without a graph, so
it is checked against eager iterations on every device: bit for bit on the CPU, to rounding on
CUDA (`exact.same`: scatter-adds on a GPU add in no fixed order). `capture="cuda-graph"`
records one iteration and replays it; it is checked the same way on CUDA and skips without.
`capture="compile"` runs that form through `torch.compile`, with the payoff operator as
gathers and scatter-adds instead of a sparse matrix; its generated kernels round differently,
so it is checked to rounding (`exact.same(rounding=True)`) on every device.

Without a GPU two checks stand in for the recording: the static iteration performs no
operation a CUDA graph cannot record (`HostTraffic`), and an iteration traced once and
replayed (Python values frozen, as a graph freezes them) equals eager iterations.
"""

import os
import shutil
import types
import warnings

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import tensorcfr
from exact import same
from tensorcfr.operators import dense_loop

CASES = [  # (game, algorithm): every preset, schedules with a delay, batches of settings and of games
    ("kuhn", "cfr"), ("kuhn", "cfr+(delay=3)"), ("leduc", "dcfr"), ("random(seed=7)", "lcfr"),
    ("random(seed=4)", "pcfr+"), ("kuhn", "ftrl"), ("random(seed=7)", "oftrl(eta=(0.5,2))"),
    ("random(seed=4)", "dcfr(alpha=(1,2),beta=(0,0.5),updates='simultaneous')"),
    (["kuhn(ante=1)", "kuhn(ante=2)"], "cfr+"),
]
ITERATIONS = 12


def snapshot(solver):
    """The solver's whole state."""
    d = solver.state_dict()
    return [*d["sigma"], *d["average"], *(t for st in d["state"] for t in st.values())]


def trajectory(solver, n=ITERATIONS):
    """The solver's whole state after each of n iterations."""
    out = []
    for _ in range(n):
        solver.step(1)
        out.append(snapshot(solver))
    return out


def assert_same_trajectory(eager, other, device, rounding=False, drift=False):
    for t, (a, b) in enumerate(zip(eager, other), 1):
        for x, y in zip(a, b):
            assert same(x, y, device, rounding=rounding, drift=drift), f"iteration {t}"


def block_steps(eager, solver, device, rounding=False, requests=(1, 3, 4, 2, 6, 5, 8, 1, 12)):
    """Requests of every length, so that whole blocks and rests come in every order: the two
    solvers' states equal after each."""
    for n in requests:
        eager.step(n)
        solver.step(n)
        assert solver.iteration == eager.iteration
        # (42 iterations in all: on CUDA, atomics' rounding grown by the rule, `exact.GPU_DRIFT_RTOL`)
        assert_same_trajectory([snapshot(eager)], [snapshot(solver)], device, rounding=rounding, drift=True)


@pytest.mark.parametrize("game,algo", CASES)
def test_static_form_equals_eager(game, algo, device):
    cg = tensorcfr.compile(game)
    eager = trajectory(tensorcfr.Solver(cg, algo, device=device))
    static = trajectory(tensorcfr.Solver(cg, algo, device=device, capture="static"))
    assert_same_trajectory(eager, static, device)


def needs_compiler(device):
    """torch.compile on the CPU generates C++: without a compiler the solver (rightly) warns and
    runs eagerly, which these tests would report as a failure to compile."""
    if str(device) == "cpu" and not any(shutil.which(c) for c in (os.environ.get("CXX", "g++"), "c++", "clang++")):
        pytest.skip("no C++ compiler for torch.compile on the CPU")


@pytest.mark.parametrize("game,algo", CASES)
def test_compiled_iterations_equal_eager(game, algo, device, monkeypatch):
    needs_compiler(device)
    monkeypatch.setattr(tensorcfr.updates.capture, "UNROLL_MAX", -1)  # one iteration a call (blocks: below)
    cg = tensorcfr.compile(game)
    eager = trajectory(tensorcfr.Solver(cg, algo, device=device))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a failed compile warns and runs eagerly: fail instead
        solver = tensorcfr.Solver(cg, algo, device=device, capture="compile")
        compiled = trajectory(solver)
    assert solver.captured.compiled is not None and solver.capture == "compile", "the iteration was not compiled"
    assert (solver.captured.graph is not None) == (device == "cuda"), "on CUDA the compiled iteration is recorded as a graph"
    assert_same_trajectory(eager, compiled, device, rounding=True)


def test_compiled_blocks_of_iterations_equal_eager():
    """On the CPU a game as small as Kuhn compiles UNROLL iterations as one call; a request of
    any length runs its whole blocks compiled and the rest one at a time in the static form,
    each iteration with its own scalars (DCFR's discounts and weights change every iteration)."""
    needs_compiler("cpu")
    cg = tensorcfr.compile("kuhn")
    eager = tensorcfr.Solver(cg, "dcfr", device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        solver = tensorcfr.Solver(cg, "dcfr", device="cpu", capture="compile")
        assert solver.captured.unroll == tensorcfr.updates.capture.UNROLL > 1
        block_steps(eager, solver, "cpu", rounding=True, requests=(1, 3, 4, 2, 6, 5, 300))
    assert solver.captured.compiled is not None and solver.capture == "compile"


@pytest.mark.parametrize("game,loop", [("kuhn", False), ("leduc", False), ("liars_dice(faces=4)", True)])
def test_a_compiled_block_is_traced_once(game, loop, monkeypatch):
    """Before the trace, a block runs by the passes the trace takes and is undone, so that what
    an iteration builds on its first call and keeps (the public form's blocks of payoff classes)
    exists already: traced, its building left a guard on its absence, and the next call compiled
    the whole block again (public Dudo(4,2,2): 38 s, then 14 s more). `loop`: the payoff's
    compiled C loop serves eager iterations (it does on Dudo(4,2,2)), so an eager block would
    not build the blocks the trace reads. A recompile is an error here; the iterations equal
    eager ones."""
    needs_compiler("cpu")
    torch._dynamo.reset()  # (frames an earlier test compiled in this process do not count here)
    monkeypatch.setattr(torch._dynamo.config, "error_on_recompile", True)
    if loop:
        monkeypatch.setattr(dense_loop, "LOOP_ENTRIES", 0)
    cg = tensorcfr.compile(game, form="public")
    eager = tensorcfr.Solver(cg, "cfr+", device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        solver = tensorcfr.Solver(cg, "cfr+", device="cpu", capture="compile")
        block_steps(eager, solver, "cpu", rounding=True, requests=(solver.captured.unroll,) * 4)
    assert solver.captured.compiled is not None and solver.capture == "compile"


def test_compiled_iterations_around_a_sparse_operator_equal_eager(monkeypatch, device):
    """Past COMPILE_GATHER_MAX nonzeros the payoff operator stays a sparse matrix, which the
    compiled iteration calls between its compiled parts."""
    needs_compiler(device)
    monkeypatch.setattr(tensorcfr.updates.capture, "COMPILE_GATHER_MAX", 0)
    eager = trajectory(tensorcfr.Solver("leduc", "cfr+", device=device))
    solver = tensorcfr.Solver("leduc", "cfr+", device=device, capture="compile")
    assert solver.op.csr is not None
    compiled = trajectory(solver)
    assert solver.captured.compiled is not None and solver.capture == "compile"
    assert_same_trajectory(eager, compiled, device, rounding=True)


def test_failed_compile_restores_the_state_and_runs_eagerly(monkeypatch):
    """A compiler failure on the first call must leave no half-updated state behind."""
    solver = tensorcfr.Solver("kuhn", "cfr+", device="cpu", capture="compile")

    def broken(fn, **kw):
        def run(sc):
            solver.sigma[0].mul_(7)  # as if part of the iteration had run before the failure
            raise RuntimeError("no compiler here")
        return run
    monkeypatch.setattr(torch, "compile", broken)
    eager = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    with pytest.warns(RuntimeWarning, match="torch.compile failed .*no compiler here"):
        solver.step(3)
    eager.step(3)
    assert solver.capture == "static" and solver.iteration == 3
    for x, y in zip(eager.state_dict()["average"], solver.state_dict()["average"]):
        assert torch.equal(x, y)


def test_static_form_checkpoints_and_policies(device):
    """Loading a checkpoint writes into the tensors a captured iteration reads; a policy taken
    from the solver does not change under later iterations."""
    a = tensorcfr.Solver("leduc", "dcfr", device=device, capture="static")
    a.step(5)
    saved, policy = a.state_dict(), a.current_policy()
    before = [s.clone() for s in policy.sigma]
    a.step(5)
    assert all(torch.equal(x, y) for x, y in zip(before, policy.sigma))
    b = tensorcfr.Solver("leduc", "dcfr", device=device, capture="static")
    b.step(1)
    b.load_state_dict(saved)
    b.step(5)
    assert all(same(x, y, device) for x, y in zip(a.state_dict()["average"], b.state_dict()["average"]))


class HostTraffic(TorchDispatchMode):
    """Records the operations that a CUDA graph cannot record or would record wrongly: reading a
    device value on the host (`.item()`, `bool(t)`, data-dependent shapes: `nonzero`, boolean
    masks, `unique`, ...) and copying host data bigger than a scalar onto the device (its value
    would be frozen into the graph). Works on any device, so the CPU checks what CUDA needs."""

    SYNCING = {"aten::_local_scalar_dense", "aten::is_nonzero", "aten::equal", "aten::allclose", "aten::nonzero",
               "aten::masked_select", "aten::_unique", "aten::_unique2", "aten::unique_dim",
               "aten::unique_consecutive", "aten::repeat_interleave"}

    def __init__(self):
        super().__init__()
        self.found = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name
        masks = [i for a in args if isinstance(a, (list, tuple)) for i in a
                 if isinstance(i, torch.Tensor) and i.dtype == torch.bool]
        if (name in self.SYNCING or (name.startswith("aten::index") and masks)
                or (name == "aten::lift_fresh" and args[0].dim() > 0)):
            self.found.append(str(func))
        return func(*args, **(kwargs or {}))


def test_host_traffic_is_seen():
    x = torch.arange(4.0)
    with HostTraffic() as seen:
        x.sum().item(), x[x > 1], bool(x[0] > 0), torch.tensor([1.0, 2.0])
        x[0] = 1.0  # a Python scalar travels as a kernel argument: recordable
        x.index_add_(0, torch.zeros(4, dtype=torch.long), x.clone())
    assert seen.found == ["aten._local_scalar_dense.default", "aten.index.Tensor", "aten._local_scalar_dense.default",
                          "aten.lift_fresh.default"]


@pytest.mark.parametrize("game,algo", CASES)
def test_static_iteration_never_waits_for_the_device(game, algo, device):
    """What a CUDA graph records is one iteration of the static form: it must not read a device
    value on the host nor bring host data along (checked on every device, so also without a GPU)."""
    solver = tensorcfr.Solver(tensorcfr.compile(game), algo, device=device, capture="static")
    solver.step(2)
    sc = solver.captured.refresh(3)
    with HostTraffic() as seen:
        solver.captured.run(sc)
    assert seen.found == []
    # and a block of iterations back to back, as a small game's CUDA graph records them
    solver.captured.unroll = tensorcfr.updates.capture.GRAPH_UNROLL
    solver.captured.buffers = None  # (the scalars' buffer made again, for a block)
    views = solver.captured._write(4, solver.captured.unroll)
    with HostTraffic() as seen:
        solver.captured._block(views)
    assert seen.found == []


@pytest.mark.parametrize("game,algo", CASES)
def test_an_iteration_replayed_from_a_recording_equals_eager(game, algo, device):
    """A CUDA graph, emulated on any device: one static iteration is traced into a graph of
    tensor operations (`make_fx`), which freezes every Python value and tensor address as a
    recording does, then replayed for the later iterations with only the scalar buffer refreshed.
    A per-iteration value computed in Python outside that buffer would be replayed stale.
    (The payoff operator is the gather form in both runs: fx cannot trace a sparse CSR tensor,
    and the CSR product is a function of its inputs alone.)"""
    from torch.fx.experimental.proxy_tensor import make_fx

    cg = tensorcfr.compile(game)
    eager, solver = (tensorcfr.Solver(cg, algo, device=device, capture=c) for c in ("none", "static"))
    for s in (eager, solver):
        s.op = tensorcfr.PayoffOperator.of(s.game, s.dtype, gather=True)
    expected = trajectory(eager)
    replayed = trajectory(solver, 2)
    sc = solver.captured.refresh(3)
    recording = make_fx(lambda: solver.captured.run(sc))()  # tracing runs iteration 3 as well
    solver.iteration = 3
    replayed.append(snapshot(solver))
    solver.captured.run = lambda sc: recording()  # the step skeleton now replays the recording
    replayed += trajectory(solver, ITERATIONS - 3)
    assert_same_trajectory(expected, replayed, device)


def test_stacked_card_groups_record_as_they_run(monkeypatch):
    """The card showdown's stacked groups (`operators.public._stacked`, CUDA's default), forced
    on the CPU: a static iteration reads nothing back to the host, and one recorded (`make_fx`,
    as above) and replayed gives the eager trajectory."""
    from torch.fx.experimental.proxy_tensor import make_fx

    import tensorcfr.operators.public as public_module

    monkeypatch.setattr(public_module, "STACK_DEVICES", ("cpu",))
    cg = tensorcfr.compile("holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)",
                           form="public")
    eager, solver = (tensorcfr.Solver(cg, "dcfr", device="cpu", capture=c) for c in ("none", "static"))
    assert any(g[1].dim() == 2 for g in solver.op.cards[1][0]), "the groups are stacked"
    expected = trajectory(eager)
    replayed = trajectory(solver, 2)
    sc = solver.captured.refresh(3)
    with HostTraffic() as seen:
        recording = make_fx(lambda: solver.captured.run(sc))()
    assert seen.found == []
    solver.iteration = 3
    replayed.append(snapshot(solver))
    solver.captured.run = lambda sc: recording()
    replayed += trajectory(solver, ITERATIONS - 3)
    assert_same_trajectory(expected, replayed, "cpu")


def test_capture_options_are_checked():
    with pytest.raises(tensorcfr.TensorCFRError, match="capture must be one of"):
        tensorcfr.Solver("kuhn", capture="graph", device="cpu")
    with pytest.raises(tensorcfr.TensorCFRError, match="needs a CUDA device"):
        tensorcfr.Solver("kuhn", capture="cuda-graph", device="cpu")


@pytest.mark.parametrize("game,algo", CASES)
def test_blocks_of_iterations_back_to_back_equal_eager(game, algo, device):
    """The static form run in blocks of `GRAPH_UNROLL` iterations (as a small game's CUDA graph
    records them), each iteration of a block passing the next its player 0's plan (alternating
    updates), and the rest of a request one at a time: the eager states, bit for bit on the CPU.
    On CUDA both run deterministic: with atomics' rounding, grown by regret matching over the 42
    iterations, Leduc's DCFR went past `exact.GPU_DRIFT_RTOL` on an H200 (2026-11-30), which says
    nothing of the blocks' order, the thing tested."""
    cg = tensorcfr.compile(game)
    fixed = device != "cpu"
    eager = tensorcfr.Solver(cg, algo, device=device, deterministic=fixed)
    solver = tensorcfr.Solver(cg, algo, device=device, capture="static", deterministic=fixed)
    solver.captured.unroll = tensorcfr.updates.capture.GRAPH_UNROLL
    assert solver.captured.chain == (solver.config.updates == "alternating")
    block_steps(eager, solver, device)


@pytest.mark.parametrize("game,algo", CASES[:4])
def test_recorded_blocks_and_rests_replay_as_a_graph_would(game, algo):
    """The choice between a block's graph and the rest's, emulated on the CPU: a "recording"
    keeps the iterations of its views, to be run again on each replay from the same scalar
    tensors (as a graph reads the same memory), and runs nothing itself, as a recording does.
    After one unrecorded iteration, every request replays the block's graph or the rest's."""
    cg = tensorcfr.compile(game)
    eager = tensorcfr.Solver(cg, algo, device="cpu")
    solver = tensorcfr.Solver(cg, algo, device="cpu", capture="static")
    c = solver.captured
    c.mode, c._graphable, c.unroll = "cuda-graph", True, tensorcfr.updates.capture.GRAPH_UNROLL
    replays = []

    def record(run, views):
        graph = types.SimpleNamespace(replay=lambda: replays.append(len(views)) or run(views))
        setattr(c, "rest_graph" if len(views) < c.unroll else "graph", graph)
    c._record = record
    block_steps(eager, solver, "cpu")
    assert c.graph is not None and c.rest_graph is not None
    assert sorted(set(replays)) == [1, c.unroll] and sum(replays) == solver.iteration - 1  # (the first: unrecorded)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
@pytest.mark.parametrize("game,algo", CASES)
def test_cuda_graph_equals_eager(game, algo):
    """A recorded block of iterations and a recorded single one (the rest of a request), replayed
    in every order."""
    cg = tensorcfr.compile(game)
    eager = trajectory(tensorcfr.Solver(cg, algo, device="cuda"))
    solver = tensorcfr.Solver(cg, algo, device="cuda", capture="cuda-graph")
    assert solver.captured.unroll == tensorcfr.updates.capture.GRAPH_UNROLL
    graph = trajectory(solver)
    assert solver.captured.rest_graph is not None, "the iteration was not captured"
    assert_same_trajectory(eager, graph, "cuda")
    eager, solver = (tensorcfr.Solver(cg, algo, device="cuda", capture=c) for c in ("none", "cuda-graph"))
    block_steps(eager, solver, "cuda")
    assert solver.captured.graph is not None and solver.captured.rest_graph is not None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_a_card_games_iteration_is_recorded_as_a_cuda_graph():
    """The hold'em river spot's iteration (the public form's card showdown) recorded as a CUDA
    graph, not run unrecorded after a failed capture (`experiments/gpu_profile.py` warned "CUDA
    graph capture failed" on it on an H200 on 2026-11-30, after its profiler; this test recorded
    it there). Its states against eager iterations are not compared here: at float32 after 6
    CFR+ iterations they differed past 1e-4 relative on that H200, and whether eager against
    eager differs alike (atomics' rounding, which regret matching's ties amplify) was not
    measured: docs/results/gpu.md, 2026-11-30."""
    import warnings

    cg = tensorcfr.compile("holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2)",
                           form="public")
    solver = tensorcfr.Solver(cg, "cfr+", device="cuda", dtype=torch.float32, capture="cuda-graph")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (a failed capture warns, then runs unrecorded)
        solver.step(6)
    assert solver.captured.graph is not None or solver.captured.rest_graph is not None
