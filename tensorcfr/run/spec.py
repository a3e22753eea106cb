"""One run specification: everything that decides a tree solver's run besides the game, made
and checked once. `tensorcfr.Solver(game, algo, **settings)` and `tensorcfr solve` both build a
`RunSpec` (the CLI from its flags) and start the solver from it, so the algorithm spec is parsed
once and every cross-check (sampling with capture, distributed, update scope, seed) lives here.

Example:
    >>> spec = RunSpec.of("dcfr(alpha=2)", device="cpu", sampling="chance")
    >>> spec.config.alpha, spec.capture, spec.dtype
    (2, 'none', torch.float64)
    >>> RunSpec.of("ftrl", device="cpu", update_scope="touched")
    Traceback (most recent call last):
    ...
    tensorcfr.errors.TensorCFRError: update_scope='touched' needs sampling (chance, external or outcome)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from tensorcfr.devices import check_threads, resolve_device, resolve_dtype
from tensorcfr.errors import TensorCFRError
from tensorcfr.sampling.generic import EPSILON_DEFAULT, SCHEMES, UPDATE_SCOPES, check_settings
from tensorcfr.updates.capture import check_capture
from tensorcfr.updates.rules import CFRConfig, Config, make_config


@dataclass(frozen=True)
class RunSpec:
    """A tree solver's settings, resolved: `config` the parsed algorithm, `device` and `dtype`
    resolved, `capture` as it will run ("auto" resolves on the device once the game's size is
    known; sampling and distributed runs are eager), the rest as given. Make one with `of`."""

    config: Config
    device: torch.device
    dtype: torch.dtype
    form: str = "auto"
    capture: str = "auto"
    deterministic: bool = False
    distributed: bool = False
    sampling: str = "none"
    samples: int | None = None  # None: the form's default (`default_samples`)
    epsilon: float = EPSILON_DEFAULT
    seed: int = 0
    update_scope: str = "all"
    max_histories: int | None = None
    max_memory: int | str | None = "auto"
    threads: int | str = "auto"

    @staticmethod
    def of(algo: str | Config = "cfr+", *, device: str | torch.device = "auto", dtype: str | torch.dtype = "float64",
           capture: str = "auto", form: str = "auto", deterministic: bool = False, distributed: bool = False,
           sampling: str = "none", samples: int | None = None, epsilon: float = EPSILON_DEFAULT, seed: int = 0,
           update_scope: str = "all", max_histories: int | None = None, max_memory: int | str | None = "auto",
           threads: int | str = "auto", **options) -> "RunSpec":
        """Parse the algorithm (`options`: its parameters, `make_config`) and check the settings
        together, before anything is compiled; a bad one is a `TensorCFRError` naming it."""
        config = make_config(algo, **options)  # the one parse of the algorithm spec
        if update_scope not in UPDATE_SCOPES:
            raise TensorCFRError(f"update_scope must be one of {', '.join(UPDATE_SCOPES)}, got {update_scope!r}")
        if update_scope == "touched":
            if sampling == "none":
                raise TensorCFRError("update_scope='touched' needs sampling (chance, external or outcome)")
            c = config
            if not isinstance(c, CFRConfig) or c.alpha is not None or c.predictive or c.regret_tolerance:
                raise TensorCFRError(f"update_scope='touched' updates only what a sample touches, which is exact "
                                     f"for cfr and cfr+ (no discounting as in lcfr and dcfr, no prediction, regret "
                                     f"tolerance or FTRL), not {c.name}")
        if sampling not in SCHEMES:
            raise TensorCFRError(f"sampling must be one of {', '.join(SCHEMES)}, got {sampling!r}")
        if sampling != "none":
            if capture not in ("auto", "none"):
                raise TensorCFRError(f"capture={capture!r} with sampling={sampling!r}: a sampled iteration "
                                     "gathers a different number of entries each time; only eager "
                                     "iterations sample (capture='none')")
            if distributed:
                raise TensorCFRError("sampling with distributed=True is not supported: sample on one process")
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise TensorCFRError(f"seed must be a whole number, got {seed!r}")
            check_settings(sampling, 1 if samples is None else samples, epsilon)
            capture = "none"
        if distributed:
            if capture not in ("auto", "none"):
                raise TensorCFRError(f"capture={capture!r} with distributed=True: only eager iterations are "
                                     "distributed (capture='none')")
            capture = "none"
        device = resolve_device(device)
        check_capture(capture, device)
        return RunSpec(config=config, device=device, dtype=resolve_dtype(dtype), form=form, capture=capture,
                       deterministic=bool(deterministic), distributed=bool(distributed), sampling=sampling,
                       samples=samples, epsilon=float(epsilon), seed=seed, update_scope=update_scope,
                       max_histories=max_histories, max_memory=max_memory, threads=check_threads(threads))
