"""Equality of solver states computed twice (batched and solo, captured and eager, resumed and
straight): bit for bit on the CPU, to a stated tolerance on CUDA and for compiled iterations."""

import torch

# On CUDA, `index_add_` (the per-infoset sums) adds with atomics in no fixed order, so two runs
# of the same iterations agree to rounding, not to the bit.
GPU_RTOL, GPU_ATOL = 1e-10, 1e-13
# ... and the rules amplify that rounding over a long run: Leduc's DCFR, eager and in chained
# blocks of 4 (the static form), 42 iterations on an H200's CUDA: entries past 1e-10 relative
# from iteration 29, at most 2.0e-8 relative at 42 (2026-11-28); eager against eager grows alike
GPU_DRIFT_RTOL = 1e-7


# `torch.compile` fuses operations into generated kernels whose vectorised exp, log and
# multiply-adds round differently from the eager ones: after 12 iterations of DCFR on Leduc the
# averages (up to 650) differ by up to 3.2e-12, and no entry of the state by more than 2.8e-12
# relative. Those are compared as on CUDA.


def same(a: torch.Tensor, b: torch.Tensor, device: str, rounding: bool = False, drift: bool = False) -> bool:
    """Whether a and b, computed on `device` (they may have been copied to the CPU since), agree:
    bit for bit on the CPU, where every reduction adds in a fixed order; on CUDA, or where
    `rounding` is allowed (compiled kernels), to GPU_RTOL relative and GPU_ATOL absolute."""
    a, b = torch.as_tensor(a).cpu(), torch.as_tensor(b).cpu()
    if str(device) == "cpu" and not rounding:
        return torch.equal(a, b)
    rtol = GPU_DRIFT_RTOL if drift and str(device) != "cpu" else GPU_RTOL  # (drift: a run of tens of iterations)
    return a.shape == b.shape and torch.allclose(a, b, rtol=rtol, atol=GPU_ATOL)
