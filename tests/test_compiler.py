"""Compiled sizes, layout invariants, save/load, devices, and the validation errors."""

import dataclasses
import os
import subprocess
import sys

import pytest
import torch

import tensorcfr
from tensorcfr.games.kuhn import Kuhn


def test_kuhn_and_leduc_sizes():
    k = tensorcfr.compile("kuhn").sizes()
    assert (k["histories"], k["terminals"], k["infosets"], k["sequences"]) == (58, 30, [6, 6], [12, 12])
    s = tensorcfr.compile("leduc").sizes()
    assert s["histories"] == 9457 and s["terminals"] == 5520
    assert s["infosets"] == [468, 468] and s["sequences"] == [1092, 1092]


@pytest.mark.parametrize("spec", ["kuhn", "leduc", "random(seed=5)"])
def test_layout_invariants(spec):
    cg = tensorcfr.compile(spec)
    for tp in cg.treeplexes:
        # levels tile the infosets and sequences; parents lie in earlier levels
        assert tp.levels[0].i0 == 0 and tp.levels[-1].i1 == tp.num_infosets
        assert tp.levels[-1].s1 == tp.num_sequences
        for lv in tp.levels:
            assert bool((lv.parent < lv.s0).all())
        assert tp.infoset_offsets[0] == 1 and tp.infoset_offsets[-1] == tp.num_sequences
    # the node arrays form a tree, level by level; under uniform play its terminals carry all
    # the probability mass
    n = cg.num_histories
    assert cg.node_level_offsets[-1] == n and cg.node_parent[0] == -1
    assert bool((cg.node_parent[1:] < torch.arange(1, n)).all())
    children = torch.bincount(cg.node_parent[1:], minlength=n).to(torch.float64)
    parent_is_chance = cg.node_player[cg.node_parent[1:]] == -1
    edge = torch.where(parent_is_chance, cg.node_chance_prob[1:], 1 / children[cg.node_parent[1:]])
    reach = torch.ones(n, dtype=torch.float64)
    lo = cg.node_level_offsets.tolist()
    for a, b in zip(lo[1:-1], lo[2:]):
        reach[a:b] = reach[cg.node_parent[a:b]] * edge[a - 1:b - 1]
    assert reach[cg.node_player == -2].sum().item() == pytest.approx(1.0, abs=1e-12)


def test_payoff_is_expected_utility_of_uniform_play():
    from oracle import expected_value
    from tensorcfr import games

    cg = tensorcfr.compile("leduc")
    pol = tensorcfr.Policy.uniform(cg)
    ev = tensorcfr.evaluate(cg, pol).game_value.item()
    assert abs(ev - expected_value(games.make("leduc"), pol.to_dict())) < 1e-12


@pytest.mark.parametrize("spec", ["leduc", "random(seed=7)"])
def test_payoff_entries_are_sorted_and_operator_takes_any_order(spec, device):
    """The compiler lists the nonzeros by (s0, s1), which the CSR operator relies on; a
    hand-made game listing them in another order gives the same counterfactual values."""
    from tensorcfr.operators.payoff import PayoffOperator

    cg = tensorcfr.compile(spec)
    key = cg.payoff_seq[0].long() * cg.treeplexes[1].num_sequences + cg.payoff_seq[1].long()
    assert bool((key[1:] > key[:-1]).all())
    perm = torch.randperm(cg.payoff.shape[1], generator=torch.Generator().manual_seed(0))
    shuffled = dataclasses.replace(cg, payoff_seq=cg.payoff_seq[:, perm], payoff=cg.payoff[:, perm])
    xs = [torch.rand(1, tp.num_sequences, dtype=torch.float64, generator=torch.Generator().manual_seed(p)).to(device)
          for p, tp in enumerate(cg.treeplexes)]
    ops = [PayoffOperator.of(g.to(device), torch.float64) for g in (cg, shuffled)]
    for p in (0, 1):
        assert torch.allclose(ops[0].cfv(p, xs[1 - p]), ops[1].cfv(p, xs[1 - p]), rtol=0, atol=1e-12)


def test_save_load_round_trip(tmp_path, device):
    cg = tensorcfr.compile(["kuhn", "kuhn(ante=3)"])
    path = tmp_path / "kuhn.pt"
    cg.save(path)
    back = tensorcfr.CompiledGame.load(path, device=device)
    assert back.batch_names == cg.batch_names and back.sizes() == cg.sizes()
    for k, v in cg._tensors().items():
        assert torch.equal(getattr(back, k).cpu(), v), k
    for a, b in zip(cg.treeplexes, back.treeplexes):
        assert a.infoset_keys == b.infoset_keys and a.action_names == b.action_names
        for k, v in a.tensors().items():
            assert torch.equal(getattr(b, k).cpu(), v), k


def test_load_rejects_other_files(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(tensorcfr.TensorCFRError, match="not a compiled tensorcfr game"):
        tensorcfr.CompiledGame.load(bad)


def test_to_device(device):
    cg = tensorcfr.compile("kuhn").to(device)
    assert cg.payoff.device.type == device and cg.treeplexes[1].levels[0].parent.device.type == device


def test_batch_must_share_the_tree():
    with pytest.raises(tensorcfr.TensorCFRError, match="does not have the tree of kuhn"):
        tensorcfr.compile(["kuhn", "leduc"])


class BadChance(Kuhn):
    def chance_outcomes(self, state):
        return [(c, p * 0.9) for c, p in super().chance_outcomes(state)]


class NotZeroSum(Kuhn):
    def utilities(self, state):
        u0, u1 = super().utilities(state)
        return (u0, -u1 if state[1] == "pbb" else u1)


class UnevenActions(Kuhn):
    def legal_actions(self, state):
        return ("pass", "bet", "raise") if state[0][:2] == ("K", "Q") and state[1] == "" else ("pass", "bet")

    def next_state(self, state, action):
        return super().next_state(state, "bet" if action == "raise" else action)


class MixedPlayers(Kuhn):
    def infoset_key(self, state):
        cards, h = state
        return f"{cards[len(h) % 2]}:" if h in ("", "p") else super().infoset_key(state)


class Forgetful(Kuhn):
    def infoset_key(self, state):
        cards, h = state
        return "pb" if h == "pb" else super().infoset_key(state)  # player 0 forgets its card


@pytest.mark.parametrize("game, message", [
    (BadChance(), r"kuhn: history \[\]: chance probabilities \[.*\] do not sum to 1"),
    (NotZeroSum(), r"history \['J', 'Q', 'pass', 'bet', 'bet'\]: utilities \(-2.0, -2.0\) are not zero-sum"),
    (UnevenActions(), r"infoset 'K:' has legal actions \['pass', 'bet'\] at history \['K', 'J'\] "
                      r"but \['pass', 'bet', 'raise'\] at history \['K', 'Q'\]"),
    (MixedPlayers(), r"infoset '[JQK]:' holds histories of both players: \[.*\] \(player 0\) and \[.*\] \(player 1\)"),
    (Forgetful(), r"perfect recall fails at infoset 'pb'"),
])
@pytest.mark.parametrize("form", ["generic", "auto", "public"])
def test_invalid_games_are_named(game, message, form):
    """A subclass that overrides a per-node method is walked node by node: it has no
    vectorised form, so no public-tree form either (tests/test_bad_games.py holds the
    vectorised walks, both forms, to the same faults)."""
    with pytest.raises(tensorcfr.TensorCFRError, match="has no public-tree form" if form == "public" else message):
        tensorcfr.compile(game, form=form)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
@pytest.mark.parametrize("keep", ["1", "0"])
def test_cpu_solvers_reuse_freed_memory(keep):
    """With TENSORCFR_KEEP_HEAP (the default), `keep_freed_memory()` makes glibc reuse a freed 64 MiB
    tensor's pages: once the heap has grown (glibc may place the first two such allocations
    apart), allocating it again costs no page faults. Turned off, every allocation faults its
    pages in again (what made large games' iterations 2.4x slower)."""
    code = """
import resource, torch, tensorcfr
tensorcfr.keep_freed_memory()
for _ in range(3):
    x = torch.ones(1 << 23, dtype=torch.float64); del x
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
x = torch.ones(1 << 23, dtype=torch.float64)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "TENSORCFR_KEEP_HEAP": keep})
    faults = int(out.stdout)
    assert faults < 100 if keep == "1" else faults > 1000, faults


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
@pytest.mark.parametrize("kept", [False, True])
def test_a_compile_hands_its_freed_heap_back(kept):
    """What a compile frees inside the heap goes back to the kernel when it ends, whether or not
    the process keeps freed memory (`keep_freed_memory`, which a library user's process has not
    called before its first compile): 256 MiB of small blocks freed below a live one. Without
    the trim, a library user's Dudo(5,2,2) held 612 MB after its compile instead of 371 (the
    process's 226 included)."""
    code = f"""
import tensorcfr
from tensorcfr.memory import returning_freed_memory
if {kept}:
    tensorcfr.keep_freed_memory()
rss = lambda: int(open('/proc/self/statm').read().split()[1]) * 4096 >> 20
with returning_freed_memory():
    blocks = [bytearray(1 << 16) for _ in range(4096)]  # under glibc's mapping threshold: in the heap
    last = blocks.pop()  # (held: the freed blocks lie inside the heap, not at its top)
    del blocks
    inside = rss()
print(inside - rss())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) > 200, out.stdout  # MiB handed back (0 before, for a process that kept none)


@pytest.mark.parametrize("keys", [(), ("",), ("J:", "Q:pb", "ü|1,2"), ("a\x00b", "c")])
def test_names_pack_into_tensors_and_back(keys):
    from tensorcfr.forms.generic import _pack_names, _unpack_names

    actions = tuple(("pass", "bet") if i % 2 else ("call",) for i in range(len(keys)))
    packed = _pack_names(keys, actions)
    assert _unpack_names(packed) == (keys, actions)
    assert isinstance(packed["infoset_keys"], torch.Tensor) != any("\x00" in k for k in keys)
