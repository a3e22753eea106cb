"""Equality of solver states computed twice (batched and solo, captured and eager, resumed and
straight): bit for bit on the CPU, to a stated tolerance on CUDA and for compiled iterations."""

import torch

# On CUDA, `index_add_` (the per-infoset sums) adds with atomics in no fixed order, so two runs
# of the same iterations agree to rounding, not to the bit.
GPU_RTOL, GPU_ATOL = 1e-10, 1e-13


# `torch.compile` fuses operations into generated kernels whose vectorised exp, log and
# multiply-adds round differently from the eager ones: after 12 iterations of DCFR on Leduc the
# averages (up to 650) differ by up to 3.2e-12, and no entry of the state by more than 2.8e-12
# relative. Those are compared as on CUDA.


def same(a: torch.Tensor, b: torch.Tensor, device: str, rounding: bool = False) -> bool:
    """Whether a and b, computed on `device` (they may have been copied to the CPU since), agree:
    bit for bit on the CPU, where every reduction adds in a fixed order; on CUDA, or where
    `rounding` is allowed (compiled kernels), to GPU_RTOL relative and GPU_ATOL absolute."""
    a, b = torch.as_tensor(a).cpu(), torch.as_tensor(b).cpu()
    if str(device) == "cpu" and not rounding:
        return torch.equal(a, b)
    return a.shape == b.shape and torch.allclose(a, b, rtol=GPU_RTOL, atol=GPU_ATOL)
