"""The FastAPI app: hyperlab's own REST routes over the store and its error handling; NNI's
routes are ``_nni.py``'s, and what routes share is ``_context.py``'s.

The server only reads the store and appends control requests to it; the experiment's driver
picks them up, applies them and records the outcome (see DESIGN.md, "Control goes through the
store too").
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, Literal

from fastapi import Body, FastAPI, HTTPException, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from hyperlab import __version__
from hyperlab.errors import ConfigError, ExperimentNotFound, StoreError, TrialNotFound
from hyperlab.server._context import ApiContext, context
from hyperlab.server._models import (
    BestTrialOut,
    ControlOut,
    ControlsAccepted,
    ExperimentOut,
    ExperimentPatch,
    ExperimentSummaryOut,
    TrialDetailOut,
    TrialOut,
)
from hyperlab.server._nni import router as nni_router
from hyperlab.store import (
    ControlRequest,
    ExperimentRecord,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    StopExperiment,
    Store,
)
from hyperlab.trial import Mode, Trial, TrialStatus

__all__ = ["API_PREFIX", "build_app"]

API_PREFIX = "/api/v1"


def build_app(
    storage: str | os.PathLike[str] | Store | None, *, experiment_id: str | None
) -> FastAPI:
    """The app behind ``hyperlab.server.create_app`` (which documents it)."""
    if isinstance(storage, Store):
        ctx = ApiContext(storage, experiment_id=experiment_id, owns_store=False)
    else:
        ctx = ApiContext(Store.open(storage), experiment_id=experiment_id, owns_store=True)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        if ctx.owns_store:
            ctx.store.close()

    app = FastAPI(
        title="hyperlab",
        version=__version__,
        description=(
            "Experiments, trials and control requests of one hyperlab store. Controls are "
            "queued in the store and applied by the experiment's driver within ~100 ms. "
            "NNI-compatible routes live under /api/v1/nni/."
        ),
        lifespan=lifespan,
    )
    app.state.hyperlab = ctx
    _add_error_handlers(app)
    _add_routes(app)
    app.include_router(nni_router, prefix=f"{API_PREFIX}/nni", tags=["nni"])
    return app


# ---- errors ---------------------------------------------------------------------------------


def _error(request: Request, status: int, detail: str) -> JSONResponse:
    body = {"detail": detail}
    if request.url.path.startswith(f"{API_PREFIX}/nni/"):
        body["error"] = detail  # NNI's clients read `error`
    return JSONResponse(body, status_code=status)


def _describe_validation(exc: RequestValidationError) -> str:
    """One line per invalid input, naming the field, the rule and the value received."""
    lines = []
    for err in exc.errors():
        loc = [str(part) for part in err.get("loc", ())]
        if len(loc) > 1 and loc[0] in ("body", "query", "path", "header"):
            loc = loc[1:]
        field = ".".join(loc) or "request"
        message = str(err.get("msg", "invalid"))
        kind = err.get("type")
        if message.startswith("Value error, "):  # our validators: already names the field
            lines.append(message.removeprefix("Value error, "))
        elif kind == "json_invalid":
            reason = (err.get("ctx") or {}).get("error", "invalid JSON")
            where = loc[-1] if loc else "?"
            lines.append(f"body: not valid JSON at character {where}: {reason}")
        elif kind == "extra_forbidden":
            lines.append(f"{field}: unknown field, got {err.get('input')!r}")
        elif kind == "missing":
            lines.append(f"{field}: required")
        else:
            lines.append(f"{field}: {message[:1].lower()}{message[1:]}, got {err.get('input')!r}")
    return "; ".join(lines)


def _add_error_handlers(app: FastAPI) -> None:
    def not_found(request: Request, exc: Exception) -> JSONResponse:
        return _error(request, 404, str(exc))

    def bad_value(request: Request, exc: Exception) -> JSONResponse:
        return _error(request, 422, str(exc))

    def store_failed(request: Request, exc: Exception) -> JSONResponse:
        return _error(request, 503, f"the store cannot be read: {exc}")

    def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        response = _error(request, exc.status_code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return _error(request, 422, _describe_validation(exc))

    def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return _error(request, 500, f"internal error: {type(exc).__name__}: {exc}")

    handlers: dict[type[Exception], Callable[[Request, Exception], JSONResponse]] = {
        ExperimentNotFound: not_found,
        TrialNotFound: not_found,
        ConfigError: bad_value,
        StoreError: store_failed,
        StarletteHTTPException: http_error,
        RequestValidationError: invalid_request,
        Exception: unexpected,
    }
    for kind, handler in handlers.items():
        app.add_exception_handler(kind, handler)


# ---- routes ---------------------------------------------------------------------------------

ExperimentId = Annotated[str, Path(description="The experiment's id.")]
TrialNumber = Annotated[int, Path(ge=0, description="The trial's number (0, 1, 2...).")]


def _best(record: ExperimentRecord, trials: list[Trial]) -> BestTrialOut | None:
    best = record.options.mode.best(trials)
    if best is None or best.value is None:
        return None
    return BestTrialOut(number=best.number, value=best.value, params=best.params)


def _statuses(text: str) -> set[TrialStatus]:
    wanted = set()
    for part in text.split(","):
        name = part.strip().upper()
        if name not in TrialStatus.__members__:
            raise ConfigError(
                f"status: unknown trial status {part.strip()!r}; expected one or more of "
                f"{', '.join(TrialStatus.__members__)} (comma-separated)"
            )
        wanted.add(TrialStatus[name])
    return wanted


def _sorted(trials: list[Trial], sort: str, mode: Mode) -> list[Trial]:
    if sort == "-number":
        return trials[::-1]
    if sort == "duration":
        return sorted(trials, key=lambda t: (-(t.duration or 0.0), t.number))
    if sort == "metric":
        return mode.ranked(trials)
    return trials


def _add_routes(app: FastAPI) -> None:
    @app.get(
        f"{API_PREFIX}/experiments",
        response_model=list[ExperimentSummaryOut],
        tags=["experiments"],
        summary="Every experiment, newest first, with trial counts",
    )
    def list_experiments(request: Request) -> list[ExperimentSummaryOut]:
        summaries = context(request).store.list_experiments()
        return [ExperimentSummaryOut.from_summary(s) for s in summaries]

    @app.get(
        f"{API_PREFIX}/experiments/{{experiment_id}}",
        response_model=ExperimentOut,
        tags=["experiments"],
        summary="One experiment: config, space, status, times, error, counts and best trial",
    )
    def get_experiment(request: Request, experiment_id: ExperimentId) -> ExperimentOut:
        store = context(request).store
        record = store.get_experiment(experiment_id)
        trials = store.get_trials(experiment_id, reports=False)
        counts: dict[TrialStatus, int] = {}
        for trial in trials:
            counts[trial.status] = counts.get(trial.status, 0) + 1
        return ExperimentOut(
            id=record.id,
            name=record.name,
            status=record.status,
            options=record.options,
            space=record.space,
            seed=record.seed,
            created_at=record.created_at,
            started_at=record.started_at,
            finished_at=record.finished_at,
            error=record.error,
            driver_host=record.driver_host,
            driver_pid=record.driver_pid,
            heartbeat_at=record.heartbeat_at,
            driver_alive=record.driver_alive(),
            driver_lost=record.driver_lost,
            elapsed=record.elapsed,
            n_trials=len(trials),
            counts=counts,
            best=_best(record, trials),
        )

    @app.get(
        f"{API_PREFIX}/experiments/{{experiment_id}}/trials",
        response_model=list[TrialOut],
        tags=["trials"],
        summary="An experiment's trials, filtered, sorted and paged",
        description="The header `X-Total-Count` holds the number of trials before paging.",
    )
    def list_trials(
        request: Request,
        response: Response,
        experiment_id: ExperimentId,
        status: Annotated[
            str | None, Query(description="Only these statuses, comma-separated (FAILED,...).")
        ] = None,
        sort: Annotated[
            Literal["number", "-number", "metric", "duration"],
            Query(description="number, -number (newest first), metric (best first), duration."),
        ] = "number",
        limit: Annotated[int | None, Query(ge=1, description="At most this many.")] = None,
        offset: Annotated[int, Query(ge=0, description="Skip this many first.")] = 0,
        reports: Annotated[bool, Query(description="Attach intermediate reports.")] = False,
    ) -> list[TrialOut]:
        store = context(request).store
        wanted = None if status is None else _statuses(status)
        record = store.get_experiment(experiment_id)
        trials = store.get_trials(experiment_id, reports=reports)
        if wanted is not None:
            trials = [t for t in trials if t.status in wanted]
        trials = _sorted(trials, sort, record.options.mode)
        response.headers["X-Total-Count"] = str(len(trials))
        end = None if limit is None else offset + limit
        return [TrialOut.from_trial(t, reports=reports) for t in trials[offset:end]]

    @app.get(
        f"{API_PREFIX}/experiments/{{experiment_id}}/trials/{{number}}",
        response_model=TrialDetailOut,
        tags=["trials"],
        summary="One trial with its intermediate reports and status changes",
    )
    def get_trial(request: Request, experiment_id: ExperimentId, number: TrialNumber) -> Any:
        store = context(request).store
        trial = store.get_trial(experiment_id, number)
        return TrialDetailOut.from_records(trial, store.get_trial_events(experiment_id, number))

    @app.post(
        f"{API_PREFIX}/experiments/{{experiment_id}}/stop",
        response_model=ControlsAccepted,
        status_code=202,
        tags=["controls"],
        summary="Stop a running experiment (its running trials end USER_CANCELED)",
    )
    def stop_experiment(request: Request, experiment_id: ExperimentId) -> ControlsAccepted:
        ctx = context(request)
        return ctx.send(ctx.store.get_experiment(experiment_id), [StopExperiment()])

    @app.post(
        f"{API_PREFIX}/experiments/{{experiment_id}}/trials/{{number}}/kill",
        response_model=ControlsAccepted,
        status_code=202,
        tags=["controls"],
        summary="Kill a waiting or running trial (it ends USER_CANCELED)",
    )
    def kill_trial(
        request: Request, experiment_id: ExperimentId, number: TrialNumber
    ) -> ControlsAccepted:
        ctx = context(request)
        record = ctx.store.get_experiment(experiment_id)
        ctx.require_active_trial(record, number)
        return ctx.send(record, [KillTrial(number=number)])

    @app.patch(
        f"{API_PREFIX}/experiments/{{experiment_id}}",
        response_model=ControlsAccepted,
        status_code=202,
        tags=["controls"],
        summary="Change a running experiment's concurrency or budget",
        description="Each field given becomes one control request, applied in this order: "
        "concurrency, max_trials, max_duration.",
    )
    def patch_experiment(
        request: Request, experiment_id: ExperimentId, patch: Annotated[ExperimentPatch, Body()]
    ) -> ControlsAccepted:
        ctx = context(request)
        record = ctx.store.get_experiment(experiment_id)
        requests: list[ControlRequest] = []
        if patch.concurrency is not None:
            requests.append(SetConcurrency(value=patch.concurrency))
        if patch.max_trials is not None:
            requests.append(SetMaxTrials(value=patch.max_trials))
        if patch.max_duration is not None:
            requests.append(SetMaxDuration(value=patch.max_duration))
        if not requests:
            raise ConfigError(
                "body: give at least one of concurrency, max_trials, max_duration, "
                f"got {patch.model_dump()}"
            )
        return ctx.send(record, requests)

    @app.get(
        f"{API_PREFIX}/controls/{{control_id}}",
        response_model=ControlOut,
        tags=["controls"],
        summary="A control request and, once applied, its outcome",
        description="state is pending until the driver applies the request (within ~100 ms); "
        "a request sent just as the experiment ended stays pending.",
    )
    def get_control(
        request: Request, control_id: Annotated[int, Path(ge=1, description="The control id.")]
    ) -> ControlOut:
        try:
            control = context(request).store.get_control(control_id)
        except StoreError as exc:
            if str(exc).startswith("no control request"):
                raise HTTPException(404, str(exc)) from None
            raise
        return ControlOut.from_control(control)
