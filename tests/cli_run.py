"""The command line run in-process, shared by the tests of bad input and faults."""

from __future__ import annotations

from tensorcfr.cli.commands import main


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
