"""The README's quick start and Python API run as written."""

import re
import shlex
from pathlib import Path

from cli_run import cli

README = (Path(__file__).parent.parent / "README.md").read_text()


def block(heading, lang):
    section = README.split(f"## {heading}", 1)[1]
    return re.search(rf"```{lang}\n(.*?)```", section, re.S).group(1)


def test_python_api_example(capsys):
    exec(compile(block("Python API", "python"), "README.md", "exec"), {})
    assert capsys.readouterr().out.strip()


def test_quick_start_commands(tmp_path, monkeypatch):
    """Each command in this process, through the console script's `main` (a fresh process each
    cost 2-3 s of imports; the console script itself is tested in test_packaging)."""
    commands = [line.split("#")[0].strip() for line in block("Quick start", "bash").splitlines()]
    commands = [c for c in commands if c]
    assert len(commands) >= 5
    monkeypatch.delenv("TENSORCFR_LOGDIR", raising=False)  # the README's default: ./runs
    for cmd in commands:
        args = shlex.split(cmd)
        assert args[0] == "tensorcfr"
        r = cli(*args[1:], cwd=tmp_path)
        assert r.returncode == 0, f"{cmd}: {r.stderr}"
    assert any((tmp_path / "runs").iterdir())


def test_readme_is_a_front_page_whose_links_resolve():
    assert len(README.splitlines()) <= 200
    root = Path(__file__).parent.parent
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README):  # relative links and pictures
        assert (root / target).exists(), target
