"""The command line run in-process, shared by the tests of the CLI, its bad input and faults.

A test whose subject is not the process (its signals, its exit, its console script) runs the
command here rather than in a fresh Python: the same `main` the console script calls, without
the 2.7 s a fresh process takes to run `tensorcfr games`, mostly importing torch (2026-11-28)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import NamedTuple

from tensorcfr.cli.commands import main


class Done(NamedTuple):
    """What `subprocess.run(..., capture_output=True, text=True)` returns, the fields the tests read."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: str, cwd=None, input: str | None = None) -> Done:
    """`tensorcfr ARGS` run in this process, in directory `cwd` (then back), reading `input` as
    its standard input: exit code (argparse's exits included), stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    here, stdin = os.getcwd(), sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.StringIO(input or "")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([str(a) for a in args])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
        sys.stdin = stdin
    return Done(code, out.getvalue(), err.getvalue())


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr stripped) of `tensorcfr ARGS`, argparse's exits included."""
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err.strip()


def error_line(err: str) -> str:
    """The one error line of stderr (a logged run says its run directory first); fails unless
    there is exactly one and it has the CLI's form."""
    lines = [line for line in err.splitlines() if not line.startswith("run directory:")]
    assert len(lines) == 1 and lines[0].startswith("tensorcfr: error:"), err
    return lines[0]
