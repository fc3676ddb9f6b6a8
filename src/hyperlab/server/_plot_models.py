"""The JSON shapes of the plot routes (``/api/v1/experiments/{id}/plots/...``).

Series come as columns (one list per quantity), the shape plotting libraries take. Where the
server thinned the data (sampled trials, decimated curves), the answer says so and by how much.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from hyperlab.trial import Mode, TrialStatus

__all__ = [
    "AxisOut",
    "BestPointOut",
    "BestSoFarOut",
    "CurveOut",
    "CurvesOut",
    "ImportanceOut",
    "ParamImportanceOut",
    "TrialColumnsOut",
]


class CurveOut(BaseModel):
    """One trial's intermediate curve (its current attempt's reports)."""

    number: int
    status: TrialStatus
    attempt: int
    value: float | None = Field(description="The trial's final objective value, if any.")
    stopped_at_step: int | None = Field(
        description="For an EARLY_STOPPED or PAUSED trial: the last step it reported, where the "
        "assessor stopped or paused it; else null."
    )
    n_points: int = Field(description="How many reports carry the metric as a number.")
    downsampled: bool = Field(
        description="Points were left out: the first, the last, and the lowest and highest "
        "point of each stretch of steps are kept."
    )
    steps: list[int]
    values: list[float]


class CurvesOut(BaseModel):
    """``GET .../plots/curves``: intermediate curves of chosen trials and of the best ones."""

    experiment_id: str
    metric: str | None = Field(description="The reported metric drawn (null: no reports yet).")
    mode: Mode
    max_points: int = Field(description="The most points of one curve.")
    curves: list[CurveOut]


class BestPointOut(BaseModel):
    """A point where the best value so far improved."""

    x: float = Field(description="The trial's number, or when it finished (epoch seconds).")
    value: float
    number: int


class BestSoFarOut(BaseModel):
    """``GET .../plots/best``: the best value so far of the succeeded trials."""

    experiment_id: str
    mode: Mode
    x: Literal["number", "time"]
    n_trials: int = Field(description="Succeeded trials with a value.")
    last_x: float | None = Field(
        description="The x of the last of them: the best value holds until there."
    )
    downsampled: bool = Field(description="Improvements were left out (evenly).")
    points: list[BestPointOut] = Field(description="Each improvement, in x order.")


class AxisOut(BaseModel):
    """One quantity of the plotted trials, with its values in trial order."""

    key: str = Field(description="value, duration, number, param.NAME or metric.NAME.")
    kind: Literal["number", "choice"]
    scale: Literal["linear", "log"] = Field(description="log for log-scaled parameters.")
    options: list[Any] | None = Field(description="A choice's options, in the space's order.")
    values: list[Any] = Field(
        description="One per trial (null when missing); a choice's values are its options."
    )


class TrialColumnsOut(BaseModel):
    """``GET .../plots/scatter`` and ``.../plots/parallel``: quantities of the filtered trials.

    Beyond ``max_points`` trials, an even sample of them (picked by a hash of the trial
    number: the same trials each time) is returned; ``sampled`` says so.
    """

    experiment_id: str
    total: int = Field(
        description="Trials that pass the filter (a trial without a plotted parameter or metric "
        "is left out of the points)."
    )
    sampled: bool
    max_points: int = Field(
        description="The most trials this answer holds: max_points as asked, or fewer for a "
        "search space of many parameters or a parallel plot of many axes (a request's work is "
        "bounded)."
    )
    numbers: list[int]
    statuses: list[TrialStatus]
    axes: list[AxisOut]


class ParamImportanceOut(BaseModel):
    """One parameter's share of the objective's explained variation."""

    name: str
    importance: float = Field(description="From 0 to 1; the parameters' importances sum to 1.")


class ImportanceOut(BaseModel):
    """``GET .../plots/importance``."""

    experiment_id: str
    target: str = Field(description="value (the objective) or metric.NAME.")
    method: Literal["random_forest"] = Field(
        description="Mean decrease in impurity of a random forest (scikit-learn)."
    )
    n_finished: int = Field(description="Finished trials: the result is cached by this count.")
    n_used: int = Field(description="Trials the forest was fitted on.")
    sampled: bool = Field(description="More trials had a value than the forest was fitted on.")
    params: list[ParamImportanceOut] = Field(description="Most important first.")
