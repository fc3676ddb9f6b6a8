"""Where an experiment was created: the code's git state, the installed packages, Python, the
machine and its GPUs, captured when the experiment is created and stored with it.

``capture_environment`` costs a few milliseconds (``benchmarks/environment_cost.py`` measures
it): the slow parts (``git`` and ``nvidia-smi``) run as processes in threads while this thread
reads the packages' metadata. Nothing in it raises: a missing ``git`` executable, code outside
a git repository, no ``nvidia-smi`` or one that fails leave that part ``None``.

The captured dict (JSON types only)::

    {
        "captured_at": 1700000000.0,          # seconds since the epoch
        "code_dir": "/home/me/project",       # where git was asked
        "hyperlab": "0.1.0",
        "python": {"version": "3.11.7 (main, ...) [GCC 12.2.0]",
                   "implementation": "CPython", "executable": "/usr/bin/python3"},
        "platform": "Linux-6.1.0-x86_64-with-glibc2.36",
        "hostname": "node-1",
        "cpu_count": 8,
        "git": {"root": "/home/me/project", "commit": "3dd6470f...",  # None before a commit
                "branch": "main",             # None on a detached HEAD
                "status": " M train.py\\n",     # `git status --porcelain`
                "diff": "diff --git ...",     # `git diff HEAD`, None before a commit
                "diff_truncated": False},     # True when cut at DIFF_LIMIT bytes
        "gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-40GB",
                  "driver_version": "535.104.05", "memory_total_mib": 40960}],
        "packages": ["numpy==1.26.4", ...],   # like `pip freeze`: name==version, sorted
    }

``git`` is None outside a git repository, ``gpus`` None without NVIDIA GPUs.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar, cast

__all__ = ["DIFF_LIMIT", "EnvironmentCapture", "capture_environment", "describe_environment"]

DIFF_LIMIT = 1_000_000
"""Bytes of ``git diff`` kept; a longer diff is cut there and marked ``diff_truncated``."""

GIT_TIMEOUT = 5.0
"""Seconds one ``git`` call may take before it is killed (and its part left out)."""

NVIDIA_SMI_TIMEOUT = 5.0
"""Seconds ``nvidia-smi`` may take before it is killed (and the GPUs left out)."""

_OUTPUT_LIMIT = 4_000_000  # bytes read from the other commands (a huge `git status`)
_GPU_QUERY = "--query-gpu=index,name,driver_version,memory.total"
_NAME_SEPARATORS = re.compile(r"[-_.]+")
_TIME = "%Y-%m-%d %H:%M:%S"

T = TypeVar("T")


class EnvironmentCapture:
    """``capture_environment(code_dir)`` on a daemon thread, started at once, so that an
    experiment does not wait for its git calls and package list before its first trial.

    ``done`` says whether it finished; ``result`` waits for it (None if ``timeout`` passed).
    """

    def __init__(self, code_dir: str | os.PathLike[str] | None = None) -> None:
        self._value: dict[str, Any] | None = None
        self._thread = threading.Thread(
            target=self._capture, args=(code_dir,), name="hyperlab-environment", daemon=True
        )
        self._thread.start()

    def _capture(self, code_dir: str | os.PathLike[str] | None) -> None:
        self._value = capture_environment(code_dir)

    @property
    def done(self) -> bool:
        """Whether the capture finished."""
        return not self._thread.is_alive()

    def result(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The environment, once captured (waiting up to ``timeout`` seconds)."""
        self._thread.join(timeout)
        return self._value


def capture_environment(code_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The environment an experiment is created in, as a JSON-able dict (see the module
    docstring for its keys).

    Args:
        code_dir: The folder of the experiment's code, where its git state is read; the
            current directory when None.

    Returns:
        The captured environment. Its ``git`` is None when ``code_dir`` is not inside a git
        repository or ``git`` is not installed; its ``gpus`` is None without ``nvidia-smi``
        or when it fails.

    Example:
        >>> env = capture_environment("~/project")
        >>> env["git"]["commit"], len(env["packages"])
        ('3dd6470f55c37c0162ae0dd03c2649f0ec85dfa7', 105)
    """
    try:
        folder: str | None = str(Path(code_dir or os.getcwd()).expanduser().absolute())
    except OSError:  # the current directory was deleted
        folder = None
    git = _in_thread(_git_state, folder)
    gpus = _in_thread(_gpus)
    env: dict[str, Any] = {
        "captured_at": time.time(),
        "code_dir": folder,
        "hyperlab": _hyperlab_version(),
        "python": {
            "version": sys.version,
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "packages": _installed_packages(),
    }
    env["git"] = git()
    env["gpus"] = gpus()
    return env


_PACKAGES: dict[tuple, list[str]] = {}  # by _path_state(): one entry, the latest


def _path_state() -> tuple:
    """``sys.path`` and the modification time of each of its folders: installing, upgrading
    or removing a distribution changes the time of the folder that holds its metadata."""
    state: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


def _installed_packages() -> list[str]:
    """``name==version`` of every distribution this Python can import, like ``pip freeze``:
    sorted by name (case-insensitively), one per project (the first on ``sys.path``, the one
    that imports). Parses only the head of each metadata file, once per state of the
    ``sys.path`` folders in a process (a few milliseconds; then a few microseconds)."""
    state = _path_state()
    if state not in _PACKAGES:
        _PACKAGES.clear()
        _PACKAGES[state] = _read_packages()
    return list(_PACKAGES[state])


def _read_packages() -> list[str]:
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        head = _metadata_head(dist)
        name, version = head.get("Name"), head.get("Version")
        if name and version:
            found.setdefault(_NAME_SEPARATORS.sub("-", name).lower(), f"{name}=={version}")
    return [found[key] for key in sorted(found)]


def describe_environment(env: dict[str, Any], *, full: bool = False) -> list[str]:
    """Lines for people: a few short ones (git commit and branch, Python, platform, host and
    CPUs, GPUs, hyperlab, the number of packages), or with ``full`` every field, each package
    and the diff.

    Args:
        env: An environment from ``capture_environment`` (or read back from the store).
        full: Whether to list everything rather than summarise.

    Returns:
        Lines without newlines; each field's starts with its label padded to 9 characters.

    Example:
        >>> describe_environment(capture_environment())[0]
        'git       3dd6470f on main, dirty (2 changed)'
    """
    return _full_lines(env) if full else _short_lines(env)


def _short_lines(env: dict[str, Any]) -> list[str]:
    python = env.get("python") or {}
    return [
        _line("git", _git_summary(env.get("git"))),
        _line("python", f"{_python_version(python)} ({python.get('implementation')})"),
        _line("platform", env.get("platform")),
        _line("host", _host(env)),
        _line("gpus", _gpu_summary(env.get("gpus"))),
        _line("hyperlab", env.get("hyperlab")),
        _line("packages", f"{len(env.get('packages') or [])} installed"),
    ]


def _full_lines(env: dict[str, Any]) -> list[str]:
    git = env.get("git")
    python = env.get("python") or {}
    packages = env.get("packages") or []
    captured = env.get("captured_at")
    lines = [
        _line(
            "captured", "-" if captured is None else time.strftime(_TIME, time.localtime(captured))
        ),
        _line("code dir", env.get("code_dir")),
        _line("git", _git_summary(git)),
    ]
    if git:
        status = (git.get("status") or "").splitlines()
        lines += [
            _line("root", git.get("root")),
            _line("commit", git.get("commit")),
            _line("branch", git.get("branch") or "(detached HEAD)"),
            _line("status", f"{len(status)} changed" if status else "clean"),
            *(f"  {entry}" for entry in status),
        ]
    lines += [
        _line("python", " ".join(str(python.get("version")).split())),
        _line("", f"{python.get('implementation')} at {python.get('executable')}"),
        _line("platform", env.get("platform")),
        _line("host", _host(env)),
    ]
    gpus = env.get("gpus") or []
    lines += [_line(f"gpu {gpu.get('index')}", _gpu(gpu)) for gpu in gpus]
    lines += [] if gpus else [_line("gpus", "none")]
    lines += [
        _line("hyperlab", env.get("hyperlab")),
        _line("packages", f"{len(packages)} installed"),
        *(f"  {package}" for package in packages),
    ]
    diff = git.get("diff") if git else None
    if diff is not None:
        cut = f", cut at {DIFF_LIMIT:,} bytes" if git and git.get("diff_truncated") else ""
        size = f"{len(diff.encode()):,} bytes of git diff HEAD{cut}" if diff else "none"
        lines += [_line("diff", size), *diff.splitlines()]
    return lines


# ---- git --------------------------------------------------------------------------------


class _Output(NamedTuple):
    code: int
    text: str
    truncated: bool


def _git_state(folder: str | None) -> dict[str, Any] | None:
    """The git part, or None outside a repository or without a ``git`` executable."""
    exe = shutil.which("git")
    if exe is None or folder is None or not os.path.isdir(folder):
        return None
    git = [exe, "--no-optional-locks", "-C", folder]  # no index.lock taken: never in the way
    diff = _in_thread(
        _run,
        [*git, "diff", "HEAD", "--no-color", "--no-ext-diff", "--no-textconv"],
        GIT_TIMEOUT,
        DIFF_LIMIT,
    )
    status = _in_thread(_run, [*git, "status", "--porcelain", "--branch"], GIT_TIMEOUT)
    head = _run([*git, "rev-parse", "--show-toplevel", "--verify", "-q", "HEAD"], GIT_TIMEOUT)
    diff_out, status_out = diff(), status()
    if head is None or not head.text.strip():  # not a repository (or git failed)
        return None
    root, *commit = head.text.split()
    branch, changes = _branch_and_changes(status_out)
    return {
        "root": root,
        "commit": commit[0] if head.code == 0 and commit else None,
        "branch": branch,
        "status": changes,
        "diff": diff_out.text if diff_out and (diff_out.code == 0 or diff_out.truncated) else None,
        "diff_truncated": bool(diff_out and diff_out.truncated),
    }


def _branch_and_changes(out: _Output | None) -> tuple[str | None, str | None]:
    """The branch named by ``git status --porcelain --branch``'s first line (None when
    detached), and the other lines: exactly what ``git status --porcelain`` prints."""
    if out is None or out.code != 0:
        return None, None
    first, _, changes = out.text.partition("\n")
    header = first.removeprefix("## ")
    if header.startswith("No commits yet on "):
        return header.removeprefix("No commits yet on "), changes
    if header.startswith("HEAD (no branch)"):
        return None, changes
    return header.split("...")[0].split(" ")[0], changes


def _run(argv: list[str], timeout: float, limit: int = _OUTPUT_LIMIT) -> _Output | None:
    """What ``argv`` printed on stdout (at most ``limit`` bytes: it is killed once it prints
    more) and its exit code; None when it cannot start or runs past ``timeout`` seconds.

    It leads a process group of its own, killed whole, so that nothing it started keeps the
    pipe open after it."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _kill_group(proc.pid)

    timer = threading.Timer(timeout, expire)
    timer.start()
    try:
        with cast(IO[bytes], proc.stdout) as stdout:  # a pipe: stdout=PIPE
            data = stdout.read(limit + 1)
        truncated = len(data) > limit
        if truncated:
            _kill_group(proc.pid)
        code = proc.wait()
    finally:
        timer.cancel()
        timer.join()  # no thread left behind
    if expired.is_set():
        return None
    return _Output(code, data[:limit].decode(errors="replace"), truncated)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
        os.killpg(pid, signal.SIGKILL)


# ---- GPUs -------------------------------------------------------------------------------


def _gpus() -> list[dict[str, Any]] | None:
    """Each NVIDIA GPU from ``nvidia-smi``; None without it, when it fails or lists none."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    out = _run([exe, _GPU_QUERY, "--format=csv,noheader,nounits"], NVIDIA_SMI_TIMEOUT)
    if out is None or out.code != 0:
        return None
    gpus = []
    for line in out.text.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < 4 or not parts[0].isdigit():
            return None  # not the answer to our query ("No devices were found", an error)
        memory = parts[-1]
        gpus.append(
            {
                "index": int(parts[0]),
                "name": ", ".join(parts[1:-2]),
                "driver_version": parts[-2],
                "memory_total_mib": int(memory) if memory.isdigit() else None,
            }
        )
    return gpus or None


# ---- helpers ----------------------------------------------------------------------------


def _in_thread(fn: Callable[..., T], *args: Any) -> Callable[[], T | None]:
    """Start ``fn(*args)`` in a daemon thread; the returned function waits for its result
    (None if it raised)."""
    box: list[T] = []
    thread = threading.Thread(target=lambda: box.append(fn(*args)), daemon=True)
    thread.start()

    def result() -> T | None:
        thread.join()
        return box[0] if box else None

    return result


def _metadata_head(dist: importlib.metadata.Distribution) -> dict[str, str]:
    """The header fields of a distribution's metadata, up to its first blank line (the
    description that follows can be long); none when it cannot be read."""
    try:
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    except OSError:  # an unreadable file: that distribution is left out
        return {}
    end = text.find("\n\n")
    fields: dict[str, str] = {}
    for line in (text if end < 0 else text[:end]).splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version"):
            fields.setdefault(key, value.strip())
            if len(fields) == 2:
                break
    return fields


def _hyperlab_version() -> str:
    from hyperlab._version import __version__

    return __version__


def _line(label: str, value: object) -> str:
    return f"{label:<9} {value}"


def _host(env: dict[str, Any]) -> str:
    return f"{env.get('hostname')}, {env.get('cpu_count')} CPUs"


def _python_version(python: dict[str, Any]) -> str:
    return str(python.get("version", "?")).split(" ", 1)[0]


def _git_summary(git: dict[str, Any] | None) -> str:
    if not git:
        return "none (not in a git repository)"
    commit = git.get("commit")
    where = git.get("branch") or "detached HEAD"
    text = f"{commit[:8]} on {where}" if commit else f"no commit yet on {where}"
    changed = len((git.get("status") or "").splitlines())
    return f"{text}, dirty ({changed} changed)" if changed else text


def _gpu(gpu: dict[str, Any]) -> str:
    memory = gpu.get("memory_total_mib")
    size = "" if memory is None else f" ({memory} MiB)"
    return f"{gpu.get('name')}{size}, driver {gpu.get('driver_version')}"


def _gpu_summary(gpus: list[dict[str, Any]] | None) -> str:
    if not gpus:
        return "none"
    kinds = Counter(
        (g.get("name"), g.get("memory_total_mib"), g.get("driver_version")) for g in gpus
    )
    parts = []
    for (name, memory, driver), count in kinds.items():
        size = "" if memory is None else f" ({memory} MiB)"
        parts.append(f"{count}x {name}{size}, driver {driver}")
    return "; ".join(parts)
