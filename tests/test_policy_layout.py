"""Policy files by public infoset and type (the `.npz` of a public-form game too large for one key
per infoset): the same strategy as the file by key, to the last bit, read back by the library,
the CLI and numpy alone; files that do not fit the game are one-line errors."""

import dataclasses
import json

import numpy as np
import pytest
import torch

import tensorcfr
from tensorcfr import games
from tensorcfr.cli.commands import main
from tensorcfr.cli.strategy import hand_grid, public_names_needed
from tensorcfr.io import policies
from tensorcfr.io.policies import load_policy, policy_info, policy_table, read_policy, write_policy

SMALL_FLOP = "holdem_flop(board=AsKhQs, pot=4, stack=5, bets=(1,), cap=0, ranks=AKQJT, suits=sh)"
SMALL_TURN = "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)"
GAMES = [(g, "public") for g in ("kuhn", "leduc", "liars_dice(faces=3)", "dudo(2,1,1)", "ocp(12)", SMALL_TURN,
                                   SMALL_FLOP)] + [(g, "generic") for g in ("kuhn", "leduc", SMALL_TURN)]


def random_policy(cg, seed=0):
    """A strategy with random probabilities at every infoset, dead (public infoset, type) pairs too."""
    g = torch.Generator().manual_seed(seed)
    return tensorcfr.Policy(cg, tuple(tp.normalize(torch.rand(1, tp.num_sequences, generator=g, dtype=torch.float64))
                                      for tp in cg.treeplexes))


@pytest.mark.parametrize("spec,form", GAMES)
def test_the_public_layout_holds_the_keyed_strategy(spec, form, tmp_path):
    """Either form writes the layout (the generic form's: a public infoset per infoset, one type)."""
    cg = tensorcfr.compile(spec, form=form)
    pol = random_policy(cg)
    path = str(tmp_path / "p.npz")
    assert write_policy(path, {"average": pol, "current": random_policy(cg, 1)}, layout="public", iteration=7) == \
        "public"
    info = policy_info(path)
    assert (info["layout"], info["version"], info["game"], info["form"], info["strategies"]) == \
        ("public", 2, cg.name, form, ["average", "current"])
    assert load_policy(path)["average"] == pol.to_dict()  # every reachable infoset, by key, the same bits
    back = read_policy(cg, path)
    for tp, a, b in zip(cg.treeplexes, pol.sigma, back.sigma):
        live = tp.reachable(torch.float64)
        live = torch.ones_like(a) if live is None else live
        # where chance reaches, renormalised as a file by key is (p / sum, which may move the last bit)
        torch.testing.assert_close(a * live, b * live, rtol=1e-15, atol=0)
    keyed = tensorcfr.evaluate(cg, tensorcfr.Policy.from_dict(cg, pol.to_dict())).nash_conv
    torch.testing.assert_close(tensorcfr.evaluate(cg, back).nash_conv, keyed, rtol=1e-13, atol=1e-15)


def test_the_public_layout_is_readable_with_numpy_alone(tmp_path):
    cg = tensorcfr.compile(SMALL_TURN, form="public")
    pol = random_policy(cg)
    path = str(tmp_path / "turn.npz")
    write_policy(path, {"average": pol}, layout="public")
    table = pol.to_dict()
    z = np.load(path)
    assert bool(z["names"]) and str(z["layout"]) == "public"
    for p in (0, 1):
        types, public, live = list(z[f"p{p}_types"]), list(z[f"p{p}_public"]), z[f"p{p}_live"]
        infoset, action, probs = z[f"p{p}_infoset"], z[f"p{p}_action"], z[f"p{p}_average"]
        seen = 0
        for u, t in zip(*np.nonzero(live)):
            rows = np.flatnonzero(infoset == u)
            assert table[types[t] + public[u]] == dict(zip(action[rows].tolist(), probs[rows, t].tolist()))
            seen += 1
        assert seen == sum(1 for k in table if cg.infoset_players()[k] == p)


def test_the_cli_writes_a_large_game_by_public_infoset(tmp_path, capsys, monkeypatch):
    """Past PUBLIC_LAYOUT_INFOSETS (lowered here to the small flop's size) `solve` writes the public
    layout; `eval` (into the file's form without being told) and `plot-strategy` read it and say
    what they say of the same policy by key."""
    monkeypatch.setattr(policies, "PUBLIC_LAYOUT_INFOSETS", 1000)
    path, keyed = str(tmp_path / "flop.npz"), str(tmp_path / "flop.json")
    args = ["solve", SMALL_FLOP, "--algo", "dcfr", "--iterations", "30", "--no-log", "--device", "cpu", "--json",
            "--form", "public"]  # auto would compile this small spot generic; eval then takes the file's form
    assert main([*args, "--save-policy", path]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["policy_layout"] == "public" and policy_info(path)["layout"] == "public"
    assert main([*args, "--save-policy", keyed]) == 0
    assert json.loads(capsys.readouterr().out)["policy_layout"] == "keys"
    evals = []
    for f in (path, keyed):
        assert main(["eval", SMALL_FLOP, f, "--json"]) == 0
        evals.append(json.loads(capsys.readouterr().out))
    assert evals[0]["nash_conv"] == pytest.approx(evals[1]["nash_conv"], abs=1e-12)
    assert evals[0]["nash_conv"] == pytest.approx(out["nash_conv"], rel=1e-9)
    assert main(["eval", SMALL_FLOP, path, keyed, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value_a"] == pytest.approx(0.0, abs=1e-12)
    # the picture reads only the lines on the way to --at, and draws what the keyed table draws
    game = games.make(SMALL_FLOP)
    at = "check check/check bet 1"
    part = policy_table(path, keep=public_names_needed(game, at))
    full = load_policy(keyed)["average"]
    assert 0 < len(part) < len(full) and all(full[k] == v for k, v in part.items())
    _, _, a = hand_grid(game, part, at)
    _, _, b = hand_grid(game, full, at)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    png = str(tmp_path / "grid.png")
    assert main(["plot-strategy", SMALL_FLOP, path, "--at", at, "--out", png]) == 0
    assert "grid.png" in capsys.readouterr().out


def test_a_json_policy_too_large_is_refused_before_the_solve(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(policies, "JSON_MAX_INFOSETS", 10)
    path = tmp_path / "leduc.json"
    assert main(["solve", "leduc", "--iterations", "100000000", "--no-log", "--save-policy", str(path)]) == 2
    err = capsys.readouterr().err
    assert "too many for JSON" in err and "save it as .npz" in err and len(err.strip().splitlines()) == 1
    assert not path.exists()


def test_public_files_that_do_not_fit_are_one_line_errors(tmp_path):
    cg = tensorcfr.compile(SMALL_TURN, form="public")
    path = str(tmp_path / "turn.npz")
    write_policy(path, {"average": random_policy(cg)}, layout="public")
    other = tensorcfr.compile(SMALL_TURN.replace("pot=4", "pot=3"), form="public")  # same shapes, another game
    with pytest.raises(tensorcfr.TensorCFRError, match="is a policy of .*pot=4.*not of .*pot=3"):
        read_policy(other, path)
    with pytest.raises(tensorcfr.TensorCFRError, match="written from the public form, read into the generic"):
        read_policy(tensorcfr.compile(SMALL_TURN, form="generic"), path)
    with pytest.raises(tensorcfr.TensorCFRError, match="has no 'current' strategy"):
        read_policy(cg, path, "current")
    z = dict(np.load(path))
    z["p1_average"] = z["p1_average"].copy()
    j = int(np.flatnonzero(z["p1_live"].reshape(-1))[5])  # a reachable (u, t)
    u, t = divmod(j, z["p1_live"].shape[1])
    z["p1_average"][np.flatnonzero(z["p1_infoset"] == u)[0], t] += 0.5
    bad = str(tmp_path / "bad.npz")
    np.savez(bad, **z)
    key = cg.treeplexes[1].infoset_keys[j]
    with pytest.raises(tensorcfr.TensorCFRError, match=f"infoset '{key}' has probabilities .* do not sum to 1"):
        read_policy(cg, bad)
    z["p1_average"] = z["p1_average"][:, :-1]
    np.savez(bad, **z)
    with pytest.raises(tensorcfr.TensorCFRError, match="does not fit .* player 1's public sequences or types"):
        read_policy(cg, bad)
    (tmp_path / "cut.npz").write_bytes(open(path, "rb").read()[:5000])
    with pytest.raises(tensorcfr.TensorCFRError, match="damaged or not a policy file"):
        policy_info(str(tmp_path / "cut.npz"))


def test_keys_that_are_not_type_then_public_are_not_named(tmp_path, monkeypatch):
    """A game whose keys do not split into a type's name and a public one: the file keeps the
    probabilities without names; the library reads it, the key tables say why they cannot."""
    cg = tensorcfr.compile("kuhn", form="public")
    namer = cg.treeplexes[0].namer
    odd = lambda player, u, t, *m: [k[::-1] for k in namer(player, u, t, *m)]  # noqa: E731 - keys reversed
    # copies, not the compiled game itself, which the process may hand out again
    cg = dataclasses.replace(cg, treeplexes=tuple(dataclasses.replace(tp, namer=odd) for tp in cg.treeplexes))
    assert [tp.split_names() for tp in cg.treeplexes] == [None, None]
    path = str(tmp_path / "kuhn.npz")
    pol = random_policy(cg)
    write_policy(path, {"average": pol}, layout="public")
    assert not bool(np.load(path)["names"]) and "p0_types" not in np.load(path).files
    with pytest.raises(tensorcfr.TensorCFRError, match="without key names"):
        load_policy(path)
    assert torch.equal(read_policy(cg, path).sigma[0], pol.sigma[0])
