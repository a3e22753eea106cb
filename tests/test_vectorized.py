"""Vectorised (level-by-level) and per-node compiling give identical compiled games: every
tensor equal with its dtype, the same infoset keys and action names, on every registered
game that has a vectorised form (with its default parameters and a few more), and the
vectorised walk names what is wrong with an invalid game, as the per-node walk does."""

import os

import numpy as np
import pytest
import torch

from tensorcfr import games
import tensorcfr
from tensorcfr.games.ocp import CardPokerVector
from tensorcfr.compiler import vector_form

EXTRA = ["kuhn(ante=2)", "ocp(2)", "ocp(12)", "ocp(60)", "dudo(3,1,1)", "dudo(4,1,2)", "dudo(4,2,1)",
         "dudo(2,2,2)", "liars_dice(faces=3)", "liars_dice(numdice=2,faces=2)", "domino(2,3)", "domino(3,1)", "domino(4,1)",
         "goofspiel(num_cards=3)", "goofspiel(num_cards=5,points_order=descending)",
         "goofspiel(num_cards=4,points_order=ascending,returns_type=point_difference)", "goofspiel(num_cards=2)"]
SMALL = 2_000_000  # histories; both walks run on games up to this size


# games that need parameters to be made, with small ones
MADE_WITH = {"holdem_river": "holdem_river(board=AsKhQsJh9s, pot=4, stack=8, ranks=AKQJ9, suits=sh)",
             "holdem_turn": "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)",
             "holdem_flop": "holdem_flop(board=AsKhQs, pot=4, stack=6, bets=(1,), cap=0, ranks=AKQJT, suits=sh)",
             "rhode_island": "rhode_island(raises=1, ranks='QKA', suits='sh')"}


def vectorised_specs():
    specs = [MADE_WITH.get(name, name) for name in games.available()]
    return [s for s in specs if vector_form(games.make(s)) is not None] + EXTRA


def assert_identical(a: tensorcfr.CompiledGame, b: tensorcfr.CompiledGame):
    ta, tb = a._tensors(), b._tensors()
    assert ta.keys() == tb.keys()
    for k in ta:
        assert ta[k].dtype == tb[k].dtype, k
        assert torch.equal(ta[k], tb[k]), k
    for p in (0, 1):
        pa, pb = a.treeplexes[p], b.treeplexes[p]
        assert pa.infoset_keys == pb.infoset_keys
        assert pa.action_names == pb.action_names
        for k, v in pa.tensors().items():
            assert torch.equal(v, pb.tensors()[k]), (p, k)
    assert a.sizes() == b.sizes()


def test_games_with_a_vectorised_form():
    assert {"kuhn", "leduc", "ocp", "dudo", "liars_dice", "domino"} <= set(vectorised_specs())


@pytest.mark.parametrize("spec", vectorised_specs())
def test_vectorised_equals_per_node(spec):
    per_node = tensorcfr.compile(spec, method="per-node", cache=False)
    assert per_node.num_histories <= SMALL
    vectorised = tensorcfr.compile(spec, method="vectorized", cache=False)
    assert_identical(per_node, vectorised)
    assert vectorised.node_parent is not None and vectorised.payoff_seq.dtype == torch.int32


def test_sizes_of_the_large_games_by_formula():
    """Sizes of games too large for the per-node walk in a test: the thesis' formulas
    (../shared/reference/games.md), with the per-node arrays dropped."""
    cg = tensorcfr.compile("ocp(700)", nodes=False, cache=False)
    assert cg.num_histories == 9 * 700 * 699 + 1 and cg.sizes()["infosets_with_choice"] == 4 * 700
    assert cg.node_parent is None and cg.num_terminals == 5 * 700 * 699
    cg = tensorcfr.compile("dudo(5,1,2)", nodes=False, cache=False)
    ms1, ms2, bids = 5, 15, 15
    assert cg.num_histories == ms1 * ms2 * (2 ** (bids + 1) - 1) + 1
    assert cg.sizes()["infosets_with_choice"] == (ms1 + ms2) * 2 ** (bids - 2)


def test_card_names_are_made_when_asked_for():
    """OCP(n) names a card by its number, made per key asked for, not as n strings up front
    (OCP(10^8): 20 s and gigabytes before `info` could answer); Kuhn keeps its letters."""
    v = games.make("ocp(100000000)").vectorized()
    assert v.card_names is None
    assert v.infoset_names(np.array([99_999_999 * 9 + 4])) == ["99999999:pb"]
    assert games.make("kuhn").vectorized().infoset_names(np.array([2 * 9 + 4])) == ["K:pb"]


def test_subclass_overriding_per_node_methods_is_walked_per_node():
    class Louder(games.Kuhn):
        def utilities(self, state):
            return tuple(2 * u for u in super().utilities(state))

    assert vector_form(Louder()) is None
    with pytest.raises(tensorcfr.TensorCFRError, match="no vectorised form"):
        tensorcfr.compile(Louder(), method="vectorized")
    assert tensorcfr.compile(Louder()).payoff.abs().sum() == 2 * tensorcfr.compile("kuhn").payoff.abs().sum()


class Broken(games.Game):
    """Kuhn's vectorised form with one thing broken (`vector` overrides one method)."""

    def __init__(self, vector):
        self.name, self.vector = "broken", vector

    def vectorized(self):
        return self.vector


class BadChance(CardPokerVector):
    def chance(self, s):
        return 0.9 * super().chance(s)


class SharedKey(CardPokerVector):
    def infoset(self, s):
        key = super().infoset(s)
        return np.where(s[:, 2] == 1, key - 1, key)  # "p" (player 1) collides with "" (player 0)


class Forgetful(CardPokerVector):
    def infoset(self, s):
        key = super().infoset(s)
        return np.where(s[:, 2] == 4, 4, key)  # player 0 forgets its card at "pb"


class Uneven(CardPokerVector):
    actions = ("pass", "bet", "raise")

    def legal(self, s):
        return np.concatenate([super().legal(s), ((s[:, 0] == 2) & (s[:, 1] == 1) & (s[:, 2] == 0))[:, None]], axis=1)

    def next(self, s, a):
        return super().next(s, np.where(s[:, 1] >= 0, np.minimum(a, 1), a))  # a raise is a bet


@pytest.mark.parametrize("vector, message", [
    (BadChance("k", 3, "sequential"), r"history \[\]: chance probabilities \[.*\] do not sum to 1"),
    (SharedKey("k", 3, "sequential"), r"infoset '.*' holds histories of both players"),
    (Forgetful("k", 3, "sequential"), r"perfect recall fails at infoset '0:pb'"),
    (Uneven("k", 3, "sequential"), r"infoset '2:' has legal actions \['pass', 'bet'\] at its first history but "
                                   r"\['pass', 'bet', 'raise'\] here"),
])
def test_invalid_vectorised_games_are_named(vector, message):
    with pytest.raises(tensorcfr.TensorCFRError, match=message):
        tensorcfr.compile(Broken(vector), method="vectorized")


def test_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORCFR_CACHE", str(tmp_path / "values.json"))
    first = tensorcfr.compile("dudo(4,1,2)", cache=True)
    path = tensorcfr.compiler.generic.cache_file(games.make("dudo(4,1,2)"))
    assert path.startswith(str(tmp_path)) and (tmp_path / "compiled").is_dir()
    again = tensorcfr.compile("dudo(4,1,2)", cache=True)
    assert_identical(first, again)
    with open(path, "r+b") as f:  # a damaged file is recompiled and rewritten
        f.truncate(100)
    assert_identical(first, tensorcfr.compile("dudo(4,1,2)", cache=True))
    # files of older code versions of the same game go when a new one is written; others stay
    stale = tmp_path / "compiled" / "dudo(4,1,2)-0123456789abcdef.pt"
    other = tmp_path / "compiled" / "dudo(4,1,1)-0123456789abcdef.pt"
    stale.write_bytes(b"old"), other.write_bytes(b"other")
    os.remove(path)
    tensorcfr.compile("dudo(4,1,2)", cache=True)
    assert os.path.exists(path) and not stale.exists() and other.exists()


@pytest.mark.parametrize("spec", ["kuhn", "leduc", "ocp(12)", "dudo(3,1,1)", "liars_dice(faces=3)", "domino(2,2)"])
@pytest.mark.parametrize("chunk", [1, 7, 100])
def test_chunked_walk_equals_per_node(spec, chunk, monkeypatch):
    """Levels expanded in chunks of a few rows (as 10^8-history games are) give the same game,
    whether the node arrays are kept, never kept, or dropped once the walk passes a size limit
    (as OCP(5000) drops them after its first levels)."""
    from tensorcfr.compiler import generic, walks  # the walk and the payoff entries read walks.CHUNK

    per_node = tensorcfr.compile(spec, method="per-node", cache=False)
    monkeypatch.setattr(walks, "CHUNK", chunk)
    assert_identical(per_node, tensorcfr.compile(spec, method="vectorized", cache=False))
    vg = vector_form(games.make(spec))
    for walk in (walks._LevelWalk(vg, False), walks._LevelWalk(vg, None, max_nodes=per_node.num_histories // 3)):
        raw = walk.run().raw()
        assert raw.nodes is None and raw.counts == per_node.node_counts.tolist()
        _, seqs, payoff, _ = generic._structure(raw)
        assert torch.equal(payoff, per_node.payoff[0]) and torch.equal(seqs, per_node.payoff_seq)


def test_cache_key_is_the_same_in_every_process():
    """A cached game is found by a later process (the key must not depend on hash seeds)."""
    import subprocess
    import sys

    code = "from tensorcfr import games; import tensorcfr.compiler as c; print(c.cache_file(games.make('dudo(4,1,2)')))"
    paths = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(paths) == 1


def test_cache_key_follows_the_payoffs():
    """Dudo's payoffs come from continuation values: other values, another cached file."""
    from tensorcfr.games.dudo import Dudo

    files = {tensorcfr.compiler.generic.cache_file(Dudo(4, 1, 2, continuation=lambda a, b, v=v: v)) for v in (0.1, 0.2, 0.1)}
    assert len(files) == 2
