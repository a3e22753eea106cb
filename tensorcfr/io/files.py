"""Files written whole or not at all, and JSON that strict parsers accept.

Policies, run and comparison files and the continuation-value cache go through
`write_atomic` (checkpoints have their own protocol; TensorBoard's writer appends its
events): a temporary file beside the target, flushed to disk, then renamed over it, and
removed again if anything fails on the way (a full disk, a read-only folder, an interrupt),
so a reader sees the old file or the new one and no temporary is left behind. JSON is
written by `dumps`: Python's `json` writes NaN and Infinity as bare tokens that strict
parsers (and `jq`) reject, so a number that is not finite becomes `null` in results, and
`strict=True` refuses it in files whose numbers must all be there.

Example:
    >>> dumps({"exploitability": float("nan"), "curve": [1.5, float("inf")]})
    '{"exploitability": null, "curve": [1.5, null]}'
    >>> import json; json.loads(dumps({"x": 1e-3}), parse_constant=refuse_constant)
    {'x': 0.001}
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Callable

from tensorcfr.errors import TensorCFRError


def finite(obj: Any) -> Any:
    """`obj` with every float that is not finite replaced by None (dicts, lists and tuples walked)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def dumps(obj: Any, strict: bool = False, **kw) -> str:
    """JSON text without NaN or Infinity tokens: such numbers become null, or with `strict`
    raise a `TensorCFRError` (a file whose numbers must all be there)."""
    if strict:
        try:
            return json.dumps(obj, allow_nan=False, **kw)
        except ValueError:
            raise TensorCFRError("a number to be written is NaN or infinite") from None
    return json.dumps(finite(obj), allow_nan=False, **kw)


def refuse_constant(token: str):
    """`json.load(..., parse_constant=refuse_constant)`: NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"{token} is not a JSON number")


def write_atomic(path: str, write: Callable, binary: bool = False) -> None:
    """Call `write(f)` on a temporary file beside `path`, flush it to disk and rename it over
    `path`; on any failure remove the temporary and raise (OSError as it came). The temporary's
    name carries the process id, so two writers never share one."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # a full disk, a read-only folder, Ctrl-C: no half-written file stays
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def write_json(path: str, obj: Any, what: str, strict: bool = True, **kw) -> None:
    """`obj` as JSON at `path`, atomically; an OSError is a one-line `TensorCFRError` naming
    `what` the file is ("the policy file", "run.json", ...)."""
    try:
        text = dumps(obj, strict=strict, **kw)
    except TensorCFRError as e:
        raise TensorCFRError(f"cannot write {what} {path}: {e}") from None
    try:
        write_atomic(path, lambda f: f.write(text))
    except OSError as e:
        raise TensorCFRError(f"cannot write {what} {path} ({e.strerror or e})") from None


def read_json(path: str) -> Any:
    """The JSON at `path`, refusing NaN and Infinity tokens (ValueError) as strict parsers do."""
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse_constant)
