"""Captured iterations: one iteration function run in a fixed-memory form, recorded as a CUDA
graph or compiled with `torch.compile`.

`Captured(mode, run, ...)` wraps `run(sc)`, one iteration that updates its state in place
and reads every number of iteration t from `sc` (`rules.Scalars`). Modes:
- "static": `run` on fixed [B, 1] scalar tensors refreshed before each iteration (the form a
  CUDA graph records, runnable anywhere);
- "cuda-graph": on CUDA, that form recorded once as a graph after one unrecorded iteration
  (cuSPARSE and kernel set-up must not happen inside a recording), then replayed: one launch
  an iteration, not one per kernel;
- "compile": that form through `torch.compile` (a dispatch-bound iteration of a small game
  becomes a few fused kernels), and on CUDA recorded as a graph as well. On the CPU the
  smallest games compile `UNROLL` iterations as one call (`unroll`): a compiled Kuhn
  iteration's own kernels take about 10 us, the call around them about 20.
A failed recording or compile warns and goes on in the static form.

On CUDA a small game's graph records `GRAPH_UNROLL` iterations back to back (`unroll`), each
passing the next its player 0's plan (`chain`, `iteration.iterate`'s next_sc), and the rest of
a request replays a graph of one iteration recorded beside it.

Example:
    >>> import tensorcfr
    >>> s = tensorcfr.Solver("kuhn", "cfr+", device="cpu", capture="static")
    >>> s.step(3); s.captured.mode, s.iteration
    ('static', 3)
"""

from __future__ import annotations

import contextlib
import gc
import types
import warnings
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tensorcfr.errors import TensorCFRError
from tensorcfr.updates.rules import Scalars

CAPTURE = ("auto", "none", "static", "cuda-graph", "compile")
COMPILE_GATHER_MAX = 1 << 15  # payoff nonzeros up to which capture="compile" fuses the operator
# iterations per compiled call on the CPU, for games up to UNROLL_MAX payoff nonzeros (Kuhn has
# 30): measured on Kuhn's CFR+ (2 cores, 1 thread), 1, 2 and 3 iterations a call took 31, 21
# and 17 us an iteration; 1 and 3 took 10 and 17 s to compile into an empty Inductor cache
UNROLL, UNROLL_MAX = 3, 256
# iterations a CUDA graph records for games up to GRAPH_UNROLL_MAX payoff nonzeros and sequences
# (times the batch's members; the public form's payoff is its classes' matrices): run back to
# back, an iteration after the first does not make player 0's plan again (Leduc's CFR+: 2 of
# its kernels, the plan's gather and product, where the plan is averaged in as it is made), and
# a block's scalars are one copy. Not yet timed on a GPU (kernels counted on
# the CPU, `gpu_profile.py`: 45 an iteration of Leduc's CFR+ one at a time, 42.75 in blocks of 4)
GRAPH_UNROLL, GRAPH_UNROLL_MAX = 4, 1 << 20
# "auto" records a CUDA graph where the device has this many times the solver's estimated
# bytes free: the graph keeps its temporaries in a pool of its own, beside the evaluation's
GRAPH_HEADROOM = 2


def auto_capture(device: torch.device, need: int) -> str:
    """What capture="auto" runs: on CUDA, "cuda-graph" (measured on an H100, the fastest mode
    that costs nothing to start: 5.2x to 9.0x eager from Kuhn to Dudo(6,1,1), 2.6x to 4.6x on
    Dudo(4,2,2)) where `GRAPH_HEADROOM` x `need` bytes are free, else "none"; on the CPU "none"
    (a graph needs CUDA; compiling pays only on the smallest games, after seconds).

    Example:
        >>> auto_capture(torch.device("cpu"), 10**6)
        'none'
    """
    if device.type != "cuda":
        return "none"
    return "cuda-graph" if GRAPH_HEADROOM * need <= torch.cuda.mem_get_info(device)[0] else "none"


def unroll(capture: str, device: torch.device, nonzeros: int, sequences: int = 0) -> int:
    """Iterations a captured call runs: `UNROLL` for a compiled iteration of a game with up to
    `UNROLL_MAX` payoff nonzeros on the CPU (its call costs twice its kernels), `GRAPH_UNROLL`
    for a CUDA graph of a game with up to `GRAPH_UNROLL_MAX` payoff nonzeros and `sequences`
    (both players', times the members: a small game's, whose graphs' temporaries are small
    beside each other), else 1.

    Example:
        >>> unroll("compile", torch.device("cpu"), 30), unroll("none", torch.device("cpu"), 30)
        (3, 1)
        >>> unroll("cuda-graph", torch.device("cuda"), 5520, 2186)  # Leduc
        4
        >>> unroll("cuda-graph", torch.device("cuda"), 1800, 1310702)  # Dudo(4,2,2), public form
        1
    """
    if capture == "compile" and device.type == "cpu" and nonzeros <= UNROLL_MAX:
        return UNROLL
    if capture == "cuda-graph" and device.type == "cuda" and max(nonzeros, sequences) <= GRAPH_UNROLL_MAX:
        return GRAPH_UNROLL
    return 1


def check_capture(capture: str, device: torch.device) -> None:
    """A clear error for an unknown mode, or a CUDA graph asked for off CUDA."""
    if capture not in CAPTURE:
        raise TensorCFRError(f"capture must be one of {', '.join(CAPTURE)}, got {capture!r}")
    if capture == "cuda-graph" and device.type != "cuda":
        raise TensorCFRError("capture='cuda-graph' needs a CUDA device; on the CPU use capture='compile' "
                             "(small games) or 'none'")


def gathered_operator(capture: str, nonzeros: int) -> bool:
    """Whether the payoff operator should be gathers and scatter-adds rather than a sparse
    matrix. Compiled, a small game's operator fuses into the iteration; past
    `COMPILE_GATHER_MAX` nonzeros the sparse mat-mul (outside the compiled graph) is faster
    (measured, 2 cores: Leduc, 5.5k nonzeros, 0.17 ms gathers vs 0.71 ms sparse; Liar's Dice,
    147k nonzeros, 2.9 ms vs 1.4 ms)."""
    return capture == "compile" and nonzeros <= COMPILE_GATHER_MAX


def _own_code(fn: Callable) -> Callable:
    """A copy of `fn` with a code object of its own: Dynamo keeps compiled versions per code
    object, and a shared one would hit its recompile limit after a few solvers and silently
    run eagerly. A bound method stays bound to its object."""
    if isinstance(fn, types.MethodType):
        return types.MethodType(_own_code(fn.__func__), fn.__self__)
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


class _AsTraced(TorchDispatchMode):
    """A dispatch mode that changes nothing but `native.traced()`, which holds under it: the
    code takes the passes a trace takes (torch's, the compiled C loops stepping aside), and
    builds what they keep, eagerly.

    Example:
        >>> from tensorcfr.spaces import native
        >>> with _AsTraced():
        ...     native.traced(), torch.ones(2).add(1).tolist()
        (True, [2.0, 2.0])
    """

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def _gc_paused():
    """No automatic garbage collection while a CUDA graph records, and one collection before.
    A collection inside the recording may finalise a dead solver's graph or free its memory
    (a reference cycle from an earlier run), CUDA calls that invalidate the recording in
    progress: "operation failed due to a previous error during capture", seen twice in the
    H100 suite (FTRL, generic Liar's Dice 2x2, only among other tests, never alone).
    `torch.cuda.graph` collected before each recording in torch 2.8 and earlier; since then only
    with `force_cudagraph_gc` (pytorch/pytorch#158193; the failure is reported in #161037).

    Example:
        >>> with _gc_paused():
        ...     gc.isenabled()
        False
    """
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Captured:
    """Runs iterations of `run(sc)` in a captured form (see the module docstring).

    mode:     "static", "cuda-graph" or "compile"; falls back to "static" where the recording
              or compiling fails
    run:      one iteration, a plain function of the scalars; with `chain`, run(sc, next_sc,
              averaged) -> bool, as `iteration.iterate` takes them: a block's iterations back to back
    scalars:  t -> `Scalars` of tuples (the rule's `scalars`)
    unroll:   iterations a compiled call or a graph runs (`unroll()`); `steps` runs what is left
              of a request one iteration at a time: replayed from a graph of one iteration on
              CUDA ("cuda-graph"), else in the static form
    save/restore: the owner's state, to undo a compile that fails half-way
    """

    def __init__(self, mode: str, run: Callable[..., bool | None], scalars: Callable[[int], Scalars], *,
                 batch: int, dtype: torch.dtype, device: torch.device,
                 save: Callable[[], dict], restore: Callable[[dict], None], unroll: int = 1, chain: bool = False):
        self.mode, self.run, self.scalars = mode, run, scalars
        self.batch, self.dtype, self.device = batch, dtype, device
        self.save, self.restore = save, restore
        self.unroll, self.chain = unroll, chain
        self.graph: torch.cuda.CUDAGraph | None = None  # a block of `unroll` iterations, recorded
        self.rest_graph: torch.cuda.CUDAGraph | None = None  # one iteration, where a block has more
        self.compiled: Callable | None = None  # the compiled block: a list of `unroll` Scalars
        self.buffers: list[Scalars] | None = None  # per iteration of a block, the [B, 1] views it reads
        self._buffer: torch.Tensor | None = None  # [unroll, fields, B]: every scalar of a block
        self._fields: list[str] = []  # the Scalars fields the rule sets (the same at every iteration)
        self._warm = False  # an unrecorded iteration has run in this process (CUDA graphs need one)
        self._graphable = device.type == "cuda"

    def _write(self, t: int, k: int) -> list[Scalars]:
        """Write the scalars of iterations t .. t + k - 1 into the fixed tensors a block reads;
        returns their views. (Writing a block's scalars at once costs Kuhn 2.8 us an iteration
        in blocks of three, 5.4 one at a time; a table of 256 iterations' scalars, tried, cost
        the same: the copy, not the arithmetic, is the cost.)"""
        if self.buffers is None:
            self._fields = self.scalars(t).present()
            self._buffer = torch.zeros(self.unroll, len(self._fields), self.batch, dtype=self.dtype,
                                       device=self.device)
            self.buffers = [Scalars(**{name: self._buffer[j, i][:, None] for i, name in enumerate(self._fields)})
                            for j in range(self.unroll)]
        rows = []
        for u in range(t, t + k):
            values = self.scalars(u)
            rows.append([list(getattr(values, f)) * (self.batch // len(getattr(values, f))) for f in self._fields])
        # from pageable memory: staged at once, so the next block may overwrite it; no sync
        self._buffer[:k].copy_(torch.tensor(rows, dtype=self.dtype), non_blocking=True)
        return self.buffers[:k]

    def refresh(self, t: int) -> Scalars:
        """Write iteration t's scalars into the fixed tensors the iteration reads; returns them."""
        return self._write(t, 1)[0]

    def _block(self, views: list[Scalars]) -> None:
        """The iterations of `views`, one after another (what is compiled or recorded); with
        `chain`, back to back, each given the next one's scalars."""
        averaged = False
        for i, sc in enumerate(views):
            if self.chain and len(views) > 1:
                averaged = self.run(sc, views[i + 1] if i + 1 < len(views) else None, averaged)
            else:
                self.run(sc)

    def steps(self, t: int, n: int) -> None:
        """Iterations t .. t + n - 1: replayed from a CUDA graph once one is recorded; else
        compiled (`mode="compile"`, `unroll` at a time; the first call compiles) or static. On
        CUDA, "cuda-graph" and "compile" record the iteration as a graph after one unrecorded
        iteration, so a compiled iteration is both fused and launched once."""
        while n > 0:
            k = self.unroll if n >= self.unroll else 1
            self._run(t, k)
            t, n = t + k, n - k

    def _run(self, t: int, k: int) -> None:
        views = self._write(t, k)
        rest = k < self.unroll  # the rest of a request shorter than a block
        graph = self.rest_graph if rest else self.graph
        if graph is not None:
            graph.replay()
            return
        if rest and self.mode != "cuda-graph":  # (a compiled block's rest: static)
            self._block(views)
            return
        if self.mode == "compile" and self.compiled is None:
            self._compile(views)  # runs the block
            self._warm = True
            return
        run = self.compiled or self._block
        if self._warm and self._graphable and self.mode in ("cuda-graph", "compile"):
            self._record(run, views)
            graph = self.rest_graph if rest else self.graph
            if graph is not None:
                graph.replay()
                return
        run(views)
        self._warm = True

    def _record(self, run: Callable, views: list[Scalars]) -> None:
        """Record `run` as a CUDA graph (recording runs nothing). Operations that cannot be
        recorded leave the iterations unrecorded (eager, or compiled), with a warning."""
        graph = torch.cuda.CUDAGraph()
        try:
            with _gc_paused(), torch.cuda.graph(graph):
                run(views)
        except RuntimeError as e:  # pragma: no cover - needs a GPU
            warnings.warn(f"tensorcfr: CUDA graph capture failed ({e}); running unrecorded", RuntimeWarning,
                          stacklevel=5)
            self._graphable = False
            if self.mode == "cuda-graph":
                self.mode = "static"
            return
        if self.unroll > 1 and len(views) < self.unroll:
            self.rest_graph = graph
        else:
            self.graph = graph

    def _compile(self, views: list[Scalars]) -> None:
        """Compile a block and run it once (compiling takes seconds). A failed compile warns,
        restores the state and goes on in the static form."""
        own = _own_code(self._block)
        before = self.save()
        # the block run first by torch's passes, as the trace takes them (`_AsTraced`), and
        # undone: what an iteration builds on its first call and keeps (the public form's blocks
        # of payoff classes) is then built outside the trace, which would guard on its absence
        # and compile the whole block again at the next call (public Dudo(4,2,2), a GPU's passes
        # on 2 cores, Inductor's cache cold: 38 s, then 14 s more)
        with _AsTraced():
            self._block(views)
        self.restore(before)
        # Inductor's vectorised CPU code generation fails on some scatter-adds (an assertion in
        # torch 2.13, e.g. a [2, 3] -> [2, 1] index_add_ of FTRL with two settings); scalar
        # code generation compiles them. Dynamo's guards already hold the inputs' sizes and
        # strides; Inductor's own asserts of them cost 7 of Kuhn's 33 us a call (2 cores)
        lean = {"size_asserts": False}
        attempts = [lean, {**lean, "cpp.simdlen": 1}] if self.device.type == "cpu" else [lean]
        for options in attempts:
            compiled = torch.compile(own, dynamic=False, options=options)
            try:
                compiled(views)
            except Exception as e:  # noqa: BLE001 - any compiler failure: the eager form is always there
                self.restore(before)  # a failure may come mid-way
                error = e
                continue
            self.compiled = compiled
            return
        warnings.warn(f"tensorcfr: torch.compile failed ({type(error).__name__}: {str(error)[:200]}); "
                      "running eagerly", RuntimeWarning, stacklevel=5)
        self.mode = "static"
        self._block(views)
