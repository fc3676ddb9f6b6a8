"""What resuming a stored experiment with a config changes, as NNI's ``Experiment.resume`` sees
it: NNI compares the config given with the stored one and warns about each difference. Here
the fields NNI's manager lets change while an experiment runs change on resume too:
``max_trial_number``, ``max_experiment_duration`` and ``trial_concurrency`` (a field left unset
keeps the stored value). Every other field that differs (search space, trial command, tuner,
assessor, ``optimize_mode``...) is what the finished trials were made with: the stored value
is kept, with a warning naming the field, the value given and the value kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hyperlab.compat.nni.experiment.config import _NNI_FIELDS, ExperimentConfig, to_hyperlab
from hyperlab.config import ExperimentOptions
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord

__all__ = ["ResumeChanges", "resume_changes"]

CHANGEABLE = {
    "max_trial_number": "max_trials",
    "max_experiment_duration": "max_duration",
    "trial_concurrency": "concurrency",
}
"""The NNI fields a resume applies -> the ``hyperlab.resume`` keyword each becomes."""
_SET_BY_THE_DRIVER = {"suggested", "budget_signals"}  # recorded as trials ran: never given
_UNSET_KEEPS = {"name", "seed", "working_dir"}  # None given: the stored value stays, silently


@dataclass(frozen=True)
class ResumeChanges:
    """What a config changes in a stored experiment.

    Attributes:
        changes: ``hyperlab.resume``'s keyword arguments (``max_trials``, ``max_duration``,
            ``concurrency``) for the fields that change.
        applied: One line per change, NNI's field name: ``max_trial_number: 3 -> 4``.
        kept: One line per field that differs but cannot change, naming it, the value given
            and the stored value kept.
    """

    changes: dict[str, Any] = field(default_factory=dict)
    applied: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def resume_changes(config: ExperimentConfig, record: ExperimentRecord) -> ResumeChanges:
    """Compare ``config`` with the experiment as stored.

    Raises:
        ConfigError: ``config`` is invalid (naming the NNI field); nothing is written.
        UnsupportedFeature: it uses an NNI feature hyperlab lacks.
    """
    translated = to_hyperlab(config)
    given, stored = translated.options(), record.options
    result = ResumeChanges()
    for nni_name, name in CHANGEABLE.items():
        new, old = getattr(given, name), getattr(stored, name)
        if getattr(config, nni_name) is not None and new != old:
            result.changes[name] = new
            result.applied.append(f"{nni_name}: {old} -> {new}")
    for name, new, old in _fixed_fields(given, stored):
        nni_name = _NNI_FIELDS.get(name, name)
        result.kept.append(
            f"config.{nni_name}: {new!r} was given, the experiment has {old!r}; a resumed "
            f"experiment keeps its {nni_name} (its finished trials were made with it)"
        )
    space = SearchSpace.coerce(translated.search_space).to_nni()
    if space != record.space:
        diff = _space_diff(space, record.space)
        result.kept.append(
            f"config.search_space: differs from the experiment's ({diff}); a resumed "
            "experiment keeps its search space: change it once it runs, with "
            "update_search_space()"
        )
    trial = record.trial_command
    command, code_dir = trial if trial is not None else (record.objective_ref, None)
    if translated.trial.command != command:
        result.kept.append(
            f"config.trial_command: {translated.trial.command!r} was given, the experiment "
            f"runs {command!r}; a resumed experiment keeps its trial command"
        )
    elif code_dir is not None and Path(translated.trial.code_dir) != Path(code_dir):
        result.kept.append(
            f"config.trial_code_directory: {translated.trial.code_dir!r} was given, the "
            f"experiment runs in {code_dir!r}; a resumed experiment keeps its folder"
        )
    return result


def _fixed_fields(
    given: ExperimentOptions, stored: ExperimentOptions
) -> list[tuple[str, Any, Any]]:
    """(field, given, stored) for each option that differs and may not change on resume."""
    skipped = set(CHANGEABLE.values()) | _SET_BY_THE_DRIVER
    differ = []
    for name in ExperimentOptions.model_fields:
        new, old = getattr(given, name), getattr(stored, name)
        if name in skipped or new == old or (name in _UNSET_KEEPS and new is None):
            continue
        if name == "working_dir" and Path(new).resolve() == Path(old or ".").resolve():
            continue
        differ.append((name, new, old))
    return differ


def _space_diff(new: dict[str, Any], old: dict[str, Any], shown: int = 3) -> str:
    """The parameters that differ, each given vs stored (the first ``shown`` of them)."""
    names = sorted(name for name in {*new, *old} if new.get(name) != old.get(name))
    parts = [f"{name}: {new.get(name)!r} given, {old.get(name)!r} stored" for name in names]
    more = f"; and {len(names) - shown} more" if len(names) > shown else ""
    return "; ".join(parts[:shown]) + more
