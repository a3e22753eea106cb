"""The compiled C loops (`spaces.native`): the scan gives torch's numbers to the last bit, and a
machine that cannot compile falls back to torch's operations with one warning."""

import warnings

import pytest
import torch

from tensorcfr.spaces import native, scan


def _reach(n: int, R: int, dtype, seed: int) -> torch.Tensor:
    """[n + 1, R] numbers over many magnitudes (reach probabilities span dozens of decades), some
    zero and some negative (counterfactual values are), the last row zero as the kernels' is."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n + 1, R, generator=g, dtype=torch.float64) * torch.exp(torch.randn(n + 1, R, generator=g) * 12)
    x[torch.rand(n + 1, R, generator=g) < 0.2] = 0
    x[torch.rand(n + 1, R, generator=g) < 0.3] *= -1
    x[-1] = 0
    return x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("segments, last", [(1, False), (52, False), (52, True), (7, True)])
def test_gather_scan_is_torchs_gather_and_cumsum_to_the_last_bit(dtype, segments, last, monkeypatch):
    """Against torch's own index_select and cumsum (which add in float64 and round each prefix to
    the dtype): equal bit for bit, tables of a turn spot's shape and odd ones."""
    assert scan._library() is not None  # the machine compiles C (as Inductor needs): tested, not skipped
    for seed, (n, R, length) in enumerate([(1128, 99, 48), (40, 3, 5), (300, 1, 17)]):
        x = _reach(n, R, dtype, seed)
        index = torch.randint(0, n + 1, (segments * length,), generator=torch.Generator().manual_seed(seed))
        got = scan.gather_scan(x, index, segments, last=last)
        want = x.index_select(0, index).view(segments, length, R).cumsum_(1)
        want = want[:, -1] if last else want
        assert got.shape == want.shape and torch.equal(got, want)
    monkeypatch.setattr(scan, "_library", lambda: None)  # and the fallback is that very expression
    assert torch.equal(scan.gather_scan(x, index, segments, last=last), got)


def test_a_machine_that_cannot_compile_falls_back_with_one_warning(monkeypatch, tmp_path):
    """No compiler, or a source that does not compile: `library` warns once (naming why) and
    returns None, so the callers run torch's operations; nothing is left in the cache folder."""
    monkeypatch.setenv("TENSORCFR_CACHE", str(tmp_path))
    monkeypatch.setattr(native, "_compiler", lambda: None)
    with pytest.warns(UserWarning, match="no C compiler"):
        assert native.library("test_no_compiler", "int f(void) { return 1; }") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.library("test_no_compiler", "int f(void) { return 1; }") is None  # once
    monkeypatch.undo()
    monkeypatch.setenv("TENSORCFR_CACHE", str(tmp_path))
    with pytest.warns(UserWarning, match="test_broken is unavailable"):
        assert native.library("test_broken", "int f(void) { return }") is None
    assert not list((tmp_path / "kernels").glob("*.so"))
    monkeypatch.setenv("TENSORCFR_FUSE", "0")
    assert native.library("test_off", "int f(void) { return 1; }") is None  # turned off: no warning
