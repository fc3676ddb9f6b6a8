"""``Research``: a grid of configs x repetitions, each an experiment of several units iterated
``n_iters`` times (BatchFlow's ``Research``), run as one hyperlab experiment.

```python
research = (
    hyperlab.Research(name="sgd-study", domain=hyperlab.Domain(alpha=[1e-4, 1e-3]), n_reps=3)
    .add_callable(make_model, name="model", when="#0")   # reads `alpha` from the config
    .add_callable(train_step, save_to="loss")            # reads `model` (the unit above)
    .add_callable(evaluate, save_to="accuracy", when=[5, "last"])
)
research.run(n_iters=20, workers=2)
research.results.aggregate("accuracy")                  # mean, std, count per config
```
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

from hyperlab.errors import ConfigError
from hyperlab.research._devices import split_devices
from hyperlab.research._domain import Domain
from hyperlab.research._runner import Plan
from hyperlab.research._space import domain_space, value_table
from hyperlab.research._tuner import DomainTuner
from hyperlab.research._units import Unit, When, check_units, parse_save_to, unit_name

__all__ = ["Research"]

EXECUTORS = ("processes", "threads", "inprocess")


class Research:
    """A study: every config of ``domain`` (x ``n_reps`` repetitions) runs as one experiment of
    the units added, and everything is recorded as one hyperlab experiment (``hyperlab ls``,
    ``hyperlab show``, the dashboard, ``hyperlab.resume``).

    Args:
        name: Its name in listings, and for ``Research.load``.
        domain: The configs (a ``Domain``, or what ``Domain(...)`` takes: a dict of options).
        n_configs: How many configs to take from the domain (all of a finite one by default;
            needed for a sampled one).
        n_reps: How many times each config runs, each repetition with its own seed.
        repeat_each: Configs are taken in blocks of this many, each block repeated ``n_reps``
            times before the next (BatchFlow's; by default the whole grid, 100 for sampled
            domains).
        metric / mode: A saved variable whose last value ranks the experiments (the best
            config in listings, and ``update_domain``'s results); optional.
        storage: The store (default: ``$HYPERLAB_HOME/hyperlab.db``).
        working_dir: Folder for its files (default: the hyperlab home).
    """

    def __init__(
        self,
        name: str = "research",
        domain: Domain | dict[str, Any] | None = None,
        *,
        n_configs: int | None = None,
        n_reps: int = 1,
        repeat_each: int | None = None,
        metric: str | None = None,
        mode: Literal["min", "max"] = "min",
        storage: str | os.PathLike | None = None,
        working_dir: str | os.PathLike | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"name: expected a non-empty string, got {name!r}")
        for field, value in (
            ("n_reps", n_reps),
            ("n_configs", n_configs),
            ("repeat_each", repeat_each),
        ):
            if value is None and field != "n_reps":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{field}: expected an integer >= 1, got {value!r}")
        if mode not in ("min", "max"):
            raise ConfigError(f"mode: expected 'min' or 'max', got {mode!r}")
        self.name = name
        self.domain = domain if isinstance(domain, Domain) else Domain(domain or {})
        self.n_configs = n_configs
        self.n_reps = n_reps
        self.repeat_each = repeat_each
        self.metric = metric
        self.mode = mode
        self.storage = storage
        self.working_dir = working_dir
        self.units: list[Unit] = []
        self._update: tuple[Callable[..., Any], int, dict[str, Any]] | None = None
        self._experiment: Any = None

    # ---- describing the experiment --------------------------------------------------------

    def add_callable(
        self,
        function: Callable[..., Any] | str,
        *args: Any,
        name: str | None = None,
        when: Any = 1,
        save_to: str | Sequence[str] | None = None,
        root: bool = False,
        **kwargs: Any,
    ) -> Research:
        """Add a unit that calls ``function`` when due (``"instance.method"`` calls a method of
        an instance added with ``add_instance``). Its output is readable by later units as
        ``O(name)`` or a parameter called ``name``; ``save_to`` records it (a name, or names
        to unpack a tuple into) at every iteration it runs.

        ``args``/``kwargs`` are passed as they are, with ``C("key")`` (a config value) and
        ``O("unit")`` resolved; parameters not given are filled by name from earlier units'
        outputs and saved variables, then ``config``, ``iteration``, ``repetition``,
        ``seed``, ``devices``, then the config's keys. ``root=True`` computes it once for all
        the branches of a worker (it reads only config values they share).
        """
        kind = "method" if isinstance(function, str) else "callable"
        if kind == "callable" and not callable(function):
            raise ConfigError(
                f"add_callable: expected a callable or 'instance.method', got {function!r}"
            )
        return self._add(kind, function, args, kwargs, name, when, save_to, root)

    def add_generator(
        self,
        function: Callable[..., Any],
        *args: Any,
        name: str | None = None,
        when: Any = 1,
        save_to: str | Sequence[str] | None = None,
        root: bool = False,
        **kwargs: Any,
    ) -> Research:
        """Add a unit whose generator (``function(*args, **kwargs)``, called the first time it
        is due) yields one value each time it is due; when it is exhausted, the experiment
        ends (after its ``"last"`` units). Arguments as for ``add_callable``."""
        if not callable(function):
            raise ConfigError(f"add_generator: expected a generator function, got {function!r}")
        return self._add("generator", function, args, kwargs, name, when, save_to, root)

    def add_instance(
        self, name: str, creator: Callable[..., Any], *args: Any, root: bool = False, **kwargs: Any
    ) -> Research:
        """Create ``creator(*args, **kwargs)`` once per experiment (once per worker group with
        ``root=True``), before its first iteration; its methods become units with
        ``add_callable("name.method", ...)``, and later units read it as ``O(name)``."""
        if not callable(creator):
            raise ConfigError(f"add_instance: expected a class or a callable, got {creator!r}")
        return self._add("instance", creator, args, kwargs, name, 1, None, root)

    def _add(
        self,
        kind: Any,
        function: Any,
        args: tuple,
        kwargs: dict[str, Any],
        name: str | None,
        when: Any,
        save_to: Any,
        root: bool,
    ) -> Research:
        self._check_not_started()
        label = unit_name(function, name)
        if any(u.name == label for u in self.units):
            raise ConfigError(
                f"name: a unit named {label!r} was already added; give this one another name"
            )
        unit = Unit(
            label,
            kind,
            function,
            tuple(args),
            dict(kwargs),
            parse_save_to(save_to, label),
            When.parse(when, label),
            bool(root),
        )
        self.units.append(unit)
        return self

    def update_domain(self, function: Callable[..., Any], when: int = 1, **kwargs: Any) -> Research:
        """Every ``when`` finished experiments (configs x repetitions), call
        ``function(results, **kwargs)`` with the finished ones so far (a pandas DataFrame: one
        row per experiment, with its config aliases, ``repetition``, ``status`` and the last
        value of each saved variable); the domain it returns is proposed from then on (None
        keeps the current one). The research ends when the last domain is exhausted (or
        ``n_configs`` configs ran)."""
        self._check_not_started()
        if not callable(function):
            raise ConfigError(f"update_domain: expected a function, got {function!r}")
        if isinstance(when, bool) or not isinstance(when, int) or when < 1:
            raise ConfigError(
                f"when: expected a number of finished experiments >= 1 for update_domain, "
                f"got {when!r}"
            )
        self._update = (function, when, kwargs)
        return self

    # ---- running --------------------------------------------------------------------------

    def run(
        self,
        n_iters: int | None = None,
        *,
        workers: int = 1,
        branches: int = 1,
        devices: Any = None,
        executor: Literal["processes", "threads", "inprocess"] | None = None,
        detach: bool = False,
        debug: bool = False,
        finalize: bool = True,
        seed: int | None = None,
        profile: bool = False,
        memory_ratio: float | None = None,
        n_gpu_checks: int = 3,
        gpu_check_delay: float = 5.0,
        echo_output: bool = False,
        progress: bool | float | None = None,
        port: int | None = None,
    ) -> Research:
        """Run every config x repetition, ``n_iters`` iterations each; return ``self``.

        Args:
            n_iters: Iterations per experiment; None runs until a generator unit is exhausted
                (1 when every unit is a callable).
            workers: Workers running experiments at once (processes by default).
            branches: Experiments per worker, run in lockstep, sharing their root units.
            devices: Device indices split over workers x branches (each gets its share, set
                in ``CUDA_VISIBLE_DEVICES`` of its worker): an index, a list (at least
                ``workers * branches`` of them, a multiple), or one list per worker of one
                list per branch.
            executor: ``"processes"`` (default), ``"threads"``, or ``"inprocess"`` (the
                default with ``debug``).
            detach: Return at once; the research runs in the background (``wait()``,
                ``stop()``; results are readable meanwhile). A script that ends waits for it.
            debug: Run in this thread and re-raise a unit's exception at once.
            finalize: After a unit fails, still run its experiment's ``"last"`` units.
            seed: Root of every random stream (configs sampled, each experiment's seed).
            profile: Record each unit's time and calls per iteration (``research.profile``).
            memory_ratio / n_gpu_checks / gpu_check_delay: Before a worker starts on its
                devices, wait until each has this share of its memory free, checking this many
                times, this many seconds apart (the wait is shown); None checks nothing.
            echo_output: Also show the experiments' output here (it always goes to each
                experiment's ``stdout.log`` / ``stderr.log``).
            progress: As for ``hyperlab.run``.
            port: Serve the dashboard and REST API while it runs.

        Raises:
            ConfigError: A bad option, an empty domain, or a unit problem, before anything is
                written.
            TrialError: Every experiment failed (the first one's traceback is quoted).
        """
        from hyperlab.experiment import Experiment

        self._check_not_started()
        if n_iters is not None and (
            isinstance(n_iters, bool) or not isinstance(n_iters, int) or n_iters < 1
        ):
            raise ConfigError(f"n_iters: expected an integer >= 1 or None, got {n_iters!r}")
        for field, value in (("workers", workers), ("branches", branches)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{field}: expected an integer >= 1, got {value!r}")
        if executor is None:
            executor = "inprocess" if debug else "processes"
        if executor not in EXECUTORS:
            raise ConfigError(f"executor: expected one of {list(EXECUTORS)}, got {executor!r}")
        if debug and (executor != "inprocess" or workers != 1):
            raise ConfigError(
                f"debug: re-raising at once needs executor='inprocess' and workers=1, got "
                f"executor={executor!r}, workers={workers!r}"
            )
        if executor == "inprocess" and workers != 1:
            raise ConfigError(
                "workers: executor='inprocess' runs one worker (this thread), got "
                f"workers={workers!r}"
            )
        memory_check = _memory_check(memory_ratio, n_gpu_checks, gpu_check_delay)
        if self.domain.is_empty:
            raise ConfigError(
                "domain: the research's domain is empty; give options, e.g. Domain(lr=[0.1, 0.01])"
            )
        if self.domain.size is None and self.n_configs is None and self._update is None:
            raise ConfigError(
                "n_configs: the domain samples its values (it never runs out), so say how many "
                "configs to take: Research(..., n_configs=N)"
            )
        keys = list(self.domain.keys())
        check_units(self.units, keys)
        if self.metric is not None:
            saved = {v for u in self.units for v in u.save_to}
            if self.metric not in saved:
                raise ConfigError(
                    f"metric: {self.metric!r} is not saved by any unit (save_to); saved "
                    f"variables: {sorted(saved) or 'none'}"
                )
        if n_iters is None and all(u.kind != "generator" for u in self.units):
            n_iters = 1
        split = split_devices(devices, workers, branches)
        plan = Plan(
            tuple(self.units),
            n_iters,
            value_table(self.domain),
            finalize=finalize,
            profile=profile,
            workers=workers,
            branches=branches,
            devices=split,
            executor=executor,
            memory_check=memory_check,
            echo=echo_output,
        )
        space = domain_space(self.domain, self.n_reps)
        tuner = DomainTuner(
            space,
            domain=self.domain,
            n_configs=self.n_configs,
            n_reps=self.n_reps,
            repeat_each=self.repeat_each,
            update=self._update,
            check=_check_update(plan, self.n_configs),
            mode=self.mode,
            seed=seed,
        )
        options = {
            "n_iters": n_iters,
            "n_configs": self.n_configs,
            "n_reps": self.n_reps,
            "repeat_each": self.repeat_each,
            "workers": workers,
            "branches": branches,
            "units": [u.name for u in self.units],
            "variables": [v for u in self.units for v in u.save_to],
            "config_keys": keys,
            "profile": profile,
            "domain": self.domain.describe(),
        }
        objective: Any = plan  # what the research executor runs (not a function)
        self._experiment = Experiment(
            objective,
            space,
            metric=self.metric,
            mode=self.mode,
            tuner=tuner,
            executor="research",
            concurrency=workers * branches,
            continue_on_failure=not debug,
            fail_fast=False,
            storage=self.storage,
            seed=tuner.seed,
            name=self.name,
            working_dir=self.working_dir,
            progress=progress,
            research=options,
        )
        if detach:
            self._experiment.start(wait_on_exit=True, port=port)
        else:
            self._experiment.run(port=port)
        return self

    def _check_not_started(self) -> None:
        if self._experiment is not None:
            raise ConfigError(
                f"research {self.name!r} was already run (experiment {self._experiment.id}); "
                "build a new Research to run it again, or hyperlab.resume it"
            )

    # ---- reading --------------------------------------------------------------------------

    @property
    def id(self) -> str:
        """The id of its experiment in the store (once ``run`` was called)."""
        return self._started().id

    @property
    def experiment(self) -> Any:
        """Its ``hyperlab.Experiment`` handle: ``status``, ``stop()``, ``wait()``..."""
        return self._started()

    @property
    def results(self) -> Any:
        """Its ``ResearchResults``: read from the store, while it runs and after."""
        from hyperlab.research._results import ResearchResults

        experiment = self._started()
        return ResearchResults(experiment.store, experiment.id)

    @property
    def profile(self) -> Any:
        """Each unit's time and calls per iteration (``run(profile=True)``), a DataFrame."""
        return self.results.profile

    def wait(self, timeout: float | None = None) -> Research:
        """Block until a ``detach``ed run ends (or ``timeout`` seconds pass)."""
        self._started().wait(timeout)
        return self

    def stop(self) -> None:
        """Stop a running research: running experiments end and run again on resume."""
        self._started().stop()

    def _started(self) -> Any:
        if self._experiment is None:
            raise ConfigError(f"research {self.name!r} has not been run yet: call run() first")
        return self._experiment

    @staticmethod
    def load(name: str, storage: str | os.PathLike | None = None) -> Any:
        """A stored research (by name or id), read-only: ``.results``, ``.profile``..."""
        from hyperlab.research._stored import load_research

        return load_research(name, storage)

    @staticmethod
    def remove(name: str, storage: str | os.PathLike | None = None, *, ask: bool = True) -> None:
        """Delete a stored research (by name or id): its rows and its folder."""
        from hyperlab.research._stored import remove_research

        remove_research(name, storage, ask=ask)

    def __repr__(self) -> str:
        units = ", ".join(u.name for u in self.units)
        return f"Research({self.name!r}, domain={self.domain.describe()}, units=[{units}])"


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
