"""The one parser of algorithm specs, for tree algorithms and normal-form procedures alike.

A spec is a name, optionally followed by parameters given by name as Python literals:
`"cfr+"`, `"dcfr(alpha=1.5, gamma=(1, 2))"`, `"conditional-rm(mu=10)"`. Names may hold
letters, digits, `_`, `+` and `-`.

Example:
    >>> parse_algorithm("cfr+(delay=10)")
    ('cfr+', {'delay': 10})
    >>> parse_algorithm(" conditional-rm ")
    ('conditional-rm', {})
"""

from __future__ import annotations

import re

from tensorcfr import games as games_pkg

from tensorcfr.errors import TensorCFRError

_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_+-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


def algorithm_name(spec: str) -> str | None:
    """The name a spec starts with, or None when it does not start with one."""
    m = _SPEC.match(spec) if isinstance(spec, str) else None
    return m.group(1) if m else None


def parse_algorithm(spec: str, what: str = "algorithm") -> tuple[str, dict]:
    """Split a spec into (name, {parameter: literal value}); `what` names the kind in errors."""
    m = _SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if not m:
        raise TensorCFRError(f"cannot parse {what} {spec!r}: expected NAME or NAME(key=value, ...)")
    name, params = m.group(1), {}
    if m.group(2) is not None and m.group(2).strip():
        try:
            _, args, params = games_pkg.parse_spec(f"p({m.group(2)})")
        except games_pkg.GameError:
            raise TensorCFRError(f"cannot parse {what} {spec!r}: parameters are literals given by name, "
                                 f"e.g. {name}(key=value)") from None
        if args:
            raise TensorCFRError(f"{what} {spec!r}: give parameters by name, e.g. {name}(key=value)")
    return name, params
