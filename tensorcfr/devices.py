"""Device and dtype names as the CLI and the API take them.

Example:
    >>> resolve_device("cpu"), resolve_dtype("float32")
    (device(type='cpu'), torch.float32)
"""

from __future__ import annotations

import contextlib
import os

import torch

from tensorcfr.errors import TensorCFRError


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """`"auto"` -> CUDA when available, else CPU; `"cuda"` without CUDA is an error."""
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise TensorCFRError(f"unknown device {device!r}; use cpu, cuda or auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise TensorCFRError("device cuda requested but CUDA is not available; use --device cpu or auto")
    if dev.type not in ("cpu", "cuda"):
        raise TensorCFRError(f"unsupported device {device!r}; use cpu, cuda or auto")
    return dev


def resolve_dtype(dtype: str | torch.dtype) -> torch.dtype:
    """`"float32"` / `"float64"` (or the torch dtypes) -> the torch dtype."""
    table = {"float32": torch.float32, "float64": torch.float64, torch.float32: torch.float32,
             torch.float64: torch.float64}
    if dtype not in table:
        raise TensorCFRError(f"unsupported dtype {dtype!r}; use float32 or float64")
    return table[dtype]


@contextlib.contextmanager
def deterministic(on: bool = True):
    """Within the block, torch's deterministic kernels where it has them (`on`; else nothing
    changes). On CUDA, `index_add_` and `scatter_add_` otherwise add with atomics in whatever
    order the threads run, so a sum's last bit, and through regret matching's ties at 0 a whole
    strategy, differs from run to run; the deterministic kernels sort the indices first. An
    operation with no such kernel warns rather than fails. The CPU's kernels are deterministic
    already. The previous setting is restored afterwards.

    Example:
        >>> with deterministic():
        ...     torch.are_deterministic_algorithms_enabled()
        True
    """
    if not on:
        yield
        return
    # cuBLAS is deterministic only with a fixed workspace; it reads this when its handle is made
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    before, warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before, warn_only=warn)
