"""Where tensorcfr keeps its caches on disk: a leaf module (it imports nothing of tensorcfr).

`$TENSORCFR_CACHE` names the continuation-value file (default
`~/.cache/tensorcfr/values.json`); compiled games go to `compiled/` beside it, and compiled C
loops (`spaces.native`) to `kernels/`.

Example:
    >>> import os
    >>> os.path.basename(compiled_dir())
    'compiled'
"""

from __future__ import annotations

import os


def values_file() -> str:
    """The JSON file of Dudo's continuation values (`tensorcfr.continuation`); a
    `$TENSORCFR_CACHE` that names a directory means `values.json` inside it."""
    path = os.environ.get("TENSORCFR_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "tensorcfr", "values.json"))
    return os.path.join(path, "values.json") if os.path.isdir(path) else path


def compiled_dir() -> str:
    """The folder of cached compiled games (`tensorcfr.compiler.generic.cache_file`)."""
    return os.path.join(os.path.dirname(values_file()), "compiled")


def kernels_dir() -> str:
    """The folder of compiled C loops (`tensorcfr.spaces.native`)."""
    return os.path.join(os.path.dirname(values_file()), "kernels")
