"""``Research.run``'s options, BatchFlow's spellings included, checked and mapped onto how
hyperlab runs a research; what has no counterpart is refused with what to use instead."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hyperlab.errors import ConfigError

__all__ = ["RunSettings", "extra_keys", "resolve_run"]

EXECUTORS = ("processes", "threads", "inprocess")
TARGETS = {"for": "for", "f": "for", "threads": "threads", "t": "threads"}


@dataclass(frozen=True)
class RunSettings:
    """What ``Research.run``'s options come to.

    Attributes:
        executor: Where workers run: ``"processes"``, ``"threads"`` or ``"inprocess"``.
        target: How a worker's branches run: ``"for"`` (in turn) or ``"threads"`` (at once).
        workers / branches: How many.
        worker_configs / branch_configs: One config per worker / branch, or empty.
        echo: Also show the experiments' output here.
        progress: As ``hyperlab.run`` takes it.
        in_memory: Keep nothing on disk (``dump_results=False``): the store is ``":memory:"``.
    """

    executor: str
    target: str
    workers: int
    branches: int
    worker_configs: tuple[dict[str, Any], ...]
    branch_configs: tuple[dict[str, Any], ...]
    echo: bool
    progress: bool | float | None
    in_memory: bool


def resolve_run(
    *,
    workers: Any,
    branches: Any,
    executor: str | None,
    parallel: bool | None,
    executor_target: str,
    debug: bool,
    dump_results: bool,
    storage: Any,
    bar: Any,
    progress: bool | float | None,
    git_meta: Any,
    env_meta: Any,
    redirect_stdout: Any,
    redirect_stderr: Any,
    create_id_prefix: Any,
    echo_output: bool,
) -> RunSettings:
    """Check ``Research.run``'s options and map BatchFlow's onto hyperlab's.

    Raises:
        ConfigError: Naming the option, the value, and what to use instead.
    """
    n_workers, worker_configs = _count_or_configs("workers", workers)
    n_branches, branch_configs = _count_or_configs("branches", branches)
    _check_overlap(worker_configs, branch_configs)
    target = _target(executor_target)
    executor = _executor(executor, parallel, debug)
    if debug and target != "for":
        raise ConfigError(  # BatchFlow's rule
            f"debug: True needs parallel=False and executor_target='for', got "
            f"executor_target={executor_target!r}"
        )
    if debug and executor != "inprocess":
        raise ConfigError(
            f"debug: re-raising at once needs executor='inprocess' (or parallel=False), got "
            f"executor={executor!r}"
        )
    for field, value in (
        ("dump_results", dump_results),
        ("git_meta", git_meta),
        ("env_meta", env_meta),
    ):
        if not isinstance(value, bool):
            raise ConfigError(f"{field}: expected True or False, got {value!r}")
    if not dump_results and storage is not None:
        raise ConfigError(
            f"dump_results: False keeps the research in memory only, but it was given "
            f"storage={storage!r}; drop one of them"
        )
    stdout = _redirect("redirect_stdout", redirect_stdout, dump_results)
    stderr = _redirect("redirect_stderr", redirect_stderr, dump_results)
    if (stdout == 0) != (stderr == 0):
        raise ConfigError(
            f"redirect_stdout / redirect_stderr: hyperlab shows the experiments' output here "
            f"for both streams or for neither, got redirect_stdout={redirect_stdout!r}, "
            f"redirect_stderr={redirect_stderr!r}; give both 0 (shown here, and kept in each "
            "experiment's logs) or both 2 (kept in each experiment's logs only)"
        )
    if create_id_prefix not in (False, 0, None):
        raise ConfigError(
            f"create_id_prefix: {create_id_prefix!r} is not supported: experiments are "
            "numbered in the domain's order already (the 'trial' column of research.results.df); "
            "sort by it"
        )
    return RunSettings(
        executor=executor,
        target=target,
        workers=n_workers,
        branches=n_branches,
        worker_configs=worker_configs,
        branch_configs=branch_configs,
        echo=echo_output or stdout == 0,
        progress=_progress(bar, progress),
        in_memory=not dump_results,
    )


def _count_or_configs(field: str, value: Any) -> tuple[int, tuple[dict[str, Any], ...]]:
    """``workers`` / ``branches``: a count >= 1, or one config (a dict) for each."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise ConfigError(f"{field}: expected an integer >= 1, got {value!r}")
        return value, ()
    if isinstance(value, Sequence) and not isinstance(value, str) and value:
        configs = []
        for index, config in enumerate(value):
            if not isinstance(config, Mapping) or not all(isinstance(k, str) for k in config):
                raise ConfigError(
                    f"{field}: expected an integer >= 1 or a list of configs (dicts with "
                    f"string keys), one per {field[:-1]}; item {index} is {config!r}"
                )
            configs.append(dict(config))
        return len(configs), tuple(configs)
    raise ConfigError(
        f"{field}: expected an integer >= 1 or a non-empty list of configs (dicts), got {value!r}"
    )


def _check_overlap(
    worker_configs: tuple[dict[str, Any], ...], branch_configs: tuple[dict[str, Any], ...]
) -> None:
    both = {k for c in worker_configs for k in c} & {k for c in branch_configs for k in c}
    if both:
        raise ConfigError(
            f"workers / branches: key {sorted(both)[0]!r} is in both a worker's and a "
            "branch's config, so one would silently override the other; give it to one of them"
        )


def extra_keys(
    worker_configs: tuple[dict[str, Any], ...], branch_configs: tuple[dict[str, Any], ...]
) -> set[str]:
    """The keys every experiment gets from the worker and branch configs (those every worker's,
    or every branch's, config has)."""
    keys: set[str] = set()
    for configs in (worker_configs, branch_configs):
        if configs:
            keys |= set.intersection(*(set(c) for c in configs))
    return keys


def _target(value: Any) -> str:
    if isinstance(value, str) and value in TARGETS:
        return TARGETS[value]
    if value in ("mpc", "m", "async", "a"):
        raise ConfigError(
            f"executor_target: {value!r} (BatchFlow's processes or asyncio for branches) is not "
            "supported; use 'for' (branches in turn) or 'threads' (at once), and workers for "
            "processes"
        )
    raise ConfigError(f"executor_target: expected 'for' or 'threads', got {value!r}")


def _executor(executor: str | None, parallel: bool | None, debug: bool) -> str:
    if parallel is not None and not isinstance(parallel, bool):
        raise ConfigError(f"parallel: expected True or False, got {parallel!r}")
    if executor is not None and executor not in EXECUTORS:
        raise ConfigError(f"executor: expected one of {list(EXECUTORS)}, got {executor!r}")
    if parallel is False:
        if executor not in (None, "inprocess"):
            raise ConfigError(
                f"parallel: False runs every experiment in this process, but it was given "
                f"executor={executor!r}; drop one of them"
            )
        return "inprocess"
    if parallel is True:
        if debug:
            raise ConfigError(  # BatchFlow's rule
                "debug: True needs parallel=False and executor_target='for', got parallel=True"
            )
        if executor == "inprocess":
            raise ConfigError(
                "parallel: True runs experiments in worker processes, but it was given "
                "executor='inprocess'; drop one of them"
            )
        return executor or "processes"
    if executor is None:
        return "inprocess" if debug else "processes"
    return executor


def _redirect(field: str, value: Any, dump_results: bool) -> int:
    """BatchFlow's redirection code (True: 1 with dump_results, else 2), checked as BatchFlow
    checks it, then mapped: 0 shows the output here, 2 keeps it in each experiment's logs
    (hyperlab always does); 1 and 3 (one common file for the research) are refused."""
    if value is True:
        return 2  # redirected to files: each experiment's own logs (BatchFlow: 1 or 2)
    if value is False:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value not in (0, 1, 2, 3):
        raise ConfigError(f"{field}: expected True, False, 0, 1, 2 or 3, got {value!r}")
    if not dump_results and value in (1, 3):
        raise ConfigError(  # BatchFlow's rule
            f"{field}: can be 0 or 2 only when dump_results is False, got {value!r}"
        )
    if value in (1, 3):
        raise ConfigError(
            f"{field}: {value} (one common file for the whole research) is not supported: each "
            "experiment's output is kept in its own log (hyperlab logs ID N); use 2 for that, "
            "or 0 to also show it here"
        )
    return value


def _progress(bar: Any, progress: bool | float | None) -> bool | float | None:
    if bar is None:
        return progress
    if not isinstance(bar, bool):
        raise ConfigError(
            f"bar: expected True or False, got {bar!r}: a progress bar object of one's own is "
            "not supported; use bar=True for hyperlab's own progress line"
        )
    if progress is not None:
        raise ConfigError(
            f"bar / progress: give one of them (bar is BatchFlow's name), got bar={bar!r}, "
            f"progress={progress!r}"
        )
    return bar
