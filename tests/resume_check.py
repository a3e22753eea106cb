"""A check shared by the CLI tests of resumed runs."""

from __future__ import annotations

import json

import numpy as np


def resume_equals_straight(main, capsys, args: list[str], run_dir: str, total: int, folder) -> tuple[dict, dict]:
    """Resume `run_dir` to `total` iterations and run `args` (a `solve` with `--json`) straight
    to `total`, each saving its policy: the exploitabilities and the policy files must agree
    bit for bit. Returns the two runs' JSON (resumed, straight)."""
    assert main(["resume", run_dir, "--iterations", str(total), "--json", "--save-policy", str(folder / "a.npz")]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert main([*args, "--iterations", str(total), "--save-policy", str(folder / "b.npz")]) == 0
    straight = json.loads(capsys.readouterr().out)
    assert resumed["exploitability"] == straight["exploitability"]
    a, b = np.load(folder / "a.npz"), np.load(folder / "b.npz")
    assert all(np.array_equal(a[k], b[k]) for k in a.files if k not in ("created",))
    return resumed, straight
