"""The dashboard: its page, its assets, and what it asks the server about itself.

The page is one HTML file and plain JavaScript modules shipped in the wheel
(``hyperlab/server/static/``): no CDN and no build step. Its charts use plotly.js, served from
the installed ``plotly`` package (``plotly/package_data/plotly.min.js``), whose Python code is
never imported. The page routes itself (``/#/experiments/<id>``), so the server serves the same
``index.html`` for ``/`` and for ``/experiments/<id>``.

Assets are cached for good (``immutable``), so their addresses carry a stamp that changes with
their content: ``index.html``'s ``{{assets}}``, and an import map (``{{importmap}}``) that
gives every module under ``static/`` the stamp, so that the modules' relative imports
(``./api.js``) load the current files too; ``{{preload}}`` preloads them all at once.
``{{version}}`` is hyperlab's version.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from hyperlab._version import __version__
from hyperlab.server._context import acted_on, error_responses
from hyperlab.server._security import Policy, authorise, headers_of

__all__ = ["STATIC", "router"]

STATIC = Path(__file__).with_name("static")
"""The page's files."""
_LONG_CACHE = "public, max-age=31536000, immutable"  # asset URLs carry the version

router = APIRouter()


def _stamp() -> str:
    """hyperlab's version and a digest of the assets' names, sizes and times: it changes
    whenever a file under ``static/`` does (an upgrade, or an edit of an editable install)."""
    digest = hashlib.sha256()
    for path in sorted(STATIC.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(STATIC)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return f"{__version__}-{digest.hexdigest()[:10]}"


def _modules() -> list[str]:
    """The addresses of the page's modules."""
    return [f"/static/{p.relative_to(STATIC).as_posix()}" for p in sorted(STATIC.rglob("*.js"))]


def _import_map(stamp: str) -> str:
    """The page's import map: each module's address with the assets' stamp."""
    imports = {url: f"{url}?v={stamp}" for url in _modules()}
    return json.dumps({"imports": imports}, indent=1).replace("</", "<\\/")


def _preloads(stamp: str) -> str:
    """``modulepreload`` links for every module: fetched at once, not import by import."""
    return "\n".join(f'<link rel="modulepreload" href="{url}?v={stamp}">' for url in _modules())


@router.get("/", include_in_schema=False)
def index() -> HTMLResponse:
    """The dashboard's page (it reads the experiment to show from its own address)."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    stamp = _stamp()
    for name, value in (
        ("{{importmap}}", _import_map(stamp)),
        ("{{preload}}", _preloads(stamp)),
        ("{{assets}}", stamp),
        ("{{version}}", __version__),
    ):
        html = html.replace(name, value)
    return HTMLResponse(html, headers={"Cache-Control": "no-cache"})


@router.get("/experiments/{experiment_id}", include_in_schema=False)
def experiment_page(experiment_id: str) -> RedirectResponse:
    """A readable link to one experiment's page: the page's own address for it."""
    return RedirectResponse(f"/#/experiments/{experiment_id}", status_code=307)


@functools.cache
def _plotly() -> tuple[bytes, bytes] | None:
    """plotly.js from the installed ``plotly`` package, and gzipped (read once: 4.8 MB that
    every first visit needs, sent in one piece rather than streamed from the file)."""
    spec = importlib.util.find_spec("plotly")
    folders = [] if spec is None else list(spec.submodule_search_locations or [])
    for folder in folders:
        path = Path(folder, "package_data", "plotly.min.js")
        if path.is_file():
            data = path.read_bytes()
            return data, gzip.compress(data, compresslevel=6, mtime=0)
    return None


@router.get("/static/vendor/plotly.min.js", include_in_schema=False)
def plotly_js(request: Request) -> Response:
    """plotly.js from the installed ``plotly`` package (gzipped when the browser takes it)."""
    found = _plotly()
    if found is not None:
        headers = {"Cache-Control": _LONG_CACHE, "Vary": "Accept-Encoding"}
        if "gzip" in request.headers.get("accept-encoding", ""):
            headers["Content-Encoding"] = "gzip"
            return Response(found[1], media_type="text/javascript", headers=headers)
        return Response(found[0], media_type="text/javascript", headers=headers)
    raise HTTPException(
        404,
        "plotly.js is missing: the dashboard's charts need the 'plotly' package, which "
        "hyperlab installs (pip install --force-reinstall hyperlab)",
    )


def _assets() -> dict[str, Path]:
    """The page's files by their address under ``/static/`` (listed on each request, so that
    an edit of an editable install shows)."""
    return {p.relative_to(STATIC).as_posix(): p for p in STATIC.rglob("*") if p.is_file()}


@router.get("/static/{name:path}", include_in_schema=False)
def asset(name: str) -> FileResponse:
    """One of the page's files: only a name among them is served, so that no address (``..``,
    a NUL byte, a name too long for the file system) reaches the file system."""
    path = _assets().get(name)
    if path is None:
        raise HTTPException(404, f"no dashboard file {name!r}")
    return FileResponse(path, headers={"Cache-Control": _LONG_CACHE})


class SessionOut(BaseModel):
    """What the page may do."""

    version: str
    can_write: bool = Field(description="Whether this browser's token allows writes.")
    server_experiment: str | None = Field(
        description="The one experiment this server was started for (``run --port``, "
        "``view``), the only one its token steers; null for a server of the whole store."
    )
    loopback: bool = Field(description="Whether the server listens on loopback only.")
    how: str = Field(description="How to get the token when ``can_write`` is false.")


@router.get(
    "/api/v1/session",
    response_model=SessionOut,
    tags=["dashboard"],
    summary="Whether this browser may steer the experiment (it holds the right token)",
    responses=error_responses(400, 422),
)
def session(
    request: Request,
    experiment_id: Annotated[
        str | None, Query(description="The experiment the page shows, if any.")
    ] = None,
) -> SessionOut:
    policy: Policy = request.app.state.policy
    experiment_id = acted_on(request)  # the one the query names (once), else the server's
    status, _ = authorise(policy, headers_of(request.scope), experiment_id)
    what = f"hyperlab show {experiment_id}" if experiment_id else "the command that started it"
    return SessionOut(
        version=__version__,
        can_write=status == 0,
        server_experiment=policy.experiment_id,
        loopback=policy.loopback,
        how=(
            "Open the link with ?token= that hyperlab printed when this server started "
            f"(`{what}` prints it again); it lets this browser steer the experiment."
        ),
    )
