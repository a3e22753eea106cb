"""The fused CPU kernels (tensorcfr/fused.py) equal, bit for bit, the eager passes they replace:
each kernel on arrays laid out as the solver lays them out (views at offsets that differ from
call to call, blocks of different sizes), and whole runs with the kernels serving every array
against runs with them off. Only the CPU: the kernels serve nothing else."""

import pytest
import torch

import tensorcfr
from tensorcfr.spaces import fused

DTYPES = [torch.float32, torch.float64]


def _blocks(rows, types, dtype, seed):
    """A per-sequence tensor [1, 1 + rows T] as the solver has it (rows start at offset 1), and
    three blocks of consecutive rows of different sizes, each with its infoset index."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(1, 1 + rows * types, generator=g, dtype=dtype)
    xr = x[:, 1:].view(1, rows, types)
    cuts = [0, rows // 5, rows // 2, rows]
    blocks = []
    for m0, m1 in zip(cuts, cuts[1:]):
        infosets = max(1, (m1 - m0) // 3)
        blocks.append((m0, m1, torch.randint(0, infosets, (m1 - m0,), generator=g).sort().values, infosets))
    return x, xr, blocks


@pytest.mark.parametrize("dtype", DTYPES)
def test_normalize_equals_eager(dtype):
    x, xr, blocks = _blocks(900, 7, dtype, 0)
    xr[:, ::4] = 0  # rows of zero weight
    uniform = torch.rand(900, 1, dtype=dtype)
    into = torch.empty_like(xr)
    want = torch.empty_like(xr)
    for m0, m1, seg, n in blocks:
        w = xr[0, m0:m1]
        w[seg % 3 == 0] = 0  # infosets whose weights all sum to 0
        total = torch.zeros(n, 7, dtype=dtype).index_add_(0, seg, w)
        z = torch.sign(total).neg_().add_(1)  # the eager normalisation of public.py
        want[0, m0:m1] = w / (total + z)[seg] + z[seg] * uniform[m0:m1]
        fused.normalize_rows(w, total, seg, uniform[m0:m1], into[0, m0:m1])
        assert torch.equal(into[0, m0:m1], want[0, m0:m1])
        fused.normalize_rows(w, total, seg, uniform[m0:m1])  # in place
        assert torch.equal(xr[0, m0:m1], want[0, m0:m1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_subtract_gathered_equals_eager(dtype):
    _, qr, blocks = _blocks(900, 5, dtype, 1)
    for m0, m1, seg, n in blocks:
        v = torch.rand(n, 5, dtype=dtype)
        want = qr[0, m0:m1] - v[seg]
        fused.subtract_gathered(qr[0, m0:m1], v, seg)
        assert torch.equal(qr[0, m0:m1], want)


def _eager_step(regret, inst, plus, discount):
    """rules.py's eager update of the cumulative regrets [1, 1 + n]."""
    want = regret.clone()
    want[:, 1:].add_(inst)
    if plus:
        want.clamp_(min=0)
    if discount is not None:
        pos, neg = (torch.as_tensor(d, dtype=regret.dtype) for d in discount)
        negative = want.clamp(max=0)
        want.clamp_(min=0).mul_(pos).addcmul_(negative, neg)
    return want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("plus", [False, True])
@pytest.mark.parametrize("discount", [None, (0.7, 0.5), (torch.tensor([[0.9]]), torch.tensor([[0.25]]))])
def test_regret_step_equals_eager(dtype, plus, discount):
    g = torch.Generator().manual_seed(2)
    pos, neg = discount if discount is not None else (None, None)
    for n in (1000, 3001):
        regret = torch.randn(1, 1 + n, generator=g, dtype=dtype)
        inst = torch.randn(1, n, generator=g, dtype=dtype)
        want = _eager_step(regret, inst, plus, discount)
        positive = torch.empty_like(regret)
        fused.regret_step(regret[0, 1:], inst[0], positive[0, 1:], pos, neg, plus)
        assert torch.equal(regret[:, 1:], want[:, 1:])
        assert torch.equal(positive[:, 1:], want[:, 1:].clamp(min=0))
        want = _eager_step(regret, inst, plus, discount)
        fused.regret_step(regret[0, 1:], inst[0], None, pos, neg, plus)  # no positive part wanted
        assert torch.equal(regret[:, 1:], want[:, 1:])


def test_disjoint():
    x = torch.zeros(10)
    assert fused.disjoint(x[:5], torch.zeros(5), None)
    assert not fused.disjoint(x[:5], x[5:])


def _run(game, algo, form, monkeypatch, fuse, dtype="float64", iterations=8, capture="none"):
    # the compiled walks (`public_loop`, CPU) take the plan and the update wherever they serve;
    # the fused kernels serve the GPU and the CPU without them: these tests hold the kernels
    from tensorcfr.spaces import public_loop, treeplex

    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 1 << 62)
    monkeypatch.setattr(treeplex, "WALK_SEQUENCES", 1 << 62)
    monkeypatch.setenv("TENSORCFR_FUSE", "1" if fuse else "0")
    s = tensorcfr.Solver(game, algo, device="cpu", dtype=dtype, form=form, capture=capture)
    s.step(iterations)
    return [t.clone() for t in s.state.sigma + s.state.average
            + [getattr(st, "regrets", getattr(st, "utility", None)) for st in s.state.rule]]


@pytest.mark.parametrize("game,form", [("dudo(4,1,2)", "public"), ("leduc", "public"), ("leduc", "generic"),
                                       ("dudo(4,1,1)", "generic")])
@pytest.mark.parametrize("algo", ["cfr", "cfr+", "dcfr", "lcfr", "cfr(plus=True,alpha=1.5,beta=0)"])
def test_runs_with_kernels_equal_runs_without(game, form, algo, monkeypatch):
    """Every array fused (threshold 1 entry) against none, bit for bit, at both dtypes."""
    monkeypatch.setattr(fused, "FUSE_ENTRIES", 1)
    for dtype in ("float64", "float32"):
        on = _run(game, algo, form, monkeypatch, True, dtype)
        off = _run(game, algo, form, monkeypatch, False, dtype)
        assert all(torch.equal(a, b) for a, b in zip(on, off))


def test_static_capture_with_kernels(monkeypatch):
    """A captured iteration reads DCFR's discounts from [1, 1] tensors: the kernels take them."""
    monkeypatch.setattr(fused, "FUSE_ENTRIES", 1)
    on = _run("dudo(4,1,2)", "dcfr", "public", monkeypatch, True, capture="static")
    off = _run("dudo(4,1,2)", "dcfr", "public", monkeypatch, False, capture="none")
    assert all(torch.equal(a, b) for a, b in zip(on, off))


def test_kernels_serve_the_runs(monkeypatch):
    """The equality above is not vacuous: the kernels are called (and compiled, not failed)."""
    monkeypatch.setattr(fused, "FUSE_ENTRIES", 1)
    calls = []
    real = fused.call
    monkeypatch.setattr(fused, "call", lambda name, *a: calls.append(name) or real(name, *a))
    _run("dudo(4,1,2)", "dcfr", "public", monkeypatch, True, iterations=2)
    assert {"normalize_in_place", "subtract_gathered", "regret_step_011"} <= set(calls)
    calls.clear()
    _run("leduc", "cfr+", "generic", monkeypatch, True, iterations=2)  # the generic treeplex's passes too
    assert {"normalize_into", "subtract_gathered", "regret_step_100"} <= set(calls)
    assert not fused._failed


def test_threshold_and_switch(monkeypatch):
    big = torch.zeros(1, fused.FUSE_ENTRIES)
    assert fused.wanted(big) and not fused.wanted(torch.zeros(2, fused.FUSE_ENTRIES))
    monkeypatch.setenv("TENSORCFR_FUSE", "0")
    assert not fused.wanted(big)
