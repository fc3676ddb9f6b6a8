"""The contenders (hyperlab's tuners and their peers) and one run of one of them.

A contender is named by a label: a hyperlab tuner name (``tpe``), a peer (``optuna-tpe``,
``optuna-tpe-univariate``, ``optuna-cmaes``, ``optuna-gp``, ``hyperopt-tpe``,
``hyperopt-rand``), optionally with constructor arguments in brackets, ``tpe[bandwidth=1.0,
gamma=0.2]`` (values are JSON, or bare strings). Everything runs with default arguments unless
the label says otherwise.

hyperlab's tuners are driven directly through the tuner interface (``create_tuner``,
``suggest(number)``, ``observe(Trial)``), Optuna's samplers through ``study.ask`` /
``study.tell`` with in-memory storage and define-by-run suggestions (the same as
``study.optimize``), hyperopt through ``fmin``. With concurrency ``c`` the ask/tell driver keeps
``c`` proposals pending: it asks ``c`` times, then evaluates the oldest pending proposal, tells
its value and asks for a new one, until the budget is used (trials finish first in, first out).
hyperopt's ``fmin`` runs sequentially only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spaces import Objective, Problem, hyperlab_space, hyperopt_space, optuna_params, plain

SUITE_VERSION = 1
"""Bumped whenever a problem changes: cached runs of another version are not used."""

HYPERLAB = ("tpe", "gp", "cmaes", "anneal", "evolution", "random", "auto")
OPTUNA = ("optuna-tpe", "optuna-tpe-univariate", "optuna-cmaes", "optuna-gp")
HYPEROPT = ("hyperopt-tpe", "hyperopt-rand")
NUMERIC_ONLY = ("cmaes", "optuna-cmaes")


@dataclass(frozen=True)
class Contender:
    """A tuner under test: ``base`` (a name above) and constructor ``args``."""

    base: str
    args: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def label(self) -> str:
        if not self.args:
            return self.base
        items = ",".join(f"{k}={_text(v)}" for k, v in sorted(self.args.items()))
        return f"{self.base}[{items}]"

    @property
    def library(self) -> str:
        return (
            "optuna" if self.base in OPTUNA else "hyperopt" if self.base in HYPEROPT else "hyperlab"
        )

    def applies(self, problem: Problem) -> bool:
        """False for CMA-ES on a space with categorical or conditional parameters."""
        return problem.numeric or self.base not in NUMERIC_ONLY

    def concurrent(self, peers: bool) -> bool:
        """Whether it can run with concurrency > 1 (Optuna's samplers only if ``peers``)."""
        return self.library == "hyperlab" or (peers and self.library == "optuna")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_args(text: str) -> dict[str, Any]:
    """``gamma=0.2,bandwidth=1.0`` or a JSON object, as a dict."""
    text = text.strip()
    if text.startswith("{"):
        return dict(json.loads(text))
    out = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, got {item!r}")
        out[key.strip()] = _value(value.strip())
    return out


def parse_label(label: str) -> Contender:
    """``tpe`` or ``tpe[gamma=0.2]`` as a Contender."""
    match = re.fullmatch(r"\s*([\w.:-]+)\s*(?:\[(.*)\])?\s*", label)
    if not match:
        raise ValueError(f"bad contender {label!r}")
    return Contender(match[1], parse_args(match[2] or ""))


def split_labels(text: str) -> list[str]:
    """Comma-separated labels; commas inside brackets belong to the label."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text + ","):
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            if text[start:i].strip():
                out.append(text[start:i].strip())
            start = i + 1
    return out


# ---------------------------------------------------------------- fingerprints


def fingerprint(contender: Contender) -> str:
    """What the results depend on besides the problem and seed: the tuner's source (hyperlab:
    its module and what it imports from the tuners package, the shared modules, the space
    package) or the library's version. Cached runs with another fingerprint are re-run."""
    if contender.library == "optuna":
        import optuna

        extra = ""
        if contender.base == "optuna-gp":
            import importlib.metadata as md

            try:
                extra = " torch " + md.version("torch")
            except md.PackageNotFoundError:
                extra = " no torch"
        return f"optuna {optuna.__version__}{extra}"
    if contender.library == "hyperopt":
        import hyperopt

        return f"hyperopt {hyperopt.__version__}"
    import hyperlab
    from hyperlab.tuners import tuner_class

    package = Path(hyperlab.__file__).parent
    tuners = package / "tuners"
    module = tuner_class(contender.base).__module__.split(".")
    files: set[Path] = {package / "trial.py", *(package / "space").rglob("*.py")}
    if contender.base in HYPERLAB[:-1] and module[:2] == ["hyperlab", "tuners"]:
        files |= {tuners / "base.py", tuners / "_history.py"}
        todo, seen = [module[2]], set()
        while todo:
            part = todo.pop()
            seen.add(part)
            paths = list((tuners / part).rglob("*.py")) or [tuners / f"{part}.py"]
            files |= set(paths)
            for path in paths:
                for name in re.findall(r"hyperlab\.tuners\.(_\w+)", path.read_text()):
                    if name not in seen:
                        todo.append(name)
    else:  # a tuner that may use any other (auto): the whole package
        files |= set(tuners.rglob("*.py"))
    digest = hashlib.sha1()
    for path in sorted(p for p in files if p.exists()):
        digest.update(str(path.relative_to(package)).encode() + path.read_bytes())
    return "hyperlab " + digest.hexdigest()[:12]


# ---------------------------------------------------------------- running

Ask = Callable[[int], "tuple[Any, dict[str, Any]] | None"]
Tell = Callable[[Any, dict[str, Any], float], None]


def drive(ask: Ask, tell: Tell, f: Objective, budget: int, concurrency: int) -> list[float]:
    """Values in the order trials finished, ``concurrency`` proposals pending at a time."""
    pending: deque[tuple[Any, dict[str, Any]]] = deque()
    values: list[float] = []
    asked = 0
    while True:
        while asked < budget and len(pending) < concurrency:
            item = ask(asked)
            if item is None:  # the tuner ran out (a finite space)
                budget = asked
                break
            pending.append(item)
            asked += 1
        if not pending:
            return values
        token, params = pending.popleft()
        value = f(params)
        values.append(value)
        tell(token, params, value)


def _hyperlab(
    c: Contender, problem: Problem, f: Objective, seed: int, budget: int, conc: int
) -> list[float]:
    from hyperlab.trial import Trial, TrialStatus
    from hyperlab.tuners import create_tuner

    tuner = create_tuner(c.base, hyperlab_space(problem), mode="min", seed=seed, args=c.args)

    def ask(number: int) -> tuple[int, dict[str, Any]] | None:
        params = tuner.suggest(number)
        return None if params is None else (number, params)

    def tell(number: int, params: dict[str, Any], value: float) -> None:
        trial = Trial("bench", number, params, status=TrialStatus.SUCCEEDED, value=value)
        tuner.observe(trial)

    return drive(ask, tell, f, budget, conc)


def _optuna(
    c: Contender, problem: Problem, f: Objective, seed: int, budget: int, conc: int
) -> list[float]:
    import optuna

    optuna.logging.set_verbosity(logging.ERROR)
    samplers = optuna.samplers
    if c.base == "optuna-gp":
        import torch

        torch.set_num_threads(1)
    make, fixed = {
        "optuna-tpe": (samplers.TPESampler, {}),
        "optuna-tpe-univariate": (samplers.TPESampler, {"multivariate": False}),
        "optuna-cmaes": (samplers.CmaEsSampler, {}),
        "optuna-gp": (samplers.GPSampler, {}),
    }[c.base]
    study = optuna.create_study(sampler=make(seed=seed, **{**fixed, **c.args}))

    def ask(number: int) -> tuple[Any, dict[str, Any]]:
        trial = study.ask()
        return trial, optuna_params(trial, problem.params)

    def tell(trial: Any, params: dict[str, Any], value: float) -> None:
        study.tell(trial, value)

    return drive(ask, tell, f, budget, conc)


def _hyperopt(
    c: Contender, problem: Problem, f: Objective, seed: int, budget: int, conc: int
) -> list[float]:
    import numpy as np
    from hyperopt import STATUS_OK, Trials, fmin, rand, tpe

    if conc != 1:
        raise ValueError("hyperopt runs sequentially only")
    logging.getLogger("hyperopt").setLevel(logging.WARNING)
    values: list[float] = []

    def objective(params: dict[str, Any]) -> dict[str, Any]:
        values.append(f(plain(params)))
        return {"loss": values[-1], "status": STATUS_OK}

    algo = tpe.suggest if c.base == "hyperopt-tpe" else rand.suggest
    if c.args:
        import functools

        algo = functools.partial(algo, **c.args)
    space = hyperopt_space(problem.params)
    rstate = np.random.default_rng(seed)
    fmin(
        objective,
        space,
        algo=algo,
        max_evals=budget,
        trials=Trials(),
        rstate=rstate,
        show_progressbar=False,
    )
    return values


def init_worker() -> None:
    """Per worker process: one thread per numeric library, warnings and library logs off."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    warnings.filterwarnings("ignore")
    logging.getLogger("optuna").setLevel(logging.ERROR)
    logging.getLogger("hyperopt").setLevel(logging.WARNING)


def run(task: dict[str, Any]) -> dict[str, Any]:
    """One run, ``task`` = contender label, problem name, seed, concurrency, budget; returns the
    record: ``f_opt`` (None if unknown), ``improvements`` ([trial index, value] pairs where the
    best-so-far value improved; indices count finished trials from 0), the number of trials,
    wall time and the part of it spent in the objective; or ``error`` with a traceback."""
    from .suite import problem_by_name

    contender, problem = parse_label(task["contender"]), problem_by_name(task["problem"])
    seed, budget, conc = task["seed"], task["budget"], task["concurrency"]
    record = {k: task[k] for k in ("contender", "problem", "seed", "concurrency", "budget")}
    f, f_opt = problem.instance(seed)
    spent = [0.0]

    def timed(params: dict[str, Any]) -> float:
        start = time.perf_counter()
        try:
            return float(f(params))
        finally:
            spent[0] += time.perf_counter() - start

    runner = {"hyperlab": _hyperlab, "optuna": _optuna, "hyperopt": _hyperopt}[contender.library]
    start = time.perf_counter()
    try:
        values = runner(contender, problem, timed, seed, budget, conc)
    except Exception:
        return {**record, "error": traceback.format_exc(limit=-8)}
    best, improvements = float("inf"), []
    for i, value in enumerate(values):
        if value < best:
            best = value
            improvements.append([i, value])
    return {
        **record,
        "f_opt": f_opt,
        "improvements": improvements,
        "trials": len(values),
        "time": round(time.perf_counter() - start, 4),
        "objective_time": round(spent[0], 4),
    }
