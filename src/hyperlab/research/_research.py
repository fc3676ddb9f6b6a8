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

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from hyperlab.errors import ConfigError, TrialError
from hyperlab.research._domain import Domain
from hyperlab.research._launch import Update, build_run, check_arguments, check_run
from hyperlab.research._project import project_dir
from hyperlab.research._run_options import resolve_run
from hyperlab.research._units import Unit, When, parse_save_to, unit_name

__all__ = ["Research"]


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
        working_dir: Folder for its files (default: as for ``hyperlab.run``: beside a SQLite
            file, else under the hyperlab home).

    Its project (``project_dir``) is the folder of the script that builds it, else the working
    directory: the git state (commit, branch, uncommitted diff) recorded with the research is
    that folder's repository's (``hyperlab show ID --env``).
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
        self.project_dir = project_dir()
        self.units: list[Unit] = []
        self._update: Update | None = None
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

    def update_domain(self, function: Callable[..., Any], when: Any = 1, **kwargs: Any) -> Research:
        """Call ``function(results, **kwargs)`` when ``when`` is due, counting finished
        experiments (configs x repetitions) as BatchFlow's ``when`` counts iterations: ``N`` or
        ``"%N"`` (every N-th finished), ``"#k"`` (once, at the k-th finished, 0-based),
        ``"last"`` (when every config of the current domain was proposed and has finished), or
        a list of those. ``results`` holds the finished ones so far (a pandas DataFrame: one
        row per experiment, with its config aliases, ``repetition``, ``status`` and the last
        value of each saved variable); the domain it returns is proposed from then on (None
        keeps the current one). The research ends when the last domain is exhausted (or
        ``n_configs`` configs ran)."""
        self._check_not_started()
        if not callable(function):
            raise ConfigError(f"update_domain: expected a function, got {function!r}")
        iteration = sorted(set(kwargs) & {"n_items", "n_reps", "repeat_each"})
        if iteration:
            raise ConfigError(
                f"update_domain: {iteration[0]}= (BatchFlow's iteration setting for the new "
                "domain) is not supported: the research's n_configs, n_reps and repeat_each "
                "apply to every domain; set them in Research(...)"
            )
        self._update = (function, When.parse(when, "update_domain"), kwargs)
        return self

    # ---- running --------------------------------------------------------------------------

    def run(
        self,
        n_iters: int | None = None,
        *,
        name: str | None = None,
        workers: int | Sequence[Mapping[str, Any]] = 1,
        branches: int | Sequence[Mapping[str, Any]] = 1,
        devices: Any = None,
        executor: Literal["processes", "threads", "inprocess"] | None = None,
        parallel: bool | None = None,
        executor_target: str = "for",
        dump_results: bool = True,
        detach: bool = False,
        debug: bool = False,
        finalize: bool = True,
        seed: int | None = None,
        profile: bool = False,
        memory_ratio: float | None = None,
        n_gpu_checks: int = 3,
        gpu_check_delay: float = 5.0,
        echo_output: bool = False,
        redirect_stdout: bool | int = True,
        redirect_stderr: bool | int = True,
        bar: bool | None = None,
        progress: bool | float | None = None,
        git_meta: bool = False,
        env_meta: bool = False,
        create_id_prefix: bool | int = False,
        port: int | None = None,
    ) -> Research:
        """Run every config x repetition, ``n_iters`` iterations each; return ``self``.

        BatchFlow's options are taken by their names; docs/research.md maps each.

        Args:
            n_iters: Iterations per experiment; None runs until a generator unit is exhausted
                (1 when every unit is a callable).
            name: A new name for the research (BatchFlow's ``run(name=...)``).
            workers: Workers running experiments at once (processes by default), or one config
                (a dict) per worker, added to the config of every experiment it runs.
            branches: Experiments per worker, run in lockstep, sharing their root units; or
                one config per branch, added to the config of that branch's experiment.
            devices: GPUs split over workers x branches as BatchFlow splits them (indices,
                ``"1"`` or ``"cuda:1"``; fewer than ``workers * branches`` are shared, more
                are given several per experiment), or one list per worker of one entry per
                branch. A worker's process sees its devices (``CUDA_VISIBLE_DEVICES``); each
                experiment's ``devices`` are indices into them.
            executor: ``"processes"`` (default), ``"threads"``, or ``"inprocess"`` (the
                workers take turns in this thread; the default with ``debug``).
            parallel: BatchFlow's: True runs workers in processes, False everything in this
                process (``executor="inprocess"``).
            executor_target: How a worker's branches run each iteration: ``"for"`` (in turn,
                the default) or ``"threads"`` (at once).
            dump_results: False keeps the research in memory only (its store is
                ``":memory:"``; nothing is written to disk).
            detach: Return at once; the research runs in the background (``wait()``,
                ``terminate()``; results are readable meanwhile). A script that ends waits.
            debug: Run in this thread and re-raise a unit's exception at once.
            finalize: After a unit fails, still run its experiment's ``"last"`` units.
            seed: Root of every random stream (configs sampled, each experiment's seed).
            profile: Record each unit's time and calls per iteration (``research.profile``).
            memory_ratio / n_gpu_checks / gpu_check_delay: Before a worker starts on its
                devices, wait until each has this share of its memory free, checking this many
                times, this many seconds apart (the wait is shown); None checks nothing.
            echo_output: Also show the experiments' output here (it always goes to each
                experiment's ``stdout.log`` / ``stderr.log``).
            redirect_stdout / redirect_stderr: BatchFlow's: 0 or False also shows the output
                here (as ``echo_output``), True or 2 keeps it in each experiment's logs only;
                1 and 3 (one common file) are refused.
            bar / progress: The progress line (``bar`` is BatchFlow's name; as
                ``hyperlab.run``'s ``progress``).
            git_meta / env_meta: Accepted: the git state of the research's project (the
                folder of the script that built it) and the packages are always recorded
                (``hyperlab show ID --env``).
            create_id_prefix: Refused when set: experiments are numbered in the domain's
                order (``trial``).
            port: Serve the dashboard and REST API while it runs.

        Raises:
            ConfigError: A bad option, an empty domain, or a unit problem, before anything is
                written.
            TrialError: Every experiment failed (the first one's traceback is quoted).
        """
        from hyperlab.experiment import Experiment

        self._check_not_started()
        check_arguments(n_iters, name)
        settings = resolve_run(
            workers=workers,
            branches=branches,
            executor=executor,
            parallel=parallel,
            executor_target=executor_target,
            debug=debug,
            dump_results=dump_results,
            storage=self.storage,
            bar=bar,
            progress=progress,
            git_meta=git_meta,
            env_meta=env_meta,
            redirect_stdout=redirect_stdout,
            redirect_stderr=redirect_stderr,
            create_id_prefix=create_id_prefix,
            echo_output=echo_output,
        )
        checked = check_run(
            self.domain,
            self.units,
            settings,
            n_configs=self.n_configs,
            metric=self.metric,
            updates=self._update is not None,
            n_iters=n_iters,
            devices=devices,
            memory_ratio=memory_ratio,
            n_gpu_checks=n_gpu_checks,
            gpu_check_delay=gpu_check_delay,
        )
        if name is not None:
            self.name = name
        launch = build_run(
            self.domain,
            self.units,
            settings,
            checked,
            n_configs=self.n_configs,
            n_reps=self.n_reps,
            repeat_each=self.repeat_each,
            update=self._update,
            mode=self.mode,
            seed=seed,
            finalize=finalize,
            profile=profile,
            project_dir=self.project_dir,
        )
        objective: Any = launch.plan  # what the research executor runs (not a function)
        # inprocess: one group at a time, whatever the number of workers taking turns
        groups = 1 if settings.executor == "inprocess" else settings.workers
        self._experiment = Experiment(
            objective,
            launch.space,
            metric=self.metric,
            mode=self.mode,
            tuner=launch.tuner,
            executor="research",
            concurrency=settings.branches * groups,
            continue_on_failure=not debug,
            fail_fast=False,
            storage=":memory:" if settings.in_memory else self.storage,
            seed=launch.tuner.seed,
            name=self.name,
            working_dir=self.working_dir,
            progress=settings.progress,
            research=launch.options,
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

    def terminate(
        self, kill_processes: bool = False, force: bool = False, wait: bool = True
    ) -> None:
        """BatchFlow's ``terminate``: stop the research if it runs (as ``stop``) and, with
        ``wait``, wait until it has stopped; nothing when it was not run or has ended.

        It never asks for confirmation (``force`` is accepted for that reason), and its
        worker processes always end with it (``kill_processes`` is accepted too); the
        interrupted experiments run again on ``hyperlab.resume``.
        """
        for field, value in (("kill_processes", kill_processes), ("force", force), ("wait", wait)):
            if not isinstance(value, bool):
                raise ConfigError(f"{field}: expected True or False, got {value!r}")
        experiment = self._experiment
        if experiment is None or experiment.status.is_finished():
            return
        experiment.stop()
        if wait and experiment.running:  # a detached run: its thread ends once stopped
            with contextlib.suppress(TrialError):  # nothing succeeded before the stop
                experiment.wait()

    @property
    def is_finished(self) -> bool:
        """Whether every config x repetition has run (its status is DONE): False before
        ``run``, while it runs, and after it was stopped or ended in error."""
        from hyperlab.trial import ExperimentStatus

        return self._experiment is not None and self._experiment.status is ExperimentStatus.DONE

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
    def remove(
        name: str,
        storage: str | os.PathLike | None = None,
        *,
        ask: bool = True,
        force: bool = False,
    ) -> bool:
        """Delete a stored research (by name or id): its rows and its folder; whether it was.

        As BatchFlow's: ``ask`` asks on the terminal first, a research that does not exist
        only warns (so a script may clear its previous run first), and ``force`` deletes the
        experiment even if it is not a research. A running one is never deleted.
        """
        from hyperlab.research._stored import remove_research

        return remove_research(name, storage, ask=ask, force=force)

    def __repr__(self) -> str:
        units = ", ".join(u.name for u in self.units)
        return f"Research({self.name!r}, domain={self.domain.describe()}, units=[{units}])"
