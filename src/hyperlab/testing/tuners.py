"""``TunerContract``: the tuner interface's promises, as tests to run over any tuner.

Subclass it in a test module and provide the ``tuner_name`` fixture: a registered name, a
``"module:Class"`` path or a ``Tuner`` subclass, whatever ``create_tuner`` takes except an
instance (the contract builds many fresh tuners):

```python
# tests/test_my_tuner.py
import pytest
from hyperlab.testing import TunerContract
from hyperlab.tuners import register_tuner

register_tuner("my-tuner", "my_package.tuners:MyTuner")

class TestMyTuner(TunerContract):
    @pytest.fixture
    def tuner_name(self):
        return "my-tuner"

    @pytest.fixture
    def tuner_args(self):
        return {"n_startup_trials": 4}  # so that the model is used within `n_trials`
```

The tests take three fixtures a subclass may override: ``tuner_name`` (required; the default
raises, saying so), ``tuner_args`` (the tuner's keyword arguments, default ``{}``) and
``n_trials`` (trials per run, default 16: choose ``tuner_args`` so that a learning tuner leaves
its start-up phase well within them, and keep a slow tuner's runs short). Parametrize
``tuner_name`` to run the contract over several tuners in one class; ``tuner_args`` and
``n_trials`` may depend on it.

Each test runs on each of the contract's spaces (``CONTRACT_SPACES``), each with a mode, min
or max: ``every_type`` (every parameter type, choices of mixed constants, a nested choice),
``numeric`` (every numeric type, no choice), ``finite`` (12 points of randint and q-types, fewer
than the trials of a run, so a run uses the space up) and ``nested`` (a finite space whose
nested choices are two levels deep, with constants and option-less names). A tuner may refuse
a space it cannot handle, but only at construction, with a ``ConfigError`` (``SearchSpaceError``
is one) whose message names the parameter; the tests on that space are then skipped, saying
why. It must accept at least one of them.

Trials are fed to ``observe`` as the driver feeds them: frozen ``Trial`` records whose value
is a finite float when the status is ``SUCCEEDED`` and None otherwise (NaN, infinities and
missing metrics end a trial ``FAILED``, so they never reach a tuner); ``FAILED``,
``EARLY_STOPPED``, ``USER_CANCELED`` and ``SYS_CANCELED`` trials come with an error message,
stopped ones with their last metrics. What every tuner must do, checked here:

- **Seeded determinism**: two tuners with the same seed, asked for the same trial numbers and
  shown the same trials, propose the same parameters.
- **Replay**: a fresh tuner fed the finished history in trial-number order (as a resumed
  driver feeds it, with parameters read back from JSON) proposes what the original proposes
  next, whether the original saw the trials in order or, running them concurrently, out of
  order; checked every four trials and at the end of a run.
- **Proposals lie in the space**: a proposal is a JSON-serialisable dict whose keys are the
  space's parameter names, and a nested option's value is ``{"_name": ..., <sub>: ...}`` with
  exactly that option's sub-parameters (constants with their value); randint gives an int in
  ``low .. high - 1``; the other types give floats: inside ``[low, high]`` for the bounded
  ranges, multiples of ``q`` for the q-types (or a clipped bound), positive for lognormal,
  ``>= 0`` for qlognormal; a choice gives one of its options, of the option's own type
  (``1`` is not ``True`` or ``1.0``). ``SearchSpace.encode`` accepts it. See
  ``assert_in_space``.
- **Failed and stopped trials**: failed, early-stopped, user- and system-cancelled trials
  interleaved with successes, a run with no success yet, ties and huge finite values do not
  make ``suggest`` raise or leave the space.
- **Budget**: ``budget()`` is None or an int >= 0. A finite budget ``b`` means ``suggest(n)``
  gives parameters for every ``n < b`` and None from ``b`` on; with None, ``suggest`` never
  returns None, even with many trials proposed and none observed.
- **Concurrency**: trials proposed together may finish in any order (suggest 0..3, observe 2,
  0, 3, 1, ...), and the tuner keeps proposing valid parameters.
- **Refusal at construction**: a space the tuner cannot handle raises ``ConfigError`` naming
  the parameter from the constructor, never later from ``suggest``.
- **Several objectives and constraints** (``Tuner.multi_objective``, ``Tuner.constraints``): a
  tuner that does not declare one is refused by ``create_tuner`` (``ConfigError``) for two
  objectives, or for constraints. A tuner that declares them runs in the scenarios of
  ``OBJECTIVES`` it can take, on every contract space: two objectives (min, max), three of
  mixed modes with constraints some trials violate, two whose trials all violate one, one
  objective with constraints (some violated, or all). Trials carry ``values`` (every objective,
  with several) and ``constraints`` (two values, ``<= 0`` when met) when they succeed or were
  stopped early (their last report's), nothing when they failed or were cancelled; failures,
  stops and cancellations come between successes. Its proposals lie in the space, the same
  seed and history give the same proposals, and a fresh tuner fed the history in number order
  proposes what the original proposes next (after trials finishing in order and out of
  order), as a resumed experiment's tuner must.

Replay after concurrent trials is the demanding one: a tuner's state must follow from its seed
and the set of trials observed, not from the order in which they finished (a population that
drops "the member at position k" depends on it) nor from what it had observed when it made a
proposal (a resumed tuner knows only the history).

For a tuner's own tests, ``Harness`` drives a tuner on a space as these tests do, and
``assert_in_space`` checks one proposal.

The contract needs pytest. Its module is not a test module, so pytest does not rewrite its
``assert`` statements unless told to: for detailed failure messages call
``pytest.register_assert_rewrite("hyperlab.testing")`` in a ``conftest.py`` (or the test
module) before the contract is imported.
"""

from __future__ import annotations

from typing import Any

import pytest

from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.testing._tuner_multiobjective import (
    OBJECTIVES,
    MultiObjectiveContract,
    Objectives,
)
from hyperlab.testing._tuner_spaces import (
    CONTRACT_SPACES,
    ContractSpace,
    assert_in_space,
    refusal_names_a_parameter,
)
from hyperlab.testing._tuner_support import (
    NOT_SUCCEEDED,
    Harness,
    Run,
    TunerFactory,
    finished_trial,
    first_difference,
    mixed_statuses,
    tuner_label,
)
from hyperlab.trial import Mode, TrialStatus
from hyperlab.tuners.base import Tuner, create_tuner

__all__ = [
    "CONTRACT_SPACES",
    "OBJECTIVES",
    "ContractSpace",
    "Harness",
    "Objectives",
    "Run",
    "TunerContract",
    "TunerFactory",
    "assert_in_space",
    "finished_trial",
    "refusal_names_a_parameter",
]

_WALK_LIMIT = 2_000
"""A finite budget up to this size is walked to its end by the budget test."""


# ---------------------------------------------------------------- the contract


class TunerContract(MultiObjectiveContract):
    """Tests every tuner must pass; subclass it and provide the ``tuner_name`` fixture.

    The contract (the module docstring has the details):

    - the same seed, trial numbers and observations give the same proposals;
    - a fresh tuner fed the finished history in number order proposes what the original
      proposes next, after a sequential or a concurrent run;
    - every proposal lies in the space: the active names only (nested options as
      ``{"_name": ..., <sub>: ...}``), values of the parameter's type inside its bounds or
      options;
    - failed, early-stopped and cancelled trials (value None), a run with no success yet,
      ties and huge values neither raise nor lead out of the space;
    - a finite ``budget()`` ``b``: parameters for trials ``0 .. b - 1``, None from ``b`` on;
      no budget: never None;
    - trials finishing out of order (concurrency) are fine;
    - a space the tuner cannot handle is refused at construction with a ``ConfigError`` that
      names the parameter, never later; at least one of the contract's spaces is accepted;
    - several objectives or constraints are refused unless the tuner declares them
      (``multi_objective``, ``constraints``); when it does, the tests above that matter on a
      resume (in the space, same seed, replay) hold with two and three objectives of mixed
      modes, infeasible trials, and none feasible.

    Example:
        >>> class TestMyTuner(TunerContract):
        ...     @pytest.fixture
        ...     def tuner_name(self):
        ...         return "my-tuner"
    """

    # ---- fixtures ------------------------------------------------------------------------

    @pytest.fixture
    def tuner_name(self) -> str | type[Tuner]:
        """The tuner under test: a registered name, a ``"module:Class"`` path or a class.

        Raises:
            NotImplementedError: always; override this fixture.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define the `tuner_name` fixture: subclass "
            "TunerContract and define `@pytest.fixture def tuner_name(self)` returning a "
            "registered tuner name, a 'module:Class' path or a Tuner subclass"
        )

    @pytest.fixture
    def tuner_args(self) -> dict[str, Any]:
        """Keyword arguments of the tuner's constructor (``tuner_args``)."""
        return {}

    @pytest.fixture
    def n_trials(self) -> int:
        """Trials per run."""
        return 16

    @pytest.fixture
    def make_tuner(self, tuner_name: str | type[Tuner], tuner_args: dict[str, Any]) -> TunerFactory:
        """Builds a new tuner under test with ``create_tuner``."""

        def make(space: SearchSpace, *, mode: Mode | tuple[Mode, ...], seed: int) -> Tuner:
            return create_tuner(tuner_name, space, mode=mode, seed=seed, args=dict(tuner_args))

        return make

    @pytest.fixture(params=CONTRACT_SPACES, ids=[case.name for case in CONTRACT_SPACES])
    def contract_space(self, request: pytest.FixtureRequest) -> ContractSpace:
        """Each of the contract's spaces, with its mode."""
        case: ContractSpace = request.param
        return case

    @pytest.fixture
    def harness(
        self,
        make_tuner: TunerFactory,
        contract_space: ContractSpace,
        n_trials: int,
        tuner_name: str | type[Tuner],
    ) -> Harness:
        """Builds and drives the tuner under test on one contract space."""
        return Harness(make_tuner, contract_space, n_trials, tuner_label(tuner_name))

    # ---- determinism and replay ----------------------------------------------------------

    def test_same_seed_gives_the_same_proposals(self, harness: Harness) -> None:
        a = list(harness.drive(harness.new(seed=11)).proposals.values())
        b = list(harness.drive(harness.new(seed=11)).proposals.values())
        assert a == b, (
            f"{harness.label} on {harness.case.name!r}: two tuners with seed 11 shown the same "
            f"trials proposed differently, {first_difference(a, b)}"
        )

    def test_replay_in_number_order_proposes_the_same_next(self, harness: Harness) -> None:
        mismatches = harness.replay_mismatches(seed=3, batch=1, statuses=mixed_statuses)
        assert not mismatches, (
            f"{harness.label} on {harness.case.name!r}: replay differs at " + "; ".join(mismatches)
        )

    def test_replay_after_concurrent_trials_proposes_the_same_next(self, harness: Harness) -> None:
        mismatches = harness.replay_mismatches(seed=5, batch=4, statuses=mixed_statuses)
        assert not mismatches, (
            f"{harness.label} on {harness.case.name!r}: replay after trials finishing out of "
            "order differs at " + "; ".join(mismatches)
        )

    # ---- the space -----------------------------------------------------------------------

    def test_proposals_lie_in_the_space(self, harness: Harness) -> None:
        tuner = harness.new(seed=1)
        run = harness.drive(tuner)  # every proposal is checked with assert_in_space
        assert run.proposals, f"{harness.label} proposed nothing on {harness.case.name!r}"
        harness.suggest(tuner, len(run.proposals))

    def test_a_space_it_cannot_handle_is_refused_at_construction(
        self, make_tuner: TunerFactory, tuner_name: str | type[Tuner]
    ) -> None:
        label, accepted, refused = tuner_label(tuner_name), [], []
        for case in CONTRACT_SPACES:
            try:
                tuner = make_tuner(case.space, mode=case.mode, seed=0)
            except ConfigError as exc:
                assert refusal_names_a_parameter(case.space, str(exc)), (
                    f"{label} refused the {case.name!r} space with a ConfigError that names "
                    f"none of its parameters: {exc}"
                )
                refused.append(case.name)
            else:
                assert isinstance(tuner, Tuner)
                accepted.append(case.name)
        assert accepted, (
            f"{label} refuses every space of the contract ({refused}): nothing was checked"
        )

    # ---- failures, stops, odd values -----------------------------------------------------

    def test_failed_and_stopped_trials_between_successes(self, harness: Harness) -> None:
        tuner = harness.new(seed=2)
        run = harness.drive(tuner, statuses=mixed_statuses)
        harness.suggest(tuner, len(run.proposals))

    def test_no_trial_succeeded_yet(self, harness: Harness) -> None:
        def statuses(number: int) -> TrialStatus:
            if number < harness.n_trials // 2:
                return NOT_SUCCEEDED[number % len(NOT_SUCCEEDED)]
            return TrialStatus.SUCCEEDED

        tuner = harness.new(seed=4)
        run = harness.drive(tuner, statuses=statuses)
        harness.suggest(tuner, len(run.proposals))

    def test_ties_and_huge_values(self, harness: Harness) -> None:
        def values(number: int, params: dict[str, Any]) -> float:
            if number < harness.n_trials // 2:
                return 1.0  # every trial ties
            return (-1.0) ** number * 3e38  # about float32's largest: a diverged loss

        tuner = harness.new(seed=6)
        run = harness.drive(tuner, values=values)
        harness.suggest(tuner, len(run.proposals))

    # ---- budget and concurrency ----------------------------------------------------------

    def test_a_finite_budget_is_used_up_exactly(self, harness: Harness) -> None:
        tuner = harness.new(seed=7)
        budget = tuner.budget()
        if budget is None:  # never runs out: not even with every proposal still running
            for number in range(harness.n_trials):
                assert harness.suggest(tuner, number) is not None
            return
        n = min(budget, _WALK_LIMIT)
        run = harness.drive(tuner, n)
        assert len(run.proposals) == n, (
            f"{harness.label} on {harness.case.name!r} stopped after {len(run.proposals)} "
            f"proposals; its budget() is {budget}"
        )
        if budget <= _WALK_LIMIT:
            for number in (budget, budget + 1):
                got = tuner.suggest(number)
                assert got is None, (
                    f"{harness.label} on {harness.case.name!r}: suggest({number}) returned "
                    f"{got!r} beyond budget()={budget}"
                )
        assert tuner.budget() == budget, (
            f"{harness.label}: budget() changed from {budget} to {tuner.budget()} during a run"
        )

    def test_trials_finishing_out_of_order(self, harness: Harness) -> None:
        tuner = harness.new(seed=8)
        run = harness.drive(tuner, batch=4, statuses=mixed_statuses)
        harness.suggest(tuner, len(run.proposals))
