"""Compile a game (the protocol of `games/`) into a compiled form (`tensorcfr.forms`): the
checks every form shares, `choose` (the rule of `form="auto"`), and each form's compile walk
(`generic.py`, `public.py`). Knows games and tensors, nothing of algorithms.

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("kuhn")
    >>> cg.form, cg.num_histories, cg.num_terminals
    ('generic', 58, 30)
    >>> choose(["leduc"]).name, choose(["dudo(4,2,2)"]).name, choose(["random(seed=1)"]).name
    ('generic', 'public', 'generic')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from tensorcfr.games import Game
from tensorcfr.games.vector import vector_form
from tensorcfr.compiler.generic import cache_file, compile_generic  # noqa: F401  (cache_file: a public name)
from tensorcfr.compiler.members import members_of
from tensorcfr.compiler.public import RANKED_MIN_PAIRS, compile_public, has_public_form
from tensorcfr.compiler.sizes import estimate_bytes, public_limit, public_need, walk_limit
from tensorcfr.errors import TensorCFRError, short_name
from tensorcfr.forms import CompiledForm
from tensorcfr.memory import returning_freed_memory

NAMES = ("generic", "public", "auto")  # what `form=` accepts
METHODS = ("auto", "vectorized", "per-node")


@dataclass(frozen=True)
class Form:
    """A layout: its name, which games it takes, its compile walk, and the host memory that
    compiling and solving a game in it is estimated to need."""

    name: str
    summary: str
    takes: Callable[[Game], bool]  # whether a game has this form
    compile: Callable[..., Any]  # (members, **keywords) -> CompiledForm
    estimate: Callable[[list[Game], int], int | None]  # (members, bytes a number) -> bytes, None: no closed form

    def __repr__(self) -> str:
        return f"<form {self.name}>"


def _takes_any(game: Game) -> bool:
    return True


def _takes_public(game: Game) -> bool:
    return has_public_form(game)


def _compile_public(members, **_):
    return compile_public(members)


def _estimate_generic(members: list[Game], dtype_bytes: int) -> int | None:
    """`sizes.estimate_bytes` of the largest member's closed-form history count (the formula
    is fitted at any dtype)."""
    hints = [g.size_hint() for g in members]
    return None if any(h is None for h in hints) else estimate_bytes(max(h[0] for h in hints))


def _estimate_public(members: list[Game], dtype_bytes: int) -> int | None:
    """`sizes.public_need` of the members' `public_size_hint`s (a batch's: `_batch_hint`)."""
    hints = [g.public_size_hint() for g in members]
    if any(h is None for h in hints):
        return None
    return public_need(hints[0] if len(members) == 1 else _batch_hint(members, hints), len(members), dtype_bytes)


FORMS: dict[str, Form] = {
    "generic": Form("generic", "one sparse payoff matrix over sequences; any game", _takes_any, compile_generic,
                    _estimate_generic),
    "public": Form("public", "[public sequence x private type] tensors; games dealt once", _takes_public,
                   _compile_public, _estimate_public),
}

def public_limits(members: list[Game], max_histories: int | None, max_memory: int | str | None,
                  dtype=None) -> None:
    """`sizes.public_limit` for each member, then for a batch as a whole: its members' state
    and factors add up (the largest member's sizes, times the members, over the union of their
    types), though each member alone may pass. `dtype`: the solve's (None: float64).

    Example:
        >>> public_limits(members_of(["kuhn", "kuhn(ante=2)"]), None, "auto")
    """
    hints, e = [], _dtype_bytes(dtype)
    for g in members:
        hints.append(g.public_size_hint())
        public_limit(g.name, hints[-1], g.size_hint(), max_histories, max_memory, dtype_bytes=e)
    if len(members) < 2 or any(h is None for h in hints):
        return
    public_limit(f"a batch of {len(members):,} games ({short_name(members[0].name)}, ...)",
                 _batch_hint(members, hints), None, None, max_memory, members=len(members), dtype_bytes=e)


def _dtype_bytes(dtype) -> int:
    """Bytes a number of the solve's `dtype` (None: float64, the solvers' default)."""
    import torch

    from tensorcfr.devices import resolve_dtype

    return 8 if dtype is None else torch.finfo(resolve_dtype(dtype)).bits // 8


def _batch_hint(members: list[Game], hints: list[tuple]) -> tuple:
    """A batch's sizes from its members' `public_size_hint`s: the largest of each, a member's
    (the nodes, the matrix and factor entries, a board's rows), and as its types the union of
    the members' where they are card games that deal other hands (`VectorGame.card_showdown`:
    river spots on boards of their own deal the 1,326 hands between them, 1,081 each)."""
    most = [max(h[0] for h in hints), tuple(max(h[1][p] for h in hints) for p in (0, 1))]
    most += [max(h[k] for h in hints) for k in range(2, min(len(h) for h in hints))]
    claims = _card_claims(members)
    if claims is not None:
        live = [np.any([np.asarray(c[p]) > 0 for c in claims], axis=0) for p in (1, 2)]
        most[1] = tuple(max(m, int(v.sum())) for m, v in zip(most[1], live))
    return tuple(most)


def host_estimate(game: str | Game | Sequence[str | Game], form: str = "auto", dtype=None,
                  max_histories: int | None = None, max_memory: int | str | None = "auto", device=None) -> int | None:
    """The bytes of host memory that compiling `game` (or a batch) and solving it on the CPU is
    estimated to need, in the form `compile` would choose with the same `form` and limits: what
    `max_memory` is held against (`Form.estimate`: `sizes.estimate_bytes` of the closed-form
    history count in the generic form, `sizes.public_need` in the public-tree form), or None
    where the game has no closed-form size; `dtype`: the solve's (None: float64). A game past
    the limits in every form is estimated in the form its refusal names (the public form where
    the game has one); `device`: where the solve would run, as `choose` takes it.
    `experiments/memory_estimate.py` measures it against the peak.

    Example:
        >>> host_estimate("dudo(4,2,2)", form="generic") // 10**6
        1496
        >>> host_estimate("dudo(100,5,5)") > 10**300  # refused at once, not walked
        True
    """
    members = members_of(game)
    try:
        # the limits as compile's: without them, `choose` goes on to read a game past them (the
        # vectorised form of dudo(100,5,5) would enumerate 8e15 deals)
        chosen = choose(members, form, max_histories=max_histories, max_memory=max_memory, dtype=dtype,
                        device=device)
    except TensorCFRError:
        # the game's own flag, not `has_public_form`: that makes the vectorised form, which a
        # game refused this early may not afford
        public = form != "generic" and all(getattr(g, "public_form", False) for g in members)
        chosen = FORMS["public" if public else "generic"]
    return chosen.estimate(members, _dtype_bytes(dtype))


# `choose`'s threshold: the public-tree form from this many histories (experiments/form_rule.py)
PUBLIC_FROM_HISTORIES = 1_000_000
# and for a solve on CUDA, where the generic form stays the faster further up: Dudo(4,2,2) (13.1M
# histories) ran a CFR+ iteration in 0.609 ms in the generic form against 1.342 ms in the public
# one (an H100, CUDA graph, float64, 2026-11-27; DCFR 0.642 against 1.386), where the CPU takes
# 12.1 against 6.3 ms (results/form_rule.json). From just past the largest game timed there the
# public form, as on the CPU, until a GPU times more (`form_rule.py --device cuda`); and wherever
# the generic form's estimate passes the device's free memory; card games keep the CPU's (`_public_from`)
PUBLIC_FROM_HISTORIES_CUDA = 1 << 24


def choose(game: str | Game | Sequence[str | Game], form: str = "auto", sampling: bool = False,
           max_histories: int | None = None, max_memory: int | str | None = "auto", generic_only: bool = False,
           dtype=None, device=None) -> Form:
    """The form a game (or a batch over one tree) is compiled in: `form` itself when it names
    one, else the rule of `form="auto"`, which `tensorcfr.compile`, `tensorcfr.Solver` and
    `tensorcfr solve` share:

    - the generic form for a game without a public-tree form, for Monte-Carlo sampling
      (`sampling=True`: the chance tree it draws from exists in the generic form; ask for
      `form="public"` to sample deals of private types instead), and where the caller asks
      for what only the generic form has (`generic_only`: `compile`'s method, nodes, cache);
    - the public-tree form where the generic one would pass `max_histories` or `max_memory`
      (by the game's closed-form size, `sizes.walk_limit`); where the public form would pass
      them too, its own limit's error (`sizes.public_limit`);
    - the public-tree form for a batch of card games that deal other hands (hold'em spots on
      boards of their own), which only it batches;
    - the public-tree form from `PUBLIC_FROM_HISTORIES` histories (`Game.size_hint`; a game
      without a closed-form size is small), for a solve on CUDA (`device`) from
      `PUBLIC_FROM_HISTORIES_CUDA` where the generic form fits the device's free memory (but
      for card games, `_public_from`), and
      where its deal is ranked (OCP from 256 cards: no table of pairs of types,
      `compiler/public.py`'s `RANKED_MIN_PAIRS`);
    - the generic form otherwise.

    `dtype`: the float type of the solve, for the public form's memory estimate (None: float64).
    `device`: where the solve runs (None, the default: the CPU's rule; "auto" as `Solver` takes it).

    Measured (experiments/form_rule.py: one thread, CFR+, float64, ms an iteration, generic /
    public): Kuhn 0.14 / 0.27, Leduc 0.26 / 0.46, Dudo(4,1,2) 1.28 / 1.48, Liar's Dice with two
    3-faced dice each (663,511 histories) 1.30 / 1.43; Dudo(5,1,2) (4.9M) 15.95 / 9.07,
    Liar's Dice with 8 faces (8.4M) 25.77 / 14.78, Dudo(4,2,2) 30.51 / 16.44; OCP(256), ranked,
    0.62 / 0.31.

    Measured on an H100 (CUDA graph, 2026-11-27): Dudo(4,2,2) 0.609 / 1.342, Liar's Dice 0.246 /
    0.510, Leduc 0.144 / 0.186.

    Example:
        >>> choose("kuhn").name, choose("kuhn", form="public").name, choose("dudo(5,2,2)").name
        ('generic', 'public', 'public')
    """
    if form not in NAMES:
        raise TensorCFRError(f"form must be one of {', '.join(NAMES)}, got {form!r}")
    if form != "auto":
        return FORMS[form]
    if device is not None:  # (an unknown device, or CUDA where there is none: its one-line error here)
        from tensorcfr.devices import resolve_device

        device = resolve_device(device)
    members = members_of(game)
    # `public_form` first: it is read without building the vectorised form, which for a game
    # past every limit may itself be past them (dudo(100,5,5)'s would enumerate 8e15 deals)
    if sampling or generic_only or not all(getattr(g, "public_form", False) for g in members):
        return FORMS["generic"]
    try:
        for g in members:
            walk_limit(g.name, g.size_hint(), "vectorized", max_histories, max_memory)
    except TensorCFRError:
        # past the limits in the public form too: say so, in its terms
        public_limits(members, max_histories, max_memory, dtype)
        if all(_takes_public(g) for g in members):
            return FORMS["public"]
        raise
    if not all(_takes_public(g) for g in members):
        return FORMS["generic"]
    if _deal_other_hands(members):  # only the public form batches them (one set of types, the union)
        return FORMS["public"]
    hint = members[0].size_hint()
    return FORMS["public"] if (hint is not None and hint[0] >= _public_from(members, device, dtype)) \
        or _ranked(members[0]) else FORMS["generic"]


def _public_from(members: list[Game], device, dtype) -> int:
    """The histories from which `choose` takes the public-tree form for a solve on `device` (a
    torch.device, or None for the CPU's rule): `PUBLIC_FROM_HISTORIES_CUDA` on CUDA where the
    generic form's estimate fits the device's free memory, else `PUBLIC_FROM_HISTORIES`. Card
    games (a card-removal showdown, `VectorGame.card_showdown`) keep the CPU's threshold: the
    GPU timings behind the other are of dice games, and no GPU has timed a card game's generic
    form against its showdown."""
    if device is None or device.type != "cuda" or _card_claims(members) is not None:
        return PUBLIC_FROM_HISTORIES
    import torch

    need = FORMS["generic"].estimate(members, _dtype_bytes(dtype))
    return PUBLIC_FROM_HISTORIES_CUDA if need is not None and need <= torch.cuda.mem_get_info(device)[0] \
        else PUBLIC_FROM_HISTORIES


def _deal_other_hands(members: list[Game]) -> bool:
    """Whether a batch of card games (`VectorGame.card_showdown`) deals other hands in some
    member: hold'em spots on boards of their own, or ranges over other hands, whose generic
    trees differ.

    Example:
        >>> from tensorcfr import games
        >>> spot = "holdem_river(board={}, ranks=AKQJT9, suits=shd)"
        >>> _deal_other_hands([games.make(spot.format(b)) for b in ("AsKhQsJh9s", "AsKhQsJhTs")])
        True
    """
    claims = _card_claims(members) if len(members) > 1 else None
    if claims is None:
        return False
    return any(not np.array_equal(np.asarray(c[p]) > 0, np.asarray(claims[0][p]) > 0)
               for c in claims[1:] for p in (1, 2))


def _card_claims(members: list[Game]) -> list | None:
    """Each member's `VectorGame.card_showdown()` (its cards and each player's weight per hand),
    or None where some member is not such a card game."""
    claims = [vector_form(g).card_showdown() for g in members]
    return None if any(c is None for c in claims) else claims


def _ranked(game: Game) -> bool:
    """Whether the public form of `game` takes its ranked deal (`VectorGame.ranked_deal`)."""
    deal = vector_form(game).ranked_deal()
    return deal is not None and deal[0] ** 2 >= RANKED_MIN_PAIRS


def compile(game: str | Game | Sequence[str | Game], method: str = "auto", nodes: bool | None = None,  # noqa: A001
            cache: bool | None = None, *, max_histories: int | None = None,
            max_memory: int | str | None = "auto", form: str = "auto", chance: bool = False,
            shard: tuple[int, int] | None = None, dtype=None, device=None) -> CompiledForm:
    """Compile a game, or a list of games over one tree (a batch of payoff vectors).

    Accepts a spec string, a `games.Game`, or a list of them that differ only in payoffs
    (e.g. Kuhn with several antes): the result's `payoff` is then [B, Z], one row each.
    Raises `TensorCFRError` naming the offending history or infoset on an invalid game.

    method: "vectorized" expands a whole tree level per step (games with `Game.vectorized()`),
            "per-node" calls the game once per node, "auto" the first where the game allows.
            Both give identical compiled games.
    nodes:  keep the per-node arrays (`node_parent`, ...): True, False, or None for "up to
            `NODES_KEPT` histories". The solvers do not need them.
    cache:  read and write the compiled game on disk (`cache_file`); None: for single games of
            at least `CACHE_MIN_HISTORIES` histories. Only with nodes=None. Writing a game
            removes its files from older versions of the code.
    max_histories, max_memory: refuse a game past either before building it where its size is
            known in closed form (`Game.size_hint`), else as soon as the walk passes it
            (max_histories defaults to `OPENSPIEL_MAX_HISTORIES` for `openspiel:` games)
            (`tensorcfr.sizes`; max_memory in bytes, "auto" for the available memory less
            256 MiB, or None).
    form:   "generic" (one sparse payoff matrix), "public" (the public-tree form of a game
            dealt once, `tensorcfr.forms.public`: a `PublicCompiledGame`), or "auto" (the default:
            `choose`'s rule, shared with `Solver` and the CLI: the public form from
            `PUBLIC_FROM_HISTORIES` histories, for a ranked deal or where only it fits,
            else generic; `method`, `nodes` and `cache`, which only the generic form has,
            make it generic).
            The public form is held to the limits above by its own closed-form size
            (`Game.public_size_hint`, `sizes.public_estimate_bytes`). Both forms run the
            same checks of the game (`games/checks.py`) and implement `forms.CompiledForm`.
            A batch in the public form walks its members on forked worker processes where
            that would take seconds (`compiler.parallel`; `TENSORCFR_COMPILE_WORKERS=1` keeps
            them in this process), with the same result.
    chance: also build the chance tree (`cg.chance`, `tensorcfr.compiler.chance.ChanceTree`) that
            Monte-Carlo sampling needs (generic form only; never cached).
    shard:  (rank, world): the generic form keeps only rank's block of the payoff (contiguous
            rows of player 0's sequences, balanced by terminals; `operators/distributed.py`), so a rank
            never holds the whole sorted payoff; the walk and the treeplexes are whole, as
            every rank needs them; no per-node arrays unless nodes=True. Never cached. The
            public-tree form compiles whole (its walk is its treeplexes) and
            `distributed.shard` splits it afterwards.
    dtype:  the float type a solver will iterate in (float32 or float64; None: float64, the
            solvers' default), for the public-tree form's estimate of what the solve needs.
    device: where a solver will run it (None: the CPU's rule), for `form="auto"`: on CUDA the
            generic form serves larger games (`choose`).

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile(["kuhn(ante=1)", "kuhn(ante=2)"])
        >>> cg.payoff.shape[0]
        2
    """
    with returning_freed_memory():  # the walk's arrays are unmapped when freed, not left in the heap
        return _compile(game, method, nodes, cache, max_histories, max_memory, form, chance, shard, dtype, device)


def _compile(game, method, nodes, cache, max_histories, max_memory, form, chance, shard=None, dtype=None,
             device=None):
    """`compile`'s body: the checks every form shares, then the chosen form's walk."""
    if method not in METHODS:
        raise TensorCFRError(f"compile: method must be one of {', '.join(METHODS)}, got {method!r}")
    if form not in NAMES:
        raise TensorCFRError(f"compile: form must be one of {', '.join(NAMES)}, got {form!r}")
    members = members_of(game)
    if chance and form == "public":
        raise TensorCFRError("compile: chance=True (the chance tree of Monte-Carlo sampling) needs form='generic'")
    if form == "public":
        # refused before the walk, as below, and before the game's vectorised form is made
        # (dudo(100,5,5)'s would enumerate 8e15 deals)
        public_limits(members, max_histories, max_memory, dtype)
    chosen = choose(members, form, sampling=chance, max_histories=max_histories, max_memory=max_memory,
                    generic_only=method != "auto" or nodes is not None or cache is not None, dtype=dtype,
                    device=device)
    if chosen.name == "public" and form == "auto":  # (choose checked it only where the generic form is too large)
        public_limits(members, max_histories, max_memory, dtype)
    return chosen.compile(members, method=method, nodes=nodes, cache=cache, max_histories=max_histories,
                          max_memory=max_memory, chance=chance, shard=shard)
