"""``AssessorContract``: the assessor interface's promises, as tests to run over any assessor.

Subclass it in a test module and provide the ``assessor_name`` fixture: a registered name, a
``"module:Class"`` path or an ``Assessor`` subclass, whatever ``create_assessor`` takes (the
contract builds many fresh assessors), and ``assessor_args`` when the defaults do not fit the
contract's curves (resources 1 to ``RESOURCE = 9``):

```python
# tests/test_my_assessor.py
import pytest
from hyperlab.assessors import register_assessor
from hyperlab.testing import AssessorContract

register_assessor("my-assessor", "my_package.assessors:MyAssessor")

class TestMyAssessor(AssessorContract):
    @pytest.fixture
    def assessor_name(self):
        return "my-assessor"

    @pytest.fixture
    def assessor_args(self):
        return {"max_resource": 9}
```

Parametrize ``assessor_name`` to run the contract over several assessors in one class;
``assessor_args`` may depend on it.

**The scenario.** Every test drives the assessor the way the driver does, in simulated time,
with ``Simulation``: trials follow scripted learning curves (``FAMILY``: eight curves 0.1 apart
in loss at every resource, ``1 - loss`` reported in max mode, plus seeded noise far smaller than
the gaps), each reporting the metric ``"score"`` at resources 1 .. 9 (steps 0 .. 8), two at a
time. The middle curves run first in a seeded order, with a silent trial among them (it reports
nothing and succeeds), then the worst curve and last the best one. STOP ends a trial
EARLY_STOPPED and PAUSE ends it PAUSED; ``actions`` is asked after every event: a ``Resume``
runs the paused trial again at once, from the step where it paused (as from a checkpoint), a
``Stop`` ends it EARLY_STOPPED, a ``Branch`` starts a new trial on its parent's curve from the
parent's step (up to 18 trials in all: once they exist, ``on_no_more_trials`` comes before each
``actions``). A new trial starts only when ``admits_new_trial`` allows it. Every call and answer
is recorded. Each test runs in min and in max mode.

What every assessor must do, checked here:

- **Answers of the right kind**: ``on_report`` returns a ``Decision``; ``actions`` returns a
  list of ``Resume`` or ``Stop`` naming a trial that is paused now (once per pause) and
  ``Branch`` naming a trial that exists.
- **Decisions follow from the calls**: two fresh assessors with the same arguments and seed,
  fed the same calls, answer the same as the one that ran.
- **Replay**: at several quiet moments of a run, a fresh assessor fed the history a store would
  hold then, the way a resumed driver feeds it (``Scheduling.replay``: each trial's latest
  start, its reports, its end if it ended or paused, all in time order, without the earlier
  pauses and ``actions`` calls of a resumed trial), answers the rest of the calls as the
  original did. Mind that a trial resumed at the instant it was paused has its restart stamped
  with the time of the report that paused it, and a replay feeds that start first.
- **Silent trials**: a trial that reports nothing is never stopped or named by an action and
  does not upset the others.
- **A report without the judged metric** raises ``TrialError`` (and nothing else), as does a
  report with several metrics and no ``metric`` to say which, or without ``resource_attr``
  when that names one; the assessor goes on working afterwards.
- **Nothing after the end**: once ``on_end`` told it a trial finished, a late report of that
  trial is answered CONTINUE, and ``actions`` never names it.
- **Worse before better**: the worst curve does not reach the last resource (it is stopped, or
  left paused), gets no further than the best curve, and the best curve is never stopped. An
  assessor that runs some trials unjudged by design (Hyperband's last bracket) names them in
  the ``unjudged`` fixture.
- **resource_attr**: with ``resource_attr="epoch"`` and reports carrying ``epoch = step + 1``,
  the answers are those of the default resource.

The contract needs pytest. For detailed assertion messages, call
``pytest.register_assert_rewrite("hyperlab.testing")`` in a ``conftest.py`` before the
contract is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hyperlab.assessors.base import Assessor, Decision, create_assessor
from hyperlab.errors import TrialError
from hyperlab.testing._assessor_support import (
    BEST,
    FAMILY,
    METRIC,
    RESOURCE,
    SPACE,
    START,
    WORST,
    Call,
    Curve,
    Plan,
    Simulation,
    TrialRun,
    feed,
    first_mismatch,
    replay,
    standard_plans,
    value_of,
)
from hyperlab.trial import Mode, Report, TrialStatus

__all__ = [
    "BEST",
    "FAMILY",
    "METRIC",
    "RESOURCE",
    "SPACE",
    "WORST",
    "AssessorContract",
    "AssessorFactory",
    "Call",
    "Curve",
    "Plan",
    "Simulation",
    "TrialRun",
    "feed",
    "replay",
    "standard_plans",
    "value_of",
]

AssessorFactory = Callable[..., Assessor]
"""``make(mode, *, seed=0, metric="score", **args)``: a fresh assessor under test, with extra
``assessor_args``."""

_CUTS = 5
"""How many moments of a run the replay test resumes from."""


class AssessorContract:
    """Tests every assessor must pass; subclass it and provide the ``assessor_name`` fixture.

    The contract (the module docstring has the details): answers of the right kind; the same
    calls give the same answers; a fresh assessor replaying a stored history answers the rest
    of a run as the original; silent trials are left alone; a report without the judged metric
    raises ``TrialError``; nothing is decided for a trial after its end; the worst curve gets
    no further than the best, which is never stopped; ``resource_attr`` counts the resource.

    Example:
        >>> class TestMyAssessor(AssessorContract):
        ...     @pytest.fixture
        ...     def assessor_name(self):
        ...         return "my-assessor"
    """

    # ---- fixtures ------------------------------------------------------------------------

    @pytest.fixture
    def assessor_name(self) -> str | type[Assessor]:
        """The assessor under test: a registered name, a ``"module:Class"`` path or a class.

        Raises:
            NotImplementedError: always; override this fixture.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define the `assessor_name` fixture: subclass "
            "AssessorContract and define `@pytest.fixture def assessor_name(self)` returning "
            "a registered assessor name, a 'module:Class' path or an Assessor subclass"
        )

    @pytest.fixture
    def assessor_args(self) -> dict[str, Any]:
        """Keyword arguments of the assessor's constructor (``assessor_args``)."""
        return {}

    @pytest.fixture
    def make_assessor(
        self, assessor_name: str | type[Assessor], assessor_args: dict[str, Any]
    ) -> AssessorFactory:
        """Builds a fresh assessor under test with ``create_assessor``."""

        def make(
            mode: Mode, *, seed: int = 0, metric: str | None = METRIC, **extra: Any
        ) -> Assessor:
            return create_assessor(
                assessor_name,
                mode=mode,
                metric=metric,
                seed=seed,
                space=SPACE,
                args={**assessor_args, **extra},
            )

        return make

    @pytest.fixture(params=[Mode.MIN, Mode.MAX], ids=["min", "max"])
    def mode(self, request: pytest.FixtureRequest) -> Mode:
        """Each optimisation mode."""
        mode: Mode = request.param
        return mode

    @pytest.fixture
    def label(self, assessor_name: str | type[Assessor], assessor_args: dict[str, Any]) -> str:
        """How failure messages name the assessor under test."""
        name = assessor_name if isinstance(assessor_name, str) else assessor_name.__qualname__
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in assessor_args.items())})"

    @pytest.fixture
    def unjudged(self) -> frozenset[int]:
        """Numbers of the scenario's trials that the assessor runs to the end without judging
        them, by design (Hyperband's last bracket, which hedges against stopping early): the
        judging test leaves them out. None by default."""
        return frozenset()

    @pytest.fixture
    def run(self, make_assessor: AssessorFactory, mode: Mode) -> Simulation:
        """The contract's scenario, run once in ``mode`` with seed 0."""
        return Simulation(make_assessor(mode), standard_plans(0), mode=mode).run()

    # ---- answers -------------------------------------------------------------------------

    def test_answers_are_decisions_and_actions_name_paused_trials_or_known_parents(
        self, run: Simulation, label: str
    ) -> None:
        assert not run.violations, f"{label}: " + "; ".join(run.violations)

    def test_the_same_calls_give_the_same_answers(
        self, run: Simulation, make_assessor: AssessorFactory, mode: Mode, label: str
    ) -> None:
        for attempt in range(2):
            answers = feed(make_assessor(mode), run.calls)
            mismatch = first_mismatch(run.calls, run.answers, answers)
            assert not mismatch, (
                f"{label}: fresh assessor #{attempt + 1} with the same seed, fed the same "
                f"calls, answered differently: {mismatch}"
            )

    def test_a_fresh_assessor_replaying_the_history_answers_the_rest_alike(
        self, run: Simulation, make_assessor: AssessorFactory, mode: Mode, label: str
    ) -> None:
        cuts = [cut for cut in run.cuts if 0 < cut[0] < len(run.calls)]
        assert cuts, f"{label}: the run had no quiet moment to resume from"
        chosen = {cuts[round(i * (len(cuts) - 1) / (_CUTS - 1))][0] for i in range(_CUTS)}
        for index, history in cuts:
            if index not in chosen:
                continue
            fresh = make_assessor(mode)
            replay(fresh, history)
            rest = run.calls[index:]
            mismatch = first_mismatch(rest, run.answers[index:], feed(fresh, rest))
            assert not mismatch, (
                f"{label}: a fresh assessor that replayed the history of "
                f"{len(history)} trials at t={run.calls[index].now - START:.3f} then "
                f"answered differently from the original: {mismatch}"
            )

    # ---- trials without what is judged ---------------------------------------------------

    def test_a_silent_trial_is_never_stopped_or_named(self, run: Simulation, label: str) -> None:
        silent = [r for r in run.runs.values() if r.plan.silent]
        assert silent
        for trial in silent:
            assert trial.status is TrialStatus.SUCCEEDED, (
                f"{label}: silent trial {trial.number} ended {trial.status.value}"
            )
            assert trial.resumes == 0
        assert not run.violations, f"{label}: " + "; ".join(run.violations)

    def test_a_report_without_the_judged_metric_raises_trial_error(
        self, run: Simulation, make_assessor: AssessorFactory, mode: Mode, label: str
    ) -> None:
        assessor = run.assessor
        lacking = {"other": 0.5}
        for step in (0, 4):
            self._expect_trial_error(run, assessor, lacking, step, label, "lacks the metric")
        ambiguous = make_assessor(mode, metric=None)
        feed(ambiguous, run.calls)
        two = {"a": 0.5, "b": 0.25}
        self._expect_trial_error(run, ambiguous, two, 0, label, "has two metrics, no `metric`")
        with_resource = make_assessor(mode, resource_attr="epoch")
        metrics = {METRIC: value_of(1.0, mode)}
        self._expect_trial_error(
            run, with_resource, metrics, 0, label, "lacks resource_attr='epoch'"
        )
        # and the assessor goes on: a new trial's reports are answered as usual
        trial = TrialRun(len(run.runs) + 200, Plan(BEST), 1.0, status=TrialStatus.RUNNING)
        assessor.on_start(run.record(trial), run.now)
        for step in range(RESOURCE):
            report = run.report_of(trial, step, run.now)
            answer = assessor.on_report(run.record(trial), report, run.now)
            assert isinstance(answer, Decision), (
                f"{label}: after reports that raised TrialError, a report was answered "
                f"{answer!r}; expected a Decision"
            )
            if answer is not Decision.CONTINUE:
                break

    def _expect_trial_error(
        self,
        run: Simulation,
        assessor: Assessor,
        metrics: dict[str, Any],
        step: int,
        label: str,
        why: str,
    ) -> None:
        number = len(run.runs) + 100 + step
        trial = TrialRun(number, Plan(BEST), 1.0, status=TrialStatus.RUNNING, started_at=run.now)
        record = run.record(trial)
        assessor.on_start(record, run.now)
        report = Report(step, metrics, run.now, 1)
        try:
            answer = assessor.on_report(record, report, run.now)
        except TrialError:
            pass
        except Exception as exc:
            pytest.fail(
                f"{label}: a report that {why} ({metrics}) raised {type(exc).__name__}: {exc}; "
                "expected TrialError"
            )
        else:
            pytest.fail(
                f"{label}: a report that {why} ({metrics}) was answered {answer!r}; expected "
                "TrialError"
            )
        trial.status, trial.finished_at = TrialStatus.FAILED, run.now
        assessor.on_end(run.record(trial), run.now)

    # ---- after the end -------------------------------------------------------------------

    def test_nothing_is_decided_for_a_trial_after_its_end(
        self, run: Simulation, mode: Mode, label: str
    ) -> None:
        assessor = run.assessor
        ended = [r for r in run.runs.values() if r.status.is_finished()]
        assert ended
        for trial in ended:
            late = run.report_of(trial, min(trial.step, RESOURCE - 1), run.now + 1.0)
            record = run.record(trial)
            answer = assessor.on_report(record, late, run.now + 1.0)
            assert answer is Decision.CONTINUE, (
                f"{label}: a late report of trial {trial.number}, which ended "
                f"{trial.status.value}, was answered {answer!r}; expected CONTINUE"
            )
        named = assessor.actions(run.now + 1.0)
        finished = {r.number for r in ended}
        wrong = [a for a in named if getattr(a, "number", None) in finished]
        assert not wrong, f"{label}: actions() named ended trials after the run: {wrong}"

    # ---- judging -------------------------------------------------------------------------

    def test_the_worst_curve_goes_no_further_than_the_best_which_is_never_stopped(
        self, run: Simulation, label: str, unjudged: frozenset[int]
    ) -> None:
        runs = [r for r in run.runs.values() if not r.plan.silent]
        worst = [r for r in runs if r.plan.curve == WORST and r.number not in unjudged]
        best = [r for r in runs if r.plan.curve == BEST]
        assert best, f"{label}: the scenario's best curve did not run"
        for trial in best:
            assert not trial.stopped, (
                f"{label}: the best curve (trial {trial.number}) was stopped at resource "
                f"{trial.reached}"
            )
        furthest_best = max(t.reached for t in best)
        for trial in worst:
            assert trial.reached < RESOURCE, (
                f"{label}: the worst curve (trial {trial.number}) ran to the last resource "
                f"({RESOURCE}); it should have been stopped or left paused"
            )
            assert trial.reached <= furthest_best, (
                f"{label}: the worst curve (trial {trial.number}) got to resource "
                f"{trial.reached}, further than the best one ({furthest_best})"
            )

    def test_resource_attr_counts_the_resource(
        self, run: Simulation, make_assessor: AssessorFactory, mode: Mode, label: str
    ) -> None:
        assessor = make_assessor(mode, resource_attr="epoch")
        other = Simulation(
            assessor,
            standard_plans(0),
            mode=mode,
            extra=lambda number, step: {"epoch": step + 1},
        ).run()
        calls = run.calls[: len(other.calls)]
        mismatch = first_mismatch(calls, run.answers[: len(calls)], other.answers[: len(calls)])
        assert not mismatch and len(other.calls) == len(run.calls), (
            f"{label}: with resource_attr='epoch' (epoch = step + 1) the answers differ from "
            f"those with the default resource (step + 1): {mismatch or 'runs of other lengths'}"
        )
