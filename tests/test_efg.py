"""Gambit .efg files in (issue 18's `efg:PATH`): the round trip through `to_efg`, hand-written
files with known values, malformed files named by line."""

import os
from fractions import Fraction

import pytest
import torch

from tensorcfr import games
import tensorcfr
from tensorcfr.cli.commands import main
from tensorcfr.io.interop import to_efg
from tensorcfr.lp import solve_lp

DATA = os.path.join(os.path.dirname(__file__), "data")


@pytest.mark.parametrize("spec", ["kuhn", "leduc", "random(seed=3)", "random(seed=7)"])
def test_round_trip_gives_the_same_compiled_game(spec, tmp_path):
    path = tmp_path / "g.efg"
    path.write_text(to_efg(spec))
    a, b = tensorcfr.compile(spec, cache=False), tensorcfr.compile(f"efg:{path}", cache=False)
    assert a.sizes() == b.sizes()
    assert torch.equal(a.payoff, b.payoff) and torch.equal(a.payoff_seq, b.payoff_seq)
    for x, y in zip(a.treeplexes, b.treeplexes):
        assert x.infoset_keys == y.infoset_keys and x.action_names == y.action_names
        assert all(torch.equal(u, v) for u, v in zip(x.tensors().values(), y.tensors().values()))
    sa, sb = tensorcfr.Solver(a, "cfr+", device="cpu"), tensorcfr.Solver(b, "cfr+", device="cpu")
    sa.step(25)
    sb.step(25)
    assert all(torch.allclose(x, y, rtol=0, atol=1e-12) for x, y in zip(sa.average, sb.average))


@pytest.mark.parametrize("name,value", [("matrix2x2.efg", Fraction(1, 5)), ("bluff.efg", Fraction(1, 3) + Fraction(1, 4))])
def test_hand_written_files_solve_to_their_values(name, value, device):
    spec = f"efg:{os.path.join(DATA, name)}"
    assert solve_lp(spec).value == pytest.approx(float(value), abs=1e-12)
    s = tensorcfr.Solver(spec, "dcfr", device=device)
    s.step(2000)
    ev = s.evaluate()["average"]
    assert ev.exploitability.item() < 1e-3 and abs(ev.game_value.item() - float(value)) < 1e-3


def test_fractions_omitted_blocks_and_inner_outcomes():
    g = games.make(f"efg:{os.path.join(DATA, 'bluff.efg')}")
    root = g.initial_state()
    assert g.chance_outcomes(root) == (("H", 0.5), ("L", 0.5))
    low = g.next_state(root, "L")
    facing = g.next_state(low, "bet")  # its infoset's actions were omitted in the file
    assert g.legal_actions(facing) == ("call", "fold") and g.infoset_key(facing) == "facing a bet"
    assert g.utilities(g.next_state(facing, "fold")) == (1.25, -1.25)  # outcome 2, reused, plus the 1/4 ante


@pytest.mark.parametrize("text,message", [
    ('EFG 2 R "x" { "A" "B" } ""\np "" 1 1 "s" { "a" "b" 0\n', r"line 2: expected an action's name, found '0'"),
    ('EFG 2 R "x" { "A" "B" } ""\nq "" 1\n', r"line 2: unknown node kind 'q'"),
    ('EFG 2 R "x" { "A" "B" } ""\np "" 1 1 "s" { "a" } 0\nt "" 7\n', r"line 3: outcome 7 is used before"),
    ('EFG 2 R "x" { "A" "B" "C" } ""\n', "this file has 3 players"),
    ('EFG 2 R "x" { "A" "B" } ""\nc "" 1 "" { "a" 1/0 } 0\n', r"line 2: expected a probability, found '1/0'"),
    ('EFG 2 R "x" { "A" "B" } ""\np "" 3 1 "s" { "a" } 0\n', "line 2: player 3 is not 1 or 2"),
    ("not an efg file at all", "line 1: not an EFG 2 R file"),
    ('EFG 2 R "x" { "A" "B" } ""\np "" 1 1 "s" { "a" "b"\n', r"line 2: a '\{' is never closed"),
])
def test_malformed_files_are_named_by_line(tmp_path, text, message):
    path = tmp_path / "bad.efg"
    path.write_text(text)
    with pytest.raises(games.GameError, match=message):
        games.make(f"efg:{path}")


def test_cli_errors(capsys, tmp_path):
    assert main(["solve", f"efg:{tmp_path / 'missing.efg'}", "--no-log"]) == 2
    assert "no .efg file at" in capsys.readouterr().err
    assert main(["lp", f"efg:{os.path.join(DATA, 'matrix2x2.efg')}", "--json"]) == 0
    assert '"value": 0.2' in capsys.readouterr().out


def test_an_edited_file_is_another_game_for_the_cache(tmp_path):
    path = tmp_path / "g.efg"
    path.write_text(to_efg("kuhn"))
    first = tensorcfr.compiler.generic.cache_file(games.make(f"efg:{path}"))
    path.write_text(to_efg("kuhn(ante=2)"))
    assert tensorcfr.compiler.generic.cache_file(games.make(f"efg:{path}")) != first
