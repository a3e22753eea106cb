"""The public treeplex's compiled loops (tensorcfr/spaces/public_loop.py) against torch's passes
they replace: whole runs of every rule of the regret-matching family with the loops serving
every array, against runs with them off, bit for bit where torch adds rows in order (small
levels, wide rows), and to rounding where it sums by a sparse product. Only the CPU: the loops
serve nothing else."""

import functools

import pytest
import torch

import tensorcfr
from tensorcfr.spaces import native, public_loop

CFR_FAMILY = [a for a, c in tensorcfr.PRESETS.items() if isinstance(c, tensorcfr.CFRConfig)]
GAMES = ["leduc", "dudo(4,1,2)", "random_dealt(seed=1,types=4,depth=5,max_actions=3)",
         "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)",
         "rhode_island(raises=1, ranks='QKA', suits='sh')"]
pytestmark = pytest.mark.skipif(public_loop._library() is None, reason="no C compiler: torch's passes serve")


@pytest.fixture(scope="module")
def compiled():
    cache = {}

    def get(game):
        if game not in cache:
            cache[game] = tensorcfr.compile(game, form="public")
        return cache[game]
    return get


def _served(monkeypatch) -> dict:
    """Counts of the calls the loops took (a test that compares them must see them run)."""
    count = {"plan": 0, "averaged": 0, "regret": 0}
    plan, step = public_loop.plan, public_loop.regret_step

    def counted_plan(*a, **k):
        ran = plan(*a, **k)
        count["plan"] += ran
        count["averaged"] += ran and k.get("average") is not None
        return ran

    def counted_step(*a, **k):
        out = step(*a, **k)
        count["regret"] += out is not None
        return out
    monkeypatch.setattr(public_loop, "plan", counted_plan)
    monkeypatch.setattr(public_loop, "regret_step", counted_step)
    return count


def _pair(monkeypatch, cg, algo, dtype, iterations, **opts):
    """Two solvers of cg, one with the loops serving every array and one with torch's passes,
    stepped side by side; yields after each iteration."""
    monkeypatch.setattr(public_loop, "MIN_TYPES", 1)
    a = tensorcfr.Solver(cg, algo, dtype=dtype, device="cpu", **opts)
    b = tensorcfr.Solver(cg, algo, dtype=dtype, device="cpu", **opts)
    for t in range(1, iterations + 1):
        monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 0)
        a.step()
        monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 1 << 62)
        b.step()
        yield t, a, b


def _arrays(s):
    return {"sigma": s.sigma, "average": s.average, "regrets": [st.regrets for st in s.state.rule]}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("algo", CFR_FAMILY)
@pytest.mark.parametrize("game", GAMES)
def test_runs_with_the_loops_equal_torchs_passes_bit_for_bit(game, algo, dtype, compiled, monkeypatch):
    cg = compiled(game)  # (before counting: Dudo's compile solves its continuation values with the walks)
    count = _served(monkeypatch)
    for t, a, b in _pair(monkeypatch, cg, algo, dtype, 12):
        for name, xs in _arrays(a).items():
            for p, (x, y) in enumerate(zip(xs, _arrays(b)[name])):
                assert torch.equal(x, y), f"iteration {t}, {name} of player {p}: {float((x - y).abs().max()):.3g}"
    # each iteration: each player's plan averaged in as it is made, and each player's update
    assert count["regret"] == 2 * 12 and count["averaged"] == 2 * 12


@pytest.mark.parametrize("algo", ["cfr", "dcfr", "pdcfr+"])
def test_against_sums_by_sparse_product_the_loops_differ_by_rounding_only(algo, compiled, monkeypatch):
    # torch sums each level's rows by a sparse product from MATRIX_ENTRIES entries, in MKL's
    # order; the loops sum them in order: at float64 the runs stay within rounding, which the
    # rules amplify from iteration to iteration as between the two forms (test_forms.py's
    # tolerances; worst measured here 5.2e-12 of the scale, dcfr at iteration 14)
    import tensorcfr.spaces.public as public
    monkeypatch.setattr(public, "MATRIX_ENTRIES", 1)
    worst = 0.0
    for t, a, b in _pair(monkeypatch, compiled("dudo(4,1,2)"), algo, torch.float64, 15):
        for name, xs in _arrays(a).items():
            for x, y in zip(xs, _arrays(b)[name]):
                err, scale = float((x - y).abs().max()), max(1.0, float(y.abs().max()))
                assert err <= (1e-10 if name == "sigma" else 1e-11) * scale, (t, name, err)
                worst = max(worst, err)
    assert worst > 0  # the sums did take the two orders


def test_a_full_range_river_spot_takes_the_loops_by_itself(monkeypatch):
    # 1,081 types a row: the loops serve with their own thresholds, and torch adds these rows in
    # order (public.WIDE_TYPES), so the runs are the same to the last bit
    cg = tensorcfr.compile("holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2)")
    tp = cg.treeplexes[0]
    assert public_loop.serves(tp, torch.zeros(1, tp.num_sequences))
    count = _served(monkeypatch)
    a = tensorcfr.Solver(cg, "dcfr", dtype=torch.float32, device="cpu")
    b = tensorcfr.Solver(cg, "dcfr", dtype=torch.float32, device="cpu")
    where = [x.data_ptr() for x in a.sigma]
    kept = a.current_policy()  # a copy: the steps below leave it alone
    first = [x.clone() for x in kept.sigma]
    a.step(4)
    assert all(torch.equal(x, y) for x, y in zip(kept.sigma, first))
    assert count["regret"] == 8
    # each update wrote the strategy into the memory of the one it replaces: no new array an
    # update (which fragmented a kept heap: a flop spot's solver grew by 1.2 GB in 6 iterations)
    assert [x.data_ptr() for x in a.sigma] == where
    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 1 << 62)
    b.step(4)
    assert count["regret"] == 8
    for name, xs in _arrays(a).items():
        assert all(torch.equal(x, y) for x, y in zip(xs, _arrays(b)[name])), name


def test_the_plan_equals_torchs_in_place_too(compiled):
    tp = compiled("dudo(4,1,2)").treeplexes[1]
    g = torch.Generator().manual_seed(3)
    sigma = tp.normalize(torch.rand(1, tp.num_sequences, generator=g, dtype=torch.float64))
    want = tp.sequence_form(sigma)  # Dudo(4,1,2)'s 41K entries: torch's passes
    assert not public_loop.serves(tp, sigma)
    x = torch.empty_like(sigma)
    assert public_loop.plan(tp, sigma, x, least=0) and torch.equal(x, want)
    assert public_loop.plan(tp, sigma, sigma, least=0) and torch.equal(sigma, want)  # out = sigma


def test_where_the_loops_do_not_serve_torchs_passes_run(compiled, monkeypatch):
    tp = compiled("leduc").treeplexes[0]
    one = torch.zeros(1, tp.num_sequences, dtype=torch.float64)
    assert public_loop.serves(tp, one, least=0)
    assert not public_loop.serves(tp, one, torch.zeros(2, tp.num_sequences, dtype=torch.float64), least=0)  # 1 and 2 members
    assert not public_loop.serves(tp, one.half(), least=0)
    assert not public_loop.serves(tp, one, one.float(), least=0)  # mixed dtypes
    assert not public_loop.serves(tp, torch.zeros(1, 2 * tp.num_sequences, dtype=torch.float64)[:, ::2], least=0)
    # three discounts for one member: nothing changed
    regret = torch.zeros(1, tp.num_sequences, dtype=torch.float64)
    assert public_loop.regret_step(tp, one.clone(), one, regret, torch.tensor([[0.5], [0.7], [0.9]]), 0.1, False,
                                   False, least=0) is None
    monkeypatch.setenv("TENSORCFR_FUSE", "0")
    assert not public_loop.serves(tp, one, least=0)
    # regret_tolerance keeps the rule's own passes (its scale needs the whole array first)
    monkeypatch.delenv("TENSORCFR_FUSE")
    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 0)
    monkeypatch.setattr(public_loop, "MIN_TYPES", 1)
    count = _served(monkeypatch)
    tensorcfr.Solver(compiled("leduc"), "dcfr", device="cpu", regret_tolerance=1e-12).step(2)
    assert count["regret"] == 0 and count["plan"] > 0


RIVER = "holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2{})"


@pytest.mark.parametrize("batch", ["settings", "spots"])
def test_a_batch_takes_the_loops_a_member_at_a_time(batch, monkeypatch):
    # a batch of settings (discounts and averaging of their own) and a batch of full-range river
    # spots (ranges of their own): a walk a member, each as torch's passes do it for the batch
    if batch == "settings":
        cg, algo = tensorcfr.compile(RIVER.format("")), "dcfr(alpha=(1.5,2.0), beta=(0.0,0.5), gamma=(2.0,3.0))"
    else:
        cg, algo = tensorcfr.compile([RIVER.format(""), RIVER.format(", range0='22+,A2s+,K9s+,QTo+'")]), "dcfr"
    count = _served(monkeypatch)
    a = tensorcfr.Solver(cg, algo, dtype=torch.float32, device="cpu")
    b = tensorcfr.Solver(cg, algo, dtype=torch.float32, device="cpu")
    a.step(4)
    assert a.regrets[0].shape[0] == 2 and count["regret"] == 8 and count["averaged"] == 8
    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 1 << 62)
    b.step(4)
    assert count["regret"] == 8
    for name, xs in _arrays(a).items():
        assert all(torch.equal(x, y) for x, y in zip(xs, _arrays(b)[name])), name


class _Untouchable:
    """A number that fails when read: a CUDA tensor read inside a CUDA graph's capture does."""

    def __float__(self):
        raise AssertionError("read a number where the walks do not serve")

    def __bool__(self):
        raise AssertionError("read a number where the walks do not serve")


def test_where_the_walks_do_not_serve_they_read_no_number(compiled):
    # on a GPU the iteration's numbers are tensors, and a CUDA graph's capture fails at the
    # first read of one to the host: the walks decide first, and leave them unread
    tp = compiled("leduc").treeplexes[0]  # a few hundred entries: not served with the thresholds
    x = torch.zeros(1, tp.num_sequences, dtype=torch.float64)
    nothing = _Untouchable()
    assert public_loop.regret_step(tp, x.clone(), x, x.clone(), nothing, nothing, False, False) is None
    assert not public_loop.plan(tp, x, x.clone(), average=x.clone(), weight=nothing, discount=nothing)
    assert tp.averaged_plan(x, x.clone(), nothing, nothing) is None


@pytest.fixture
def threads():
    old = torch.get_num_threads()
    yield
    torch.set_num_threads(old)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("algo", ["dcfr", "pcfr+", "cfr+"])
@pytest.mark.parametrize("game", ["dudo(4,1,2)", "dudo(4,2,1)", "liars_dice(faces=4)", "liars_dice(numdice=2,faces=2)",
                                  "random_dealt(seed=1,types=4,depth=5,max_actions=3)"])
def test_the_threads_splitting_rows_equal_going_by_parent_bit_for_bit(game, algo, n, compiled, monkeypatch, threads):
    """Trees of few types (Dudo, Liar's Dice: a row fits a cache line) take the walks with each
    level's rows split between the threads, a parent's infosets to one thread: every number is
    the walk by parent's (`BY_PARENT`, what rows of many types take; held to torch's above),
    with 2 and 3 threads meeting at each level."""
    cg = compiled(game)
    assert all(public_loop._index(tp)["grouped"] for tp in cg.treeplexes)
    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 0)
    count = _served(monkeypatch)
    a = tensorcfr.Solver(cg, algo, dtype=torch.float64, device="cpu", threads=n)
    b = tensorcfr.Solver(cg, algo, dtype=torch.float64, device="cpu", threads=n)
    for t in range(1, 13):
        monkeypatch.setattr(public_loop, "MIN_TYPES", 1 << 30)  # every tree by rows
        assert public_loop.split(cg.treeplexes[0], regret=True) == (public_loop.BY_ROWS, n)
        a.step()
        monkeypatch.setattr(public_loop, "MIN_TYPES", 1)  # by parent
        b.step()
        for name, xs in _arrays(a).items():
            for p, (x, y) in enumerate(zip(xs, _arrays(b)[name])):
                assert torch.equal(x, y), f"iteration {t}, {name} of player {p}"
    assert count["regret"] == 4 * 12


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("game", ["leduc", "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, "
                                  "ranks=AKQJ9, suits=sh)", "rhode_island(raises=1, ranks='QKA', suits='sh')",
                                  "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, "
                                  "suits=sh, suit_isomorphism=True)"])
def test_the_regret_walk_by_parent_on_several_threads_equals_torchs_passes(game, n, compiled, monkeypatch, threads):
    """Poker trees list a level's infosets of one parent apart; with rows of `MIN_TYPES` types or
    more the regret walk gives each thread the infosets whose parents fall in its runs of parents
    (`BY_PARENT`), so no two threads add into one parent and a parent's adds keep their order,
    and the twins' permuted adds are split by columns: 12 iterations on 2 and 3 threads, every
    number torch's passes', with runs of one parent so that neighbours go to different threads."""
    cg = compiled(game)
    assert not all(public_loop._index(tp)["grouped"] for tp in cg.treeplexes)
    source = public_loop._SOURCE.replace("#define PARENT_RUN 64 ", "#define PARENT_RUN 1 ")
    assert source != public_loop._SOURCE
    monkeypatch.setattr(public_loop, "_library", lambda: native.library("public_loop_run1", source, public_loop._FUNCTIONS))
    count = _served(monkeypatch)
    for t, a, b in _pair(monkeypatch, cg, "dcfr", torch.float64, 12, threads=n):  # (rows of one type and more)
        assert public_loop.split(cg.treeplexes[0], regret=True) == (public_loop.BY_PARENT, n)
        for name, xs in _arrays(a).items():
            for p, (x, y) in enumerate(zip(xs, _arrays(b)[name])):
                assert torch.equal(x, y), f"iteration {t}, {name} of player {p}"
    assert count["regret"] == 2 * 12


def test_trees_whose_parents_interleave_take_the_regret_walk_on_one_thread(compiled, monkeypatch, threads):
    # Leduc's public tree (and Rhode Island's, and hold'em's: poker trees) lists some of a level's
    # infosets of one parent apart: split by rows, two threads could add into one parent at once,
    # so with rows of few types the regret walk runs on one thread (the plan on all); rows of
    # `MIN_TYPES` or more take the walk by parent (the test above)
    cg = compiled("leduc")
    tp = cg.treeplexes[0]
    monkeypatch.setattr(public_loop, "MIN_TYPES", 1 << 30)
    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 0)
    count = _served(monkeypatch)
    a = tensorcfr.Solver(cg, "dcfr", dtype=torch.float64, device="cpu", threads=2)
    assert not public_loop._index(tp)["grouped"]
    rows = public_loop.BY_ROWS
    assert public_loop.split(tp, regret=True) == (rows, 1) and public_loop.split(tp, regret=False) == (rows, 2)
    b = tensorcfr.Solver(cg, "dcfr", dtype=torch.float64, device="cpu", threads=2)
    for t in range(1, 13):
        a.step()
        monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 1 << 62)
        b.step()
        monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 0)
        for name, xs in _arrays(a).items():
            for p, (x, y) in enumerate(zip(xs, _arrays(b)[name])):
                assert torch.equal(x, y), f"iteration {t}, {name} of player {p}"
    assert count["regret"] == 2 * 12


GENERIC = ["kuhn", "leduc", "liars_dice(faces=4)", "dudo(4,1,2)", "goofspiel(4)",
           "random_dealt(seed=1,types=4,depth=5,max_actions=3)"]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("game", GENERIC)
def test_the_generic_treeplex_takes_the_walks_bit_for_bit(game, dtype, n, monkeypatch, threads):
    """The generic form's treeplex walks as rows of one type (`Treeplex.walk_layout`), from its
    smallest games up (`treeplex.WALK_SEQUENCES`): every rule of the regret-matching family,
    12 iterations, each number equal to torch's passes' (the level loops and the fused kernels),
    with one thread and with 2 and 3 splitting each level's rows (where a level lists one
    parent's infosets apart, as Leduc's does, the regret walk takes one thread)."""
    from tensorcfr.spaces import treeplex

    cg = tensorcfr.compile(game, form="generic")
    for algo in CFR_FAMILY:
        count = _served(monkeypatch)
        a = tensorcfr.Solver(cg, algo, dtype=dtype, device="cpu", threads=n)
        b = tensorcfr.Solver(cg, algo, dtype=dtype, device="cpu", threads=n)
        for t in range(1, 13):
            monkeypatch.setattr(treeplex, "WALK_SEQUENCES", 0)
            a.step()
            monkeypatch.setattr(treeplex, "WALK_SEQUENCES", 1 << 62)
            b.step()
            for name, xs in _arrays(a).items():
                for p, (x, y) in enumerate(zip(xs, _arrays(b)[name])):
                    assert torch.equal(x, y), f"{algo}, iteration {t}, {name} of player {p}"
        assert count["regret"] == 2 * 12, algo
        monkeypatch.undo()


def test_the_generic_plan_is_the_level_loops(threads):
    from tensorcfr.spaces import treeplex

    tp = tensorcfr.compile("dudo(4,1,2)", form="generic").treeplexes[1]
    g = torch.Generator().manual_seed(5)
    sigma = tp.normalize(torch.rand(3, tp.num_sequences, generator=g, dtype=torch.float64))  # a batch of 3
    for n in (1, 2):
        torch.set_num_threads(n)
        x = torch.empty_like(sigma)
        assert public_loop.plan(tp, sigma, x, least=0)
        old, treeplex.WALK_SEQUENCES = treeplex.WALK_SEQUENCES, 1 << 62
        try:
            want = treeplex.sequence_form(tp, sigma)
        finally:
            treeplex.WALK_SEQUENCES = old
        assert torch.equal(x, want)


def _both_ways(walk_name: str, call):
    """[call() with the walks serving, call() with torch's passes (the walks off)]; the walk
    `public_loop.<walk_name>` must run the first time and decline the second."""
    from tensorcfr.spaces import treeplex

    ran, outs = [], []
    walk = getattr(public_loop, walk_name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(public_loop, walk_name, lambda *a, **k: ran.append(walk(*a, **k)) or ran[-1])
        for least in (0, 1 << 62):
            mp.setattr(public_loop, "LOOP_ENTRIES", least)
            mp.setattr(treeplex, "WALK_SEQUENCES", least)
            outs.append(call())
    assert ran == [True, False]  # the walk ran once, and torch's passes the other time
    return outs


def _normalize_both(tp, w, **kw):
    """tp.normalize(w, **kw) by the walk (which must run) and by torch's passes (the walks off)."""
    def call():
        x = w.clone()
        out = {"out": x} if kw.get("in_place") else {"out": torch.full_like(x, 7.0)} if "head" in kw else {}
        return tp.normalize(x, head=kw.get("head", True), **out)
    return _both_ways("normalize", call)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("form", ["public", "generic"])
@pytest.mark.parametrize("game", GAMES)
def test_the_normalize_walk_equals_torchs_passes_bit_for_bit(game, form, dtype, threads):
    """`public_loop.normalize` (each infoset's total added in row order, then divided; uniform
    where it is 0) against the torch passes it replaces (`PublicTreeplex.normalize`,
    `treeplex.normalize`): a batch of 3 with zero infosets and an all-zero member, into a new
    array, in place and with the head left alone, on 1 to 3 threads; every number the same."""
    g = torch.Generator().manual_seed(7)
    for tp in tensorcfr.compile(game, form=form).treeplexes:
        w = torch.rand(3, tp.num_sequences, generator=g, dtype=dtype)
        w[:, 1::3] = 0  # some infosets' weights sum to 0 (uniform there), some in part
        w[1] = 0  # a member whose every infoset is uniform
        w[2] = w[2] ** 40  # tiny and subnormal totals
        for n in (1, 2, 3):
            torch.set_num_threads(n)
            got, want = _normalize_both(tp, w)
            assert torch.equal(got, want)
            u = tp.uniform(dtype).reshape(-1, 1)  # [rows, 1]: a row's types share its infoset's
            assert torch.equal(want[1, 1:], u.expand(-1, (tp.num_sequences - 1) // len(u)).reshape(-1))
            got, want = _normalize_both(tp, w, in_place=True)
            assert torch.equal(got, want)
            got, want = _normalize_both(tp, w, head=False)
            assert torch.equal(got, want) and bool((got[:, 0] == 7).all())


def test_the_normalize_walk_against_sums_by_sparse_product_differs_by_rounding_at_most(monkeypatch):
    # where torch sums a level's rows by a sparse product (MKL's order, which may differ from
    # the walk's row order; on Dudo's few actions it did not) the numbers agree to rounding
    import tensorcfr.spaces.public as public

    tp = tensorcfr.compile("dudo(4,1,2)", form="public").treeplexes[1]
    w = torch.rand(1, tp.num_sequences, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    monkeypatch.setattr(public, "MATRIX_ENTRIES", 1)
    assert not all(public.adds_in_order(torch.zeros(1, u1 - u0, tp.types, dtype=w.dtype), segment)
                   for u0, u1, _, _, segment in tp.blocks)  # (the product serves)
    got, want = _normalize_both(tp, w)
    assert torch.allclose(got, want, rtol=1e-14, atol=0)


# a turn whose river cards in clubs and spades are dealt once a class: twins' values permuted
TWINS = "holdem_turn(board=AdKdQhJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJT, suit_isomorphism=True)"


def _best_both(tp, g, root=True):
    """tp.bottom_up(g) without a strategy (the best response) by the walk (which must run) and
    by torch's level passes (the walks off): [(q, v), (q, v)]."""
    return _both_ways("best_response", lambda: tp.bottom_up(g, root=root))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("game", GAMES + [TWINS])
def test_the_best_response_walk_equals_torchs_passes_bit_for_bit(game, dtype, compiled, monkeypatch, threads):
    """`public_loop.best_response` (each infoset's largest row, added into its parent sequence
    and, for twins, permuted into theirs) against the level passes it replaces in
    `PublicTreeplex.bottom_up`: a batch of 2 with ties (values rounded to a few steps), every
    q and v the same, the root's value with `root` and g's without, on 1 to 3 threads, by rows
    and by parent with runs of one parent (neighbours on different threads)."""
    source = public_loop._SOURCE.replace("#define PARENT_RUN 64 ", "#define PARENT_RUN 1 ")
    monkeypatch.setattr(public_loop, "_library", lambda: native.library("public_loop_run1", source, public_loop._FUNCTIONS))
    gen = torch.Generator().manual_seed(11)
    assert game != TWINS or all(tp.mirror_u is not None for tp in compiled(game).treeplexes)
    for tp in compiled(game).treeplexes:
        g = (torch.rand(2, tp.num_sequences, generator=gen, dtype=dtype) * 8).round() - 4  # ties between rows
        for n in (1, 2, 3):
            torch.set_num_threads(n)
            for least in (1, 1 << 30):  # by parent, and by rows where a level's parents are grouped
                monkeypatch.setattr(public_loop, "MIN_TYPES", least)
                for root in (True, False):
                    (q, v), (q0, v0) = _best_both(tp, g, root)
                    assert torch.equal(q, q0) and torch.equal(v, v0), (n, least, root)
                    assert root or torch.equal(q[:, 0], g[:, 0])
                    # without the infosets' values (an evaluation without gaps): the walk keeps
                    # none, the top level's maxima taken again for the root, the same q
                    (qn, vn), (qn0, _) = _both_ways("best_response", functools.partial(
                        tp.bottom_up, g, root=root, infosets=False))
                    assert vn is None and torch.equal(qn, q0) and torch.equal(qn0, q0), (n, least, root)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("game", GENERIC)
def test_the_generic_best_response_walk_equals_the_level_loop_bit_for_bit(game, dtype, threads):
    """The generic form's treeplex takes the same walk as rows of one type: q and v of a batch of
    2 with ties, with and without the root, on 1 to 3 threads, each number the level loop's."""
    gen = torch.Generator().manual_seed(12)
    for tp in tensorcfr.compile(game, form="generic").treeplexes:
        g = (torch.rand(2, tp.num_sequences, generator=gen, dtype=dtype) * 8).round() - 4
        for n in (1, 2, 3):
            torch.set_num_threads(n)
            for root in (True, False):
                (q, v), (q0, v0) = _best_both(tp, g, root)
                assert torch.equal(q, q0) and torch.equal(v, v0), (n, root)
                assert root or torch.equal(q[:, 0], g[:, 0])


def test_an_evaluation_takes_the_best_response_walk_and_gives_torchs_numbers(monkeypatch):
    # a full-range river spot's evaluation: both players' best responses walk, and NashConv,
    # the best responses and the value are those of torch's passes, bit for bit
    cg = tensorcfr.compile("holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2)")
    s = tensorcfr.Solver(cg, "dcfr", dtype=torch.float32, device="cpu")
    s.step(5)
    ran, walk = [], public_loop.best_response
    monkeypatch.setattr(public_loop, "best_response", lambda *a, **k: ran.append(walk(*a, **k)) or ran[-1])
    got = s.evaluate()
    assert ran == [True] * 4  # average and current, a player each
    monkeypatch.setattr(public_loop, "LOOP_ENTRIES", 1 << 62)
    want = s.evaluate()
    assert ran == [True] * 4 + [False] * 4  # torch's passes the second time, not the walk again
    for which in ("average", "current"):
        a, b = got[which], want[which]
        assert torch.equal(a.nash_conv, b.nash_conv) and torch.equal(a.game_value, b.game_value)
        assert all(torch.equal(x, y) for x, y in zip(a.best_response, b.best_response))
