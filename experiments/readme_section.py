"""Rewrite one marked section of the README with an experiment's table (shared by the scripts).

The section lies between `<!-- NAME:start -->` and `<!-- NAME:end -->`; everything outside it
is kept. The command that made the table is written at its top, quoted so it can be pasted.
"""

from __future__ import annotations

import os
import shlex
import sys

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def command(script: str, argv: list[str] | None) -> str:
    """`python experiments/SCRIPT ARGS` as the user ran it (argv None: the process's own)."""
    args = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", f"experiments/{script}", *args])


def replace_section(name: str, body: str, path: str = README) -> bool:
    """Put `body` between the markers of section `name`; False (and a warning) without them."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = open(path).read()
    if start not in text or end not in text:
        print(f"{path} has no {start} ... {end} markers; not updated", file=sys.stderr)
        return False
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(f"{head}{start}\n{body}{end}{tail}")
    return True
