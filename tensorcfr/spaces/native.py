"""Small C loops compiled once per machine and loaded with ctypes: where torch's operations
leave a loop's work on the table (a scan that walks one column at a time; a gather, a product
and a scatter-add that each pass over memory) and Inductor cannot express it (a scan on the CPU).

`library(name, source)` compiles `source` with the machine's C compiler (`$CC`, else cc, gcc or
clang: the compiler torch's Inductor needs for `spaces.fused` anyway) into the cache folder
(`paths.kernels_dir`), once per source, flags, compiler and processor, and loads it. With
OpenMP, linked against the libgomp.so.1 torch has loaded, so the loops share torch's threads
(`torch.set_num_threads`). Where there is no compiler, or it fails, a warning says so once and
the caller's torch operations serve. `TENSORCFR_FUSE=0` turns these off with the fused kernels.

Example:
    >>> lib = library("doctest_add", "int add(int a, int b) { return a + b; }")
    >>> lib is None or lib.add(2, 3) == 5
    True
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import warnings

from tensorcfr.paths import kernels_dir

# -O3 -march=native: vector loops of the processor's width (AVX2's four doubles where SSE2 has
# two: 1.6x on the scan, measured); no -ffast-math and no contraction into fused multiply-adds,
# so each operation rounds as torch's does and the numbers are torch's to the last bit
FLAGS = ["-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fPIC", "-shared", "-std=c99", "-fopenmp"]
_loaded: dict[str, ctypes.CDLL | None] = {}


def enabled() -> bool:
    """Whether the compiled loops may serve: not turned off by TENSORCFR_FUSE=0.

    Example:
        >>> import os
        >>> enabled() == (os.environ.get("TENSORCFR_FUSE", "1") != "0")
        True
    """
    return os.environ.get("TENSORCFR_FUSE", "1") != "0"


def traced() -> bool:
    """Whether the running code is being traced or recorded: inside `torch.compile`, or under a
    torch dispatch mode (`make_fx`, which emulates a CUDA graph's recording in the tests; fake
    tensors). A C loop is opaque to a tracer, which would record the iteration without it, so
    the loops step aside and torch's operations, which it sees, run.

    Example:
        >>> traced()
        False
    """
    import torch
    from torch.utils._python_dispatch import is_in_torch_dispatch_mode

    return torch.compiler.is_compiling() or is_in_torch_dispatch_mode()


def _compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _processor() -> str:
    """What -march=native compiles for: the processor's name and flags (Linux), else its kind."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f if ln.startswith(("model name", "flags", "Features"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return platform.processor() + platform.machine()


def _build(cc: str, name: str, source: str) -> str:
    """The shared library's path, compiled into the cache folder where it is not there yet."""
    version = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256("\0".join([source, " ".join(FLAGS), version, _processor()]).encode()).hexdigest()[:16]
    folder = kernels_dir()
    path = os.path.join(folder, f"{name}-{key}.so")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src, lib = os.path.join(tmp, f"{name}.c"), os.path.join(tmp, f"{name}.so")
        with open(src, "w") as f:
            f.write(source)
        done = subprocess.run([cc, *FLAGS, src, "-o", lib], capture_output=True, text=True, timeout=300)
        if done.returncode:
            err = done.stderr.strip().splitlines()
            raise RuntimeError(err[-1] if err else f"{cc} failed")
        os.replace(lib, path)  # atomic: processes compiling side by side (pytest-xdist) each land whole
    return path


def available() -> bool:
    """Whether the compiled loops can be had, by what a build needs, without building one:
    `enabled()`, and a C compiler at hand (a build may still fail: `library` then warns, and
    torch's operations serve).

    Example:
        >>> available() == (enabled() and _compiler() is not None)
        True
    """
    return enabled() and _compiler() is not None


def library(name: str, source: str, functions: dict[str, list] | None = None) -> ctypes.CDLL | None:
    """The loaded library of C `source` (compiled on first use; `name` names its file), or None
    where it cannot be had (no compiler, a failed build, TENSORCFR_FUSE=0): the caller's torch
    operations serve then. `functions`: {name: ctypes argument types} of its functions, each
    returning an int (an error code)."""
    if not enabled():
        return None
    if name not in _loaded:
        _loaded[name] = None
        try:
            import torch  # noqa: F401  (its libgomp.so.1 loaded first: the library shares its threads)

            cc = _compiler()
            if cc is None:
                raise RuntimeError("no C compiler (cc, gcc, clang or $CC)")
            lib = ctypes.CDLL(_build(cc, name, source))
            for fn, args in (functions or {}).items():
                getattr(lib, fn).argtypes, getattr(lib, fn).restype = args, ctypes.c_int
            _loaded[name] = lib
        except Exception as e:  # noqa: BLE001  (torch's operations give the same numbers)
            warnings.warn(f"tensorcfr: the compiled loop {name} is unavailable ({type(e).__name__}: {e}); "
                          "torch's operations serve", stacklevel=3)
    return _loaded[name]
