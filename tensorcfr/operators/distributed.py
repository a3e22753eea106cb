"""One game across several processes with `torch.distributed`: the payoff operator split by
rank, the per-sequence state replicated.

The payoff operator is what grows with a game (generic form: its nonzeros; public-tree form:
its terminal public nodes), so each of the N ranks keeps one contiguous block of it,
balanced by count (`shard`), and computes its partial counterfactual values; one
`all_reduce` per player and iteration sums them (`ShardedOperator`). Everything else — the
treeplexes, strategies, regrets, averages — is small beside it and is replicated: every rank
holds the whole state and applies the same update to the same summed values, so the ranks
stay equal to the bit, and a checkpoint written by rank 0 is the whole state, which resumes
on any number of ranks. Evaluation (best responses, the game value) goes through the same
operator, so it costs one all-reduce per player too.

The partial sums add in another order than one process does, so a distributed run agrees
with a single-process run to rounding (1e-12 at float64 in the tests), not to the bit; with
the CFR family, a regret tolerance (`regret_tolerance=1e-12`) keeps ties at 0 from flipping.

The compile. In the generic form a rank builds only its block of the payoff
(`compile(..., shard=(rank, world))`: contiguous rows of player 0's sequences, balanced by
terminals), with no per-node arrays: the walk and the treeplexes are whole on every rank,
since every rank holds the whole state, while the sorted payoff (four arrays of the terminals'
length while it is built) is 1/N of it. Where the walk's frontier is the compile's peak
(Dudo(4,2,2): 0.88 GB a rank, against 1.47 GB for a whole compile with its per-node arrays)
the peak does not fall further with N. The public-tree form compiles whole on every rank (its walk is its treeplexes;
its payoff is a few small matrices per class) and keeps its block of terminal public nodes.
The state is never sharded: strategies, regrets and averages are replicated.

Run under `torchrun` (`tensorcfr solve GAME --distributed`), or from Python inside an
initialised process group:

    >>> import torch.distributed as dist, tensorcfr            # doctest: +SKIP
    >>> dist.init_process_group("gloo")                        # doctest: +SKIP
    >>> s = tensorcfr.Solver("leduc", "cfr+", distributed=True) # doctest: +SKIP

Example (the sharding alone, no process group needed):
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("kuhn")
    >>> [shard(cg, r, 3).payoff.shape[1] for r in range(3)], cg.payoff.shape[1]
    ([10, 10, 10], 30)
"""

from __future__ import annotations


import torch

from tensorcfr.errors import TensorCFRError


def bounds(n: int, rank: int, world: int) -> tuple[int, int]:
    """The contiguous block [lo, hi) of n items that rank `rank` of `world` keeps (sizes differ by at most 1)."""
    return rank * n // world, (rank + 1) * n // world


def shard(cg, rank: int, world: int):
    """A copy of the compiled game `cg` holding only rank `rank`'s block of the payoff:
    generic form, payoff nonzeros [lo, hi) (still sorted by (s0, s1)); public-tree form,
    terminal public nodes [lo, hi), each class keeping its matrix and its share of the
    terminals. The rest (treeplexes, sizes' counts) is shared with `cg`."""
    if not 0 <= rank < world:
        raise TensorCFRError(f"rank {rank} is not in 0..{world - 1}")
    made = getattr(cg, "shard", None)  # compiled as a block already (`compile(..., shard=)`)
    if made is not None:
        if tuple(made) != (rank, world):
            raise TensorCFRError(f"{cg.name} was compiled as rank {made[0]}'s block of {made[1]}, "
                                 f"not rank {rank}'s of {world}")
        return cg
    return cg.block(rank, world)


class ShardedOperator:
    """A payoff operator over this rank's block, whose results are summed over the ranks:
    `cfv(p, x_other)` [B, S_p] and `value(x, y)` [B], as the one-process operators give them.
    A collective that fails (another rank stopped) raises `TensorCFRError` naming this rank."""

    def __init__(self, local, group=None):
        self.local, self.group = local, group

    def _sum(self, t: torch.Tensor) -> torch.Tensor:
        return all_reduce(t, "summing the counterfactual values", group=self.group)

    def cfv(self, player: int, x_other: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
        return self._sum(self.local.cfv(player, x_other, out=out).contiguous())

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self._sum(self.local.value(x, y).contiguous())


def all_reduce(t: torch.Tensor, what: str, op=None, group=None) -> torch.Tensor:
    """`torch.distributed.all_reduce` (a sum unless `op`) in place; a failure (another rank
    stopped, or hangs past the group's timeout) raises `TensorCFRError` naming this rank and `what`."""
    import torch.distributed as dist

    try:
        dist.all_reduce(t, op=dist.ReduceOp.SUM if op is None else op, group=group)
    except (RuntimeError, dist.DistBackendError) as e:
        raise TensorCFRError(f"rank {dist.get_rank()}: {what} over the ranks failed (did another rank stop?): "
                             f"{str(e).splitlines()[0]}") from None
    return t


def agree(solver, *flags: bool) -> list[bool]:
    """Each flag true on any rank, for every rank, in a distributed run (else the flags as they
    are): a time limit or a signal is seen by one rank's clock or process, and ranks that stop
    at different iterations would wait for each other's sums for ever."""
    if not getattr(solver, "distributed", False):
        return list(flags)
    import torch.distributed as dist

    t = torch.tensor([float(f) for f in flags], device=solver.device)
    return [bool(v) for v in all_reduce(t, "agreeing when to stop", op=dist.ReduceOp.MAX).tolist()]


def init_from_environment(device: str) -> tuple[int, str]:
    """Join the process group `torchrun` describes (RANK, WORLD_SIZE, MASTER_ADDR, ... in the
    environment) unless one is initialised: NCCL where `device` resolves to CUDA, each rank on
    GPU LOCAL_RANK; gloo on the CPU. Returns (rank, the device to use)."""
    import datetime
    import os

    import torch.distributed as dist

    from tensorcfr.devices import resolve_device

    dev = resolve_device(device)
    if dev.type == "cuda":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    if not dist.is_initialized():
        if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
            raise TensorCFRError("--distributed runs under torchrun, e.g. torchrun --nproc-per-node 2 -m tensorcfr "
                                 "solve leduc --distributed")
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo", timeout=datetime.timedelta(minutes=10))
    return dist.get_rank(), str(device)


def launch_local(target, world: int, folder: str, *args, timeout: float | None = None) -> list[int | None]:
    """Run `target(rank, world, init, *args)` in `world` fresh processes on this machine (the
    "spawn" start method), `init` a `file://` rendezvous in `folder` for
    `init_process_group(init_method=init, ...)`; wait up to `timeout` seconds for each (None:
    for ever), kill those still running, and return the exit codes (None: killed). For tests
    and experiments; `torchrun` is the way to run the CLI.

    Example:
        >>> launch_local(print, 0, "/tmp")
        []
    """
    import multiprocessing
    import os

    ctx = multiprocessing.get_context("spawn")
    init = f"file://{os.path.join(folder, f'rendezvous-{os.getpid()}-{world}')}"
    procs = [ctx.Process(target=target, args=(r, world, init, *args)) for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout)
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    return [p.exitcode for p in procs]


def process_group():
    """(rank, world size) of the initialised default process group, or a clear error."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise TensorCFRError("distributed=True needs an initialised torch.distributed process group "
                             "(run under torchrun, or call torch.distributed.init_process_group first)")
    return dist.get_rank(), dist.get_world_size()
