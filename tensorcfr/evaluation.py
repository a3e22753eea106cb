"""Evaluation of any strategy profile: best responses, NashConv, exploitability, game value.

Stands on its own: it needs a `CompiledGame` and a `Policy`, nothing from the solvers.
NashConv = BR_0(y) + BR_1(x) (the thesis' epsilon / 100); exploitability = NashConv / 2
(OpenSpiel's convention). Each costs two sparse mat-vecs and two bottom-up passes.

Example:
    >>> import tensorcfr
    >>> cg = tensorcfr.compile("kuhn")
    >>> ev = tensorcfr.evaluate(cg, tensorcfr.Policy.uniform(cg))
    >>> round(ev.nash_conv.item(), 6), round(11 / 12, 6)
    (0.916667, 0.916667)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from tensorcfr.forms.generic import CompiledGame
from tensorcfr.errors import TensorCFRError
from tensorcfr.operators.payoff import PayoffOperator


@dataclass(frozen=True, eq=False)
class Policy:
    """A behavioural strategy profile: `sigma[p]` [B, S_p], the probability of each sequence's
    action at its infoset (column 0, the empty sequence, is 1)."""

    game: CompiledGame
    sigma: tuple[torch.Tensor, torch.Tensor]

    @staticmethod
    def uniform(cg: CompiledGame, dtype=torch.float64) -> "Policy":
        return Policy(cg, tuple(tp.normalize(torch.zeros(1, tp.num_sequences, dtype=dtype, device=cg.device))
                                for tp in cg.treeplexes))

    def sequence_form(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Realisation plans (x [B, S_0], y [B, S_1])."""
        return tuple(tp.sequence_form(s) for tp, s in zip(self.game.treeplexes, self.sigma))

    def to_dict(self, member: int = 0) -> dict[str, dict[str, float]]:
        """`{infoset key: {action name: probability}}` for both players (batch member `member`).

        Example:
            >>> import tensorcfr
            >>> cg = tensorcfr.compile("kuhn")
            >>> tensorcfr.Policy.uniform(cg).to_dict()["J:"]
            {'pass': 0.5, 'bet': 0.5}
        """
        out = {}
        for tp, s in zip(self.game.treeplexes, self.sigma):
            out.update(tp.per_infoset(s[min(member, s.shape[0] - 1)].tolist(), member))
        return out

    def infoset(self, key: str, member: int = 0) -> dict[str, float]:
        """{action: probability} at one infoset (batch member `member`).

        Example:
            >>> import tensorcfr
            >>> cg = tensorcfr.compile("kuhn")
            >>> tensorcfr.Policy.uniform(cg).infoset("Q:p")
            {'pass': 0.5, 'bet': 0.5}
        """
        found = self._at(key, member)
        if found is None:  # a spot solved with suit isomorphism keeps the strategy of the key's twin
            from tensorcfr import games
            try:
                twin = games.make(self.game.batch_names[min(member, self.game.batch_size - 1)]).canonical_key(key)
            except (games.GameError, OSError):  # a game its name no longer builds (a file moved)
                twin = key
            found = self._at(twin, member) if twin != key else None
        if found is not None:
            return found
        raise TensorCFRError(f"{self.game.name} has no infoset {key!r}")

    def _at(self, key: str, member: int) -> dict[str, float] | None:
        """`infoset` at a key the compiled game keeps; None elsewhere."""
        for tp, s in zip(self.game.treeplexes, self.sigma):
            j = tp.infoset_index().get(key)
            if j is not None:
                return dict(zip(tp.action_names[j], s[min(member, s.shape[0] - 1), tp.columns(j)].tolist()))
        return None

    @staticmethod
    def from_dict(cg: CompiledGame, table: dict[str, dict[str, float]], dtype=torch.float64,
                  tol: float = 1e-6) -> "Policy":
        """Read `{infoset key: {action name: probability}}`; every infoset must be present.

        Raises `TensorCFRError` naming a missing infoset, an unknown or missing action, or
        probabilities that are negative or do not sum to 1 (within `tol`); they are then
        renormalised. Keys the game does not have are an error too.
        """
        if not isinstance(table, dict):
            raise TensorCFRError(f"policy for {cg.name}: expected {{infoset key: {{action: probability}}}}, "
                                 f"got {type(table).__name__}")
        sigmas = []
        known = set()
        for tp in cg.treeplexes:
            sigma = [1.0] + [0.0] * (tp.num_sequences - 1)
            for j, key, acts in tp.infosets():
                known.add(key)
                if key not in table:
                    raise TensorCFRError(f"policy for {cg.name}: infoset {key!r} is missing")
                row = table[key]
                if not isinstance(row, dict):
                    raise TensorCFRError(f"policy for {cg.name}: infoset {key!r} maps to {row!r}, not to "
                                         "{action: probability}")
                if set(row) != set(acts):
                    raise TensorCFRError(f"policy for {cg.name}: infoset {key!r} has actions {sorted(row)}, "
                                         f"the game has {list(acts)}")
                try:
                    probs = [float(row[a]) for a in acts]
                except (TypeError, ValueError):
                    raise TensorCFRError(f"policy for {cg.name}: infoset {key!r} has probabilities "
                                         f"{[row[a] for a in acts]} that are not all numbers") from None
                total = sum(probs)
                if any(p < -tol or not math.isfinite(p) for p in probs) or abs(total - 1) > tol:
                    raise TensorCFRError(f"policy for {cg.name}: infoset {key!r} has probabilities "
                                         f"{probs} that do not sum to 1")
                for c, p in zip(tp.columns(j), probs):
                    sigma[c] = max(p, 0.0) / total
            sigmas.append(torch.tensor([sigma], dtype=dtype, device=cg.device))
        extra = set(table) - known
        if extra:
            raise TensorCFRError(f"policy for {cg.name}: unknown infosets {sorted(extra)[:5]}")
        return Policy(cg, tuple(sigmas))


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Exact evaluation of a profile; every field has one entry per batch member [B]."""

    best_response: tuple[torch.Tensor, torch.Tensor]  # BR value of player p vs the other, p's sign
    nash_conv: torch.Tensor
    exploitability: torch.Tensor  # nash_conv / 2
    game_value: torch.Tensor  # player 0's expected payoff under the profile
    # [B, I_p] per player, each infoset's share of its player's gain (`infoset_gaps`); made on
    # request from the same values (`evaluate_plan_list(..., gaps=True)`), else None
    infoset_gaps: tuple[torch.Tensor, torch.Tensor] | None = None

    def as_dict(self, member: int = 0) -> dict[str, float]:
        pick = lambda t: float(t[min(member, t.shape[0] - 1)])  # noqa: E731
        return {"exploitability": pick(self.exploitability), "nash_conv": pick(self.nash_conv),
                "game_value": pick(self.game_value),
                "best_response": [pick(self.best_response[0]), pick(self.best_response[1])]}


def best_response_value(cg: CompiledGame, player: int, x_other: torch.Tensor,
                        op: PayoffOperator | None = None) -> torch.Tensor:
    """Value [B] of player's best response against the other's realisation plan [B, S]."""
    op = op or cg.operator(x_other.dtype)
    return _best_value(cg, player, op.cfv(player, x_other))


def _best_value(cg: CompiledGame, player: int, g: torch.Tensor, x: torch.Tensor | None = None):
    """[B]: the value of player's best response from its counterfactual values g [B, S], which
    it overwrites; given the player's own plan x [B, S], a pair: that value and the infoset
    gaps [B, I] in the best response's infoset values' memory (`DecisionSpace.infoset_gaps`:
    x[parent(j)] (v_j - sum_a sigma(j, a) q(j, a)) as x[parent(j)] v_j - sum_a x(j, a) q(j, a),
    without sigma, which an evaluation no longer holds: it makes the plan in the strategy's
    memory)."""
    tp = cg.treeplexes[player]
    q, v = tp.bottom_up(g, inplace=True, infosets=x is not None)  # (v: the gaps' only)
    best = q[:, 0].clone()  # not a view, which would keep all of q alive
    return best if x is None else (best, tp.infoset_gaps(q, v, x))


def infoset_gaps(cg: CompiledGame, policy: Policy, op: PayoffOperator | None = None) -> list[torch.Tensor]:
    """Each infoset's contribution to its player's best-response gain, [B, I_p] per player.

    For infoset j of player p: x_p[parent(j)] * (max_a Q*(j,a) - sum_a sigma(j,a) Q*(j,a)), where
    Q* is the counterfactual value of (j, a) when p best-responds below j against the other's
    strategy. Summed over p's infosets this is exactly p's gain from deviating to a best
    response, BR_p - u_p(policy), so large entries show where a strategy is exploitable. Where
    the public form keeps one infoset for its twins (`suit_isomorphism`), its entry holds theirs
    too (`sequence_weights`), and the sum stays the gain.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("kuhn")
        >>> gaps = infoset_gaps(cg, Policy.uniform(cg))
        >>> round(float(gaps[0].sum() + gaps[1].sum()), 6)  # NashConv of uniform play: 11/12
        0.916667
    """
    # best response below each infoset, in the values' own memory (no [B, S] copy), then the
    # plan's mix of those values in the same memory: [B, I] each; each plan made when it is
    # needed (`evaluate_plan_list`), so never both beside a values array
    tps = cg.treeplexes
    return list(evaluate_plan_list(cg, [lambda: tps[0].sequence_form(policy.sigma[0]),
                                        lambda: tps[1].sequence_form(policy.sigma[1])], op, gaps=True).infoset_gaps)


def evaluate(cg: CompiledGame, policy: Policy, op: PayoffOperator | None = None) -> Evaluation:
    """Best responses, NashConv, exploitability and game value of `policy` in `cg`.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("leduc")
        >>> round(tensorcfr.evaluate(cg, tensorcfr.Policy.uniform(cg)).nash_conv.item(), 9)
        4.747222222
    """
    tps = cg.treeplexes  # each plan made when it is needed (`evaluate_plan_list`)
    return evaluate_plan_list(cg, [lambda: tps[0].sequence_form(policy.sigma[0]),
                                   lambda: tps[1].sequence_form(policy.sigma[1])], op)


def evaluate_plans(cg: CompiledGame, x: torch.Tensor, y: torch.Tensor, op: PayoffOperator | None = None) -> Evaluation:
    """`evaluate` from the realisation plans x [B, S_0] and y [B, S_1]: one product with the
    payoff operator a player, the values overwritten by the best response's.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("kuhn")
        >>> round(evaluate_plans(cg, *tensorcfr.Policy.uniform(cg).sequence_form()).nash_conv.item(), 6)
        0.916667
    """
    return evaluate_plan_list(cg, [x, y], op)


def evaluate_plan_list(cg: CompiledGame, plans: list, op: PayoffOperator | None = None,
                       gaps: bool = False, out: list | None = None) -> Evaluation:
    """`evaluate_plans` from plans = [x, y], each a tensor or a function of no arguments that
    makes it, which it empties as it goes (None for a plan it no longer needs): x is made first
    and dropped once player 1's values are made, y next; each values array is dropped once its
    best response is taken. A caller who holds no other reference (`Solver.evaluate`) then
    keeps at most one plan and one player's values beside its state, where both plans and a
    values array lived at once before. With `gaps`, the result's `infoset_gaps` too, from the
    same values: what `infoset_gaps` gives, without its two products with the payoff operator
    (on the isomorphic flop spot 1.3 s of its 1.8); a gap needs its player's plan beside its
    values, so there player 0 goes first (`_with_gaps`) and a plan given as a function is made
    twice. `out`: an array [B, S_p] a player (or None) for its values (the operator's `out`),
    one array allowed for both: a player's values are used up before the other's are made. A
    plan may be made in out[0] (player 1's values come first, from x, and x is dropped before
    player 0's are made), not with `gaps`, where the plans' memory must be apart from out's.

    Example:
        >>> import tensorcfr
        >>> cg = tensorcfr.compile("kuhn")
        >>> x, y = tensorcfr.Policy.uniform(cg).sequence_form()
        >>> plans = [x, lambda: y]
        >>> round(evaluate_plan_list(cg, plans).nash_conv.item(), 6), plans
        (0.916667, [None, None])
    """
    out = list(out or (None, None))
    if gaps:
        return _with_gaps(cg, plans, op, out)
    x = _made(plans, 0)
    op = op or cg.operator(x.dtype)
    g = op.cfv(1, x, out=out[1])  # [B, S_1] = -A^T x: player 1's values, in player 1's sign
    plans[0] = x = None
    y = _made(plans, 1)
    plans[1] = None
    # player 0's payoff is minus player 1's (a public form dealing one card a class: its twins' share)
    value = -cg.treeplexes[1].weighted_dot(y, g)
    br1 = _best_value(cg, 1, g)
    g = None  # (player 1's values dropped before player 0's are made)
    g = op.cfv(0, y, out=out[0])  # [B, S_0]
    y = None
    br0 = _best_value(cg, 0, g)
    nash_conv = br0 + br1
    return Evaluation((br0, br1), nash_conv, nash_conv / 2, value)


def _made(plans: list, i: int) -> torch.Tensor:
    """Plan i of `evaluate_plan_list`'s list: the tensor, or what its function makes."""
    return plans[i]() if callable(plans[i]) else plans[i]


def _with_gaps(cg: CompiledGame, plans: list, op: PayoffOperator | None, out: list) -> Evaluation:
    """`evaluate_plan_list` with the infoset gaps: each player's gaps need its own plan beside
    its values, so y is made for player 0's values and dropped, x made for player 0's gaps and
    then player 1's values, and dropped, and y made again for player 1's gaps and the game value.
    At most one plan and one values array live at a time, as without the gaps: on the
    isomorphic flop spot at float32 x lived to the end before, and the evaluation with gaps
    took its process 958 MB over the iteration's peak. The numbers are those of the order
    before (the same operations on the same arrays)."""
    y = _made(plans, 1)
    op = op or cg.operator(y.dtype)
    g = op.cfv(0, y, out=out[0])  # [B, S_0]
    y = None
    x = _apart(_made(plans, 0), g)
    br0, gap0 = _best_value(cg, 0, g, x)
    g = None
    g = op.cfv(1, x, out=out[1])  # [B, S_1]
    plans[0] = x = None
    y = _apart(_made(plans, 1), g)
    plans[1] = None
    value = -cg.treeplexes[1].weighted_dot(y, g)
    br1, gap1 = _best_value(cg, 1, g, y)
    nash_conv = br0 + br1
    return Evaluation((br0, br1), nash_conv, nash_conv / 2, value, (gap0, gap1))


def _apart(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """x, a plan made while the values g live, where it does not overwrite them."""
    if x.untyped_storage().data_ptr() == g.untyped_storage().data_ptr():
        raise TensorCFRError("evaluate_plan_list with gaps: a plan was made in the values' memory (out)")
    return x
