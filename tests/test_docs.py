"""The documentation runs as written: every ```bash block of docs/ runs in a fresh directory
(exit code 0), every ```python block runs (the blocks of a page share one namespace, in
order), and a block shown but not run (```console) says why just above it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md"))
FENCE = re.compile(r"(?:^|\n)((?:<!--[^\n]*-->\n)?)```(\w*)[^\n]*\n(.*?)\n```", re.S)


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
        elif lang == "bash":
            r = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=600)
            assert r.returncode == 0, f"{page.name}:\n{code}\n{r.stderr[-2000:]}"
        elif lang == "console":
            assert above.startswith("<!-- not run:"), f"{page.name}: a console block without '<!-- not run: why -->'"
