"""MkDocs hooks: the CLI reference is generated from the parser at build time, so it cannot
drift from `tensorcfr --help`."""

from __future__ import annotations

MARKER = "<!-- cli-reference -->"


def cli_reference() -> str:
    """Markdown of every command's `--help`, from `tensorcfr.cli.parser.build_parser`."""
    import os

    from tensorcfr.cli.parser import build_parser

    os.environ.setdefault("COLUMNS", "100")  # argparse wraps to the terminal's width: a fixed one here
    parser = build_parser()
    out = ["## tensorcfr", "", "```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        out += [f"## tensorcfr {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_reference())
    return markdown
