"""Rewrite one marked section of the README or of a docs page with an experiment's table, and
publish its pictures to the docs (shared by the scripts).

The section lies between `<!-- NAME:start -->` and `<!-- NAME:end -->` in README.md or in one
page under docs/; everything outside it is kept. The command that made the table is written
at its top, quoted so it can be pasted.
"""

from __future__ import annotations

import os
import shlex
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")


def command(script: str, argv: list[str] | None) -> str:
    """`python experiments/SCRIPT ARGS` as the user ran it (argv None: the process's own)."""
    args = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", f"experiments/{script}", *args])


def holder(name: str) -> str | None:
    """The file (README.md, or a page under docs/) that holds section `name`'s markers."""
    start = f"<!-- {name}:start -->"
    pages = [README] + sorted(os.path.join(d, f) for d, _, fs in os.walk(DOCS) for f in fs if f.endswith(".md"))
    return next((p for p in pages if start in open(p).read()), None)


def publish_picture(path: str) -> str:
    """Copy the picture `path` into docs/assets (where the pages show it); returns the copy's path."""
    import shutil

    os.makedirs(os.path.join(DOCS, "assets"), exist_ok=True)
    target = os.path.join(DOCS, "assets", os.path.basename(path))
    shutil.copyfile(path, target)
    return target


def replace_section(name: str, body: str, path: str | None = None) -> bool:
    """Put `body` between the markers of section `name` (in `path`, or wherever they are);
    False (and a warning) without them."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    path = path or holder(name) or README
    text = open(path).read()
    if start not in text or end not in text:
        print(f"{path} has no {start} ... {end} markers; not updated", file=sys.stderr)
        return False
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    with open(path, "w") as f:
        f.write(f"{head}{start}\n{body}{end}{tail}")
    return True
