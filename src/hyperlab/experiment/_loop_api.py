"""A strategy loop on ``hyperlab.Experiment``: the user's own code decides what to run (an
evolution, a bandit, a loop that reads results), the experiment runs, stores, shows and resumes
it. NNI's sequential engine asks the same of a strategy (``submit_models``, ``list_models``,
``budget_available``, ``state_dict``).

```python
with hyperlab.Experiment(train, space, storage="sqlite:///evo.db", concurrency=4) as exp:
    population = exp.submit([space.sample(rng)[0] for _ in range(8)])
    while exp.budget_available():
        best = sorted(exp.wait(population), key=lambda t: t.value)[:4]
        population = exp.submit([mutate(t.params) for t in best])
```

The loop's calls are safe from any thread of the user's program. ``_strategy`` holds the
handles and the queue into the driver; the driver numbers and writes the trials.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import numbers
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, overload

from typing_extensions import Self

from hyperlab._terminal import printable
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.experiment._driver import Driver, budget_left
from hyperlab.experiment._fatal import failure_to_raise
from hyperlab.experiment._requests_api import Requests
from hyperlab.experiment._result import Result
from hyperlab.experiment._strategy import Submissions, TrialHandle, resolved
from hyperlab.space import SearchSpace
from hyperlab.store import TrialFilter
from hyperlab.trial import Trial, TrialStatus

__all__ = ["StrategyLoop", "TrialHandle"]

STATE_KEYS = ("model_count", "total_duration")
"""The counters of ``state_dict``, named as NNI's sequential engine names them."""


class StrategyLoop(Requests):
    """The strategy loop of ``hyperlab.Experiment`` (a base class of it, on the state it
    keeps): ``submit``, ``wait``, ``as_completed``, ``trials``, ``state_dict``, and the
    ``with`` block that ends it."""

    _thread: threading.Thread | None
    _failure: BaseException | None
    _counted: tuple[int, float]
    _submissions: Submissions
    _failure_raised: bool

    _starting: threading.Lock  # one start, whichever thread submits first

    if TYPE_CHECKING:  # Experiment's

        def _start(self, wait_on_exit: bool, port: int | None, host: str, *, strategy: bool) -> Any:
            """Start the run in a background thread."""

        def _at_exit(self) -> None:
            """What the end of the script does to a run started here."""

        def _resume_hint(self) -> str:
            """How to continue the experiment, for messages."""

        def result(self) -> Result:
            """The experiment as stored now."""

    # ---- the loop's start and end ----------------------------------------------------------

    def _attach(self) -> Driver:
        """The driver, started here in the background for a strategy loop when it was not."""
        with self._starting:
            if self._driver is None:
                self._start(False, None, "127.0.0.1", strategy=True)
            driver = self._driver
            assert driver is not None
            if not driver.submissions.attached and not driver.submissions.closed:
                driver.submissions.attached = True  # a tuner's run: the strategy joins it
        return driver

    def _join(self) -> None:
        """Wait for the run started here to end."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
            atexit.unregister(self._at_exit)

    def __enter__(self) -> Self:
        """Start the experiment for a strategy loop (as the first ``submit`` does)."""
        self._attach()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: object, tb: object) -> None:
        """End the loop: on a normal exit, the trials submitted run to their end and the
        experiment ends DONE (``drain``); when the block raised, it stops (STOPPED: its
        running trials are SYS_CANCELED and run again on resume) and the error goes on.

        Raises:
            Exception: on a normal exit, what ``wait`` raises once the experiment ended at a
                failure (``continue_on_failure=False``, ``callbacks_raise=True``).
        """
        driver = self._driver
        if driver is None:
            return
        if kind is None:
            driver.request_drain()
        else:
            driver.request_stop(f"the strategy loop raised {kind.__name__}")
        self._join()
        if kind is None:
            self._raise_failure()
        elif issubclass(kind, KeyboardInterrupt):
            message = f"experiment {self.id} stopped (Ctrl-C). {self._resume_hint()}"
            print(f"hyperlab: {printable(message)}", file=sys.stderr, flush=True)

    # ---- submitting -------------------------------------------------------------------------

    @overload
    def submit(self, params: Mapping[str, Any], *, wait: bool = False) -> TrialHandle: ...

    @overload
    def submit(
        self, params: Iterable[Mapping[str, Any]], *, wait: bool = False
    ) -> list[TrialHandle]: ...

    def submit(
        self, params: Mapping[str, Any] | Iterable[Mapping[str, Any]], *, wait: bool = False
    ) -> TrialHandle | list[TrialHandle]:
        """Run a trial with ``params`` (a mapping), or one per mapping of a list; return its
        handle (a list of handles for a list) at once, or once they ended with ``wait=True``.

        The first ``submit`` starts the experiment when it was not (in the background, as
        ``start`` does). An experiment driven this way runs only the trials submitted to it,
        unless a ``tuner`` was named, which then fills the slots they leave free; it runs until
        the ``with`` block ends, ``drain()`` or ``stop()`` is called, or its budget is spent.
        Submitted trials run before any the tuner proposes, in the order given, on the
        experiment's executor and ``concurrency``; they count in ``max_trials``.

        Raises:
            SearchSpaceError: a parameter set is not a mapping, or a parameter is missing,
                unknown or outside the space (naming it and the bound); nothing is queued.
            ConfigError: the experiment ended, is stopping, or its budget has no room for them
                all (``budget_available()`` was False); nothing is queued. A stored experiment
                is continued with ``hyperlab.Experiment.resume``.
            ExperimentBusy: another driver runs the experiment.
            Exception: as ``wait`` raises, once the experiment ended at a failure (with
                ``wait=True``, or at the next ``submit``).
        """
        single = isinstance(params, Mapping)
        given = (
            [params]
            if single
            else _listed(params, "params", "a mapping of parameter values or a list of them")
        )
        checked = [
            self._in_space(one, None if single else index) for index, one in enumerate(given)
        ]
        driver = self._attach()
        try:
            handles = driver.submit(checked)
        except ConfigError:
            if driver.ending is not None or driver.submissions.closed:
                self._join()  # the run ends: at a failure, its exception says why, not this
                self._raise_failure()
            raise
        if wait:
            self._wait_trials(handles, None)
        return handles[0] if single else handles

    def _in_space(self, params: Any, index: int | None) -> dict[str, Any]:
        where = "params" if index is None else f"params[{index}]"
        if not isinstance(params, Mapping):
            raise SearchSpaceError(
                f"{where}: expected a mapping of parameter names to values, got {params!r}"
            )
        try:
            self._space().check(params)
        except SearchSpaceError as exc:
            raise SearchSpaceError(f"{where}: {exc}") from None
        return dict(params)

    def _space(self) -> SearchSpace:
        driver = self._driver
        if driver is not None:  # its space, updated or not
            return driver.by_run.declared
        return SearchSpace.from_nni(self._record.space)

    # ---- waiting ----------------------------------------------------------------------------

    def _waited(self, handles: TrialHandle | Iterable[TrialHandle]) -> list[TrialHandle]:
        """``handles`` as a list, each checked to be a handle on a trial of this experiment."""
        if self._thread is not None and self._thread is threading.current_thread():
            raise ConfigError(
                f"experiment {self.id}: wait and as_completed cannot be called from its "
                "driver's thread (a callback, or an inprocess trial): the trials waited on "
                "need that thread to run; wait from the strategy's own thread"
            )
        listed = (
            [handles]
            if isinstance(handles, TrialHandle)
            else _listed(handles, "handles", "a TrialHandle or a list of them")
        )
        for index, handle in enumerate(listed):
            if not isinstance(handle, TrialHandle):
                raise ConfigError(
                    f"handles[{index}]: expected a TrialHandle (from submit or trials), got "
                    f"{handle!r}"
                )
            if handle.experiment_id != self.id:
                raise ConfigError(
                    f"handles[{index}]: trial {handle.number} belongs to experiment "
                    f"{handle.experiment_id}, not to {self.id}; wait on it with its own "
                    "experiment"
                )
        if self._driver is None and not all(handle.done() for handle in listed):
            self._attach()  # a resumed experiment's trials run again once it runs
        return listed

    def _wait_trials(
        self, handles: TrialHandle | Iterable[TrialHandle], timeout: float | None
    ) -> list[Trial]:
        """``wait``'s form with handles."""
        listed = self._waited(handles)
        _, unended = concurrent.futures.wait(listed, timeout)
        self._raise_failure()
        left = [handle for handle in listed if handle in unended]
        if left:
            raise TimeoutError(
                f"experiment {self.id}: {len(left)} of the {len(listed)} trials waited on had "
                f"not ended after {timeout} s (the first: trial {min(h.number for h in left)})"
            )
        return [handle.result() for handle in listed]

    def as_completed(
        self, handles: Iterable[TrialHandle], timeout: float | None = None
    ) -> Iterator[TrialHandle]:
        """The handles, each as its trial ends (the first to end first), as
        ``concurrent.futures.as_completed`` gives futures.

        Raises:
            ConfigError: a handle of another experiment (or no handle), before any is given.
            TimeoutError: ``timeout`` seconds passed before they all ended.
            Exception: as ``wait`` raises, once the experiment ended at a failure.
        """
        listed = self._waited(handles)
        return self._completed(listed, timeout)

    def _completed(self, listed: list[TrialHandle], timeout: float | None) -> Iterator[TrialHandle]:
        ours = {id(handle): handle for handle in listed}
        for future in concurrent.futures.as_completed(listed, timeout):
            self._raise_failure()
            yield ours[id(future)]

    def _raise_failure(self) -> None:
        """Raise what ended the run here at a failure, once it ended: what a callback raised
        (``callbacks_raise``) or the driver hit, or the failed trial's own exception
        (``continue_on_failure=False``); the loop is given it once, later calls see the
        experiment as it ended."""
        driver = self._driver
        if driver is None or self._failure_raised:
            return
        failing = driver.fatal is not None or driver.callbacks.error is not None
        if not (failing or driver.submissions.closed):
            return
        self._join()
        failure = self._failure
        if failure is None and driver.fatal is not None:
            failure = failure_to_raise(driver.fatal, self.result())
        if failure is not None:
            self._failure_raised = True
            raise failure

    # ---- reading ----------------------------------------------------------------------------

    def trials(
        self,
        status: TrialStatus | str | Iterable[TrialStatus | str] | None = None,
        *,
        reports: bool = False,
    ) -> list[TrialHandle]:
        """The experiment's trials (in ``status``, one or several, if given) as handles, in
        number order: those that ended are resolved; those still to end resolve when they do
        (a resumed strategy waits on the trials it had submitted this way). NNI's
        ``list_models(status)``.

        Args:
            status: Only trials in this status (a ``TrialStatus`` or its name), or in one of
                these; None for all.
            reports: Read each ended trial's reports too (``Trial.reports``).

        Raises:
            ConfigError: an unknown status (naming it and the statuses there are).
        """
        wanted = _statuses(status)
        if self._record_missing():
            return []
        submissions = self._submissions  # the driver's, before it runs too
        live = not submissions.closed
        if live:
            submissions.watching = True  # set before the read: no end slips between
        found = self._store.get_trials(self.id, reports=reports)
        seen = {trial.number for trial in found}
        handles = []
        read = self._stored_trial
        for trial in found:
            if wanted is None or trial.status in wanted:
                handles.append(submissions.handle(trial, read) if live else resolved(trial))
        if live and (wanted is None or wanted & _UNENDED):  # submitted, not stored yet
            handles += [h for h in submissions.pending() if h.number not in seen]
        return sorted(handles, key=lambda handle: handle.number)

    def _stored_trial(self, number: int) -> Trial:
        return self._store.get_trial(self.id, number)

    def _record_missing(self) -> bool:
        """Whether the experiment is not in the store yet (not saved nor started)."""
        return self._history is None and self._driver is None

    # ---- NNI's engine counters -------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The loop's counters, as NNI's sequential engine gives them: ``model_count``, the
        trials created (as ``max_trials`` counts them), and ``total_duration``, the seconds
        ``max_duration`` counts (see ``budget_time``)."""
        driver = self._driver
        if driver is not None:
            return {"model_count": driver.created, "total_duration": driver.spent()}
        created, spent = self._stored_counts()
        return {
            "model_count": created + self._counted[0],
            "total_duration": spent + self._counted[1],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Count ``state``'s trials and seconds (from ``state_dict``) as spent by the budget
        of the run to come, as NNI's engine takes up its counters; the trials themselves are
        not brought back (nor are they by NNI's). Only before the experiment runs here.

        Raises:
            ConfigError: the experiment runs already, or ``state`` is not what ``state_dict``
                gives (naming the key, the value and what was expected).
        """
        if self._driver is not None:
            raise ConfigError(
                f"experiment {self.id} runs already: its counters are its driver's; "
                "load_state_dict goes before submit, start or run"
            )
        if not isinstance(state, Mapping) or set(state) != set(STATE_KEYS):
            raise ConfigError(
                f"state: expected a mapping with the keys {list(STATE_KEYS)} (from state_dict), "
                f"got {state!r}"
            )
        count, duration = state["model_count"], state["total_duration"]
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
            raise ConfigError(f"state['model_count']: expected an integer >= 0, got {count!r}")
        if (
            isinstance(duration, bool)
            or not isinstance(duration, numbers.Real)
            or not 0 <= float(duration) < float("inf")
        ):
            raise ConfigError(
                f"state['total_duration']: expected a finite number of seconds >= 0, got "
                f"{duration!r}"
            )
        self._counted = (int(count), float(duration))

    def budget_available(self) -> bool:
        """Whether the experiment may still create trials (NNI's ``budget_available``).

        - Before ``run``/``start``/``submit``: True if its budget has room: fewer trials
          created than ``max_trials`` (on a resumed experiment, counting those it already
          has; a finite tuner such as a grid caps ``max_trials`` at its size) and less time
          spent than ``max_duration`` (see ``budget_time``).
        - While it runs (callable from any thread, a callback included): True until it
          created ``max_trials`` trials, spent ``max_duration``, exhausted its tuner (unless a
          strategy loop drives it), or was asked to stop or drain, or ended; trials already
          created may still be running then.
        - Once the run ended (DONE, STOPPED or ERROR): False. A stopped experiment with
          budget left goes on with ``hyperlab.resume``.
        """
        driver = self._driver
        if driver is not None:
            return driver.budget_available()
        created, spent = self._stored_counts()
        return budget_left(self._options, created + self._counted[0], spent + self._counted[1])

    def _stored_counts(self) -> tuple[int, float]:
        """Trials created and time spent, as stored (none for a new experiment)."""
        if self._record_missing():
            return 0, 0.0
        # numbered 0, 1, 2... and never deleted: a count, not a read of every trial
        created = self._store.count_trials(self.id, TrialFilter())
        if self._options.budget_time != "trials":
            return created, self._record.elapsed
        ended = self._store.get_trials(self.id, reports=False)
        return created, sum(max(0.0, t.duration or 0.0) for t in ended if t.status.is_finished())


_UNENDED = frozenset({TrialStatus.WAITING, TrialStatus.RUNNING})


def _listed(items: Any, field: str, expected: str) -> list[Any]:
    """``items`` as a list; ConfigError naming ``field`` unless it is an iterable (not text)."""
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise ConfigError(f"{field}: expected {expected}, got {items!r}")
    return list(items)


def _statuses(status: Any) -> frozenset[TrialStatus] | None:
    """``trials``' ``status`` as a set of statuses (None: all)."""
    if status is None:
        return None
    given = (
        [status]
        if isinstance(status, str | TrialStatus)
        else _listed(status, "status", "a trial status or a list of them")
    )
    found = set()
    for one in given:
        try:
            found.add(TrialStatus(one.upper() if isinstance(one, str) else one))
        except ValueError:
            names = ", ".join(s.value for s in TrialStatus)
            raise ConfigError(
                f"status: {one!r} is no trial status; expected one of {names}"
            ) from None
    return frozenset(found)
