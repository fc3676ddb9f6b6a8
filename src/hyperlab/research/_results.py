"""``ResearchResults``: a stored research's saved variables as tables (BatchFlow's
``research.results``), read from the store at each access, so they work while the research
runs (from another process too) and after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from hyperlab.config import ResearchOptions
from hyperlab.errors import ConfigError
from hyperlab.research._aggregate import Aggregate, aggregate_runs
from hyperlab.research._profile import (
    PROFILE_COLUMNS,
    SUMMARY_COLUMNS,
    read_profile,
    summarize_profile,
)
from hyperlab.research._rows import Rows, Run, Selection, ended, runs_of, select_rows
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import TrialStatus

if TYPE_CHECKING:
    import pandas

__all__ = ["ResearchResults", "research_options"]


def research_options(record: ExperimentRecord) -> ResearchOptions:
    """The research options of ``record``.

    Raises:
        ConfigError: when the experiment is not a research.
    """
    if record.options.research is None:
        raise ConfigError(
            f"experiment {record.id} is not a research (it was not run by hyperlab.Research); "
            f"read it with hyperlab.load({record.id!r})"
        )
    return record.options.research


def _pandas(what: str) -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError(f'{what} needs pandas: pip install "hyperlab[research]"') from None
    return pandas


class _Snapshot(NamedTuple):
    """What one access reads: the record, its research options, the runs, the config keys
    and the variables (declared ones, then any others saved so far)."""

    record: ExperimentRecord
    options: ResearchOptions
    runs: list[Run]
    keys: list[str]
    variables: list[str]


class ResearchResults:
    """The variables a research saved: one value per config x repetition x iteration x
    variable.

    Every access reads the store again. Only the reports of each trial's last attempt count (a
    trial re-run after a crash repeats its iterations), so no iteration is counted twice. The
    tables need pandas (``pip install "hyperlab[research]"``); ``to_rows``, ``table`` and
    ``summary`` do not.

    Example::

        results = hyperlab.research.load_research("my-grid").results
        results.df                                   # long form
        results.to_df(name="loss", config={"lr": 0.1}, iterations="last")
        results.to_df(pivot=True)                    # one column per variable
        results.aggregate("loss")                    # mean, std, count per config
        print(results.table())                       # mean ± std (n) per config
    """

    def __init__(self, store: Store, experiment_id: str) -> None:
        """Read the research ``experiment_id`` of ``store``.

        Raises:
            ExperimentNotFound: no such experiment in the store.
            ConfigError: the experiment is not a research.
        """
        self._store = store
        self.experiment_id = experiment_id
        research_options(store.get_experiment(experiment_id))

    # ---- reading -------------------------------------------------------------------------

    def _read(self) -> _Snapshot:
        record = self._store.get_experiment(self.experiment_id)
        options = research_options(record)
        trials = self._store.get_trials(self.experiment_id, reports=True)
        keys = list(options.config_keys)
        if not keys:  # not declared: the params' keys, in the order they come
            seen = dict.fromkeys(k for t in trials for k in t.params if k != "repetition")
            keys = list(seen)
        runs = runs_of(trials, keys)
        variables = dict.fromkeys(options.variables)
        for run in runs:
            for metrics in run.iterations.values():
                variables.update(dict.fromkeys(metrics))
        return _Snapshot(record, options, runs, keys, list(variables))

    @property
    def config_keys(self) -> list[str]:
        """The research's config keys: the columns of its configs, in order."""
        return self._read().keys

    @property
    def variables(self) -> list[str]:
        """The variables the research saves (declared ones, then any others saved so far)."""
        return self._read().variables

    # ---- long and pivoted rows -----------------------------------------------------------

    def to_rows(
        self,
        *,
        experiment_id: str | Sequence[str] | None = None,
        name: str | Sequence[str] | None = None,
        iterations: int | Sequence[int] | str | None = None,
        config: dict[str, Any] | None = None,
        alias: str | Sequence[str] | None = None,
        status: str | TrialStatus | Sequence[str | TrialStatus] | None = None,
        pivot: bool = False,
        include_config: bool = True,
    ) -> Rows:
        """The rows of ``to_df`` as plain dicts, with their columns: no pandas needed.

        Takes the same arguments as ``to_df``.
        """
        now = self._read()
        selection = Selection.build(
            keys=now.keys,
            variables=now.variables,
            experiment_id=experiment_id,
            name=name,
            iterations=iterations,
            config=config,
            alias=alias,
            status=status,
        )
        return select_rows(
            now.runs,
            selection,
            keys=now.keys,
            variables=now.variables,
            pivot=pivot,
            include_config=include_config,
        )

    def to_df(
        self,
        *,
        experiment_id: str | Sequence[str] | None = None,
        name: str | Sequence[str] | None = None,
        iterations: int | Sequence[int] | str | None = None,
        config: dict[str, Any] | None = None,
        alias: str | Sequence[str] | None = None,
        status: str | TrialStatus | Sequence[str | TrialStatus] | None = None,
        pivot: bool = False,
        include_config: bool = True,
    ) -> pandas.DataFrame:
        """The saved values, filtered, as a DataFrame.

        Long form (the default): one row per config x repetition x iteration x variable, with
        the columns ``experiment_id`` (the trial's id), ``trial`` (its number),
        ``repetition``, ``iteration``, ``name``, ``value``, one column per config key (named
        ``config.<key>`` for a key such as ``name`` or ``status``), ``alias`` (the config as
        one string: ``"lr_0.1-model_SGD"``) and ``status`` (the trial's).

        Each filter takes one value or a list of them; None lets everything through.

        Args:
            experiment_id: Trial ids (``"ab12cd34-5"``).
            name: Variables.
            iterations: Iteration numbers, or ``"last"``: for each trial and variable, the
                last iteration that saved it.
            config: Config values to match, by key: ``{"lr": 0.1}``; a list matches a config
                whose value is one of its items (or the list itself).
            alias: Configs as alias strings (``"lr_0.1-model_SGD"``).
            status: Trial statuses (``"SUCCEEDED"``, ``TrialStatus.FAILED``...).
            pivot: One row per config x repetition x iteration instead, ``name`` and
                ``value`` replaced by one column per variable (NaN where an iteration did
                not save it).
            include_config: Include the config keys' columns (``alias`` is always there).

        Raises:
            ConfigError: an unknown variable or config key, a bad iteration or status.
            ImportError: pandas is not installed.
        """
        pd = _pandas("ResearchResults.to_df()")
        rows = self.to_rows(
            experiment_id=experiment_id,
            name=name,
            iterations=iterations,
            config=config,
            alias=alias,
            status=status,
            pivot=pivot,
            include_config=include_config,
        )
        return pd.DataFrame(rows.rows, columns=rows.columns)

    @property
    def df(self) -> pandas.DataFrame:
        """Every saved value in long form: ``to_df()`` without filters."""
        return self.to_df()

    # ---- aggregates ----------------------------------------------------------------------

    def summary(
        self,
        name: str | Sequence[str] | None = None,
        *,
        iteration: int | str = "last",
        by: str | Sequence[str] | None = None,
    ) -> Aggregate:
        """The stats behind ``aggregate`` and ``table``, as plain records (no pandas)."""
        now = self._read()
        return aggregate_runs(
            now.runs, keys=now.keys, variables=now.variables, name=name, iteration=iteration, by=by
        )

    def aggregate(
        self,
        name: str | Sequence[str] | None = None,
        *,
        iteration: int | str = "last",
        by: str | Sequence[str] | None = None,
    ) -> pandas.DataFrame:
        """Mean, sample standard deviation (``ddof=1``; NaN for one repetition) and count of
        each variable over the repetitions of each config.

        One row per config (in the order of their first trial), with the ``by`` columns, then
        three flat columns per variable: ``<name>_mean``, ``<name>_std``, ``<name>_count``
        (flat names rather than a MultiIndex, so the frame writes to CSV and selects with
        plain strings).

        Args:
            name: The variables; default every variable whose values are all numbers.
            iteration: An iteration number, or ``"last"``: each trial's last value of each
                variable.
            by: The config keys to group by; default all of them.

        Raises:
            ConfigError: an unknown variable or key, a bad iteration, or a named variable
                with values other than numbers.
            ImportError: pandas is not installed.
        """
        pd = _pandas("ResearchResults.aggregate()")
        stats = self.summary(name, iteration=iteration, by=by)
        return pd.DataFrame(stats.rows(), columns=stats.columns())

    def table(
        self,
        name: str | Sequence[str] | None = None,
        *,
        iteration: int | str = "last",
        by: str | Sequence[str] | None = None,
        digits: int = 4,
    ) -> str:
        """``aggregate`` as an aligned text table, one line per config: the config values,
        then ``mean ± std (n)`` per variable. Needs no pandas.

        Example output::

            lr    model  loss                   acc
            0.1   SGD    0.4133 ± 0.1 (3)       0.75 ± 0.05 (3)
        """
        return self.summary(name, iteration=iteration, by=by).text(digits)

    # ---- profile -------------------------------------------------------------------------

    def profile_rows(self) -> list[dict[str, Any]]:
        """The rows of ``profile`` as plain dicts."""
        now = self._read()
        if not now.options.profile:
            return []
        folder = self._store.experiment_folder(now.record)
        return read_profile(folder, [run.trial for run in now.runs])

    @property
    def profile(self) -> pandas.DataFrame:
        """The time each unit took: one row per trial x iteration x unit, with the columns
        ``trial``, ``iteration``, ``unit``, ``time`` (seconds) and ``calls``; empty when the
        research was not profiled (``profile=True``).

        Raises:
            ImportError: pandas is not installed.
        """
        pd = _pandas("ResearchResults.profile")
        return pd.DataFrame(self.profile_rows(), columns=list(PROFILE_COLUMNS))

    def profile_summary(self) -> pandas.DataFrame:
        """Per unit, most time first: ``total_time`` (seconds), ``mean_time`` (seconds per
        call), ``calls`` and ``share`` (of the total time of all units, 0 to 1); empty when
        the research was not profiled.

        Raises:
            ImportError: pandas is not installed.
        """
        pd = _pandas("ResearchResults.profile_summary()")
        return pd.DataFrame(summarize_profile(self.profile_rows()), columns=list(SUMMARY_COLUMNS))

    def __repr__(self) -> str:
        now = self._read()
        values = sum(len(m) for run in now.runs for m in run.iterations.values())
        finished = sum(1 for run in now.runs if ended(run.trial))
        return (
            f"<ResearchResults {self.experiment_id}: {len(now.runs)} config x repetitions "
            f"({finished} finished), {values} values of {now.variables}, config keys {now.keys}>"
        )
