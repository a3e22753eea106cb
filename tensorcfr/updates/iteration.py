"""One iteration as a function over explicit state: counterfactual values, then each player's
update by the rule.

For each player p the iteration computes counterfactual values g_p [B, S_p] against the other
player's realisation plan (the payoff operator), adds the plan just played into the average
with weight w_t, and asks the rule (`rules.py`) for the next strategy. `updates=
"simultaneous"` evaluates both players against the same profile; `"alternating"` updates
player 0 first and player 1 against player 0's new strategy. Nothing here knows of solvers,
capture or logging: `Solver` owns the state and `capture.py` wraps this function.

Example:
    >>> import tensorcfr
    >>> from tensorcfr.operators.payoff import PayoffOperator
    >>> from tensorcfr.updates.rules import make_config
    >>> cg, rule = tensorcfr.compile("kuhn"), make_config("cfr")
    >>> state = IterationState.start(cg.treeplexes, rule, 1, torch.float64, "cpu")
    >>> op = PayoffOperator.of(cg, torch.float64)
    >>> for t in (1, 2, 3):
    ...     _ = iterate(cg.treeplexes, op, rule, state, rule.scalars(t).as_numbers(torch.float64, "cpu"))
    >>> round(float(state.average[0][0, 0]), 1)  # three plans averaged, each 1 at the root
    3.0
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import torch

from tensorcfr.operators.payoff import PayoffOperator
from tensorcfr.updates.rules import Config, RuleState, Scalars
from tensorcfr.spaces.treeplex import Treeplex


@dataclass
class IterationState:
    """Everything the next iterations depend on, per player p."""

    sigma: list[torch.Tensor]  # [B, S_p] the current behavioural strategy (column 0 = 1)
    average: list[torch.Tensor]  # [B, S_p] the weighted sum of the realisation plans played
    rule: list[RuleState]  # the rule's own state (regrets, or FTRL's cumulative utility)
    # {(p, k): [B, S_p]}: the arrays the exact iteration makes its plans and values in on the CPU
    # (`_workspace`; False where the operator makes its own, `_values`); not state: no
    # checkpoint holds them
    work: dict = field(default_factory=dict, repr=False, compare=False)

    @staticmethod
    def start(spaces: tuple[Treeplex, Treeplex], rule: Config, batch: int, dtype: torch.dtype,
              device) -> "IterationState":
        """The state before the first iteration: the rule's initial strategies, nothing averaged."""
        own = [rule.init_state(sp, batch, dtype, device) for sp in spaces]
        return IterationState(sigma=[rule.initial_strategy(sp, st) for sp, st in zip(spaces, own)],
                              average=[torch.zeros(batch, sp.num_sequences, dtype=dtype, device=device)
                                       for sp in spaces],
                              rule=own)

    def drop_work(self) -> None:
        """Free the iteration's workspace (`_workspace`); the next iteration makes it again."""
        self.work = {}

    def work_room(self, p: int) -> torch.Tensor | None:
        """The whole memory of player p's first workspace array (`_workspace`) as one flat array,
        room for an array [B, S_q] of either player q at its front, for other work between
        iterations (an evaluation) to overwrite: its arrays freed and made again, of other sizes
        between them, fragment a kept heap (`memory.keep_freed_memory`). None where there is none
        (off the CPU, or where the operator makes its own values).

        Example:
            >>> import tensorcfr
            >>> s = tensorcfr.Solver("dudo(3,1,2)", "cfr", device="cpu")  # players of 1,534 and 3,067 sequences
            >>> s.step(1)
            >>> [s.state.work_room(p).numel() for p in (0, 1)]
            [3067, 3067]
        """
        w = _workspace(self, p)
        return None if w is None else w.new_empty(0).set_(w.untyped_storage())

    def tensors(self) -> dict:
        """{"sigma": [...], "average": [...], "state": [{field: tensor}, ...]}: the checkpoint layout."""
        return {"sigma": list(self.sigma), "average": list(self.average),
                "state": [{f.name: getattr(st, f.name) for f in fields(st)} for st in self.rule]}


def iterate(spaces: tuple[Treeplex, Treeplex], op: PayoffOperator, rule: Config, state: IterationState,
            sc: Scalars, in_place: bool = False, values=None, touched=None, next_sc: Scalars | None = None,
            averaged: bool = False) -> bool:
    """Advance `state` by one iteration of `rule` (`sc`: the iteration's `Scalars` as numbers).

    `next_sc`, the next iteration's scalars where one follows at once (exact values, alternating
    updates): player 0's new plan, made for player 1's update, is averaged in with the next
    iteration's weight as it is made, and the call returns True; the next call, given
    `averaged=True`, then does not make that plan again (one walk of player 0's tree less an
    iteration). The numbers are those of one iteration at a time; only between such calls is
    the average behind or ahead of the iterations. Otherwise it returns False.

    With `in_place` the new strategies are written into the tensors of `state.sigma` (what a
    captured iteration, replayed on the same memory, needs); otherwise they replace them.
    `values(p, sigma, xs)`, if given, replaces the exact counterfactual values: it returns
    (g_p [B, S_p], the plan [B, S_p] player p adds to its average), e.g. a Monte-Carlo
    estimate (`sampling.Estimator.values`). `touched(p, sigma)`, if given instead, returns a
    `sampling.Touched` estimate on part of player p's treeplex, and only that part is updated
    and averaged (exact for rules whose state a zero value leaves unchanged: CFR, CFR+).
    """
    if (next_sc is not None or averaged) and (touched is not None or values is not None
                                               or rule.updates == "simultaneous"):
        raise ValueError("next_sc and averaged: exact values and alternating updates only")
    if touched is not None:
        if rule.updates == "simultaneous":
            parts = [touched(0, state.sigma), touched(1, state.sigma)]
            for p in (0, 1):
                _update_part(p, rule, state, parts[p], sc)
        else:
            for p in (0, 1):  # player 1 answers player 0's new strategy
                _update_part(p, rule, state, touched(p, state.sigma), sc)
        return False
    if values is None:
        return _exact(spaces, op, rule, state, sc, in_place, next_sc, averaged)
    xs = [sp.sequence_form(s) for sp, s in zip(spaces, state.sigma)]  # realisation plans [B, S_p]
    if rule.updates == "simultaneous":
        gs = [values(0, state.sigma, xs), values(1, state.sigma, xs)]
        for p in (0, 1):
            _update(p, spaces, rule, state, *gs[p], sc, in_place)
    else:
        _update(0, spaces, rule, state, *values(0, state.sigma, xs), sc, in_place)
        xs[0] = spaces[0].sequence_form(state.sigma[0])  # player 1 answers player 0's new strategy
        _update(1, spaces, rule, state, *values(1, state.sigma, xs), sc, in_place)
    return False


def _exact(spaces, op: PayoffOperator, rule: Config, state: IterationState, sc: Scalars, in_place: bool,
           next_sc: Scalars | None = None, averaged: bool = False) -> bool:
    """The exact iteration, ordered so that few [B, S] arrays live at once (a plan is averaged
    in and dropped as soon as it has been used; each update consumes its values): at most one
    plan, the values and the rule's temporaries beside the state (Dudo(6,2,2): 1.4 GB each a
    player at float32). On the CPU the plans and values are made in `_workspace`'s arrays (two;
    four with simultaneous updates).
    `next_sc` and `averaged`: see `iterate`."""
    if rule.updates == "simultaneous":  # (each player's plan in work (p, 0), its values in (p, 1))
        plans = [_averaged_plan(p, spaces, state, sc, _workspace(state, p)) for p in (0, 1)]  # (plan [B, S_p], averaged)
        xs = [x for x, _ in plans]
        gs = [_values(op, 0, xs[1], state, 1), _values(op, 1, xs[0], state, 1)]
        for p in (0, 1):
            if not plans[p][1]:
                _average(p, state, xs[p], sc, consume=True)
        del xs, plans
        for p in (0, 1):
            _next(p, spaces, rule, state, gs[p], sc, in_place)
            gs[p] = None
        return False
    # player 0's plan and values in work[0], player 1's in work[1]: a plan and the other
    # player's values live together, each dropped before its array is written again
    if not averaged:  # (else the last iteration averaged this plan in as it made it)
        x0, done = _averaged_plan(0, spaces, state, sc, _workspace(state, 0))
        if not done:
            _average(0, state, x0, sc, consume=True)
        del x0
    # player 1 plays the same plan until its own update
    x1, done = _averaged_plan(1, spaces, state, sc, _workspace(state, 1))
    g = _values(op, 0, x1, state)
    if not done:
        _average(1, state, x1, sc, consume=True)
    del x1
    _next(0, spaces, rule, state, g, sc, in_place)
    del g  # (consumed: held here, it stood beside the plan below, 320 MB on a flop spot)
    # player 1 answers player 0's new strategy, whose plan is also the one the next iteration
    # averages first: with the next iteration's scalars, it is averaged in as it is made
    if next_sc is None:
        x0, done = spaces[0].sequence_form(state.sigma[0], out=_workspace(state, 0)), True
    else:
        x0, done = _averaged_plan(0, spaces, state, next_sc, _workspace(state, 0))
    g = _values(op, 1, x0, state)
    if not done:
        _average(0, state, x0, next_sc, consume=True)  # (after the values: it scales x0 in place)
    del x0
    _next(1, spaces, rule, state, g, sc, in_place)
    return next_sc is not None


# the exact iteration's plans and values in `_workspace` on the CPU (off: a new array each, as
# before; tests/test_cfr_family.py holds the two equal)
WORKSPACE = True


def _workspace(state: IterationState, p: int, k: int = 0) -> torch.Tensor | None:
    """The k-th [B, S_p] array for player p's plans and values on the CPU (None elsewhere). On the CPU a
    solver keeps the memory it frees (`memory.keep_freed_memory`), and arrays of this size freed
    and made again four times an iteration left holes that small arrays broke into: the same run
    of the full-range hold'em turn spot at float64 held 1,528 MB of heap in some processes and
    2,200 in others after 3 iterations (2026-11-29). Made anew where the rule kept it (its next
    strategy, or a view in its state): the array is the iteration's to overwrite."""
    sigma = state.sigma[p]
    # (a GPU's caching allocator reuses its blocks, a CUDA graph its pool; a compiled iteration
    # plans its own buffers)
    if not WORKSPACE or sigma.device.type != "cpu" or torch.compiler.is_compiling():
        return None
    w = state.work.get((p, k))
    if w is False:  # the operator makes its values in arrays of its own (`_values`)
        return None
    if w is None or w.shape != sigma.shape or w.dtype != sigma.dtype or _kept(state, p, w):
        # the first array of each player at the front of one with room for the larger player's
        # (`IterationState.work_room`): an evaluation's plans and values, of either player, fit in
        # these two (on the isomorphic flop spot 119 MB more, for player 1)
        n = max(s.numel() for s in state.sigma) if k == 0 else sigma.numel()
        w = state.work[p, k] = sigma.new_empty(n)[:sigma.numel()].view(sigma.shape)
    return w


def _values(op: PayoffOperator, p: int, x: torch.Tensor, state: IterationState, k: int = 0) -> torch.Tensor:
    """Player p's counterfactual values against the other's plan x, in `_workspace(state, p, k)`
    where the operator writes them there; where it makes its own array, that workspace array
    is dropped and not made again (kept idle beside the values, it would add an array to the
    peak)."""
    w = _workspace(state, p, k)
    g = op.cfv(p, x, out=w)
    if w is not None and g.data_ptr() != w.data_ptr():
        state.work[p, k] = False  # (`_workspace`: None from now on)
    return g


def _kept(state: IterationState, p: int, w: torch.Tensor) -> bool:
    """Whether player p's strategy or rule state holds w's memory."""
    ptr = w.untyped_storage().data_ptr()
    held = [state.sigma[p], *(getattr(state.rule[p], f.name) for f in fields(state.rule[p]))]
    return any(isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() == ptr for t in held)


def _averaged_plan(p: int, spaces, state: IterationState, sc: Scalars,
                   out: torch.Tensor | None = None) -> tuple[torch.Tensor, bool]:
    """(player p's realisation plan [B, S] (in `out` where given), whether it has been averaged
    in): in one walk with the average, as `_average` adds it, where the space has one
    (`averaged_plan`), else the plan alone, for `_average` to add."""
    w = sc.average_weight
    if isinstance(w, torch.Tensor) or w:
        x = spaces[p].averaged_plan(state.sigma[p], state.average[p], w, sc.average_discount, out=out)
        if x is not None:
            return x, True
    return spaces[p].sequence_form(state.sigma[p], out=out), False


def _update_part(p: int, rule: Config, state: IterationState, part, sc: Scalars) -> None:
    """`_update` on the part of player p's treeplex in `part` (a `sampling.Touched`): its
    sequences' state gathered, updated by the rule as a treeplex of its own, written back."""
    sigma = part.take(state.sigma[p]) if part.sigma is None else part.sigma  # [B, S']
    _discount_average(p, state, sc)
    w = sc.average_weight
    if isinstance(w, torch.Tensor) or w:
        plan = part.space.sequence_form(sigma) if part.plan is None else part.plan
        part.put(state.average[p], plan * w, add=True)  # one pass over the scattered columns, not two
    st = state.rule[p]
    sub = replace(st, **{f.name: part.take(getattr(st, f.name)) for f in fields(st)})
    nxt = rule.next_strategy(part.space, sub, part.values, sigma, sc)
    for f in fields(st):
        part.put(getattr(st, f.name), getattr(sub, f.name))
    part.put(state.sigma[p], nxt)


def _update(p: int, spaces, rule: Config, state: IterationState, g: torch.Tensor, x: torch.Tensor, sc: Scalars,
            in_place: bool) -> None:
    """Average in x [B, S] (the plan just played), then the rule's next strategy from g [B, S]."""
    _average(p, state, x, sc)
    _next(p, spaces, rule, state, g, sc, in_place)


def _average(p: int, state: IterationState, x: torch.Tensor, sc: Scalars, consume: bool = False) -> None:
    """Add the plan x [B, S] with the iteration's weight into player p's average (`consume`:
    scaling x in place, where x is not needed afterwards)."""
    _discount_average(p, state, sc)
    w = sc.average_weight
    if isinstance(w, torch.Tensor) or w:  # a captured iteration adds x * 0 while the weight is 0
        state.average[p].add_(x.mul_(w) if consume and x.shape == state.average[p].shape else x * w)


def _discount_average(p: int, state: IterationState, sc: Scalars) -> None:
    """Multiply player p's average sums by the iteration's `average_discount` (a scheduled gamma)."""
    d = sc.average_discount
    if d is not None:
        state.average[p].mul_(d)


def _next(p: int, spaces, rule: Config, state: IterationState, g: torch.Tensor, sc: Scalars, in_place: bool) -> None:
    """The rule's next strategy from the values g [B, S] (which it may overwrite)."""
    nxt = rule.next_strategy(spaces[p], state.rule[p], g, state.sigma[p], sc)
    if in_place:
        state.sigma[p].copy_(nxt)  # a replayed graph reads and writes the same memory every time
    else:
        state.sigma[p] = nxt
