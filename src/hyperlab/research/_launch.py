"""What ``Research.run`` does before its experiment starts: ``check_run`` checks the research
against its run options (a ``ConfigError`` before anything is written), then ``build_run``
builds the ``Plan`` its workers run, the ``DomainTuner`` that proposes its configs, and the
research options recorded with the experiment."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hyperlab.errors import ConfigError
from hyperlab.research._devices import Split, split_devices
from hyperlab.research._domain import Domain
from hyperlab.research._run_options import RunSettings, extra_keys
from hyperlab.research._runner import Plan
from hyperlab.research._space import DomainSpace, domain_space, value_table
from hyperlab.research._tuner import DomainTuner
from hyperlab.research._units import Unit, When, check_units

__all__ = ["Checked", "Launch", "Update", "build_run", "check_arguments", "check_run"]

Update = tuple[Callable[..., Any], When, dict[str, Any]]
"""What ``Research.update_domain`` was given: the function, when it runs, its arguments."""


@dataclass(frozen=True)
class Checked:
    """What ``check_run`` found.

    Attributes:
        n_iters: Iterations per experiment (1 when None was given and no unit is a generator).
        keys: The domain's config keys.
        devices: The devices split over workers and branches (``split_devices``).
        memory_check: The free-memory requirement on those devices, if any.
    """

    n_iters: int | None
    keys: list[str]
    devices: Split | None
    memory_check: Any


@dataclass(frozen=True)
class Launch:
    """What the research's experiment is created with.

    Attributes:
        plan: What its workers run (the experiment's objective).
        space: Its search space, as listings and the dashboard show it.
        tuner: Proposes its configs x repetitions.
        options: The research options recorded with it.
    """

    plan: Plan
    space: DomainSpace
    tuner: DomainTuner
    options: dict[str, Any]


def check_arguments(n_iters: Any, name: Any) -> None:
    """Check ``Research.run``'s ``n_iters`` and ``name``; ``ConfigError`` naming the bad one."""
    if isinstance(n_iters, str):
        raise ConfigError(
            f"n_iters: expected an integer >= 1 or None, got {n_iters!r}; BatchFlow's "
            "run(name, ...) takes the name first: give it as run(name=...)"
        )
    if n_iters is not None and (
        isinstance(n_iters, bool) or not isinstance(n_iters, int) or n_iters < 1
    ):
        raise ConfigError(f"n_iters: expected an integer >= 1 or None, got {n_iters!r}")
    if name is not None and (not isinstance(name, str) or not name):
        raise ConfigError(f"name: expected a non-empty string, got {name!r}")


def check_run(
    domain: Domain,
    units: Sequence[Unit],
    settings: RunSettings,
    *,
    n_configs: int | None,
    metric: str | None,
    updates: bool,
    n_iters: int | None,
    devices: Any,
    memory_ratio: float | None,
    n_gpu_checks: int,
    gpu_check_delay: float,
) -> Checked:
    """Check a research (its ``domain``, ``units``, ``n_configs``, ``metric``, whether it
    ``updates`` its domain) against how it is to run.

    Raises:
        ConfigError: A bad option, an empty domain, or a unit problem.
    """
    memory_check = _memory_check(memory_ratio, n_gpu_checks, gpu_check_delay)
    if domain.is_empty:
        raise ConfigError(
            "domain: the research's domain is empty; give options, e.g. Domain(lr=[0.1, 0.01])"
        )
    if domain.size is None and n_configs is None and not updates:
        raise ConfigError(
            "n_configs: the domain samples its values (it never runs out), so say how many "
            "configs to take: Research(..., n_configs=N)"
        )
    keys = list(domain.keys())
    for configs, field in (
        (settings.worker_configs, "workers"),
        (settings.branch_configs, "branches"),
    ):
        clash = sorted({k for c in configs for k in c} & set(keys))
        if clash:
            raise ConfigError(
                f"{field}: key {clash[0]!r} is a key of the domain too, so the domain's value "
                "would be silently overridden; rename it, or put it in the domain only"
            )
    check_units(units, keys + sorted(extra_keys(settings.worker_configs, settings.branch_configs)))
    if metric is not None:
        saved = {v for u in units for v in u.save_to}
        if metric not in saved:
            raise ConfigError(
                f"metric: {metric!r} is not saved by any unit (save_to); saved "
                f"variables: {sorted(saved) or 'none'}"
            )
    if n_iters is None and all(u.kind != "generator" for u in units):
        n_iters = 1
    split = split_devices(devices, settings.workers, settings.branches)
    return Checked(n_iters, keys, split, memory_check)


def build_run(
    domain: Domain,
    units: Sequence[Unit],
    settings: RunSettings,
    checked: Checked,
    *,
    n_configs: int | None,
    n_reps: int,
    repeat_each: int | None,
    update: Update | None,
    mode: str,
    seed: int | None,
    finalize: bool,
    profile: bool,
    project_dir: str | None,
) -> Launch:
    """Build what a research's experiment is created with, once ``check_run`` passed."""
    plan = Plan(
        tuple(units),
        checked.n_iters,
        value_table(domain),
        finalize=finalize,
        profile=profile,
        workers=settings.workers,
        branches=settings.branches,
        devices=checked.devices,
        executor=settings.executor,
        memory_check=checked.memory_check,
        echo=settings.echo,
        worker_configs=settings.worker_configs,
        branch_configs=settings.branch_configs,
        target=settings.target,
    )
    space = domain_space(domain, n_reps)
    tuner = DomainTuner(
        space,
        domain=domain,
        n_configs=n_configs,
        n_reps=n_reps,
        repeat_each=repeat_each,
        update=update,
        check=_check_update(plan, n_configs),
        mode=mode,
        seed=seed,
    )
    options = {
        "n_iters": checked.n_iters,
        "n_configs": n_configs,
        "n_reps": n_reps,
        "repeat_each": repeat_each,
        "workers": settings.workers,
        "branches": settings.branches,
        "units": [u.name for u in units],
        "variables": [v for u in units for v in u.save_to],
        "config_keys": checked.keys,
        "profile": profile,
        "domain": domain.describe(),
        "project_dir": project_dir,
    }
    return Launch(plan, space, tuner, options)


def _memory_check(ratio: float | None, checks: int, delay: float) -> Any:
    if ratio is None:
        return None
    from hyperlab.executors.devices import MemoryCheck

    return MemoryCheck(memory_ratio=ratio, n_gpu_checks=checks, gpu_check_delay=delay)


def _check_update(plan: Plan, n_configs: int | None) -> Callable[[Any], None]:
    """What a domain returned by ``update_domain`` must satisfy."""

    def check(domain: Any) -> None:
        if not isinstance(domain, Domain) or domain.is_empty:
            raise ConfigError(
                f"update_domain: the function must return a non-empty Domain or None, "
                f"got {domain!r}"
            )
        if n_configs is None and domain.size is None:
            raise ConfigError(
                f"update_domain: the function returned a sampled domain ({domain.describe()}), "
                "which never runs out; give the research n_configs to bound it"
            )
        table = value_table(domain)
        for key, values in table.items():
            known = plan.values.get(key, {})
            for alias, value in values.items():
                if alias not in known or known[alias] is not value:
                    raise ConfigError(
                        f"update_domain: option {key!r} has value {value!r} (alias {alias}) that "
                        "was not in the first domain; the workers know only the first domain's "
                        "non-plain values (classes, functions, objects): put every such value "
                        "in the first domain"
                    )

    return check
