"""One place that checks numeric settings, for the CLI and the API alike: finite, in range,
of the right kind, non-empty where a tuple is allowed. Each check returns the value (as a
float or an int) or raises `TensorCFRError` naming the setting and what it got.

Example:
    >>> number("eta", 2, lo=0, lo_open=True)
    2.0
    >>> number("alpha", float("nan"))
    Traceback (most recent call last):
    ...
    tensorcfr.errors.TensorCFRError: alpha must be a finite number, got nan
"""

from __future__ import annotations

import math
import numbers

from tensorcfr.errors import TensorCFRError


def number(name: str, value, *, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
           integer: bool = False) -> float | int:
    """`value` as a finite float (an int with `integer`) within [lo, hi] ((lo, hi] with `lo_open`)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TensorCFRError(f"{name} must be {'an integer' if integer else 'a number'}, got {value!r}")
    if integer:
        if isinstance(value, float) and not value.is_integer() or not math.isfinite(value):
            raise TensorCFRError(f"{name} must be an integer, got {value!r}")
        value = int(value)
    elif not math.isfinite(value):
        raise TensorCFRError(f"{name} must be a finite number, got {value!r}")
    else:
        value = float(value)
    below = lo is not None and (value <= lo if lo_open else value < lo)
    if below or (hi is not None and value > hi):
        lo_s = "" if lo is None else ("positive" if lo_open and lo == 0 else f"> {lo:g}" if lo_open else f">= {lo:g}")
        hi_s = "" if hi is None else f"<= {hi:g}"
        raise TensorCFRError(f"{name} must be {' and '.join(s for s in (lo_s, hi_s) if s)}, got {value!r}")
    return value


def numbers_or_one(name: str, value, **bounds) -> tuple[float, ...]:
    """A number or a non-empty tuple/list of numbers (one per batch member), each checked."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not values:
        raise TensorCFRError(f"{name} must be a number or a non-empty tuple of numbers, got {value!r}")
    return tuple(number(name, v, **bounds) for v in values)


def optional(name: str, value, **bounds):
    """None, or `number(name, value, **bounds)`."""
    return None if value is None else number(name, value, **bounds)
