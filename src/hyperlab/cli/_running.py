"""The commands that run experiments: ``run`` (in the foreground or detached), ``resume`` and
``stop``."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from typing import Any

from hyperlab._terminal import printable
from hyperlab.cli._common import (
    BadStore,
    dashboard_link,
    hyperlab_command,
    open_store,
    print_result,
    read_result,
)
from hyperlab.errors import ConfigError, StoreError, TrialError

STOP_WAIT = 60.0  # seconds `hyperlab stop` waits for the driver to confirm


def cmd_run(args: argparse.Namespace) -> int:
    from hyperlab.experiment import Experiment

    try:
        experiment = Experiment.from_config(args.config, storage=args.storage)
    except StoreError as exc:  # the store it names cannot be opened: bad input
        raise BadStore(str(exc)) from None
    check_server(args.port, args.host)
    if args.detach:
        return _detach(experiment, args)
    print(f"experiment {experiment.id}", file=sys.stderr)
    try:
        result = experiment.run(port=args.port, host=args.host)
    except TrialError as exc:
        return _failed(exc)
    except KeyboardInterrupt:  # Experiment.run said it stopped and how to resume it
        return 130
    return _summary(result)


def check_server(port: int | None, host: str) -> None:
    """ConfigError unless ``--port`` can be served on ``--host``: the port can be bound now.
    Checked before anything is written or a driver is started."""
    if port is None:
        return
    from hyperlab.server import check_serving

    try:
        check_serving(port, host)
    except ConfigError as exc:
        raise ConfigError(f"--{exc}") from None


def _detach(experiment: Any, args: argparse.Namespace) -> int:
    """Run the experiment with ``hyperlab resume`` in a background process, on the store this
    process uses; return once that driver holds the experiment, or say why it could not."""
    from hyperlab.experiment import DriverNotStarted, start_detached

    store = experiment.store
    if store.in_memory:
        raise ConfigError(
            "--detach: storage ':memory:' is private to this process, so a background driver "
            "cannot see the experiment; give a file or a postgresql:// URL"
        )
    experiment_id = experiment.save()
    options = [] if args.port is None else ["--port", str(args.port), "--host", args.host]
    try:
        driver = start_detached(store, experiment_id, options)
    except DriverNotStarted as exc:
        hyperlab = hyperlab_command(store)
        if exc.exit_code is None:
            then = f"It may still start it (see `{hyperlab} ls`)."
        else:
            then = (
                f"The experiment is recorded but was not run (INITIALIZED): fix the cause and "
                f"run it with `{hyperlab} resume {experiment_id}`, or delete it with "
                f"`{hyperlab} rm {experiment_id} --yes`"
            )
        print(f"hyperlab: error: {exc}\n{then}", file=sys.stderr)
        return 1
    print(experiment_id)
    record = driver.started
    if record.status.is_finished():  # it ran already (a short experiment)
        return _ended(read_result(store, experiment_id))
    pid, log_path = driver.process.pid, driver.log_path
    print(f"running in the background (pid {pid}); log: {log_path}", file=sys.stderr)
    if record.server_url is not None:
        link = dashboard_link(record, experiment.folder)
        print(f"dashboard and REST API: {link}", file=sys.stderr)
    return 0


def _ended(result: Any) -> int:
    """For an experiment that ended before ``--detach`` saw it run: its summary on stderr, and
    1 if it ended in ERROR or none of its trials succeeded."""
    from hyperlab.trial import ExperimentStatus

    print(printable(result.summary()), file=sys.stderr)
    if result.error:
        print(f"hyperlab: error: {printable(result.error.strip(), newlines=True)}", file=sys.stderr)
    failed = result.failed_trials and result.best_trial is None
    return 1 if result.status is ExperimentStatus.ERROR or failed else 0


def cmd_resume(args: argparse.Namespace) -> int:
    from hyperlab._steering import budget_changes
    from hyperlab.experiment import resume

    given = {"max_trials": args.max_trials, "max_duration": args.max_duration}
    given["concurrency"] = args.concurrency
    flags = {name: "--" + name.replace("_", "-") for name in given}
    changes = budget_changes(**given, names=flags)  # before anything starts
    store = open_store(args)
    experiment_id = store.resolve(args.id)
    record = store.get_experiment(experiment_id)
    record.check_not_running()  # before a server starts
    check_server(args.port, args.host)
    _say_changes(record, changes)
    try:
        result = resume(
            experiment_id,
            storage=args.storage,
            progress=False if args.quiet else None,
            port=args.port,
            host=args.host,
            **changes,
        )
    except TrialError as exc:
        return _failed(exc)
    except KeyboardInterrupt:  # Experiment.run said it stopped and how to resume it
        return 130
    return _summary(result)


def _say_changes(record: Any, changes: dict[str, Any]) -> None:
    """One line on stderr: the options ``--max-trials``... change, stored value -> new one."""
    if changes:
        said = ", ".join(
            f"{name} {getattr(record.options, name)} -> {value}" for name, value in changes.items()
        )
        print(f"experiment {record.id}: {said}", file=sys.stderr)


def _summary(result: Any) -> int:
    """Print how the experiment ended; the exit code (1 for ERROR)."""
    from hyperlab.trial import ExperimentStatus

    print_result(result)
    if result.error:
        print(f"hyperlab: error: {printable(result.error.strip(), newlines=True)}", file=sys.stderr)
    return 1 if result.status is ExperimentStatus.ERROR else 0


def _failed(exc: TrialError) -> int:
    """Print how an experiment whose trials failed ended, and the first error; exit 1."""
    if exc.result is not None:
        print_result(exc.result)
    print(f"hyperlab: error: {printable(str(exc), newlines=True)}", file=sys.stderr)
    return 1


def cmd_stop(args: argparse.Namespace) -> int:
    from hyperlab._steering import not_running

    store = open_store(args)
    experiment_id = store.resolve(args.id)
    record = store.get_experiment(experiment_id)
    if record.driver_alive() and not record.status.is_finished():
        return _request_stop(store, experiment_id)
    if record.driver_lost:
        return _mark_stopped(store, experiment_id)
    raise not_running(record, store)  # ended, or saved and never run


def _request_stop(store: Any, experiment_id: str) -> int:
    """Ask the live driver to stop and wait for it to confirm."""
    from hyperlab.store import StopExperiment

    store.send_control(experiment_id, StopExperiment())
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        record = store.get_experiment(experiment_id)
        if record.status.is_finished():
            print(f"experiment {experiment_id}: {record.status}")
            return 0
        if record.driver_lost:  # it died before it could stop
            return _mark_stopped(store, experiment_id)
        time.sleep(0.1)
    print(
        f"hyperlab: stop requested; experiment {experiment_id} has not confirmed yet",
        file=sys.stderr,
    )
    return 1


def _mark_stopped(store: Any, experiment_id: str) -> int:
    """Its driver is gone: take the lease (so no driver starts meanwhile), record STOPPED."""
    from hyperlab.trial import ExperimentStatus

    lease = store.acquire_lease(experiment_id, owner=uuid.uuid4().hex)
    try:
        store.update_experiment(
            experiment_id, status=ExperimentStatus.STOPPED, finished_at=time.time()
        )
        store.flush()
    finally:
        store.release_lease(lease, elapsed=lease.elapsed)
    print(
        f"experiment {experiment_id}: its driver was gone; marked STOPPED; continue it with "
        f"{hyperlab_command(store)} resume {experiment_id}"
    )
    return 0
