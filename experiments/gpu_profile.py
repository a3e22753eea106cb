"""Where a GPU iteration's time goes, kernel by kernel: the iteration run eagerly under
torch's profiler (one row per kernel name: launches and GPU microseconds an iteration), beside
the wall-clock time of the same iteration eager and recorded as a CUDA graph, and the
bytes-moved floor of `bench.py` (`bytes_per_iteration` over the measured copy bandwidth).
The gap between the wall clock and the summed kernel time is launch and host overhead.
`--compile` times each row compiled as well (capture="compile", on CUDA recorded as a graph too).
`--deterministic` adds each game's rows with torch's deterministic kernels (`deterministic=True`:
the segment sums of `tensorcfr.spaces.segments`), to see what that mode's time goes to.
`--paths both` adds each row again with the treeplex's level loop in place of its path table
(`tensorcfr.spaces.treeplex.PATH_DEVICES`), to time what the table saves where it serves.
Each row also counts the operators that launch a kernel (`ops`, torch's dispatcher: no views,
no allocations) in an iteration as a CUDA graph records it (`capture="static"`, with the copies
of the iteration's scalars that precede each replay), which does not depend on the device: on
the CPU it is the count a GPU would launch (the passes the library picks by device type taken as
on a GPU, `as_on_a_gpu`). With each it adds up the bytes those operators move
(`traffic`: a model, inputs read and outputs written once each), by operator (`op_bytes`) and by
line of tensorcfr (`sites`), beside the floor's (`x_floor_bytes`): where that multiple is near
the floor's, the time over the floor is the kernels' own (atomics, scattered reads, launches);
where it is not, the operators move more than they need to.

    python experiments/gpu_profile.py --games "ocp(1000)" "dudo(4,2,2)" --out experiments/results/gpu  # needs CUDA

Writes `gpu_profile.json` (after each row, so a run stopped by a time limit keeps what it
measured) and prints one table per game and form. `--device cpu` runs the same on the CPU
(eager only, the CPU's kernels; `--deterministic` there with the segment sums a GPU takes in
that mode): the tests run it so, so that a GPU session does not find it broken.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import time
import traceback

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._pytree import tree_flatten

import tensorcfr
from bench import bytes_per_iteration, copy_bandwidth, sync
from tensorcfr.operators import cards
from tensorcfr.operators import public as public_operators
from tensorcfr.spaces import public, segments, treeplex
from tensorcfr.updates import iteration
from tensorcfr.updates.capture import unroll

# operators that launch no kernel: views, allocations, metadata and host reads
_NO_KERNEL = {"view", "as_strided", "select", "slice", "alias", "reshape", "unsqueeze", "squeeze", "expand", "t",
              "transpose", "permute", "_unsafe_view", "detach", "unbind", "split", "narrow", "diagonal",
              "_reshape_alias", "view_as", "lift_fresh", "crow_indices", "col_indices", "values", "split_with_sizes",
              "movedim", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "set_", "flatten",
              "unflatten", "item", "_local_scalar_dense", "is_nonzero", "sym_size", "sym_stride", "sym_numel"}


def _same_data(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a copy from b to a is one that torch skips (the same memory, read alike), as in
    `x[:, i:j] += y`, whose assignment copies the slice onto itself."""
    return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.dtype == b.dtype
            and a.storage_offset() == b.storage_offset() and a.shape == b.shape and a.stride() == b.stride())


# kernels that read a value from their source for each one they write (the source's size is no
# measure of what they read), and kernels that touch as many of their target's values as their
# source holds (the target's size is no measure of what they write)
_GATHERS = {"index_select", "gather", "index", "take", "embedding"}
_SCATTERS = {"index_add_", "index_copy_", "scatter_", "scatter_add_", "scatter_reduce_"}
# in place, but only written (the target not read); and made from nothing read
_WRITE_ONLY = {"copy_", "fill_", "zero_", "index_copy_", "scatter_"}
_NEW = {"new_zeros", "new_full", "new_ones", "zeros", "full", "ones", "zeros_like", "full_like"}


def _nbytes(t: torch.Tensor) -> int:
    """Bytes of a tensor's elements: a view its own, not its storage's; a sparse tensor its stored
    values and indices."""
    if t.layout == torch.sparse_csr:
        return sum(_nbytes(x) for x in (t.values(), t.col_indices(), t.crow_indices()))
    if t.layout == torch.sparse_coo:
        return _nbytes(t._values()) + _nbytes(t._indices())
    return t.numel() * t.element_size()


def traffic(name: str, args: tuple, kwargs: dict, result) -> int:
    """The bytes operator `name` reads and writes at least, called with (args, kwargs) and
    returning `result`: its tensor inputs read once, its outputs written once (an in-place
    operator's target both, a copy's or fill's only written); a gather reads as many source
    values as it writes; a scatter reads its source and index and touches as many of its
    target's values (read and written, or for a copy only written). A model of the kernels'
    own traffic, not a measurement: what a cache saves or a poor access pattern wastes is not in it
    (and another in-place scatter, `index_put_` say, counts its whole target).

    Example:
        >>> a = torch.ones(2, 10, dtype=torch.float64)
        >>> traffic("mul", (a, a), {}, a * a)  # two inputs read, one output written
        480
        >>> traffic("index_select", (a, 1, torch.tensor([0, 3])), {}, a[:, [0, 3]])  # 4 values read and written
        80
    """
    tensors = lambda x: [t for t in tree_flatten(x)[0] if isinstance(t, torch.Tensor)]  # noqa: E731
    inputs = tensors((args, {k: v for k, v in kwargs.items() if k != "out"}))
    written = sum(_nbytes(t) for t in tensors(result))
    if name in _GATHERS:
        return 2 * written + sum(_nbytes(t) for t in inputs[1:] if not t.is_floating_point())
    if name in _SCATTERS:  # (target, dim, index, source, ...): the source's size of the target touched
        index = sum(_nbytes(t) for t in inputs[1:] if not t.is_floating_point())
        source = _nbytes([t for t in inputs[1:] if t.is_floating_point()][-1])
        return index + source + source * (1 if name in _WRITE_ONLY else 2)
    if name in _NEW:
        return written
    if name in _WRITE_ONLY:
        inputs = inputs[1:]
    return sum(_nbytes(t) for t in inputs) + written


class Watch:
    """What one iteration launches, by operator: `ops` {operator: calls}, `bytes` {operator: bytes
    moved, `traffic`'s model} and `sites` {(operator, file:line in tensorcfr): bytes}."""

    def __init__(self):
        self.ops, self.bytes, self.sites = collections.Counter(), collections.Counter(), collections.Counter()


def count_ops(solver, block: int = 1) -> Watch:
    """The operators that launch a kernel in an iteration of `solver`, counted with the bytes they
    move (torch's dispatcher; under it the compiled CPU walks step aside, as in a recorded iteration,
    so the count is that of the torch passes a GPU runs): over a block of `block` iterations run
    back to back, as a CUDA graph records them (`capture.unroll`), and divided by it. The second
    block so watched: the first makes what is made once (the path table, where the walks served
    until then)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    root = os.path.dirname(os.path.dirname(os.path.abspath(tensorcfr.__file__)))

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.watch = Watch()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = func.overloadpacket.__name__
            result = func(*args, **kwargs)
            if name not in _NO_KERNEL and not (name == "copy_" and _same_data(*args[:2])):
                moved = traffic(name, args, kwargs, result)
                here = [f for f in traceback.extract_stack() if f.filename.startswith(os.path.join(root, "tensorcfr"))]
                site = f"{os.path.relpath(here[-1].filename, root)}:{here[-1].lineno}" if here else "?"
                w = self.watch
                w.ops[name] += 1
                w.bytes[name] += moved
                w.sites[(name, site)] += moved
            return result

    solver.captured.unroll = block
    for _ in range(2):
        with Count() as c:
            solver.step(block)
    w = c.watch
    for counter in (w.ops, w.bytes, w.sites):
        for k in counter:
            counter[k] /= block
    return w


@contextlib.contextmanager
def as_on_a_gpu(device: str):
    """On `device` (the CPU too), the passes a GPU takes where the library picks them by device
    type: the public form's masked normalize (`spaces.public.MASK_DEVICES`), its stacked card
    groups (`operators.public.STACK_DEVICES`) and the card kernels' untransposed layout (not
    `operators.cards.TRANSPOSED_DEVICES`), so that the operators counted on the CPU are a GPU's.
    (The public form's row sums still take a sparse product on the CPU where a GPU scatters: one
    kernel each.)"""
    kept = public.MASK_DEVICES, public_operators.STACK_DEVICES, cards.TRANSPOSED_DEVICES
    public.MASK_DEVICES = tuple({*kept[0], device})
    public_operators.STACK_DEVICES = tuple({*kept[1], device})
    cards.TRANSPOSED_DEVICES = tuple(d for d in kept[2] if d != device)
    try:
        yield
    finally:
        public.MASK_DEVICES, public_operators.STACK_DEVICES, cards.TRANSPOSED_DEVICES = kept


def wall_ms(solver, n: int) -> float:
    """Milliseconds an iteration, best of 3 blocks of `n` after a warm-up (a capture happens there)."""
    device = solver.device
    solver.step(3)
    sync(device)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        solver.step(n)
        sync(device)
        best = min(best, (time.perf_counter() - t0) / n)
    return 1000 * best


def kernels(solver, n: int) -> list[dict]:
    """Device time per kernel name over `n` eager iterations, per iteration, largest first (on
    the CPU, each operator's self time)."""
    cuda = solver.device.type == "cuda"
    with profile(activities=[ProfilerActivity.CUDA if cuda else ProfilerActivity.CPU]) as prof:
        solver.step(n)
        sync(solver.device)
    total = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if not cuda:
            total[e.name][0] += 1
            total[e.name][1] += e.self_cpu_time_total
        elif e.device_type == torch.autograd.DeviceType.CUDA:
            total[e.name][0] += 1
            total[e.name][1] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
    rows = [{"kernel": k[:120], "launches": c / n, "us": us / n} for k, (c, us) in total.items()]
    return sorted(rows, key=lambda r: -r["us"])


ROWS = ("shipped", "scatter", "index", "matrix")


@contextlib.contextmanager
def rows_by(how: str, device: str):
    """How the public form adds one member's rows on `device` (`public.add_rows`): as shipped, or
    by the broadcast scatter-add, `index_add_` along the rows, or the sparse product where it
    serves (`public.ROWS_DEVICES`, `public.MATRIX_DEVICES`)."""
    kept = public.ROWS_DEVICES, public.MATRIX_DEVICES
    others = lambda devices: tuple(d for d in devices if d != device)  # noqa: E731
    if how == "scatter":
        public.ROWS_DEVICES, public.MATRIX_DEVICES = others(kept[0]), others(kept[1])
    elif how == "index":
        public.ROWS_DEVICES, public.MATRIX_DEVICES = (*others(kept[0]), device), others(kept[1])
    elif how == "matrix":
        public.ROWS_DEVICES, public.MATRIX_DEVICES = (*others(kept[0]), device), (*others(kept[1]), device)
    try:
        yield
    finally:
        public.ROWS_DEVICES, public.MATRIX_DEVICES = kept


def profile_game(spec: str, form: str, algo: str, dtype: str, n: int, deterministic: bool = False,
                 device: str = "cuda", paths: bool = True, rows_how: str = "shipped", compiled: bool = False) -> dict:
    """One row: the game in `form` timed and profiled, the treeplex's path table serving where it
    fits (on `device`, the CPU too: `treeplex.PATH_DEVICES`), or with `paths` False its level
    loop everywhere; the public form's rows added as `rows_how` says (`rows_by`); with
    `compiled`, timed compiled as well (capture="compile": on CUDA compiled and recorded)."""
    with rows_by(rows_how, device):
        return _profile_game(spec, form, algo, dtype, n, deterministic, device, paths, rows_how, compiled)


def _profile_game(spec, form, algo, dtype, n, deterministic, device, paths, rows_how, compiled=False) -> dict:
    cg = tensorcfr.compile(spec, form=form)
    out = {"game": spec, "form": cg.form, "algorithm": algo, "dtype": dtype, "deterministic": deterministic,
           "paths": paths, "rows": rows_how}
    shipped, sums, workspace = treeplex.PATH_DEVICES, segments.SEGMENT_SUMS, iteration.WORKSPACE
    treeplex.PATH_DEVICES = tuple({*shipped, device}) if paths else ()
    iteration.WORKSPACE = False  # (a GPU's iteration makes its plans and values afresh, as the CPU's then does)
    if deterministic and device == "cpu":  # the sums a deterministic GPU run takes (on the CPU index_add_ is in order)
        segments.SEGMENT_SUMS = "always"
    try:
        captures = ("none", "cuda-graph") if device == "cuda" else ("none",)
        for capture in (*captures, "compile") if compiled else captures:
            s = tensorcfr.Solver(cg, algo, device=device, dtype=dtype, capture=capture, updates="alternating",
                                 deterministic=deterministic)
            out[f"ms_{capture}"] = wall_ms(s, n)
            out[f"capture_used_{capture}"] = s.capture
            if capture == "none":
                rows = kernels(s, n)
            del s
        with as_on_a_gpu(device):  # (in the blocks a CUDA graph records)
            watch = count_ops(tensorcfr.Solver(cg, algo, device=device, dtype=dtype, capture="static",
                                               updates="alternating", deterministic=deterministic),
                              unroll("cuda-graph", torch.device("cuda"), cg.payoff_entries,
                                     cg.batch_size * sum(tp.num_sequences for tp in cg.treeplexes)))
    finally:
        treeplex.PATH_DEVICES, segments.SEGMENT_SUMS, iteration.WORKSPACE = shipped, sums, workspace
    best = out.get("ms_cuda-graph", out["ms_none"])
    out["kernel_ms"] = sum(r["us"] for r in rows) / 1000
    out["launches"] = sum(r["launches"] for r in rows)
    out["floor_ms"] = 1000 * bytes_per_iteration(cg, getattr(torch, dtype)) / copy_bandwidth(torch.device(device))
    out["x_floor_graph"] = best / out["floor_ms"]
    out["x_floor_kernels"] = out["kernel_ms"] / out["floor_ms"]
    if compiled:
        out["x_floor_compile"] = out["ms_compile"] / out["floor_ms"]
    out["kernels"] = rows[:25]
    out["ops"], out["op_counts"] = sum(watch.ops.values()), dict(watch.ops.most_common())
    floor_bytes = bytes_per_iteration(cg, getattr(torch, dtype))
    out["bytes_model"], out["floor_bytes"] = sum(watch.bytes.values()), floor_bytes
    out["x_floor_bytes"] = out["bytes_model"] / floor_bytes
    out["op_bytes"] = dict(watch.bytes.most_common())
    out["sites"] = [{"op": op, "site": site, "bytes": b} for (op, site), b in watch.sites.most_common(25)]
    how = "" if rows_how == "shipped" else f", rows by {rows_how}"
    print(f"\n{spec} ({cg.form}, {algo}, {dtype}{', deterministic' if deterministic else ''}"
          f"{'' if paths else ', level loop'}{how}): {out['ops']:g} operators an iteration, eager "
          f"{out['ms_none']:.3f} ms, best {best:.3f} ms, kernels {out['kernel_ms']:.3f} ms in {out['launches']:.0f} "
          f"launches, floor {out['floor_ms']:.3f} ms (best {out['x_floor_graph']:.1f}x, kernels "
          f"{out['x_floor_kernels']:.1f}x); the operators move {out['bytes_model'] / 1e6:.2f} MB, "
          f"{out['x_floor_bytes']:.2f}x the floor's {floor_bytes / 1e6:.2f} MB"
          + (f"; compiled {out['ms_compile']:.3f} ms ({out['capture_used_compile']}, {out['x_floor_compile']:.1f}x)"
             if compiled else ""), flush=True)
    for r in rows[:15]:
        print(f"  {r['us']:9.1f} us {r['launches']:6.1f}x  {r['kernel']}", flush=True)
    print("  bytes moved, by operator and line:", flush=True)
    for r in out["sites"][:10]:
        print(f"  {r['bytes'] / 1e6:9.2f} MB  {r['op']:<16} {r['site']}", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=["ocp(1000)", "dudo(4,2,2)"])
    ap.add_argument("--forms", nargs="+", default=["generic", "public"], choices=["generic", "public"])
    ap.add_argument("--algo", default="cfr+")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gpu"))
    ap.add_argument("--name", default="gpu_profile.json", help="the JSON file written in OUT")
    ap.add_argument("--deterministic", action="store_true", help="each game's rows again with deterministic=True")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--paths", default="default", choices=["default", "both"],
                    help="both: each row again with the treeplex's level loop in place of its path table")
    ap.add_argument("--compile", action="store_true",
                    help="each row timed compiled as well (capture='compile'; on CUDA recorded as a graph too)")
    ap.add_argument("--rows", nargs="+", default=["shipped"], choices=[*ROWS, "all"],
                    help="how the public form adds one member's rows (public.add_rows): as shipped, by the "
                         "broadcast scatter-add, index_add_ along the rows or the sparse product; all: each")
    a = ap.parse_args(argv)
    rows_hows = list(ROWS[1:]) if "all" in a.rows else a.rows
    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpu_profile.py needs CUDA (or --device cpu)")
    out = {"device": torch.cuda.get_device_name() if a.device == "cuda" else "cpu", "torch": torch.__version__,
           "cuda": torch.version.cuda, "copy_bandwidth_gb_s": copy_bandwidth(torch.device(a.device)) / 1e9, "rows": []}
    os.makedirs(a.out, exist_ok=True)
    for spec in a.games:
        for form in a.forms:
            for det in (False, True) if a.deterministic else (False,):
                settings = [(paths, how) for paths in ((True, False) if a.paths == "both" else (True,))
                            for how in (rows_hows if form == "public" else ["shipped"])]
                for paths, how in settings:
                    try:
                        out["rows"].append(profile_game(spec, form, a.algo, a.dtype, a.iterations, det, a.device,
                                                        paths, how, a.compile))
                    except tensorcfr.TensorCFRError as e:  # a game without that form: none of its settings
                        print(f"{spec} ({form}): {e}", flush=True)
                        break
                    with open(os.path.join(a.out, a.name), "w") as f:
                        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
