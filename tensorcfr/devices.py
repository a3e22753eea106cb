"""Device and dtype names as the CLI and the API take them.

Example:
    >>> resolve_device("cpu"), resolve_dtype("float32")
    (device(type='cpu'), torch.float32)
"""

from __future__ import annotations

import torch

from .errors import TensorCFRError


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
