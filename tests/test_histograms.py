"""TensorBoard histograms counted by the C loop (tensorcfr/run/histograms.py) against
TensorBoard's own `make_histogram` (numpy's float64 counts into the default buckets): the same
buckets, limits, minimum, maximum and number, on numbers chosen to sit on and beside every
kind of edge; the sums to rounding."""

import numpy as np
import pytest
import torch
from torch.utils.tensorboard.summary import make_histogram

from tensorcfr.run import histograms
from tensorcfr.run.histograms import default_bins, histogram_proto

pytestmark = pytest.mark.skipif(histograms._library() is None, reason="no C compiler: the writer's own counts serve")


def _hard_numbers() -> torch.Tensor:
    """float32 numbers at and beside the default edges (float32's nearest to each edge and its
    neighbours), zeros of both signs, subnormals, numbers past either end, infinities, and
    normal draws."""
    edges = np.asarray(default_bins(), dtype=np.float64)
    near = edges.astype(np.float32)
    parts = [near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf)),
             np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 1e-13, -1e-13, 3e38, -3e38, np.inf, -np.inf], np.float32),
             np.random.default_rng(0).standard_normal(100_000).astype(np.float32) * 1e3]
    return torch.from_numpy(np.concatenate(parts))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_the_loops_buckets_are_tensorboards(threads):
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        v = _hard_numbers()
        with np.errstate(invalid="ignore"):  # (numpy's sum of both infinities)
            got, want = histogram_proto(v), make_histogram(v.double().numpy(), default_bins())
    finally:
        torch.set_num_threads(old)
    assert list(got.bucket) == list(want.bucket) and list(got.bucket_limit) == list(want.bucket_limit)
    assert (got.min, got.max, got.num) == (want.min, want.max, want.num)
    finite = v[torch.isfinite(v)]
    lo, hi = default_bins()[0], default_bins()[-1]  # (numbers past either end are not counted)
    assert sum(got.bucket) == int(((finite.double() >= lo) & (finite.double() <= hi)).sum())
    # (no sums here: numbers from 1e-45 to 3e38 cancel otherwise in another order; the test
    # below holds the sums of ordinary numbers to numpy's)


@pytest.mark.parametrize("values", [torch.tensor([0.0, 0.0, 2.0]), torch.tensor([-3.0]), torch.ones(5) * 1e-13,
                                    torch.randn(10_000) * 1e-6])
def test_small_arrays_and_one_bucket_are_tensorboards_too(values):
    got, want = histogram_proto(values), make_histogram(values.double().numpy(), default_bins())
    assert (list(got.bucket), list(got.bucket_limit), got.min, got.max, got.num) == \
        (list(want.bucket), list(want.bucket_limit), want.min, want.max, want.num)
    assert got.sum == pytest.approx(want.sum, rel=1e-12) and got.sum_squares == pytest.approx(want.sum_squares, rel=1e-12)


def test_other_dtypes_take_the_writers_own_counts():
    v = torch.randn(1000, dtype=torch.float64)
    assert histogram_proto(v) == make_histogram(v.numpy(), default_bins())


def test_the_default_edges_are_the_writers_own(tmp_path):
    # (SummaryWriter makes its list in __init__, an attribute of each writer: the loop's tables
    # are built once, without one, from this copy of it)
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(tmp_path))
    try:
        assert default_bins() == w.default_bins
    finally:
        w.close()


def test_no_stretch_of_a_16_bit_prefix_holds_two_edges():
    # the loop reads a number's bucket from its prefix's lowest and compares once with the edge
    # above: right only where each prefix's stretch of float32 numbers holds one edge at most
    edges = np.asarray(default_bins())
    prefix = np.arange(1 << 16, dtype=np.uint32) << 16
    with np.errstate(invalid="ignore"):
        ends = np.stack([prefix.view(np.float32), (prefix | 0xFFFF).view(np.float32)]).astype(np.float64)
    ends = ends[:, ~np.isnan(ends).any(0)]  # (the prefixes of NaNs hold no edge)
    lo, hi = ends.min(0), ends.max(0)
    inside = np.searchsorted(edges, hi, side="right") - np.searchsorted(edges, lo, side="right")
    assert inside.max() == 1


def test_a_written_histogram_reads_back_as_the_writers_own(tmp_path):
    # what TensorBoard shows: the event written by add_histogram against SummaryWriter's own
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    from tensorcfr.run.histograms import add_histogram

    v = torch.randn(50_000, generator=torch.Generator().manual_seed(3))
    read = []
    for name, write in (("loop", lambda w: add_histogram(w, "h", v, 7)), ("writer", lambda w: w.add_histogram("h", v, 7))):
        w = SummaryWriter(str(tmp_path / name))
        write(w)
        w.close()
        ea = EventAccumulator(str(tmp_path / name), size_guidance={"histograms": 0})
        ea.Reload()
        (event,) = ea.Histograms("h")
        h = event.histogram_value
        read.append((event.step, h.num, h.min, h.max, tuple(h.bucket), tuple(h.bucket_limit)))
    assert read[0] == read[1]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("divisor", [1, 3, 81, 12345])
def test_a_quotient_counts_as_its_divided_float32_copy(dtype, divisor):
    # a run logs its regrets over t as `Quotient(regrets, t)`, divided as the loop reads them: the
    # histogram of (values / t).float(), the copy it no longer makes, bucket for bucket (at float64
    # each quotient rounded to float32 as .float() rounds it), on numbers beside every edge times t
    v = (_hard_numbers().to(dtype) * divisor)
    q = histograms.Quotient(v, divisor)
    copy = (v / divisor).float()
    assert torch.equal(q.divided(), copy)
    with np.errstate(invalid="ignore", over="ignore"):
        got, want = histogram_proto(q), make_histogram(copy.double().numpy(), default_bins())
    assert list(got.bucket) == list(want.bucket) and list(got.bucket_limit) == list(want.bucket_limit)
    assert (got.min, got.max, got.num) == (want.min, want.max, want.num)
    # (the sums of the normal draws at the end: numpy's to rounding; the edges' cancel otherwise)
    got = histogram_proto(histograms.Quotient(v[-100_000:], divisor))
    want = make_histogram(copy[-100_000:].double().numpy(), default_bins())
    assert got.sum == pytest.approx(want.sum, rel=1e-9) and got.sum_squares == pytest.approx(want.sum_squares, rel=1e-12)


def test_a_quotient_off_the_loops_kinds_is_divided_first():
    # a view that is not contiguous (or another dtype, or another device) takes the writer's own
    # counts, of the divided float32 numbers all the same
    v = torch.randn(400, 3, dtype=torch.float64)[:, 1]
    q = histograms.Quotient(v, 7)
    assert histogram_proto(q) == make_histogram((v / 7).float().double().numpy(), default_bins())
