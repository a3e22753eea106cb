"""The documentation runs as written: every ```bash block of docs/ runs in a fresh directory
(exit code 0; a block of plain `tensorcfr` commands in this process), every ```python block
runs (the blocks of a page share one namespace, in order), and a block shown but not run
(```console) says why just above it."""

import glob
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import cli

DOCS = Path(__file__).parent.parent / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md"))
FENCE = re.compile(r"(?:^|\n)((?:<!--[^\n]*-->\n)?)```(\w*)[^\n]*\n(.*?)\n```", re.S)


def plain_commands(code: str) -> list[list[str]] | None:
    """The argument lists of a bash block whose every line is one `tensorcfr` command (comments
    and globs allowed; no variable, substitution, pipe, redirection or list), else None.

    Such a block runs in this process through the console script's `main`, each command's
    globs expanded as bash would in the page's directory; a fresh process a command cost
    2-3 s of imports (the console script is tested in test_packaging). Any other block runs
    in bash."""
    commands = []
    for line in code.splitlines():
        if "$" in line or "`" in line or "\\" in line:
            return None
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
        if not words:
            continue
        if words[0] != "tensorcfr" or any(set(w) <= set(lexer.punctuation_chars) for w in words):
            return None
        commands.append(words)
    return commands


def blocks(page: Path):
    """(language, code, the comment line above it or '') of each fenced block of `page`."""
    return [(m.group(2), m.group(3), m.group(1)) for m in FENCE.finditer(page.read_text())]


def test_the_docs_have_their_pages():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    for page in ("index.md", "getting-started.md", "guide.md", "concepts.md", "changelog.md", "reference/cli.md",
                 "reference/api.md", "tutorials/compare.md", "tutorials/custom-game.md", "tutorials/update-rule.md",
                 "tutorials/monte-carlo.md", "tutorials/long-runs.md", "tutorials/gpu.md", "tutorials/interop.md",
                 "tutorials/holdem.md", "tutorials/thesis.md", "results/benchmark.md", "results/peers.md", "results/gpu.md"):
        assert page in names, page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_runs_as_written(page, tmp_path, monkeypatch):
    text = page.read_text()
    for module in re.findall(r"<!-- needs: (\w+) -->", text):  # a page about an optional library
        pytest.importorskip(module)
    found = blocks(page)
    namespace = {"__name__": f"docs_{page.stem}"}
    env = {k: v for k, v in os.environ.items() if k != "TENSORCFR_LOGDIR"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    monkeypatch.chdir(tmp_path)
    for lang, code, above in found:
        if lang == "python":
            exec(compile(code, str(page), "exec"), namespace)
        elif lang == "bash" and (commands := plain_commands(code)) is not None:
            monkeypatch.delenv("TENSORCFR_LOGDIR", raising=False)
            for args in commands:
                args = [a for arg in args for a in (sorted(glob.glob(arg)) or [arg] if "*" in arg else [arg])]
                r = cli(*args[1:])
                assert r.returncode == 0, f"{page.name}:\n{shlex.join(args)}\n{r.stderr[-2000:]}"
        elif lang == "bash":
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=600)
            assert r.returncode == 0, f"{page.name}:\n{code}\n{r.stderr[-2000:]}"
        elif lang == "console":
            assert above.startswith("<!-- not run:"), f"{page.name}: a console block without '<!-- not run: why -->'"
