"""The conformance suite of the compiled forms (tensorcfr/forms.py): both layouts implement the
one interface, and on every shipped game that has a public-tree form, and on random games dealt
once (`random_dealt`), the public form equals the generic one, which the rest of the suite
checks against a plain recursive CFR: the same sizes, the same best responses, the same
iterates of every preset (current strategy, average, regrets or cumulative utility) at every
infoset for 25 iterations, and the same evaluation; policies move between the forms; the
rule of form="auto" is one for the library and the CLI."""

import json

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import tensorcfr
from resume_check import resume_equals_straight
from tensorcfr import compiler, forms
from tensorcfr.cli.commands import main
from tensorcfr.forms.public import PublicCompiledGame
from tensorcfr.compiler.public import compile_public
from tensorcfr.errors import TensorCFRError

FORMS = ["generic", "public"]

GAMES = ["kuhn", "ocp(12)", "leduc", "dudo(4,1,2)", "dudo(4,2,1)", "liars_dice(faces=4)",
         "liars_dice(numdice=2,faces=2)",  # two dice each: types are multisets, dealt in either order
         "random_dealt(seed=0)", "random_dealt(seed=1,types=4,depth=5,max_actions=3)",
         "random_dealt(seed=2,types=2,depth=6,max_actions=2)",
         # hold'em on a small deck: a river spot, and a turn spot with its river card dealt in public
         "holdem_river(board=AsKhQsJh9s, pot=4, stack=8, ranks=AKQJ9, suits=sh)",
         "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)",
         # ... and a flop spot, its turn and river cards dealt in public one after the other
         "holdem_flop(board=AsKhQs, pot=4, stack=6, bets=(1,), cap=1, ranks=AKQJT, suits=sh)",
         # Rhode Island hold'em: one-card types, two board cards dealt in public
         "rhode_island(raises=1, ranks='QKA', suits='sh')"]
CARD_GAMES = ("holdem", "rhode_island")  # showdowns by card-removal prefix sums (tolerances below)
ALGOS = list(tensorcfr.PRESETS)  # every preset of the CFR family and of FTRL
TOL = 1e-12  # evaluations: exploitability, NashConv, value, best responses
# Iterates are sums over sequences taken in another order in each form, and the rules amplify
# that rounding from one iteration to the next: regrets, utilities and averages are held to
# 1e-11 of their scale (worst measured in 25 iterations: 1.26e-12, pcfr+ on
# random_dealt(seed=1,...), iteration 20), the current strategy, a ratio of regret sums, to
# 1e-9 (worst: 1.43e-11, lcfr on Dudo(4,1,2), iteration 12, on the CPU; 1.09e-10 on an H200's
# CUDA, where atomics add in any order, 2026-11-28)
ITERATE_TOL = 1e-11
STRATEGY_TOL = 1e-9
# hold'em's public form sums its showdowns by card-removal prefix sums (operators/cards.py), in
# another order than the generic form's products: worst measured 1.31e-10 (pcfr+, the small turn,
# iteration 22), 1.03e-9 (pdcfr+, whose discounted, predicted regrets amplify it; iteration 20)
HOLDEM_STRATEGY_TOL = 1e-8
# ... and its regrets and averages (pdcfr+ on the small turn: 1.5e-10 of their scale at iteration
# 22, grown smoothly from 3e-15 at iteration 1; both forms' exploitability within 2e-13 at 30)
HOLDEM_ITERATE_TOL = 1e-9
# rtcfr+ plays regret matching on regrets that its 1e-10 perturbation leaves just above its floor
# of 1e-9 at infosets the opponent all but never reaches: a ratio of sums of order 1e-9, whose
# rounding (1e-17) is 1e-8 of it. Worst measured: 2.2e-10 (Dudo(4,1,2), iteration 22) while the
# regrets themselves stayed within 2e-13
RTCFR_STRATEGY_TOL = 1e-8
# ... and those strategies, played, move its regrets and evaluations: on an H200 (16 CPU threads,
# CUDA) Dudo(4,2,1)'s regrets drifted 1.01e-11 of their scale apart by iteration 24 on the CPU,
# and the small hold'em turn's current exploitability 1.8e-10 apart on CUDA (2026-11-26)
RTCFR_ITERATE_TOL = 1e-10
# The flop spot's deeper tree amplifies the rounding faster under regret matching: measured
# from 1e-17 at iteration 1, iterates and strategies grow by 3-20x an iteration from iteration 5
# with hs-dcfr (5e-8 at 25) and rtcfr+ (strategies 3e-8 at 8, 6e-6 at 10), while FTRL, OFTRL
# and MMD, whose updates are smooth, stay within 1e-15 for all 25: the CFR family is compared
# there for the iterations that stay inside the tolerances above (rtcfr+: 1e-9 at iteration 7)
CFR_ITERATIONS = {"holdem_flop": 7}


@pytest.fixture(scope="module")
def compiled():
    cache = {}

    def get(game, form):
        if (game, form) not in cache:
            cache[game, form] = tensorcfr.compile(game, form=form)
        return cache[game, form]
    return get


def columns(a, b):
    """Per player, the columns of every (infoset, action) in solver a's and in solver b's
    per-sequence tensors, matched by infoset key (b may hold infosets chance never reaches)."""
    out = []
    for ta, tb in zip(a.game.treeplexes, b.game.treeplexes):
        ia, ib = ta.infoset_index(), tb.infoset_index()
        assert set(ia) == set(ib), f"player {ta.player}: the forms name different infosets"
        ca, cb = [0], [0]
        for key, j in ia.items():
            assert ta.action_names[j] == tb.action_names[ib[key]]
            ca += ta.columns(j)
            cb += tb.columns(ib[key])
        out.append((torch.tensor(ca), torch.tensor(cb)))
    return out


def assert_close(x, y, what, tol=TOL):
    scale = max(1.0, float(x.abs().max()))
    err = float((x - y).abs().max())
    assert err <= tol * scale, f"{what}: {err:.3g} apart (scale {scale:.3g})"


@pytest.mark.parametrize("game", GAMES)
def test_sizes_equal_the_generic_form(game, compiled):
    generic, public = compiled(game, "generic").sizes(), compiled(game, "public").sizes()
    for k in ("histories", "terminals", "chance_nodes", "decision_nodes", "infosets", "infosets_with_choice",
              "sequences", "levels"):
        assert public[k] == generic[k], k
    assert public["form"] == "public" and generic["form"] == "generic"
    assert public["public_nodes"] < generic["histories"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("game", GAMES)
def test_every_form_implements_the_interface(game, form, compiled):
    cg = compiled(game, form)
    assert isinstance(cg, forms.CompiledForm) and cg.form == form
    assert all(isinstance(tp, forms.DecisionSpace) for tp in cg.treeplexes)
    assert isinstance(cg.operator(torch.float64), forms.Operator)
    assert isinstance(cg.to("cpu"), forms.CompiledForm)


@pytest.mark.parametrize("game", GAMES)
def test_best_responses_equal_the_generic_form(game, compiled):
    """Each player's best-response value against the other's plan, for uniform play and for a
    random behavioural strategy (the same at every infoset key in both forms)."""
    generic, public = compiled(game, "generic"), compiled(game, "public")
    rng = torch.Generator().manual_seed(7)
    table = {key: {a: float(w) for a, w in zip(acts, torch.rand(len(acts), generator=rng) + 0.1)}
             for tp in generic.treeplexes for _, key, acts in tp.infosets()}
    table = {k: {a: w / sum(row.values()) for a, w in row.items()} for k, row in table.items()}
    for policy in (lambda cg: tensorcfr.Policy.uniform(cg), lambda cg: tensorcfr.Policy.from_dict(cg, table)):
        a, b = tensorcfr.evaluate(generic, policy(generic)), tensorcfr.evaluate(public, policy(public))
        for p in (0, 1):
            assert abs(a.best_response[p].item() - b.best_response[p].item()) <= TOL, p
        assert abs(a.game_value.item() - b.game_value.item()) <= TOL


@pytest.mark.parametrize("by_count", ["count", "count, a block of one", "scatter"])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("game", GAMES)
def test_public_best_responses_equal_a_scatter_of_the_maxima(game, batch, by_count, compiled, monkeypatch):
    """The public form's best response bottom-up (each infoset's best row: by its count of
    actions, `PublicTreeplex.action_rows`, a block of infosets at a time, or by the level's
    scatter where the counts are many and the level small) equals the maxima scattered into the
    infosets and pushed up level by level, bit for bit (max is exact), on random values."""
    import tensorcfr.spaces.public as public

    monkeypatch.setattr(public, "BEST_ENTRIES", 1 << 62 if by_count == "scatter" else 0)
    if by_count == "count, a block of one":
        monkeypatch.setattr(public, "BEST_BLOCK", 1)
    for tp in compiled(game, "public").treeplexes:
        g = torch.randn(batch, tp.num_sequences, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
        q, v = tp.bottom_up(g.clone())
        want_q = g.clone()
        want_v = torch.full((batch, tp.num_public_infosets, tp.types), -torch.inf, dtype=torch.float64)
        for lv in reversed(tp.levels):
            idx = lv.segment.view(1, -1, 1).expand(batch, -1, tp.types)
            want_v[:, lv.u0:lv.u1].scatter_reduce_(1, idx, tp.rows(want_q)[:, lv.m0:lv.m1], "amax")
            tp._to_parent(lv, want_q, want_v[:, lv.u0:lv.u1])
        assert torch.equal(v, want_v.view(batch, -1)) and torch.equal(q, want_q)


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("game", GAMES)
def test_iterates_equal_the_generic_form(game, algo, compiled, device):
    # the CFR family meets regrets that are exactly 0 in exact arithmetic, which the two forms'
    # sums leave at 0 or at +-1e-22 (Liar's Dice with cfr+; on CUDA, where atomics add in any
    # order, with every rule: Dudo(4,2,1) dcfr 0.67 apart at iteration 1); the tolerance makes both read 0
    opts = {"regret_tolerance": 1e-12} if isinstance(tensorcfr.PRESETS[algo], tensorcfr.CFRConfig) else {}
    a = tensorcfr.Solver(compiled(game, "generic"), algo, device=device, **opts)
    b = tensorcfr.Solver(compiled(game, "public"), algo, device=device, **opts)
    cols = columns(a, b)
    iterate_tol = HOLDEM_ITERATE_TOL if game.startswith(CARD_GAMES) else RTCFR_ITERATE_TOL if algo == "rtcfr+" \
        else ITERATE_TOL
    cfr = not isinstance(tensorcfr.PRESETS[algo], (tensorcfr.FTRLConfig, tensorcfr.MMDConfig))  # regret matching
    iterations = CFR_ITERATIONS.get(game.split("(")[0], 25) if cfr else 25
    for t in range(1, 1 + iterations):
        a.step()
        b.step()
        for p, (ca, cb) in enumerate(cols):
            ca, cb = ca.to(device), cb.to(device)
            assert_close(a.sigma[p][:, ca], b.sigma[p][:, cb], f"iteration {t}, current strategy of player {p}",
                         HOLDEM_STRATEGY_TOL if game.startswith(CARD_GAMES) else
                         RTCFR_STRATEGY_TOL if algo == "rtcfr+" else STRATEGY_TOL)  # H100: 1.01e-11 (pcfr+)
            assert_close(a.average[p][:, ca], b.average[p][:, cb], f"iteration {t}, average of player {p}",
                         iterate_tol)
            for f, x in vars(a.state.rule[p]).items():  # the per-sequence state (not per infoset or per member)
                if x.shape[-1] == a.game.treeplexes[p].num_sequences:
                    assert_close(x[:, ca], getattr(b.state.rule[p], f)[:, cb], f"iteration {t}, {f} of player {p}",
                                 iterate_tol)
    # the current profile's evaluation inherits the rounding of its strategies (held to
    # STRATEGY_TOL), the average's that of sums (ITERATE_TOL): worst measured for the current one
    # 1.44e-12 (NashConv, lcfr, the small hold'em turn, whose payoffs reach 7 chips)
    # hold'em's iterates are held looser (above), and so their evaluations: pdcfr+ on the small
    # turn, 3.6e-12 apart in the average's exploitability
    # (rtcfr+'s current strategies are held to RTCFR_STRATEGY_TOL, and its evaluation with them)
    # An average whose weights grow as t^gamma with gamma + 1 at least the iterations run is
    # mostly the last few iterates (hs-dcfr's gamma of 30 over 25 iterations: the last 3 hold
    # 98% of the weight), so its evaluation inherits the current strategies' rounding: hs-dcfr on
    # the small turn, NashConv 6.2e-12 apart on the CPU (the current's 1.1e-11), against a bound
    # of 1e-11; its CUDA case failed on an H100 (2026-11-27, the bound it failed not printed, the
    # other CFR rules' cases passing); it is held to the current's tolerance
    # pdcfr+'s current strategies carry the most rounding of the hold'em cases (HOLDEM_STRATEGY_TOL),
    # and its current profile's NashConv on the small turn was 5.7e-11 apart on the CPU, 1.25e-10 on
    # an H100 (2026-11-27) against a bound of 1e-10: held as rtcfr+'s
    scale = 10 if game.startswith(CARD_GAMES) else 1
    current = 100 if algo in ("rtcfr+", "pdcfr+") else 10
    rule = tensorcfr.PRESETS[algo]
    recent = getattr(rule, "averaging", None) == "power" and getattr(rule, "gamma", 0) + 1 >= iterations
    for which, tol in (("average", scale * (current if recent else 1) * TOL), ("current", scale * current * TOL)):
        ea, eb = a.evaluate()[which], b.evaluate()[which]
        for f in ("exploitability", "nash_conv", "game_value"):
            x, y = getattr(ea, f).item(), getattr(eb, f).item()
            assert abs(x - y) <= tol * max(1.0, abs(x)), (which, f)


@pytest.mark.parametrize("algo", ["dcfr", "pcfr+", "cfr+"])
def test_blocks_of_levels_change_nothing(algo, monkeypatch):
    # normalising and the in-place regrets run over blocks of levels (public.BLOCK_ENTRIES):
    # a level per block gives the same numbers, bit for bit, as the whole treeplex in one block
    # (on the CPU: CUDA's reductions may sum a block of another shape in another order)
    import tensorcfr.spaces.public as public
    whole = tensorcfr.Solver(compile_public("dudo(4,1,2)"), algo, device="cpu")
    monkeypatch.setattr(public, "BLOCK_ENTRIES", 1)
    split = tensorcfr.Solver(compile_public("dudo(4,1,2)"), algo, device="cpu")
    assert len(whole.game.treeplexes[0].blocks) == 1
    assert len(split.game.treeplexes[0].blocks) == len(split.game.treeplexes[0].levels) > 3
    for _ in range(10):
        whole.step()
        split.step()
    for p in (0, 1):
        assert torch.equal(whole.sigma[p], split.sigma[p]) and torch.equal(whole.average[p], split.average[p])
        assert torch.equal(whole.regrets[p], split.regrets[p])
    a, b = whole.evaluate()["average"], split.evaluate()["average"]
    assert torch.equal(a.nash_conv, b.nash_conv) and torch.equal(a.game_value, b.game_value)


class _Ops(TorchDispatchMode):
    """The names of the torch operators run under it."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("how", ["matrix", "index", "scatter"])
@pytest.mark.parametrize("batch", [1, 2])
def test_row_sums_and_copies_equal_a_loop(batch, how, monkeypatch):
    # add_rows by a sparse product (one member, enough entries), by a scatter otherwise, and
    # put_rows, against a plain loop; indices unsorted, repeated, near together and far apart.
    # One member's rows also by `index_add_` along them, or by the broadcast scatter, as a GPU
    # adds them (`ROWS_DEVICES`, `MATRIX_DEVICES`: gpu_profile.py --rows times the three there)
    import tensorcfr.spaces.public as public
    monkeypatch.setattr(public, "ROWS_DEVICES", () if how == "scatter" else ("cpu",))
    monkeypatch.setattr(public, "MATRIX_DEVICES", ("cpu",) if how == "matrix" else ())
    g = torch.Generator().manual_seed(3)
    for index in (torch.randint(0, 5000, (40000,), generator=g),  # repeats, rows spread over all of out
                  torch.randint(1000, 1100, (9000,), generator=g),  # a narrow band of rows
                  torch.randperm(20000, generator=g)[:9000]):  # distinct rows
        values = torch.randn(batch, len(index), 5, dtype=torch.float64, generator=g)
        n = int(index.max()) + 7
        start = torch.randn(batch, n, 5, dtype=torch.float64, generator=g)
        expect = start.clone()
        for i, r in enumerate(index.tolist()):
            expect[:, r] += values[:, i]
        with _Ops() as ops:
            got = public.add_rows(start.clone(), index, values)
        assert torch.allclose(got, expect, rtol=0, atol=1e-12)
        if batch == 1:  # (the way asked for was taken)
            assert {"matrix": "addmm", "index": "index_add_", "scatter": "scatter_add_"}[how] in ops.names
        # one member: every case here takes the sparse product where it is on, not the scatter
        assert public._by_matrix(start, values) == (batch == 1 and how == "matrix")
        assert public._summing(index, torch.float64)[2] is not None
        if len(torch.unique(index)) == len(index):
            put = public.put_rows(torch.zeros_like(start), index, values)
            assert torch.equal(put, public.add_rows(torch.zeros_like(start), index, values))


@pytest.mark.parametrize("batch", [1, 3])
def test_picked_rows_of_a_batch_view_equal_a_loop(batch):
    # pick_rows of the [B, M, T] view of a plan [B, S] (its empty sequence's column left out:
    # not contiguous), gathered member by member on the CPU, against a plain loop
    import tensorcfr.spaces.public as public
    g = torch.Generator().manual_seed(5)
    flat = torch.randn(batch, 1 + 300 * 7, dtype=torch.float64, generator=g)
    view = flat[:, 1:].view(batch, 300, 7)
    index = torch.randint(0, 300, (1000,), generator=g)
    expect = torch.stack([torch.stack([view[b, r] for r in index.tolist()]) for b in range(batch)])
    assert torch.equal(public.pick_rows(view, index), expect)
    assert torch.equal(public.pick_rows(view.contiguous(), index), expect)


def test_cpu_row_paths_change_no_iterate(monkeypatch):
    # the CPU's sparse sums and row copies (Dudo: every terminal's row distinct) give the
    # iterates of the broadcast scatter-adds they replace
    import tensorcfr.spaces.public as public
    fast = tensorcfr.Solver(compile_public("dudo(4,1,2)"), "dcfr")
    slow = tensorcfr.Solver(compile_public("dudo(4,1,2)"), "dcfr")
    assert fast.op.distinct == (True, True)
    assert tensorcfr.Solver(compile_public("leduc"), "cfr").op.distinct == (False, False)  # calls and folds share a bet
    import tensorcfr.operators.public as operators_public

    scatter = public.add_rows
    for _ in range(10):
        # Dudo(4,1,2)'s levels are below the thresholds: lowered, every sum and gather takes the new path
        monkeypatch.setattr(public, "MATRIX_ENTRIES", 1)
        monkeypatch.setattr(public, "GATHER_ENTRIES", 1)
        fast.step()
        monkeypatch.setattr(public, "MATRIX_ENTRIES", 1 << 62)
        monkeypatch.setattr(public, "GATHER_ENTRIES", 1 << 62)
        monkeypatch.setattr(operators_public, "put_rows", scatter)  # where the operator calls it
        slow.step()
        monkeypatch.undo()
    for p in (0, 1):
        for a, b in ((fast.sigma, slow.sigma), (fast.average, slow.average), (fast.regrets, slow.regrets)):
            # sums in another order: equal to rounding of each tensor's scale (averages reach 385)
            assert float((a[p] - b[p]).abs().max()) <= 1e-12 * max(1.0, float(a[p].abs().max()))


@pytest.mark.parametrize("game", ["kuhn", "ocp(12)", ["kuhn(ante=1)", "kuhn(ante=2)"]])
def test_ranked_showdowns_equal_the_dense_payoff_matrices(game):
    # OCP and Kuhn pay a + b sign(t0 - t1): O(T) prefix sums over the ranks instead of a T x T product
    from tensorcfr.operators.payoff import PayoffOperator
    ranked, dense = compile_public(game, ranked=True), compile_public(game)
    assert ranked.ranked and not dense.ranked  # small: dense unless asked
    assert ranked.sizes() == dense.sizes()
    ops = [PayoffOperator.of(cg, torch.float64) for cg in (ranked, dense)]
    gen = torch.Generator().manual_seed(0)
    for p in (0, 1):
        x = torch.rand(2, ranked.treeplexes[1 - p].num_sequences, dtype=torch.float64, generator=gen)
        assert_close(ops[0].cfv(p, x), ops[1].cfv(p, x), f"player {p}'s values", tol=1e-14)


@pytest.mark.parametrize("algo", ["cfr+", "dcfr"])
def test_ranked_iterates_equal_the_dense_ones(algo):
    # with the tolerance that makes CFR+ read rounding-sized regrets as the ties they are
    a = tensorcfr.Solver(compile_public("ocp(12)", ranked=True), algo, regret_tolerance=1e-12)
    b = tensorcfr.Solver(compile_public("ocp(12)", ranked=False), algo, regret_tolerance=1e-12)
    for t in range(25):
        a.step()
        b.step()
        for p in (0, 1):
            assert_close(a.sigma[p], b.sigma[p], f"iteration {t + 1}, player {p}'s strategy", tol=STRATEGY_TOL)
            assert_close(a.average[p], b.average[p], f"iteration {t + 1}, player {p}'s average")
            assert_close(a.regrets[p], b.regrets[p], f"iteration {t + 1}, player {p}'s regrets")


def test_ranked_ocp_50_reaches_its_exact_value():
    # the LP value of OCP(50) is -121/2100 (README's thesis table); a profile within NashConv
    # eps of equilibrium has a value within eps of the game's
    s = tensorcfr.Solver(compile_public("ocp(50)", ranked=True), "dcfr")
    s.step(400)
    ev = s.evaluate()["average"]
    assert float(ev.nash_conv[0]) < 1e-4
    assert abs(float(ev.game_value[0]) + 121 / 2100) <= float(ev.nash_conv[0])


def test_ocp_of_a_million_cards_compiles_without_a_table_of_pairs():
    n = 10**6
    cg = tensorcfr.compile(f"ocp({n})", form="public")  # a [n, n] table would be 8 TB
    sizes = cg.sizes()
    assert sizes["histories"] == 1 + 9 * n * (n - 1) and sizes["infosets"] == [2 * n, 2 * n]
    assert sizes["public_nodes"] == 9 and cg.payoff_weights.shape == (1, 5, 2)
    s = tensorcfr.Solver(cg, "cfr")
    s.step(1)
    # one CFR iteration from uniform play gives each infoset its best response to uniform play.
    # Card 0 bets first (-1/2 against -5/4 for passing) and, having passed, folds to a bet (-1
    # against -2); card n-1 calls that bet (+2 against -1): the ranks decide the showdowns
    tp = cg.treeplexes[0]
    u = next(u for u in range(tp.num_public_infosets) if tp.infoset_keys[u * n] == "0:pb")
    assert tp.infoset_keys[0] == "0:" and tp.action_names[0] == ("pass", "bet")
    assert s.sigma[0][0, tp.columns(0)].tolist() == [0.0, 1.0]
    assert s.sigma[0][0, tp.columns(u * n)].tolist() == [1.0, 0.0]
    top = u * n + n - 1
    assert tp.infoset_keys[top] == f"{n - 1}:pb" and s.sigma[0][0, tp.columns(top)].tolist() == [0.0, 1.0]


def test_the_device_estimate_of_a_ranked_game_grows_with_its_types_not_their_pairs():
    # a ranked game keeps (a, b) per terminal, never a types x types matrix: its estimate doubles
    # with the cards (OCP(10^6) was once refused on an H100 as needing 80,000 GB)
    from tensorcfr.compiler.sizes import device_estimate_bytes

    need = [device_estimate_bytes(tensorcfr.compile(f"ocp({n})", form="public"), 1, torch.float64) for n in (1000, 2000)]
    assert need[0]["payoff"] == 8 * 5 * (2 + 3 * 1000)  # 5 terminals: (a, b) and three float64 rows of the types
    assert 1.99 < need[1]["total"] / need[0]["total"] < 2.01
    assert device_estimate_bytes(tensorcfr.compile("ocp(1000000)", form="public"), 1, torch.float64)["total"] < 1e9


def test_ftrl_entropy_weights_ignore_infosets_chance_never_reaches(compiled):
    # Leduc's public form holds (board card c, own card c), which no deal reaches: their
    # entropy must not weigh on the parent sequence, as it would with the plain public weights
    a = tensorcfr.Solver(compiled("leduc", "generic"), "ftrl(weights='kroer17')", device="cpu")
    b = tensorcfr.Solver(compiled("leduc", "public"), "ftrl(weights='kroer17')", device="cpu")
    (ca, cb), _ = columns(a, b)
    a.step(5)
    b.step(5)
    assert_close(a.sigma[0][:, ca], b.sigma[0][:, cb], "current strategy")
    assert b.game.treeplexes[0].live is not None and not bool(b.game.treeplexes[0].live.all())


def test_batch_members_equal_their_solo_runs():
    cg = compile_public(["kuhn(ante=1)", "kuhn(ante=2)"])
    assert isinstance(cg, PublicCompiledGame) and cg.batch_size == 2
    batch = tensorcfr.Solver(cg, "dcfr", device="cpu")
    batch.step(20)
    for m, name in enumerate(cg.batch_names):
        solo = tensorcfr.Solver(name, "dcfr", device="cpu", form="public")
        solo.step(20)
        for p in (0, 1):
            assert torch.equal(batch.sigma[p][m], solo.sigma[p][0])
            assert torch.equal(batch.average[p][m], solo.average[p][0])


def test_a_batch_of_different_trees_is_refused():
    for batch in (["dudo(4,1,1)", "kuhn"], ["dudo(4,1,1)", "dudo(5,1,1)"]):
        with pytest.raises(tensorcfr.TensorCFRError, match=r"batch member 1, \S+, does not have the public tree and "
                                                           r"types of member 0, dudo\(4,1,1\); a batch may differ in "
                                                           "payoffs and in the probabilities of the same deals only"):
            compile_public(batch)


@pytest.mark.parametrize("game", ["kuhn", "leduc"])
def test_policies_move_between_the_forms(game, compiled):
    generic, public = compiled(game, "generic"), compiled(game, "public")
    for src, dst in ((generic, public), (public, generic)):
        s = tensorcfr.Solver(src, "cfr+", device="cpu")
        s.step(30)
        table = s.average_policy().to_dict()
        assert len(table) == sum(generic.sizes()["infosets"])  # reachable infosets only, as the generic form
        mine = tensorcfr.evaluate(src, tensorcfr.Policy.from_dict(src, table))
        theirs = tensorcfr.evaluate(dst, tensorcfr.Policy.from_dict(dst, table))
        assert abs(mine.nash_conv.item() - theirs.nash_conv.item()) <= TOL
        assert abs(mine.game_value.item() - theirs.game_value.item()) <= TOL


def test_keys_are_made_on_demand():
    cg = tensorcfr.compile("dudo(4,1,1)", form="public")
    tp = cg.treeplexes[1]
    keys = tp.infoset_keys
    assert len(keys) == tp.num_infosets == 512  # 4 rolls x 128 public nodes where player 2 bids
    assert keys[5] == list(keys)[5] and keys[-1] == list(keys)[-1]
    generic = tensorcfr.compile("dudo(4,1,1)").treeplexes[1]
    assert set(keys) == set(generic.infoset_keys)


def test_games_without_a_public_form_say_so():
    with pytest.raises(tensorcfr.TensorCFRError, match="no public-tree form"):
        tensorcfr.compile("domino(2,2)", form="public")
    assert tensorcfr.compile("domino(2,2)", form="auto").form == "generic"
    with pytest.raises(tensorcfr.TensorCFRError, match="form must be one of"):
        tensorcfr.compile("kuhn", form="tree")


def test_regret_tolerance_zeroes_rounding_and_only_that():
    cfg = tensorcfr.make_config("cfr+", regret_tolerance=1e-12)
    regret = torch.tensor([[0.0, 2.4e-22, 0.5, 1e-9]], dtype=torch.float64)
    values = torch.tensor([[0.0, 0.3, -0.2, 0.1]], dtype=torch.float64)
    assert cfg._matched(regret.clamp(min=0), regret, values).tolist() == [[0.0, 0.0, 0.5, 1e-9]]
    # every regret 0 but for rounding (a symmetric game's first iteration): the values set the scale
    noise = torch.tensor([[0.0, 5.6e-17, 0.0, 5.6e-17]], dtype=torch.float64)
    assert cfg._matched(noise, noise, values).tolist() == [[0.0, 0.0, 0.0, 0.0]]
    for bad in (-1e-3, 1.0, "x", True):
        with pytest.raises(tensorcfr.TensorCFRError, match="regret_tolerance"):
            tensorcfr.make_config("cfr", regret_tolerance=bad)


def test_cli_form_and_info(capsys):
    assert main(["info", "leduc", "--json", "--form", "public"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["form"] == "public" and info["types"] == [6, 6] and info["public_nodes"] == 465
    assert info["histories"] == 9457
    assert main(["info", "leduc", "--json"]) == 0  # the default: Leduc is small
    assert json.loads(capsys.readouterr().out)["form"] == "generic"
    out = {}
    for form in ("generic", "public"):
        assert main(["solve", "leduc", "--algo", "dcfr", "--iterations", "40", "--json", "--no-log",
                     "--form", form, "--deterministic", "--regret-tolerance", "1e-12"]) == 0
        out[form] = json.loads(capsys.readouterr().out)
    for k, tol in (("exploitability", TOL), ("game_value", TOL), ("exploitability_current", 1e-9)):
        assert abs(out["generic"][k] - out["public"][k]) <= tol, k  # DCFR's current play drifts: 3e-12 (CPU), 1.2e-10 (H100)
    assert main(["solve", "domino(2,2)", "--form", "public", "--iterations", "1"]) == 2
    assert "no public-tree form" in capsys.readouterr().err


def test_info_estimates_the_form_it_compiles_in(capsys):
    """`info`'s `estimated_bytes` is the estimate the limits hold the game to, in the form it is
    compiled in (`compiler.host_estimate`, float64): Dudo(4,2,2)'s public form by default on the
    CPU, its generic form's when asked; a game past the limits in both forms, the one its refusal
    names. (On CUDA `--form auto` keeps Dudo(4,2,2) generic, below `PUBLIC_FROM_HISTORIES_CUDA`:
    the device is named, as the default is CUDA where there is one.)"""
    from tensorcfr.compiler import host_estimate
    from tensorcfr.compiler.sizes import estimate_bytes
    for form in ("auto", "generic"):
        assert main(["info", "dudo(4,2,2)", "--json", "--form", form, "--device", "cpu"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["form"] == ("public" if form == "auto" else "generic")
        assert info["estimated_bytes"] == host_estimate("dudo(4,2,2)", form=info["form"])
    assert host_estimate("dudo(4,2,2)", form="public") < estimate_bytes(13_107_101) == host_estimate(
        "dudo(4,2,2)", form="generic")
    if torch.cuda.is_available():
        assert main(["info", "dudo(4,2,2)", "--json", "--device", "cuda"]) == 0
        assert json.loads(capsys.readouterr().out)["form"] == "generic"
    assert main(["info", "ocp(1000000000)", "--json", "--device", "cpu"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["compiled"].startswith("no: ") and f"{info['estimated_bytes'] / 1e9:.1f} GB" in info["compiled"]
    # past every limit, refused at once in the form the error names (the fuzz found `info` hanging
    # here when the estimate read the game without the limits)
    assert main(["info", "dudo(100,5,5)", "--json", "--device", "cpu"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert "its public-tree form" in info["compiled"] and f"about 10^{len(str(info['estimated_bytes'])) - 10} GB" in \
        info["compiled"]


def test_info_estimates_at_the_dtype_a_solve_would_run_in(capsys):
    # a full-range turn spot: 2.5 GB at float64, 1.4 GB at float32; info gives the estimate a
    # solve in that dtype is held to (both refused here by a smaller limit, so nothing is built)
    from tensorcfr.compiler import host_estimate

    turn = "holdem_turn(board=Ks7d2c9h, pot=10, stack=100, bets=(0.5,1,allin), cap=2)"
    need = {d: host_estimate(turn, dtype=d, max_memory=None) for d in ("float32", "float64")}
    assert need["float32"] < need["float64"]
    for dtype in ("float32", "float64"):
        assert main(["info", turn, "--json", "--device", "cpu", "--dtype", dtype, "--max-memory", "1G"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["estimated_bytes"] == need[dtype]
        assert info["compiled"].startswith("no: ") and f"needs {need[dtype] / 1e9:.1f} GB" in info["compiled"]
        assert main(["solve", turn, "--dtype", dtype, "--max-memory", "1G", "--no-log", "--device", "cpu"]) == 2
        assert f"needs {need[dtype] / 1e9:.1f} GB" in capsys.readouterr().err


def test_a_float64_refusal_names_float32_where_that_fits():
    """A public-form game past --max-memory at float64 but within it at float32: the one-line
    refusal offers `--dtype float32` with that estimate first, and taking it passes the check;
    where float32 would not fit either, or the solve is float32 already, it is not offered."""
    from tensorcfr.compiler import host_estimate

    turn = "holdem_turn(board=Ks7d2c9h, pot=10, stack=100, bets=(0.5,1,allin), cap=2)"
    need = {d: host_estimate(turn, dtype=d, max_memory=None) for d in ("float32", "float64")}
    between = (need["float32"] + need["float64"]) // 2
    with pytest.raises(TensorCFRError, match=rf"; --dtype float32 \({need['float32'] / 1e9:.1f} GB\), a smaller game"):
        tensorcfr.compile(turn, form="public", max_memory=between)
    assert tensorcfr.compile(turn, form="public", max_memory=between, dtype="float32").sizes()["types"] == [1128, 1128]
    for dtype, limit in (("float64", need["float32"] - 1), ("float32", need["float32"] - 1)):
        with pytest.raises(TensorCFRError) as refused:
            tensorcfr.compile(turn, form="public", max_memory=limit, dtype=dtype)
        assert "--dtype" not in str(refused.value) and "; a smaller game" in str(refused.value)


def test_public_run_resumes_bit_identically(tmp_path, capsys):
    args = ["solve", "leduc", "--algo", "pcfr+", "--json", "--logdir", str(tmp_path), "--form", "public",
            "--deterministic"]
    assert main([*args, "--iterations", "20"]) == 0
    run_dir = json.loads(capsys.readouterr().out)["run_dir"]
    resume_equals_straight(main, capsys, args, run_dir, 45, tmp_path)


@pytest.mark.parametrize("spec, expected", [("kuhn", "generic"), ("leduc", "generic"), ("dudo(4,1,1)", "generic"),
                                            ("domino(2,2)", "generic"), ("liars_dice(numdice=2,faces=3)", "generic"),
                                            ("dudo(4,2,2)", "public"), ("ocp(1000)", "public")])
def test_one_rule_picks_the_form_for_the_library_and_the_cli(spec, expected, capsys):
    assert compiler.choose(spec).name == compiler.choose(spec, device="cpu").name == expected
    assert main(["info", spec, "--json", "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["form"] == expected
    if expected == "generic":  # (the large ones are compiled by the tests of their own)
        assert tensorcfr.compile(spec).form == expected
        assert tensorcfr.Solver(spec, device="cpu").game.form == expected


def test_on_cuda_the_generic_form_serves_larger_games(monkeypatch, capsys):
    """For a solve on CUDA (`choose(device=)`) the public form comes from 2^24 histories, not
    10^6, where the generic form's estimate fits the device's free memory: Dudo(4,2,2) (13.1M,
    generic 0.609 against public 1.342 ms an iteration on an H100) goes generic; Dudo(5,2,2)
    (472M), a ranked OCP, a card game and Dudo(4,2,2) on a device without room stay public. A CUDA device
    is stood in for here (the device's free bytes too); the Solver and `info` pass theirs."""
    from tensorcfr import devices

    free = [80 << 30]
    monkeypatch.setattr(devices, "resolve_device", lambda d: torch.device("cuda" if "cuda" in str(d) else "cpu"))
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d=None: (free[0], 80 << 30))
    assert compiler.choose("dudo(4,2,2)", device="cuda").name == "generic"
    assert compiler.choose("dudo(4,2,2)", device="cpu").name == "public"
    assert compiler.choose("dudo(5,2,2)", device="cuda").name == "public"
    assert compiler.choose("ocp(1000)", device="cuda").name == "public"
    assert compiler.choose("dudo(4,1,2)", device="cuda").name == "generic"
    # a card game keeps the CPU's threshold (no GPU has timed its generic form): 4.4M histories
    narrow = "holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, range0='22+,A2s+,K9o+,QTs+', range1='22+,A2+,KT+,87s')"
    assert compiler.choose(narrow, device="cuda").name == compiler.choose(narrow, device="cpu").name == "public"
    free[0] = 10 << 20  # 10 MB free: the generic form's 1.5 GB does not fit
    assert compiler.choose("dudo(4,2,2)", device="cuda").name == "public"
    seen = []  # the Solver and `info` pass their device to the rule
    choose = compiler.choose
    monkeypatch.setattr(compiler, "choose", lambda *a, **k: seen.append(str(k.get("device"))) or choose(*a, **k))
    tensorcfr.Solver("kuhn", device="cpu")
    assert seen == ["cpu"]
    assert main(["info", "kuhn", "--json", "--device", "cuda"]) == 0
    assert seen[1:] and set(seen[1:]) == {"cuda"} and json.loads(capsys.readouterr().out)["form"] == "generic"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_a_cuda_solver_of_dudo_422_takes_the_generic_form():
    """On a GPU the default form of Dudo(4,2,2) is the generic one, as `choose` says for CUDA."""
    assert tensorcfr.Solver("dudo(4,2,2)", "cfr+", device="cuda").game.form == "generic"


def test_sampling_takes_the_generic_form_unless_asked():
    assert compiler.choose("dudo(4,2,2)", sampling=True).name == "generic"
    assert compiler.choose("dudo(4,2,2)", "public", sampling=True).name == "public"
    assert tensorcfr.Solver("leduc", sampling="chance", device="cpu").game.form == "generic"
    assert tensorcfr.Solver("leduc", sampling="chance", form="public", device="cpu").game.form == "public"


def test_where_only_the_public_form_fits_it_is_chosen():
    """Dudo(4,1,2) in the generic form needs 154 MB by the estimate (`sizes.estimate_bytes`),
    its public form less: a limit of 150 MB leaves only the public form; below what either
    needs, the public form's own limit says so."""
    assert compiler.choose("dudo(4,1,2)").name == "generic"
    assert compiler.choose("dudo(4,1,2)", max_memory=150_000_000).name == "public"
    with pytest.raises(tensorcfr.TensorCFRError, match="its public-tree form .* needs"):
        compiler.choose("dudo(4,1,2)", max_memory=10_000_000)


@pytest.mark.parametrize("spec, algo", [("leduc", "cfr+"), ("kuhn", "dcfr"), ("dudo(4,1,1)", "pcfr+")])
def test_the_cli_prints_what_the_library_computes(spec, algo, capsys):
    """`tensorcfr solve` and `tensorcfr.Solver`, both with their defaults, are one run: the same
    form, the same exploitability and value after the same iterations (to the last bit; both on
    the CPU, whose sums have one order)."""
    assert main(["solve", spec, "--algo", algo, "--iterations", "200", "--json", "--no-log", "--device", "cpu"]) == 0
    cli = json.loads(capsys.readouterr().out)
    s = tensorcfr.Solver(spec, algo, device="cpu")
    s.step(200)
    ev = s.evaluate()
    assert cli["config"]["form"] == s.game.form
    assert cli["exploitability"] == ev["average"].exploitability.item()
    assert cli["game_value"] == ev["average"].game_value.item()
    assert cli["exploitability_current"] == ev["current"].exploitability.item()


@pytest.mark.parametrize("form", ["generic", "public"])
def test_an_alternating_iteration_drops_player_0s_values_before_its_new_plan(form, monkeypatch):
    """The iteration holds at most one plan and one array of values beside the state: player 0's
    values, consumed by its update, are gone when player 0's new plan (for player 1's update)
    is made. (Held, they stood beside that plan: 320 MB on the hold'em tutorial's flop spot.)
    Made afresh, as off the CPU: on the CPU the iteration makes them in the arrays it keeps, two
    in all (tests/test_cfr_family.py)."""
    import weakref

    import tensorcfr.updates.iteration as iteration

    monkeypatch.setattr(iteration, "WORKSPACE", False)
    s = tensorcfr.Solver(tensorcfr.compile("leduc", form=form), "dcfr", capture="none")
    assert s.config.updates == "alternating"
    values, alive = [], []
    cfv, tp = s.op.cfv, s.game.treeplexes[0]

    def watched_cfv(p, x, out=None):
        g = cfv(p, x, out=out)
        values.append(weakref.ref(g))
        return g

    def watched(plan):  # player 0's plan: alone, or averaged in as it is made (iterations back to back)
        def made(sigma, *a, **k):
            alive.append(sum(r() is not None for r in values))
            return plan(sigma, *a, **k)
        return made

    object.__setattr__(s.op, "cfv", watched_cfv)
    for name in ("sequence_form", "averaged_plan"):
        object.__setattr__(tp, name, watched(getattr(tp, name)))
    s.step(3)
    s.step(1)
    assert len(values) == 8 and len(alive) >= 4  # both players' values, player 0's new plan, each iteration
    assert alive == [0] * len(alive)


@pytest.mark.parametrize("form", ["generic", "public"])
@pytest.mark.parametrize("algo", ["dcfr", "pcfr+", "rtcfr+"])
def test_iterations_run_back_to_back_average_player_0s_next_plan_as_they_make_it(form, algo, device):
    """`Solver.step(n)` makes player 0's new plan once an iteration, averaged in with the next
    iteration's weight as player 1's update needs it (`iterate`'s next_sc), instead of again at
    the next iteration's start, as `step(1)` n times does. Both give the same average,
    strategies and rule state bit for bit (float32: the sums in their order); in 6 iterations
    the first way makes player 0's plan 5 times fewer (dcfr: 7 times against 12). On CUDA the
    sums are deterministic ones: `index_add_`'s atomics add in any order, so two runs of either
    way differ in the last bits (every case failed so on an H100, 2026-11-27)."""
    spec = "holdem_turn(board=AsKhQsJh, pot=4, stack=6, bets=(1,allin), cap=1, ranks=AKQJ9, suits=sh)"
    runs, made = [], []
    for back_to_back in (True, False):  # (a game each: its treeplexes are watched below)
        s = tensorcfr.Solver(tensorcfr.compile(spec, form=form), algo, dtype=torch.float32, capture="none",
                             device=device, deterministic=device != "cpu")
        assert s.config.updates == "alternating"
        plans, tp = [], s.game.treeplexes[0]
        plan, averaged_plan = tp.sequence_form, tp.averaged_plan
        # a plan made: by sequence_form, or by averaged_plan's fused walk where it serves
        object.__setattr__(tp, "sequence_form", lambda *a, plans=plans, plan=plan, **k: plans.append(1) or plan(*a, **k))
        object.__setattr__(tp, "averaged_plan", lambda *a, plans=plans, inner=averaged_plan, **k: (
            lambda x: x if x is None else plans.append(1) or x)(inner(*a, **k)))
        if back_to_back:
            s.step(6)
        else:
            for _ in range(6):
                s.step(1)
        made.append(len(plans))
        runs.append([*s.average, *s.sigma, *(t for st in s.state.rule for t in vars(st).values()
                                             if isinstance(t, torch.Tensor))])
    assert made[1] - made[0] == 5 and (algo != "dcfr" or made == [7, 12])
    for x, y in zip(*runs, strict=True):
        assert torch.equal(x, y)


@pytest.mark.parametrize("spec", ["liars_dice", "dudo(4,2,1)", "dudo(4,1,2)"])
def test_the_large_classes_in_blocks_give_each_class_s_values(spec, device, monkeypatch):
    """torch's path (a GPU's; on the CPU where the compiled loop steps aside) takes the large
    payoff classes a block at a time, one batched product a run of classes of one size
    (`CLASS_BLOCK_ENTRIES`): the values of a product a class, bit for bit for one plan on the
    CPU (each product's sums are its own), to rounding for a batch of plans and on CUDA."""
    import tensorcfr.operators.public as public_operator
    from tensorcfr.operators import dense_loop

    monkeypatch.setattr(dense_loop, "LOOP_ENTRIES", 1 << 62)
    cg = tensorcfr.compile(spec, form="public").to(device)
    gen = torch.Generator().manual_seed(3)
    blocked = cg.operator(torch.float64)
    runs = [len(r) for _, r in blocked._class_blocks()]
    monkeypatch.setattr(public_operator, "CLASS_BLOCK_ENTRIES", 0)  # a class a block: each its own product
    alone = cg.operator(torch.float64)
    assert len(alone._class_blocks()) == len(alone.weights) > len(runs) == 1 and runs[0] < len(alone.weights)
    for b in (1, 3):
        xs = [torch.rand(b, tp.num_sequences, dtype=torch.float64, generator=gen).to(device) for tp in cg.treeplexes]
        for p in (0, 1):
            got, want = blocked.cfv(p, xs[1 - p]), alone.cfv(p, xs[1 - p])
            if b == 1 and device == "cpu":
                assert torch.equal(got, want)
            else:
                assert torch.allclose(got, want, rtol=1e-14, atol=1e-15)
