"""The treeplex's path table (`Treeplex.paths`), from which a GPU takes a small game's plan in 2
kernels instead of 2L + 1, against the level loop it replaces and the recursive oracle, and the
other passes that serve where it does (launch-bound: the values bottom-up with one add a level,
or up the paths; the average's weighted add in one kernel), and the public form's normalize as a
GPU takes it.
On the CPU they serve only when asked (`PATH_DEVICES`, `public.MASK_DEVICES`), and the compiled
walks, which would serve first, are turned off here (`WALK_SEQUENCES`)."""

import pytest
import torch

import tensorcfr
from tensorcfr.spaces import treeplex
from test_solvers_vs_oracle import OPTIONS, OPTION_IDS, check_against_oracle

GAMES = ["kuhn", "leduc", "random(seed=3)", "random(seed=11,min_depth=7,max_depth=9)", "goofspiel(num_cards=3)"]


@pytest.fixture
def tables(monkeypatch):
    """The path table serving on the CPU, and the compiled walks off."""
    monkeypatch.setattr(treeplex, "PATH_DEVICES", ("cpu",))
    monkeypatch.setattr(treeplex, "WALK_SEQUENCES", 1 << 62)


def _strategy(tp, batch, gen):
    w = torch.rand(batch, tp.num_sequences, dtype=torch.float64, generator=gen)
    w[w < 0.25] = 0  # some infosets all zero (uniform), some actions never played (reach 0 below)
    return tp.normalize(w)


@pytest.mark.parametrize("spec", GAMES)
def test_the_table_gives_the_level_loops_plan_bit_for_bit(spec, tables, monkeypatch):
    """The plan by the table equals the level loop's to the last bit (the same products in the
    same order), for both players, one strategy and a batch, into a new array and into sigma's
    own memory."""
    gen = torch.Generator().manual_seed(5)
    for tp in tensorcfr.compile(spec).treeplexes:
        for batch in (1, 3):
            sigma = _strategy(tp, batch, gen)
            got = tp.sequence_form(sigma)
            assert "_paths" in tp.__dict__  # (the table did serve)
            with monkeypatch.context() as m:
                m.setattr(treeplex, "PATH_DEVICES", ())
                want = tp.sequence_form(sigma)
            assert torch.equal(got, want), (spec, tp.player, batch)
            assert torch.equal(tp.sequence_form(sigma.clone(), out=sigma), want)


def test_the_table_holds_each_path():
    """Column s of the table is s's path from the root, padded in front with 0: rebuilt here by
    walking the parents up."""
    for tp in tensorcfr.compile("leduc").treeplexes:
        table = tp.paths()
        parent = {s: int(tp.infoset_parent[tp.seq_infoset[s]]) for s in range(1, tp.num_sequences)}
        for s in range(tp.num_sequences):
            path, at = [], s
            while at:
                path.append(at)
                at = parent[at]
            assert table[:, s].tolist() == [0] * (len(table) - len(path)) + path[::-1]


@pytest.mark.parametrize("opts", OPTIONS[::3], ids=OPTION_IDS[::3])
@pytest.mark.parametrize("spec,iterations", [("kuhn", 25), ("leduc", 4), ("random(seed=7,payoffs=2)", 12)])
def test_a_solver_on_the_table_follows_the_oracle(spec, iterations, opts, tables):
    """CFR and CFR+ (simultaneous and alternating, delays, averaging) with the plan from the table
    equal the recursive float64 oracle iteration by iteration."""
    check_against_oracle(spec, opts, iterations, "cpu")


def test_a_part_made_for_one_iteration_keeps_the_level_loop(tables):
    """A sampled part of a treeplex (`treeplex.touched`) lives for one iteration: a table built
    for it would serve once, so its plan takes the level loop, and builds none."""
    tp = tensorcfr.compile("leduc").treeplexes[0]
    sub = treeplex.touched(tp, torch.tensor([tp.num_sequences - 1, 7]))[0]
    x = sub.sequence_form(_strategy(sub, 1, torch.Generator().manual_seed(1)))
    assert sub.short_lived and "_paths" not in sub.__dict__ and x[0, 0] == 1


@pytest.mark.parametrize("spec,form", [*((g, "generic") for g in GAMES[:3]), ("leduc", "public"),
                                       ("dudo(4,1,1)", "public"),
                                       ("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", "public")])
def test_the_regret_leaves_out_the_values_of_the_empty_sequence(spec, form, monkeypatch):
    """`bottom_up(..., root=False)`, as the instantaneous regret asks it, gives every sequence's
    and infoset's value but the empty sequence's (left as g's) bit for bit as the full pass, in
    both forms, by the level loop (the launch-bound passes: below)."""
    monkeypatch.setattr(treeplex, "PATH_DEVICES", ())
    gen = torch.Generator().manual_seed(2)
    for tp in tensorcfr.compile(spec, form=form).treeplexes:
        sigma = tp.normalize(torch.rand(2, tp.num_sequences, dtype=torch.float64, generator=gen))
        g = torch.randn(2, tp.num_sequences, dtype=torch.float64, generator=gen)
        q, v = tp.bottom_up(g, sigma)
        q2, v2 = tp.bottom_up(g, sigma, root=False)
        assert torch.equal(q2[:, 1:], q[:, 1:]) and torch.equal(v2, v) and torch.equal(q2[:, 0], g[:, 0])
        assert not torch.equal(q[:, 0], g[:, 0])  # (the full pass did add the top level's values)


def _slow_bottom_up(tp, g, sigma):
    """q and v of member 0 by a walk over the infosets, deepest first, in plain Python."""
    q, v = g[0].tolist(), [0.0] * tp.num_infosets
    offsets, parents = tp.infoset_offsets.tolist(), tp.infoset_parent.tolist()
    for j in reversed(range(tp.num_infosets)):  # stored by level: children after parents
        v[j] = sum(sigma[0, s].item() * q[s] for s in range(offsets[j], offsets[j + 1]))
        q[parents[j]] += v[j]
    return q, v


@pytest.mark.parametrize("launch_bound", [False, True], ids=["level-loop", "launch-bound"])
@pytest.mark.parametrize("sums", ["never", "always"])
@pytest.mark.parametrize("spec", GAMES)
def test_the_values_under_a_strategy_equal_a_walk_over_the_infosets(spec, sums, launch_bound, monkeypatch):
    """`bottom_up` with `index_add_` and with the segment sums of a deterministic GPU run (each
    level's sums joined at the end), with and without the empty sequence's value, equals a plain
    walk over the infosets to 1e-12; so do its launch-bound passes (each sequence added straight
    into its infoset's parent, the infosets' values after; and without the empty sequence's
    value, on 4 levels or more, each sequence into all its ancestors at once, up the paths,
    where column 0 is left to hold what went past the top)."""
    monkeypatch.setattr(treeplex.segments, "SEGMENT_SUMS", sums)
    monkeypatch.setattr(treeplex, "PATH_DEVICES", ("cpu",) if launch_bound else ())
    gen = torch.Generator().manual_seed(3)
    for tp in tensorcfr.compile(spec).treeplexes:
        sigma = _strategy(tp, 1, gen)
        g = torch.randn(1, tp.num_sequences, dtype=torch.float64, generator=gen)
        q_ref, v_ref = _slow_bottom_up(tp, g, sigma)
        for root in (True, False):
            q, v = treeplex.bottom_up(tp, g.clone(), sigma, root=root, inplace=True)
            assert v.shape == (1, tp.num_infosets)
            assert max(abs(a - b) for a, b in zip(v[0].tolist(), v_ref)) <= 1e-12
            assert max(abs(a - b) for a, b in zip(q[0, 1:].tolist(), q_ref[1:])) <= 1e-12
            if root or not launch_bound or len(tp.levels) <= 3:
                assert abs(q[0, 0].item() - (q_ref[0] if root else g[0, 0].item())) <= 1e-12
        assert ("_up_paths" in tp.__dict__) == (launch_bound and len(tp.levels) > 3)  # (that pass served)


@pytest.mark.parametrize("weight", [0.75, torch.tensor(0.75, dtype=torch.float64)], ids=["float", "tensor"])
@pytest.mark.parametrize("discount", [None, 0.5])
def test_the_launch_bound_average_adds_the_weighted_plan(weight, discount, tables):
    """`averaged_plan` where the table serves: the plan, and the average times the discount plus
    the weighted plan (one kernel, a scalar weight or a captured one), to rounding."""
    gen = torch.Generator().manual_seed(4)
    for tp in tensorcfr.compile("leduc").treeplexes:
        sigma = _strategy(tp, 1, gen)
        average = torch.rand(1, tp.num_sequences, dtype=torch.float64, generator=gen)
        want = average * (1.0 if discount is None else discount) + tp.sequence_form(sigma) * 0.75
        x = tp.averaged_plan(sigma, average, weight, discount)
        assert torch.equal(x, tp.sequence_form(sigma))
        torch.testing.assert_close(average, want, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("spec", ["leduc", "dudo(4,1,1)", "holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)"])
def test_the_public_forms_masked_normalize_is_its_arithmetic_bit_for_bit(spec, monkeypatch):
    """A public treeplex's `normalize` as a GPU takes it (`public.MASK_DEVICES`: the totals
    gathered once, a division and a select) equals the CPU's arithmetic (`_is_zero`) to the last
    bit, for a batch with infosets whose weights all sum to 0, into a new array and in place (the
    compiled CPU pass off, so that the torch passes serve)."""
    from tensorcfr.spaces import fused, public

    monkeypatch.setattr(fused, "wanted", lambda *a, **k: False)
    gen = torch.Generator().manual_seed(6)
    for tp in tensorcfr.compile(spec, form="public").treeplexes:
        w = torch.rand(3, tp.num_sequences, dtype=torch.float64, generator=gen)
        w[w < 0.4] = 0  # with several actions, some infosets' weights all 0
        want = tp.normalize(w)
        with monkeypatch.context() as m:
            m.setattr(public, "MASK_DEVICES", ("cpu",))
            got = tp.normalize(w)
            assert torch.equal(got, want), (spec, tp.player)
            assert torch.equal(tp.normalize(w.clone(), out=w), want)
        uniform = tp.uniform(torch.float64).expand(-1, tp.types).reshape(1, -1)  # [1, S-1]
        assert bool((want[:, 1:] == uniform).any())  # (some infosets did play uniformly)


@pytest.mark.parametrize("spec,algo", [("leduc", "cfr+"), ("random(seed=11,min_depth=7,max_depth=9)", "dcfr")])
@pytest.mark.parametrize("sums", ["never", "always"])
def test_a_launch_bound_iteration_reads_nothing_back_to_the_host(spec, algo, sums, tables, monkeypatch):
    """What a CUDA graph records, with the table's passes and with a deterministic run's segment
    sums (whose layouts are made on the host, once an index tensor, in the warm-up iterations): a
    static iteration after those reads no device value on the host, in blocks as a graph runs them."""
    from test_capture import HostTraffic

    monkeypatch.setattr(treeplex.segments, "SEGMENT_SUMS", sums)
    solver = tensorcfr.Solver(spec, algo, device="cpu", capture="static")
    solver.captured.unroll = tensorcfr.updates.capture.GRAPH_UNROLL
    solver.step(2 * solver.captured.unroll + 1)  # (blocks and a rest: what is made once is made here)
    assert all("_up_paths" in tp.__dict__ for tp in solver.game.treeplexes if len(tp.levels) > 3)
    views = solver.captured._write(solver.iteration + 1, solver.captured.unroll)
    with HostTraffic() as seen:
        solver.captured._block(views)
    assert seen.found == []


def test_the_path_tables_bytes_are_those_it_keeps():
    """`path_table_bytes`, which the device estimate adds, counts the tables a launch-bound pass
    builds and keeps (`paths`, `up_paths`) and two gathered [B, L, S] arrays; nothing past
    `PATH_ENTRIES`, where the level loop serves."""
    tp = tensorcfr.compile("leduc", form="generic").treeplexes[0]
    L, S = len(tp.levels), tp.num_sequences
    kept = tp.paths().nbytes + sum(t.nbytes for t in tp.up_paths())
    assert tp.path_table_bytes(1, 8) == kept + 2 * 8 * L * S
    assert tp.path_table_bytes(treeplex.PATH_ENTRIES // (L * S) + 1, 8) == 0
    assert tensorcfr.compile("liars_dice", form="public").treeplexes[0].path_table_bytes(1, 8) == 0
