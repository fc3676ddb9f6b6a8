"""The FastAPI app: its error handling, the experiment routes, and the routers of the other
topics: trials and incremental reads (``_trials``), plot data (``_plots``), the Pareto front
and hypervolume (``_pareto``), controls and steering (``_controls``), trials' logs (``_logs``),
the dashboard's page (``_pages``), NNI's routes (``_nni``); what routes share is
``_context``'s.

Every error answers JSON ``{"detail": ...}`` naming the field, the value and the rule: 404 for
an unknown experiment, trial or control, 409 for a control no driver will apply, 422 for a
value that does not parse or fit, 501 for a feature whose optional dependency is missing, 503
when the store cannot be read; never a bare 500 for a bad request.

The server only reads the store and appends control requests to it; the experiment's driver
picks them up, applies them and records the outcome (see DESIGN.md, "Control goes through the
store too").
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from hyperlab._version import __version__
from hyperlab.errors import ConfigError, ExperimentNotFound, StoreError, TrialNotFound
from hyperlab.server._context import (
    READ_ERRORS,
    ApiContext,
    ExperimentId,
    context,
    error_responses,
)
from hyperlab.server._controls import router as controls_router
from hyperlab.server._logs import router as logs_router
from hyperlab.server._models import ExperimentOut, ExperimentSummaryOut
from hyperlab.server._nni import router as nni_router
from hyperlab.server._pages import router as pages_router
from hyperlab.server._pareto import router as pareto_router
from hyperlab.server._plots import router as plots_router
from hyperlab.server._trials import experiment_summary
from hyperlab.server._trials import router as trials_router
from hyperlab.server.importance import ImportanceUnavailable
from hyperlab.store import Store

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
    app.include_router(trials_router, prefix=API_PREFIX)
    app.include_router(plots_router, prefix=API_PREFIX)
    app.include_router(pareto_router, prefix=API_PREFIX)
    app.include_router(controls_router, prefix=API_PREFIX)
    app.include_router(logs_router, prefix=API_PREFIX)
    app.include_router(pages_router)
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

    def unavailable(request: Request, exc: Exception) -> JSONResponse:
        return _error(request, 501, str(exc))

    def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        cause = exc.__cause__
        if isinstance(cause, UnicodeDecodeError):  # FastAPI's 400 for a body it cannot decode
            where = f"byte {cause.start}: {cause.reason}"
            return _error(request, 422, f"body: not valid JSON: not UTF-8 text at {where}")
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
        ImportanceUnavailable: unavailable,
        StarletteHTTPException: http_error,
        RequestValidationError: invalid_request,
        Exception: unexpected,
    }
    for kind, handler in handlers.items():
        app.add_exception_handler(kind, handler)


# ---- routes ---------------------------------------------------------------------------------


def _add_routes(app: FastAPI) -> None:
    @app.get(
        f"{API_PREFIX}/experiments",
        response_model=list[ExperimentSummaryOut],
        tags=["experiments"],
        summary="Every experiment, newest first, with trial counts",
        responses=error_responses(503),
    )
    def list_experiments(request: Request) -> list[ExperimentSummaryOut]:
        summaries = context(request).store.list_experiments()
        return [ExperimentSummaryOut.from_summary(s) for s in summaries]

    @app.get(
        f"{API_PREFIX}/experiments/{{experiment_id}}",
        response_model=ExperimentOut,
        tags=["experiments"],
        summary="One experiment: config, space, status, times, error, counts and best trial",
        responses=READ_ERRORS,
    )
    def get_experiment(request: Request, experiment_id: ExperimentId) -> ExperimentOut:
        ctx = context(request)
        record = ctx.store.get_experiment(experiment_id)
        cursor, n_trials, counts, best = experiment_summary(ctx, record)
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
            n_trials=n_trials,
            counts=counts,
            best=best,
            change_cursor=cursor,
            environment=record.environment,
        )
