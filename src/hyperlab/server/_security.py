"""What every request passes before a route sees it: writes no other web page can forge.

A web page open in the user's browser may send requests to ``127.0.0.1``: a form or a
``text/plain`` POST goes cross-site without a preflight, and a DNS-rebinding page even reads the
answers under its own host name. ``Guard`` (an ASGI middleware) refuses, with a JSON error:

- a ``Host`` header that is not the server's (the address it is bound to, ``localhost``,
  ``127.0.0.1``, ``[::1]``) with 421, so a rebound host name reads and writes nothing;
- a POST whose body is not ``application/json`` (and a PUT or PATCH with such a body) with
  415: a page can only send JSON after a CORS preflight, and the server grants none (it sends
  no CORS headers at all), so PUT, PATCH and DELETE cannot come from another origin either;
- a write that says it comes from another site (``Origin`` naming another host, or
  ``Sec-Fetch-Site: cross-site``) with 403;
- a body over ``max_body`` bytes with 413;
- a request that names its experiment ambiguously (``experiment_id`` twice, empty, or other
  than the path's) with 400;
- a write without a token (401) or with a wrong one (403): on hyperlab's own routes always, on
  NNI's (whose client cannot send one) only when the server listens beyond loopback, where
  every request, reads included, needs a token; so does a request that came through a reverse
  proxy (it carries ``Forwarded``, ``X-Forwarded-For`` or ``X-Real-IP``), which may come from
  anywhere.

A token is good for one experiment, or for every experiment of a server:

- an experiment's own token (``<experiment folder>/token``; see ``_tokens``) for that
  experiment;
- the server's session token: for every experiment it serves when it serves the whole store
  (``hyperlab serve``), for its one experiment only when it was started for one
  (``Policy.experiment_id``: ``run --port``, ``view``, where it is that experiment's token).

The experiment a request acts on is read once, by ``experiment_of``: the token is checked
against it here, and the routes act on it (``hyperlab.server._context.acted_on``). A token
comes in the header ``X-Hyperlab-Token``, as ``Authorization: Bearer <token>``, or in the cookie
the dashboard link sets: a GET with ``?token=<session token>`` gets the cookie (HttpOnly,
SameSite=Strict) and is redirected to the same address without the token.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from hyperlab.store.tokens import same_token

__all__ = [
    "API_PREFIX",
    "NNI_PREFIX",
    "AmbiguousExperiment",
    "Guard",
    "Policy",
    "authorise",
    "experiment_of",
    "headers_of",
    "is_loopback",
]

API_PREFIX = "/api/v1"
NNI_PREFIX = f"{API_PREFIX}/nni"
MAX_BODY = 16 * 1024 * 1024
"""Bytes a request body may have (a large import of results, say)."""
TOKEN_HEADER = "x-hyperlab-token"
READS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
EXPERIMENT_PARAM = "experiment_id"
_ACTED_ON = "hyperlab.experiment"  # where experiment_of keeps its answer in a request's state

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is this machine's loopback only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Policy:
    """What ``Guard`` lets through.

    Attributes:
        host: The address the server listens on.
        port: Its port, or None when the app is not bound to one (tests, embedding): any port
            in a ``Host`` header is then accepted.
        session_token: The server's own token: good for every experiment, or for
            ``experiment_id`` alone when that is set; None for none.
        experiment_token: The token of an experiment by id (None when it has none).
        experiment_id: The one experiment the server was started for (``run --port``,
            ``view``): what a request that names none acts on, and the only one the session
            token is good for; None for a server of the whole store (``hyperlab serve``).
        cookie: The name of the cookie that carries the token (one per port: browsers share
            cookies between the ports of a host).
        max_body: The largest request body accepted, in bytes.
    """

    host: str
    port: int | None
    session_token: str | None
    experiment_token: Callable[[str], str | None]
    experiment_id: str | None = None
    cookie: str = "hyperlab_token"
    max_body: int = MAX_BODY

    @property
    def loopback(self) -> bool:
        """Whether the server listens on loopback only."""
        return is_loopback(self.host)

    def host_allowed(self, header: str) -> bool:
        """Whether a ``Host`` header names this server."""
        if not self.loopback and _wildcard(self.host):
            return True  # every interface: names unknown; every request needs a token anyway
        name, port = _split_host(header)
        names = {n.lower() for n in (*LOOPBACK_NAMES, self.host.strip("[]"))}
        if name not in names:
            return False
        return self.port is None or port == self.port or (port is None and self.port == 80)


class Guard:
    """The ASGI middleware enforcing a ``Policy`` in front of ``app``."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = self.policy
        headers = headers_of(scope)
        method = scope["method"]
        path = scope["path"]
        nni = path == NNI_PREFIX or path.startswith(f"{NNI_PREFIX}/")
        if not policy.host_allowed(headers.get("host", "")):
            shown = headers.get("host", "(none)")
            where = f"{policy.host}:{policy.port}" if policy.port else policy.host
            await _refuse(
                send, 421, f"Host header {shown!r} does not name this server ({where})", nni
            )
            return
        try:
            experiment = experiment_of(scope, policy.experiment_id)
        except AmbiguousExperiment as exc:
            await _refuse(send, 400, str(exc), nni)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if method in ("GET", "HEAD") and "token" in query and not path.startswith(API_PREFIX):
            await self._login(scope, send, query, experiment, nni)
            return
        if method not in READS:
            problem = _cross_site(headers, policy)
            if problem:
                await _refuse(send, 403, problem, nni)
                return
        body = b""
        if method not in READS:
            declared = headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > policy.max_body:
                await _refuse(send, 413, _too_large(policy), nni)
                return
            body, complete = await _read_body(receive, policy.max_body)
            if not complete:
                await _refuse(send, 413, _too_large(policy), nni)
                return
            if (method == "POST" or body) and not _is_json(headers.get("content-type", "")):
                got = headers.get("content-type") or "no Content-Type"
                await _refuse(
                    send,
                    415,
                    f"expected a JSON body (Content-Type: application/json), got {got}",
                    nni,
                )
                return
        open_here = policy.loopback and not _proxied(headers)  # reads, NNI's writes
        needs_token = not open_here or (method not in READS and not nni)
        if needs_token:
            problem_status, problem = authorise(policy, headers, experiment)
            if problem_status:
                await _refuse(send, problem_status, problem, nni)
                return
        elif method not in READS and nni and _given_token(headers, policy):
            status, problem = authorise(policy, headers, experiment)
            if status:  # a token given must be right, even where none is needed
                await _refuse(send, status, problem, nni)
                return
        await self.app(scope, _replay(body, receive) if method not in READS else receive, send)

    async def _login(
        self, scope: Scope, send: Send, query: dict[str, str], experiment: str | None, nni: bool
    ) -> None:
        """Exchange ``?token=`` for the cookie and send the browser to the clean address."""
        policy = self.policy
        token = query.pop("token")
        status, _ = authorise(policy, {TOKEN_HEADER: token}, experiment)
        if status:
            await _refuse(send, 403, "the token in this link is not this server's", nni)
            return
        location = scope["path"] + (f"?{urlencode(query)}" if query else "")
        cookie = SimpleCookie()
        cookie[policy.cookie] = token
        morsel = cookie[policy.cookie]
        morsel["path"] = "/"
        morsel["httponly"] = True
        morsel["samesite"] = "Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", morsel.OutputString().encode("latin-1")),
                    (b"cache-control", b"no-store"),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def authorise(policy: Policy, headers: dict[str, str], experiment: str | None) -> tuple[int, str]:
    """``(0, "")`` when the request's headers carry a token good for ``experiment`` (what
    ``experiment_of`` answered: None for a request about no experiment on a server of the whole
    store, which only the session token opens), else the status (401 missing, 403 wrong) and
    why."""
    given = _given_token(headers, policy)
    if given is None:
        where = "" if policy.loopback else " (this server listens beyond loopback)"
        return 401, (
            f"a token is needed{where}: send the header X-Hyperlab-Token, or open the "
            "dashboard link the server printed (`hyperlab show ID` prints it again); an "
            "experiment's token is in its folder's 'token' file"
        )
    if same_token(given, policy.session_token) and policy.experiment_id in (None, experiment):
        return 0, ""
    if experiment is not None and same_token(given, policy.experiment_token(experiment)):
        return 0, ""
    target = f"experiment {experiment!r}" if experiment else "this server"
    return 403, f"the token given is not valid for {target}"


PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip")
"""Headers a reverse proxy adds: a request that carries one may come from anywhere, whatever
address the server listens on."""


def _proxied(headers: dict[str, str]) -> bool:
    """Whether the request came through a reverse proxy: then, as beyond loopback, every
    request needs a token (a proxy in front of a loopback server exposes it to the network)."""
    return any(name in headers for name in PROXY_HEADERS)


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _split_host(header: str) -> tuple[str, int | None]:
    """``("name", port)`` of a Host header (``[::1]:8080`` -> ``("::1", 8080)``); the port is
    None when there is none, and -1 (no port's) when it is not 1 to 5 ASCII digits."""
    header = header.strip().lower()
    if header.startswith("["):
        name, _, rest = header[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = header.partition(":")
    if not port:
        return name, None
    return name, int(port) if port.isascii() and port.isdigit() and len(port) <= 5 else -1


def headers_of(scope: Scope) -> dict[str, str]:
    """A request's headers, names lowercased."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _given_token(headers: dict[str, str], policy: Policy) -> str | None:
    token = headers.get(TOKEN_HEADER)
    if token:
        return token.strip()
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    cookies = SimpleCookie()
    try:
        cookies.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header carries no token
        return None
    morsel = cookies.get(policy.cookie)
    return morsel.value if morsel is not None and morsel.value else None


class AmbiguousExperiment(ValueError):
    """A request names its experiment ambiguously (answered with 400)."""


def experiment_of(scope: Scope, default: str | None) -> str | None:
    """The experiment a request acts on: the id in ``/api/v1/experiments/<id>[/...]``, or the
    query's ``experiment_id`` (NNI's routes), else ``default`` (the experiment the server was
    started for; None for a server of the whole store: NNI's routes then act on the newest).

    Read once per request: the answer is kept in the request's state, so the token check
    (``Guard``) and the route (``hyperlab.server._context.acted_on``) act on the same one.

    Raises:
        AmbiguousExperiment: ``experiment_id`` is given more than once, empty, or names
            another experiment than the path.
    """
    state = scope.setdefault("state", {})
    if _ACTED_ON not in state:
        try:
            state[_ACTED_ON] = _named(scope) or default
        except AmbiguousExperiment as exc:
            state[_ACTED_ON] = exc
    acted_on = state[_ACTED_ON]
    if isinstance(acted_on, AmbiguousExperiment):
        raise acted_on
    return acted_on


def _named(scope: Scope) -> str | None:
    """The experiment the request's path or query names, if any (``experiment_of``)."""
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    queried = [value for key, value in pairs if key == EXPERIMENT_PARAM]
    prefix = f"{API_PREFIX}/experiments/"
    path = scope["path"]
    in_path = path[len(prefix) :].split("/", 1)[0] if path.startswith(prefix) else ""
    if len(queried) > 1:
        raise AmbiguousExperiment(
            f"{EXPERIMENT_PARAM}: given {len(queried)} times ({', '.join(map(repr, queried))}); "
            "name the experiment once"
        )
    if queried == [""]:
        raise AmbiguousExperiment(
            f"{EXPERIMENT_PARAM}: empty; name an experiment, or leave {EXPERIMENT_PARAM} out "
            "for the server's own one"
        )
    if queried and in_path and queried[0] != in_path:
        raise AmbiguousExperiment(
            f"{EXPERIMENT_PARAM}: {queried[0]!r} in the query conflicts with {in_path!r} in the "
            f"path; leave {EXPERIMENT_PARAM} out of the query"
        )
    return in_path or (queried[0] if queried else None)


def _cross_site(headers: dict[str, str], policy: Policy) -> str | None:
    """Why a write must be refused as coming from another site, or None."""
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        return "cross-site writes are refused"
    origin = headers.get("origin")
    if origin and origin != "null":
        _, _, host = origin.partition("://")
        if not policy.host_allowed(host):
            return f"writes from another origin ({origin}) are refused"
    elif origin == "null":
        return "writes from an opaque origin are refused"
    return None


def _is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


def _too_large(policy: Policy) -> str:
    return f"the request body is larger than {policy.max_body} bytes"


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The whole body, and False if it grew past ``limit`` bytes (then it is not all read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), True
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", False
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body read already, then the server's messages (a
    disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(send: Send, status: int, detail: str, nni: bool) -> None:
    body: dict[str, str] = {"detail": detail}
    if nni:
        body["error"] = detail  # NNI's clients read `error`
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
