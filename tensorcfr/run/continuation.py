"""Values of Dudo's continuation games, solved smallest first and cached.

Dudo(K, D1, D2) pays the value of the next round (games/dudo.py), so its payoffs need
V(a, b), the first bidder's value of Dudo(K, a, b), for the smaller games. `dudo_value`
solves each one (which in turn asks for its own smaller games) with DCFR until NashConv is at
most `TARGET_NASH_CONV`: the value of a profile with NashConv e lies within e of the game
value. Results are kept in memory and in a JSON file (`paths.values_file`), so each game
is solved once per machine. A long solve (Dudo(6,1,2): 42.5 minutes on a 2-core CPU)
says how far it is on stderr and saves its state beside that file every few minutes: an
interrupted one continues from there the next time it is asked for.

Example:
    >>> from tensorcfr.run.continuation import dudo_value
    >>> round(dudo_value(4, 1, 1), 6)
    -0.125
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time

from tensorcfr import games as games_pkg
from tensorcfr.games.dudo import Dudo

from tensorcfr.errors import TensorCFRError
from tensorcfr.io.files import dumps, read_json, write_atomic
from tensorcfr.paths import values_file
from tensorcfr.run.checkpoints import check_checkpoint, load_checkpoint, save_checkpoint
from tensorcfr.run.solver import Solver
from tensorcfr.run.training import evaluation_row, train

TARGET_NASH_CONV = 1e-7  # moves the larger game's payoffs, so its value, by at most this
MAX_ITERATIONS = 20_000
EVAL_EVERY = 100  # iterations between evaluations
PROGRESS_AFTER = 10.0  # seconds: a solve that has run this long reports at each evaluation
SAVE_EVERY = 300.0  # seconds between saves of an unfinished solve's state
_memory: dict[str, dict] = {}


def _checksum(entry: dict) -> str:
    """What an entry says, hashed: a value edited by hand (or by a bad disk) no longer matches."""
    body = {k: v for k, v in entry.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def _verified(name: str, entry) -> dict | None:
    """The cached entry of `name` if it is whole and its own (game, finite value in [-1, 1],
    finite NashConv, checksum); otherwise None, saying why on stderr."""
    if entry is None:
        return None
    ok = (isinstance(entry, dict) and entry.get("game") == name and entry.get("checksum") == _checksum(entry)
          and isinstance(entry.get("value"), float) and math.isfinite(entry["value"]) and -1 <= entry["value"] <= 1
          and isinstance(entry.get("nash_conv"), float) and math.isfinite(entry["nash_conv"]))
    if not ok:
        why = "has no checksum (an older tensorcfr wrote it)" if isinstance(entry, dict) and "checksum" not in entry \
            else "is damaged or was edited"
        print(f"tensorcfr: the cached value of {name} in {values_file()} {why}; solving it again", file=sys.stderr)
        return None
    return entry


def _load() -> dict:
    try:
        table = read_json(values_file())
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def _store(name: str, entry: dict) -> None:
    path = values_file()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        table = _load()
        table[name] = entry
        text = dumps(table, strict=True, indent=1, sort_keys=True)
        write_atomic(path, lambda f: f.write(text))  # an interrupted write leaves the old file
    except (OSError, TensorCFRError):
        pass  # a read-only home only costs a re-solve next time


def partial_file(name: str) -> str:
    """Where an unfinished solve of the continuation game `name` keeps its state."""
    return os.path.join(os.path.dirname(values_file()), f"{name}.partial.pt")


def dudo_entry(faces: int, a: int, b: int, device: str = "auto") -> dict:
    """{game, value, nash_conv, iterations, seconds, profile} of Dudo(faces, a, b), solved or
    cached. The value is that of whichever profile, DCFR's average or its current strategy,
    first has NashConv at most the target (either lies within its NashConv of the game value):
    on these games the current strategy gets there first (Dudo(5,1,2): 100-200 iterations in two
    runs against the average's 1,900; Dudo(5,1,1): 100 against 1,000), and `evaluate` measures both anyway.
    Dudo(6,1,2) is the exception: its average gets there after 18,400 iterations on an H100,
    and on a 2-core CPU hovers at 1.4-4.9e-7 from 10,000 iterations to the budget of 20,000 (42.5 minutes).

    Example:
        >>> dudo_entry(4, 1, 1)["game"]
        'dudo(4,1,1)'
    """
    name = f"dudo({faces},{a},{b})"
    if name in _memory:
        return _memory[name]
    entry = _verified(name, _load().get(name))
    # an entry short of the target is solved again, unless it ran out of iterations (it would again)
    if entry is None or (entry["nash_conv"] > TARGET_NASH_CONV and entry.get("iterations", 0) < MAX_ITERATIONS):
        entry = _solve(name, [e["value"] for e in dudo_chain(faces, a, b)], device)
        _store(name, entry)
    _memory[name] = entry
    return entry


def _solve(name: str, inputs: list[float], device: str) -> dict:
    """Solve the continuation game `name`, whose payoffs use the smaller games' values `inputs`,
    to `TARGET_NASH_CONV`; its entry, checksummed. Continues a saved unfinished solve of the
    same game, inputs and settings (`partial_file`), and saves its own every `SAVE_EVERY` s."""
    t0 = time.perf_counter()
    solver = Solver(name, "dcfr", device=device, dtype="float64", form="auto")
    path = partial_file(name)
    identity = solve_identity(name, inputs, solver.game.form)
    before = _resume(solver, path, identity)  # seconds spent by the earlier, interrupted runs
    if before is None:  # a state that failed half-way through loading: a fresh solver
        solver, before = Solver(name, "dcfr", device=device, dtype="float64", form="auto"), 0.0

    def progress(row: dict) -> None:
        elapsed = time.perf_counter() - t0
        if elapsed >= PROGRESS_AFTER:
            print(f"tensorcfr: solving {name} for its value (Dudo's continuation values): "
                  f"{row['iteration']:,} iterations, NashConv {min(row['nash_conv'], row['nash_conv_current']):.2e} "
                  f"(target {TARGET_NASH_CONV:g}), {before + elapsed:,.0f} s", file=sys.stderr, flush=True)

    def save(loop: dict) -> None:  # (train saves once more at the end: a finished solve keeps nothing)
        last = loop["rows"][-1] if loop["rows"] else None
        if last is None or min(last["nash_conv"], last["nash_conv_current"]) > TARGET_NASH_CONV:
            _save_partial(solver, path, identity, before + time.perf_counter() - t0)

    # the one training loop: evaluate both profiles every EVAL_EVERY iterations, stop when
    # either is at the target (exploitability = NashConv / 2), save the state every SAVE_EVERY s
    rows = train(solver, max(MAX_ITERATIONS - solver.iteration, 0), eval_every=EVAL_EVERY,
                 target_exploitability=TARGET_NASH_CONV / 2, stop_on="either", callback=progress,
                 checkpoint=save, checkpoint_seconds=SAVE_EVERY, histograms=False)
    if not rows or rows[-1]["iteration"] != solver.iteration:  # (a solve resumed at its budget)
        rows.append(evaluation_row(solver))
    last = rows[-1]
    profile = "average" if last["nash_conv"] <= last["nash_conv_current"] else "current"
    suffix = "" if profile == "average" else "_current"
    try:
        os.remove(path)
    except OSError:
        pass
    entry = {"game": name, "value": last["game_value" + suffix], "nash_conv": last["nash_conv" + suffix],
             "iterations": solver.iteration, "seconds": round(before + time.perf_counter() - t0, 3),
             "profile": profile}
    entry["checksum"] = _checksum(entry)
    return entry


def solve_identity(name: str, inputs: list[float], form: str) -> dict:
    """What a saved unfinished solve must match to be continued: the game, the smaller games'
    values its payoffs use, and the solver's settings."""
    return {"game": name, "inputs": inputs, "algorithm": "dcfr", "dtype": "float64", "form": form}


def _save_partial(solver: Solver, path: str, identity: dict, seconds: float) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save_checkpoint(path, {**identity, "seconds": seconds, "solver": solver.state_dict(copy=False), "loop": {}})
    except (OSError, TensorCFRError) as e:  # a read-only cache only costs the progress on interruption
        print(f"tensorcfr: cannot save the unfinished solve of {identity['game']} ({e})", file=sys.stderr)


def _resume(solver: Solver, path: str, identity: dict) -> float | None:
    """Load the unfinished solve at `path` into `solver` if it is of the same game, inputs and
    settings (else it is ignored and later replaced): the seconds it had taken, 0 where there
    was none to load, None where loading failed after the solver's state was touched."""
    if not os.path.exists(path):
        return 0.0
    try:
        ckpt = check_checkpoint(load_checkpoint(path), path)
    except TensorCFRError as e:
        print(f"tensorcfr: {e}; solving {identity['game']} afresh", file=sys.stderr)
        return 0.0
    differ = [k for k in identity if ckpt.get(k) != identity[k]]
    if differ:  # (inputs: the smaller games' values its payoffs used)
        print(f"tensorcfr: {path} is an unfinished solve with other {', '.join(differ)}; starting afresh",
              file=sys.stderr)
        return 0.0
    try:
        solver.load_state_dict(ckpt["solver"])
    except TensorCFRError as e:
        print(f"tensorcfr: {e}; solving {identity['game']} afresh", file=sys.stderr)
        return None
    print(f"tensorcfr: continuing the solve of {identity['game']} from iteration {solver.iteration:,} ({path})",
          file=sys.stderr)
    seconds = ckpt.get("seconds", 0.0)
    return float(seconds) if isinstance(seconds, (int, float)) else 0.0


class ContinuationValues:
    """V(a, b) of Dudo(faces, a, b) as a mapping read by `games.dudo.Dudo`: each value is
    solved (or read from the cache) when a payoff first needs it, so making a Dudo game, or
    asking its size, solves nothing.

    Example:
        >>> round(ContinuationValues(4)[(1, 1)], 6)  # Dudo(4,1,1): the first bidder loses 1/8
        -0.125
    """

    def __init__(self, faces: int):
        self.faces = faces

    def __getitem__(self, ab: tuple[int, int]) -> float:
        return dudo_value(self.faces, *ab)

    def __repr__(self) -> str:
        return f"ContinuationValues({self.faces})"


def dudo_game(faces: int = 4, dice1: int = 1, dice2: int = 1, values=None, continuation=None) -> Dudo:
    """Dudo(faces, dice1, dice2) whose payoffs use the smaller games' values, solved and cached
    by `dudo_value` (or the given `values`): the factory `games.make("dudo(...)")` calls once
    tensorcfr is imported.

    Example:
        >>> dudo_game(4, 1, 2).payoff(0)  # player 1 loses its die: Dudo(4,0,2) is lost
        -1.0
    """
    if values is None and continuation is None:
        values = ContinuationValues(faces)
    return Dudo(faces, dice1, dice2, values=values, continuation=continuation)


def dudo_value(faces: int, a: int, b: int) -> float:
    """V(a, b): the first bidder's value of Dudo(faces, a, b) (a, b >= 1)."""
    return dudo_entry(faces, a, b)["value"]


def dudo_chain(faces: int, dice1: int, dice2: int) -> list[dict]:
    """The continuation games Dudo(faces, dice1, dice2) depends on, smallest first, with their
    values (solving any not yet known).

    Example:
        >>> [e["game"] for e in dudo_chain(4, 1, 2)]
        ['dudo(4,1,1)']
    """
    need, todo = set(), [(dice1, dice2)]
    while todo:
        a, b = todo.pop()
        for nxt in ((a - 1, b), (b - 1, a)):
            if min(nxt) >= 1 and nxt not in need:
                need.add(nxt)
                todo.append(nxt)
    return [dudo_entry(faces, a, b) for a, b in sorted(need, key=lambda ab: (sum(ab), ab))]


# games.make("dudo(...)") gives a Dudo whose values are solved here (the games package itself
# imports nothing of the solver)
games_pkg.register("dudo", dudo_game)
