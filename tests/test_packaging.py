"""The package as PyPI users get it: the wheel's contents, a fresh install, the old games name."""

import importlib.util
import os
import pathlib
import shutil
import site
import subprocess
import sys
import venv
import zipfile

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = pathlib.Path(__file__).resolve().parent.parent


def python(code, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_package_list_is_every_package_folder():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tensorcfr").rglob("__init__.py")}
    folders |= {"tensorcfr." + ".".join(p.parent.relative_to(ROOT).parts)
                for p in (ROOT / "games").rglob("__init__.py")}
    assert set(config["packages"]) == folders
    assert config["package-dir"] == {"tensorcfr.games": "games"}


def test_old_games_name_is_the_same_modules():
    code = ("import games, games.kuhn; from games.base import Game; import tensorcfr.games as g, tensorcfr.games.kuhn;"
            "print(games is g, games.kuhn is tensorcfr.games.kuhn, Game is g.Game, 'kuhn' in games.available())")
    # from a checkout, before and after tensorcfr
    assert python(code, ROOT).stdout.split() == ["True"] * 4
    assert python("import tensorcfr; " + code, ROOT).stdout.split() == ["True"] * 4


def test_a_users_own_games_package_is_left_alone(tmp_path):
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "__init__.py").write_text("MINE = 1\n")
    r = python("import tensorcfr, games, tensorcfr.games; print(games.MINE, games is not tensorcfr.games)", tmp_path)
    assert r.stdout.split() == ["1", "True"], r.stderr


def test_wheel_installs_and_runs_in_a_fresh_environment(tmp_path):
    """Builds the wheel, installs it (no dependencies: they come from this interpreter's site-packages) into a
    new virtual environment and runs solve, lp and --version from a folder outside the repository."""
    source = tmp_path / "source"  # a copy: setuptools writes build/ and *.egg-info/ beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "tensorcfr", "games"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    # the installed setuptools where there is one (no download); otherwise pip fetches one, as users' pip does
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(wheels), str(source)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (wheel,) = wheels.glob("tensorcfr-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tensorcfr/games/__init__.py" in names and "tensorcfr/games/holdem.py" in names
    assert "tensorcfr/py.typed" in names and any(n.endswith("licenses/LICENSE") for n in names)
    assert not [n for n in names if n.startswith(("games/", "tests/", "experiments/", "docs/"))]

    env_dir = tmp_path / "env"
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    # the dependencies of this interpreter, which may itself be a virtual environment (whose
    # packages system_site_packages does not see): its site folders go on the new one's path
    lib = subprocess.run([bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    pathlib.Path(lib, "parent_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q", "--no-deps",
                        str(wheel)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"

    def run(*args):
        r = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return r.stdout

    where = run(str(bin_dir / "python"), "-c",
                "import tensorcfr, tensorcfr.games as g; print(tensorcfr.__file__, g.__file__)")
    assert all(str(env_dir) in path for path in where.split()), where  # the wheel's copy, not the checkout's
    import tensorcfr
    assert run(str(bin_dir / "tensorcfr"), "--version").strip() == f"tensorcfr {tensorcfr.__version__}"
    assert '"exploitability"' in run(str(bin_dir / "tensorcfr"), "solve", "kuhn", "--iterations", "200", "--json",
                                     "--quiet")
    assert "-0.0555555" in run(str(bin_dir / "tensorcfr"), "lp", "kuhn")  # -1/18
