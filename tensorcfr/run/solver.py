"""The solver: a thin owner of a compiled game, its payoff operator, the iteration state and
the iteration count.

An iteration (`iteration.iterate`) computes each player's counterfactual values and hands
them to the update rule (`updates/rules.py`); `updates/capture.py` runs it recorded or compiled. `Solver`
puts them together, and reads the results out: policies, exact evaluation, checkpoints.

Example:
    >>> import tensorcfr
    >>> s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    >>> s.step(500)
    >>> ev = s.evaluate()
    >>> ev["average"].exploitability.item() < 1e-2
    True
"""

from __future__ import annotations

from dataclasses import asdict, fields

import torch

from tensorcfr import games as games_pkg

from tensorcfr.updates.capture import Captured, auto_capture, gathered_operator, unroll
from tensorcfr.forms.generic import CompiledGame
from tensorcfr.compiler import compile as compile_game
from tensorcfr.devices import LARGE_WORK, deterministic as deterministic_mode, pick_threads
from tensorcfr.memory import keep_freed_memory
from tensorcfr.operators.distributed import ShardedOperator, process_group, shard
from tensorcfr.errors import TensorCFRError
from tensorcfr.evaluation import Evaluation, Policy, evaluate_plan_list, infoset_gaps
from tensorcfr.updates.iteration import IterationState, iterate
from tensorcfr.memory import copy_releasing
from tensorcfr.forms.public import PublicCompiledGame
from tensorcfr.sampling.generic import EPSILON_DEFAULT, RandomDraws
from tensorcfr.compiler.sizes import check_device_memory
from tensorcfr.run import numbers
from tensorcfr.run.histograms import Quotient
from tensorcfr.run.spec import RunSpec
from tensorcfr.updates.rules import Config, _batch

__all__ = ["Solver"]


class Solver:
    """One compiled game solved by one rule, batched over payoff vectors and settings.

    State (`state`, an `iteration.IterationState`) per player p: `sigma[p]` [B, S_p] the
    current behavioural strategy, `average[p]` [B, S_p] the weighted sum of realisation plans,
    and the rule's own state `state.rule[p]` (`regrets` [B, S_p] for the CFR family, column 0
    unused; `utility` [B, S_p] for FTRL).

    capture: "auto" (default: "cuda-graph" on CUDA where memory allows, else "none";
          `capture.auto_capture`), "none" (eager), "static", "cuda-graph" or "compile" (`updates/capture.py`).
    form: "generic", "public" (the public-tree form, `forms/public.py`) or "auto" (the default:
          `compiler.choose`, the rule `tensorcfr.compile` and the CLI use too, for this solver's
          device: on CUDA the generic form serves larger games), for a game given by name; a
          compiled game brings its own.
    deterministic: iterate and evaluate with torch's deterministic kernels
          (`devices.deterministic`), so a CUDA run repeats bit for bit (a no-op on the CPU,
          whose kernels are deterministic already).
    On CUDA, a solver that would not fit in the device's free memory is refused before
    anything is moved there (`sizes.check_device_memory`).
    distributed: inside an initialised `torch.distributed` process group, keep only this
          rank's block of the payoff operator and sum the counterfactual values over the ranks
          (`operators/distributed.py`: the state is replicated; `game` then holds this rank's block). A
          game given by name in the generic form is compiled as that block only
          (`compile(..., shard=)`); a compiled game is split after the fact.
    sampling: "none" (exact iterations), "chance", "external" or "outcome": Monte-Carlo
          counterfactual values (`sampling/generic.py`), `samples` per estimate (default: the
          form's `default_samples`: 65,536 pooled in the generic form's full update, else 1), outcome sampling's
          exploration `epsilon`, drawn from a generator seeded by `seed` (a checkpoint keeps
          its state). Sampled iterations run eagerly, on one process, in the generic form
          (`compiler.choose`'s rule for sampling) or, with form="public", in the public-tree form, where a
          sample is a deal of private types (`sampling/public.py`); evaluation stays exact.
    update_scope: with sampling, "all" (default: every sequence is updated and the exact plan
          averaged each iteration, O(S)) or "touched": only the part of each treeplex above
          the payoff entries drawn is updated and averaged (`treeplex.touched`; in the
          public-tree form, the type columns drawn), so an
          iteration costs what the sample touches. Exact for the rules a zero value leaves
          alone (CFR and CFR+: no discounting, prediction or regret tolerance); the average
          then adds each infoset's plan when a sample touches it, as chance-sampled CFR
          implementations do (an infoset is touched with a probability fixed by chance, which
          the per-infoset normalisation of the average cancels).
    threads: on the CPU, torch's intra-op threads for the process (`torch.set_num_threads`):
          "auto" (default) takes one for a small game, else every core that other work leaves
          free (`devices.pick_threads`); a number sets it. `solver.threads` is what was set.

    Example:
        >>> import tensorcfr
        >>> s = tensorcfr.Solver("kuhn", "cfr", device="cpu")
        >>> s.step(10); s.iteration
        10
        >>> sorted(s.average_policy().to_dict()["K:pb"])
        ['bet', 'pass']
    """

    def __init__(self, game: str | games_pkg.Game | CompiledGame, algo: str | Config = "cfr+", *,
                 device: str | torch.device = "auto", dtype: str | torch.dtype = "float64",
                 capture: str = "auto", form: str = "auto", deterministic: bool = False,
                 distributed: bool = False, sampling: str = "none", samples: int | None = None,
                 epsilon: float = EPSILON_DEFAULT, seed: int = 0, update_scope: str = "all",
                 threads: int | str = "auto", **options):
        self._start(game, RunSpec.of(algo, device=device, dtype=dtype, capture=capture, form=form,
                                     deterministic=deterministic, distributed=distributed, sampling=sampling,
                                     samples=samples, epsilon=epsilon, seed=seed, update_scope=update_scope,
                                     threads=threads, **options))

    @classmethod
    def from_spec(cls, game: str | games_pkg.Game | CompiledGame, spec: RunSpec) -> "Solver":
        """A solver of `game` by a `RunSpec` (what the CLI builds from its flags).

        Example:
            >>> from tensorcfr.run.spec import RunSpec
            >>> Solver.from_spec("kuhn", RunSpec.of("cfr+", device="cpu")).config.name
            'cfr+'
        """
        solver = cls.__new__(cls)
        solver._start(game, spec)
        return solver

    def _start(self, game, spec: RunSpec) -> None:
        """`__init__`'s body, from the checked settings: compile (with the spec's form and
        limits), place the game on the device, build the operator, estimator and state."""
        self.spec = spec
        capture, distributed, sampling, seed = spec.capture, spec.distributed, spec.sampling, spec.seed
        # distributed: a generic compile builds only this rank's block of the payoff
        block = process_group() if distributed else None
        cg = game if isinstance(game, (CompiledGame, PublicCompiledGame)) else \
            compile_game(game, form=spec.form, chance=sampling != "none" and spec.form != "public", shard=block,
                         max_histories=spec.max_histories, max_memory=spec.max_memory, dtype=spec.dtype,
                         device=spec.device)
        if spec.device.type == "cpu":  # torch's intra-op threads, for the whole process
            work = cg.batch_size * sum(tp.num_sequences for tp in cg.treeplexes) + cg.payoff_bytes(torch.float64) // 8
            self.threads = pick_threads(work) if spec.threads == "auto" else spec.threads
            torch.set_num_threads(self.threads)
            if work >= LARGE_WORK:
                keep_freed_memory()
        else:
            self.threads = torch.get_num_threads()
        b = cg.batch_size
        if self.config.batch_size > 1:
            if b not in (1, self.config.batch_size):
                raise TensorCFRError(f"a batch of {b} games and of {self.config.batch_size} settings do not match")
            b = self.config.batch_size
        self.batch_size = b
        if distributed:
            rank, world = block
            cg = shard(cg, rank, world)
        self.extent = cg.payoff_extent()  # what the dtype must hold: checked now and before each step
        numbers.check(numbers.payoff_problem(self.extent, self.dtype))
        self._checked_to = 0  # the iterations `check_numbers` has cleared
        need = check_device_memory(cg, b, self.dtype, self.device)
        if capture == "auto":
            capture = auto_capture(self.device, need)
        self.game = cg.to(self.device)
        self.op = self.game.operator(self.dtype, gather=gathered_operator(capture, self.game.payoff_entries))
        if distributed:
            self.op = ShardedOperator(self.op)
        self.estimator = self.draws = None
        if sampling != "none":
            samples = spec.samples if spec.samples is not None else self.game.default_samples(spec.update_scope)
            self.estimator = self.game.estimator(sampling, samples, self.dtype, spec.epsilon)
            self.draws = RandomDraws(seed)
        self.iteration = 0
        with deterministic_mode(self._deterministic):  # FTRL's entropy weights are per-infoset sums too
            self.state = IterationState.start(self.game.treeplexes, self.config, b, self.dtype, self.device)
        self.captured = None if capture == "none" else Captured(
            capture, self._iterate_in_place, self.config.scalars, batch=b, dtype=self.dtype, device=self.device,
            save=self.state_dict, restore=self.load_state_dict,
            unroll=unroll(capture, self.device, self.game.payoff_entries,
                          b * sum(tp.num_sequences for tp in self.game.treeplexes)),
            chain=self.config.updates == "alternating")

    # the settings, as the spec holds them (`RunSpec`)
    config = property(lambda self: self.spec.config, doc="The resolved algorithm (a `Config`).")
    device = property(lambda self: self.spec.device)
    dtype = property(lambda self: self.spec.dtype)
    deterministic = property(lambda self: self.spec.deterministic)
    distributed = property(lambda self: self.spec.distributed)
    sampling = property(lambda self: self.spec.sampling)
    update_scope = property(lambda self: self.spec.update_scope)
    seed = property(lambda self: self.spec.seed)

    @property
    def _deterministic(self) -> bool:
        """Whether to switch torch's deterministic kernels on (the CPU's already are)."""
        return self.deterministic and self.device.type == "cuda"

    def _iterate_in_place(self, sc, next_sc=None, averaged: bool = False) -> bool:
        """One iteration in the form a captured iteration runs (state written in place); where
        one follows at once, given its scalars (`next_sc`, `iterate`'s)."""
        return iterate(self.game.treeplexes, self.op, self.config, self.state, sc, in_place=True, next_sc=next_sc,
                       averaged=averaged)

    @property
    def capture(self) -> str:
        """The capture mode in use ("static" after a failed recording or compile)."""
        return "none" if self.captured is None else self.captured.mode

    @property
    def sigma(self) -> list[torch.Tensor]:
        """Current behavioural strategy per player, [B, S_p]: the solver's own tensors, which
        an iteration may update in place (as it does the average and the regrets); copy one
        to keep it."""
        return self.state.sigma

    @property
    def average(self) -> list[torch.Tensor]:
        """Weighted sum of the realisation plans played, per player, [B, S_p]."""
        return self.state.average

    @property
    def regrets(self) -> list[torch.Tensor]:
        """Cumulative regrets per player, [B, S_p] (CFR family only)."""
        if not hasattr(self.state.rule[0], "regrets"):
            raise TensorCFRError(f"{self.config.name} keeps no regrets")
        return [st.regrets for st in self.state.rule]

    def _sampled_values(self, p, sigma, xs):
        return self.estimator.values(p, sigma, xs, self.draws)

    def _touched_values(self, p, sigma):
        return self.estimator.touched_values(p, sigma, self.draws)

    @property
    def sampled_fraction(self) -> float | None:
        """Payoff entries gathered per estimate over the game's entries, averaged over the
        iterations so far (sampling only; an exact product would be 1, one chance sample of a
        game dealt once is 1 / its deals); None without sampling."""
        if self.estimator is None:
            return None
        return self.estimator.entries / (2 * max(self.iteration, 1) * max(self.estimator.num_entries, 1))

    def check_numbers(self, iterations: int) -> None:
        """Refuse (a `TensorCFRError`) running to `iterations` in all where the regrets, utilities
        or average weights could leave the dtype's range (`run.numbers`); `step` checks its own
        end, `train` the end of the whole run before it starts."""
        if iterations > self._checked_to:  # the bounds grow with the iterations: one check covers fewer
            numbers.check(numbers.horizon_problem(self.config, self.extent, self.dtype, iterations))
            self._checked_to = iterations

    def non_finite(self) -> str | None:
        """The name of the first state tensor holding a NaN or an infinity, or None."""
        named = {}
        for p in (0, 1):
            named[f"the current strategy of player {p}"] = self.state.sigma[p]
            named[f"the average strategy's sums of player {p}"] = self.state.average[p]
            for f in fields(self.state.rule[p]):
                named[f"the {f.name} of player {p}"] = getattr(self.state.rule[p], f.name)
        return numbers.non_finite(named)

    def step(self, n: int = 1) -> None:
        """Run `n` iterations."""
        self.check_numbers(self.iteration + n)
        values = touched = None
        if self.estimator is not None and self.update_scope == "touched":
            touched = self._touched_values
        elif self.estimator is not None:
            values = self._sampled_values
        with deterministic_mode(self._deterministic):
            if self.captured is not None:
                self.captured.steps(self.iteration + 1, n)
                self.iteration += n
                return
            # exact alternating iterations run back to back: each averages in player 0's plan of
            # the next (`iterate`'s next_sc), the last of the n none, so that between calls the
            # average is the iterations'
            ahead = values is None and touched is None and self.config.updates == "alternating"
            averaged = False
            for i in range(n):
                t = self.iteration + 1
                next_sc = (self.config.scalars(t + 1).as_numbers(self.dtype, self.device)
                           if ahead and i < n - 1 else None)
                averaged = iterate(self.game.treeplexes, self.op, self.config, self.state,
                                   self.config.scalars(t).as_numbers(self.dtype, self.device), values=values,
                                   touched=touched, next_sc=next_sc, averaged=averaged)
                self.iteration = t

    # -- checkpoints ----------------------------------------------------------------------------
    def state_dict(self, copy: bool = True) -> dict:
        """Everything the next iterations depend on (tensors on the CPU), for `load_state_dict`.
        `copy=False`: a CPU solver's own tensors, not a snapshot, for writing straight to a file
        (a copy of Dudo(6,2,2)'s state is 8.5 GB at float32)."""
        cpu = (lambda t: t.detach().cpu().clone()) if copy else (lambda t: t.detach().cpu())  # noqa: E731
        d = self.state.tensors()
        out = {"iteration": self.iteration, "sigma": [cpu(t) for t in d["sigma"]],
               "average": [cpu(t) for t in d["average"]],
               "state": [{k: cpu(t) for k, t in st.items()} for st in d["state"]]}
        if self.draws is not None:  # a resumed sampled run draws what the straight run would have
            out["generator"] = self.draws.state().clone()
            out["sampled_entries"] = self.estimator.entries
        return out

    def load_state_dict(self, d: dict) -> None:
        """Continue from `state_dict()`; the solver must have been built with the same game and settings."""
        def put(old: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
            if tuple(new.shape) != tuple(old.shape):
                raise TensorCFRError(f"checkpoint does not fit this solver: a tensor of shape {tuple(new.shape)} "
                                     f"where {tuple(old.shape)} is expected")
            copy_releasing(old, new)  # in place: a captured iteration keeps reading these tensors
            return old
        own = self.state.tensors()["state"]
        if [sorted(st) for st in own] != [sorted(st) for st in d["state"]]:
            raise TensorCFRError("checkpoint does not fit this solver: it was written by another algorithm")
        for old, new in zip([*self.state.sigma, *self.state.average], [*d["sigma"], *d["average"]]):
            put(old, new)
        for st, new in zip(self.state.rule, d["state"]):
            for f in fields(st):
                put(getattr(st, f.name), new[f.name])
        if self.draws is not None:
            if "generator" not in d:
                raise TensorCFRError("checkpoint does not fit this solver: it was written by a run without sampling")
            self.draws.set_state(d["generator"])
            self.estimator.entries = int(d.get("sampled_entries", 0))
        self.iteration = int(d["iteration"])

    # -- reading the result -----------------------------------------------------------------
    def current_policy(self, copy: bool = True) -> Policy:
        """The strategy the next iteration will play: a copy, which later iterations leave alone
        (`copy=False`: the solver's own tensors, which an iteration may rewrite in place, for a
        use before the next one)."""
        return Policy(self.game, tuple(s.clone() if copy or self.captured is not None else s for s in self.sigma))

    def average_policy(self) -> Policy:
        """The average strategy (the one that converges to equilibrium)."""
        with deterministic_mode(self._deterministic):  # normalising sums over each infoset
            return Policy(self.game, tuple(tp.normalize(a) for tp, a in zip(self.game.treeplexes, self.average)))

    def evaluate(self, infoset_gaps: bool = False) -> dict[str, Evaluation]:
        """Exact evaluation of the average and the current strategy: {"average": ..., "current": ...};
        with `infoset_gaps`, the average's carries its infoset gaps, which `histograms` takes
        from it instead of two more products with the payoff operator."""
        # On the CPU, the plans in the iteration's first workspace array and the values in its
        # second (`work_room`, each with room for either player's arrays): two arrays, as many
        # as the evaluation needs at once, with the gaps too. Made and freed at every
        # evaluation among smaller arrays, they left a kept heap in pieces: on the isomorphic
        # flop spot, whose players' arrays differ in size, the process grew by 617 MB over its
        # iterations' peak at the first evaluation with gaps, with 225 MB more in use.
        room = [self.state.work_room(0), self.state.work_room(1)]
        if room[0] is None or room[1] is None:
            self.state.drop_work()  # (its memory the evaluation's, rather than more beside it)

        def plan_out(p):
            return None if room[0] is None else room[0][:self.sigma[p].numel()].view(self.sigma[p].shape)

        def values_out(p):
            return None if room[1] is None else room[1][:self.sigma[p].numel()].view(self.sigma[p].shape)
        with deterministic_mode(self._deterministic):
            # each plan made when the evaluation needs it and dropped after (`evaluate_plan_list`);
            # the average's strategies are this call's own, so their plans are made in place
            tps = self.game.treeplexes

            def average_plan(p, out):
                sigma = tps[p].normalize(self.average[p], out=out)
                return tps[p].sequence_form(sigma, out=sigma)

            current = self.current_policy(copy=False).sigma
            out = {"average": evaluate_plan_list(
                self.game, [lambda: average_plan(0, plan_out(0)), lambda: average_plan(1, plan_out(1))], self.op,
                gaps=infoset_gaps, out=[values_out(0), values_out(1)])}
            out["current"] = evaluate_plan_list(
                self.game, [lambda: tps[0].sequence_form(current[0], out=plan_out(0)),
                            lambda: tps[1].sequence_form(current[1], out=plan_out(1))], self.op,
                out=[values_out(0), values_out(1)])
            return out

    def regret_summary(self) -> dict[str, torch.Tensor]:
        """Largest positive cumulative regret per player over t, [B] each (column 0 is always 0);
        empty for algorithms that keep no regrets."""
        if not hasattr(self.state.rule[0], "regrets"):
            return {}
        t = max(self.iteration, 1)
        return {f"max_p{p}": r.amax(1).clamp(min=0) / t for p, r in enumerate(self.regrets)}  # no [B, S] temporary

    def histograms(self, member: int = 0, evaluation: dict[str, Evaluation] | None = None,
                   quotients: bool = False) -> dict[str, torch.Tensor]:
        """Distributions worth a TensorBoard histogram, of batch member `member`:
        `regret_p{p}` (cumulative regret per sequence over t; the CFR family) and
        `infoset_exploitability_p{p}` (what a best response gains at each infoset), taken from
        `evaluation` (this iteration's `evaluate(infoset_gaps=True)`) where it holds them. With
        `quotients`, the regrets as `histograms.Quotient`s of the state's own rows and t, which
        `add_histogram` divides as it counts (no [S] copy a player: the training loop's way)."""
        # the gaps first: their best responses' arrays are gone before the regrets' copies are
        # made (the isomorphic flop spot's CLI run: the first call took its process from 3,054
        # to 4,605 MB the other way round, from 3,014 to 4,232 MB this way)
        gaps = getattr((evaluation or {}).get("average"), "infoset_gaps", None)
        if gaps is None:
            with deterministic_mode(self._deterministic):
                gaps = infoset_gaps(self.game, self.average_policy(), self.op)
        gaps = {f"infoset_exploitability_p{p}": gap[min(member, gap.shape[0] - 1)] for p, gap in enumerate(gaps)}
        out = {}
        if hasattr(self.state.rule[0], "regrets"):
            t = max(self.iteration, 1)
            out.update({f"regret_p{p}": Quotient(r[member, 1:], t) if quotients else r[member, 1:] / t
                        for p, r in enumerate(self.regrets)})
        return {**out, **gaps}

    def infoset_keys(self) -> list[str]:
        """Every infoset's key, player 0's first."""
        return [k for tp in self.game.treeplexes for _, k, _ in tp.infosets()]

    def strategies(self, keys, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
        """{key: {"average" | "current": {action: probability}}} at the infosets `keys` (each
        policy made once for all of them)."""
        pols = {"average": self.average_policy(), "current": self.current_policy(copy=False)}
        return {k: {w: p.infoset(k, member) for w, p in pols.items()} for k in keys}

    def policy_tables(self, member: int = 0) -> dict[str, dict[str, dict[str, float]]]:
        """{"average" | "current": {infoset key: {action: probability}}} of member `member`."""
        return {"average": self.average_policy().to_dict(member),
                "current": self.current_policy(copy=False).to_dict(member)}

    def infoset_players(self) -> dict[str, int]:
        """{infoset key: the player who moves there}."""
        return self.game.infoset_players()

    def member_names(self) -> list[str]:
        """A label per batch member: the game spec, plus the setting where settings differ."""
        names = list(self.game.batch_names) * (self.batch_size // self.game.batch_size)
        for k in self.config.BATCHED:
            vals = _batch(getattr(self.config, k))
            if vals is not None and len(vals) > 1:
                names = [f"{n} {k}={v:g}" for n, v in zip(names, vals)]
        return names

    def describe(self) -> dict:
        """The resolved configuration, as printed by the CLI."""
        return {"game": self.game.name, "batch": self.member_names(), "form": self.game.form, "algorithm": self.config.name,
                **{k: v for k, v in asdict(self.config).items() if k != "name"},
                "device": str(self.device), "dtype": str(self.dtype).replace("torch.", ""), "capture": self.capture,
                "threads": self.threads, "deterministic": self.deterministic, "distributed": self.distributed,
                **({} if self.estimator is None else
                   {"sampling": self.sampling, "samples": self.estimator.samples, "seed": self.seed,
                    "update_scope": self.update_scope,
                    **({"epsilon": self.estimator.epsilon} if self.sampling == "outcome" else {})})}

