"""A user's own NNI tuner or assessor (``class MyTuner(nni.tuner.Tuner)``) run by hyperlab.

NNI's YAML names such a class with ``className`` (``module.Class``), ``codeDirectory`` (the
folder that holds its module) and ``classArgs`` (its constructor's arguments); hyperlab's
config translation turns that into ``tuner: hyperlab.compat.nni.custom:CustomTuner`` with
``tuner_args: {class_name, code_directory, class_args}`` (``CustomAssessor`` likewise), and
``hyperlab.run(tuner=MyTuner, tuner_args={...})`` does the same for a class given directly.

The adapters call the user's class as NNI's dispatcher does:

- tuner: built with ``class_args``; ``update_search_space(space)`` (NNI's JSON) before its
  first other call (once the assessor, if any, was built too, as in NNI); then
  ``generate_multiple_parameters([id], st_callback=...)`` for each trial, whose default calls
  ``generate_parameters(id, st_callback=...)``, ``id`` being the trial's number (NNI's
  ``parameter_id``); ``nni.NoMoreTrialError`` (or an empty list) ends the search. When a trial
  ends: ``receive_trial_result(id, parameters, value, customized=False, trial_job_id=...)``
  if it succeeded, ``value`` as the trial reported it (a number, or a dict whose ``default``
  is the number), then ``trial_end(id, success)``. Imported results go to ``import_data``.
- assessor: ``assess_trial(trial_job_id, trial_history)`` after each intermediate result,
  the history being every intermediate result of the trial's run as reported; ``Bad`` (or
  False) stops the trial then, EARLY_STOPPED. ``trial_end(trial_job_id, success)`` when a
  trial that reported intermediate results ends.

A resumed experiment (or one given a new search space) builds a fresh instance of the class
and feeds it the history in NNI's calls: ``load_checkpoint()`` (as NNI's resumed dispatcher
starts), ``update_search_space``, then for each ended trial in number order
``receive_trial_result`` and ``trial_end``. Trial job ids are hyperlab's trial ids
(``<experiment>-<number>``).

In the driver's process, ``import nni`` in the user's module is this shim
(``hyperlab.compat.nni``: ``nni.tuner``, ``nni.assessor``, ``nni.utils``,
``nni.NoMoreTrialError``) unless a real NNI is installed, in which case the user's class
subclasses NNI's own and runs all the same.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from hyperlab.assessors.base import Assessor, Decision, Verdicts
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from hyperlab.tuners.base import Tuner

__all__ = [
    "CustomAssessor",
    "CustomTuner",
    "as_reported",
    "build",
    "is_nni_assessor",
    "is_nni_tuner",
    "load_class",
]

_SHIM_MODULES = (
    "tuner",
    "assessor",
    "utils",
    "recoverable",
    "trial",
    "runtime",
    "runtime.msg_dispatcher_base",
    "runtime.protocol",
    "runtime.tuner_command_channel",
)


def is_nni_tuner(value: object) -> bool:
    """Whether ``value`` (a class or an instance) is an NNI tuner: it has NNI's tuner methods
    and is no hyperlab ``Tuner``."""
    cls = value if isinstance(value, type) else type(value)
    proposes = hasattr(cls, "generate_parameters") or hasattr(cls, "generate_multiple_parameters")
    return not issubclass(cls, Tuner) and proposes and hasattr(cls, "receive_trial_result")


def is_nni_assessor(value: object) -> bool:
    """Whether ``value`` (a class or an instance) is an NNI assessor (``assess_trial``) and no
    hyperlab ``Assessor``."""
    cls = value if isinstance(value, type) else type(value)
    return not issubclass(cls, Assessor) and hasattr(cls, "assess_trial")


def _provide_nni() -> None:
    """Make ``import nni`` resolve to this shim in this process, unless some ``nni`` (the
    shim itself, or a real NNI) is importable already."""
    if "nni" in sys.modules or importlib.util.find_spec("nni") is not None:
        return
    shim = importlib.import_module(__package__ or "hyperlab.compat.nni")
    sys.modules["nni"] = shim
    for name in _SHIM_MODULES:
        sys.modules[f"nni.{name}"] = importlib.import_module(f"{shim.__name__}.{name}")


def load_class(field: str, class_name: str, code_directory: str | None) -> type:
    """The class NNI's ``className`` names (``module.Class``, or ``module:Class``), imported
    with ``code_directory`` on ``sys.path`` as NNI does.

    Raises:
        ConfigError: naming ``field``, for a folder that does not exist, a name without a
            module, or a module or class that cannot be imported.
    """
    if code_directory is not None:
        folder = Path(code_directory)
        if not folder.is_dir():
            raise ConfigError(
                f"{field}.code_directory: folder {str(folder)!r} does not exist (it holds the "
                f"module of {class_name!r})"
            )
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    module_name, _, attribute = class_name.replace(":", ".").rpartition(".")
    if not module_name:
        raise ConfigError(
            f"{field}.class_name: expected 'module.Class', such as 'my_tuner.MyTuner', got "
            f"{class_name!r}"
        )
    _provide_nni()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        where = f" from {code_directory!r}" if code_directory else ""
        raise ConfigError(
            f"{field}.class_name: cannot import module {module_name!r}{where}: {exc}"
        ) from exc
    found = getattr(module, attribute, None)
    if not isinstance(found, type):
        raise ConfigError(f"{field}.class_name: module {module_name!r} has no class {attribute!r}")
    return found


def build(field: str, cls: type, class_args: dict[str, Any] | None) -> Any:
    """An instance of ``cls`` built with ``class_args``; a ``ConfigError`` naming
    ``field.class_args`` when the class refuses them."""
    try:
        return cls(**(class_args or {}))
    except TypeError as exc:
        raise ConfigError(
            f"{field}.class_args: {cls.__name__} refused {class_args or {}!r}: {exc}"
        ) from exc


def as_reported(metrics: dict[str, Any]) -> Any:
    """A result as the trial reported it to NNI: the number when ``default`` is its only
    metric, else the dict."""
    if set(metrics) == {"default"}:
        return metrics["default"]
    return dict(metrics)


class CustomTuner(Tuner):
    """A user's NNI tuner class, called in NNI's order (see the module's docstring).

    Args:
        space: The search space, given to the class's ``update_search_space`` as NNI's JSON.
        mode: Which way values are better (the class learns it from its own
            ``optimize_mode`` argument, as in NNI).
        seed: Unused by the class (NNI gives tuners none).
        class_name: ``module.Class``.
        code_directory: The folder of its module (None: already importable).
        class_args: The class's constructor arguments.
    """

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str = Mode.MIN,
        seed: int | None = None,
        class_name: str,
        code_directory: str | None = None,
        class_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(space, mode=mode, seed=seed)
        cls = load_class("tuner", class_name, code_directory)
        if not is_nni_tuner(cls):
            raise ConfigError(
                f"tuner.class_name: {class_name!r} is no NNI tuner (a subclass of "
                "nni.tuner.Tuner with generate_parameters and receive_trial_result)"
            )
        self.algorithm = build("tuner", cls, class_args)
        self._proposed: dict[int, Any] = {}  # parameter id -> the parameters it proposed
        self._sent: dict[int, Any] = {}  # what the tuner gave through st_callback
        self._started = False

    def _start(self, *, resumed: bool) -> None:
        """Before the first call: ``load_checkpoint()`` when the history is fed first (a
        resumed experiment), then ``update_search_space``, as NNI's dispatcher starts (after
        every algorithm was built)."""
        if self._started:
            return
        self._started = True
        if resumed:
            self.algorithm.load_checkpoint()
        self.algorithm.update_search_space(self.space.to_nni())

    def suggest(self, number: int) -> dict[str, Any] | None:
        """``generate_multiple_parameters([number])``; None once the tuner has no more."""
        self._start(resumed=False)
        try:
            proposed = self.algorithm.generate_multiple_parameters(
                [number], st_callback=self._callback
            )
        except Exception as exc:
            if type(exc).__name__ == "NoMoreTrialError":
                return None
            raise
        params = proposed[0] if proposed else self._sent.pop(number, None)
        if params is None:
            return None
        if not isinstance(params, dict):
            raise TypeError(
                f"{type(self.algorithm).__name__}.generate_parameters({number}) returned "
                f"{params!r}; hyperlab's trials take a dict of parameters"
            )
        self._proposed[number] = copy.deepcopy(params)
        return params

    def _callback(self, parameter_id: int, params: Any) -> None:
        """NNI's ``st_callback``: parameters sent before ``generate_*`` returns."""
        self._sent[parameter_id] = params

    def observe(self, trial: Trial) -> None:
        """``import_data`` for an imported result; else ``receive_trial_result`` (when the
        trial succeeded) and ``trial_end``, as NNI's dispatcher calls them."""
        self._start(resumed=True)
        if trial.number < 0:  # an imported result
            self.algorithm.import_data(
                [{"parameter": trial.params, "value": as_reported(trial.metrics)}]
            )
            return
        params = self._proposed.pop(trial.number, trial.params)
        if trial.status is TrialStatus.SUCCEEDED and trial.metrics:
            customized = trial.source == "custom"
            if not customized or getattr(self.algorithm, "_accept_customized", False):
                self.algorithm.receive_trial_result(
                    trial.number,
                    params,
                    as_reported(trial.metrics),
                    customized=customized,
                    trial_job_id=trial.id,
                )
        self.algorithm.trial_end(trial.number, trial.status is TrialStatus.SUCCEEDED)

    def requeued(self, trial: Trial) -> None:
        """On resume: nothing but the start (``load_checkpoint``, ``update_search_space``)."""
        self._start(resumed=True)


class CustomAssessor(Assessor):
    """A user's NNI assessor class, called in NNI's order (see the module's docstring).

    Args:
        class_name: ``module.Class``.
        code_directory: The folder of its module (None: already importable).
        class_args: The class's constructor arguments.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``, which the class does not see.
    """

    def __init__(
        self,
        *,
        class_name: str,
        code_directory: str | None = None,
        class_args: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        cls = load_class("assessor", class_name, code_directory)
        if not is_nni_assessor(cls):
            raise ConfigError(
                f"assessor.class_name: {class_name!r} is no NNI assessor (a subclass of "
                "nni.assessor.Assessor with assess_trial)"
            )
        self.algorithm = build("assessor", cls, class_args)
        self.verdicts = Verdicts()
        self._history: dict[int, list[Any]] = {}  # trial number -> its run's results

    def on_start(self, trial: Trial, now: float) -> None:
        """A run of the trial starts: its history starts anew."""
        self.verdicts.started(trial.number)
        self._history.pop(trial.number, None)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        """``assess_trial(trial id, history)``: STOP for ``Bad``, CONTINUE for ``Good``."""
        known = self.verdicts.known(trial.number, report.attempt)
        if known is not None:
            return known
        history = self._history.setdefault(trial.number, [])
        history.append(as_reported(report.metrics))
        result = self.algorithm.assess_trial(trial.id, list(history))
        verdict = getattr(result, "value", result)  # NNI's AssessResult, or a bool
        if verdict is False:
            return self.verdicts.stop(trial.number, report.attempt)
        if verdict is not True:
            raise TypeError(
                f"{type(self.algorithm).__name__}.assess_trial returned {result!r}; expected "
                "AssessResult.Good or AssessResult.Bad"
            )
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        """``trial_end(trial id, success)`` for a trial that reported intermediate results
        and ended for good."""
        if trial.status is TrialStatus.PAUSED or not self.verdicts.ended(trial):
            return
        if self._history.pop(trial.number, None) is not None:
            self.algorithm.trial_end(trial.id, trial.status is TrialStatus.SUCCEEDED)
