"""An evolutionary strategy written as a plain loop: submit a population, wait for it, keep the
best, mutate them, submit the children. It tunes a scikit-learn SVC on the digits data
(3-fold cross-validated accuracy, well under a second a trial), two trials at a time in worker
processes, every trial recorded in SQLite (evolution.db in the current folder).

    pip install scikit-learn && python examples/evolution/evolve.py     # about 15 s on 2 cores
    hyperlab --storage sqlite:///evolution.db trials evolve-svc          # the trials it ran

The experiment has a fixed id, so it can be continued: after Ctrl-C, or to run more
generations, ``--resume`` reopens it with ``hyperlab.Experiment.resume``. The population comes
back from the store (``exp.trials(status="SUCCEEDED")``); trials that were running when it
stopped run again, and ``exp.wait`` waits for them.

    python examples/evolution/evolve.py --resume --generations 12
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

import hyperlab
from hyperlab.trial import readable

ID = "evolve-svc"
POPULATION = 8  # children per generation
PARENTS = 4  # the best trials so far, which the children are mutated from
SPACE = hyperlab.SearchSpace(
    {
        "C": hyperlab.loguniform(1e-2, 1e3),
        "gamma": hyperlab.loguniform(1e-4, 1.0),
        "kernel": hyperlab.choice("rbf", "poly", "sigmoid"),
        "degree": hyperlab.randint(2, 6),  # used by "poly" only
    }
)


def objective(params: dict) -> dict:
    X, y = load_digits(return_X_y=True)
    accuracy = cross_val_score(SVC(**params), X / 16.0, y, cv=3).mean()
    return {"accuracy": float(accuracy)}


def mutate(params: dict, rng: np.random.Generator) -> dict:
    """A child of ``params`` that stays in SPACE: the numbers take a small step in the unit cube
    (on a log scale for C and gamma), which ``decode`` clips into the bounds and rounds for the
    integer degree; the kernel, which has no order, is drawn again one time in five."""
    child = SPACE.decode(SPACE.encode(params) + rng.normal(0.0, 0.1, len(SPACE)))
    child["kernel"] = SPACE["kernel"].sample(rng, 1)[0] if rng.random() < 0.2 else params["kernel"]
    return child


def show(generation: list[hyperlab.Trial]) -> None:
    values = [trial.value for trial in generation if trial.value is not None]
    print(
        f"generation {generation[-1].number // POPULATION}: accuracy "
        f"{np.mean(values):.3f} mean, {max(values):.4f} best"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=8, help="generations in all")
    parser.add_argument("--resume", action="store_true", help="continue the stored experiment")
    parser.add_argument("--storage", default="sqlite:///evolution.db", help="the store's URL")
    args = parser.parse_args()
    budget = POPULATION * args.generations  # max_trials: the loop ends when it is spent

    if args.resume:
        exp = hyperlab.Experiment.resume(
            ID, storage=args.storage, objective=objective, max_trials=budget
        )
    else:
        exp = hyperlab.Experiment(
            objective,
            SPACE,
            id=ID,
            storage=args.storage,
            metric="accuracy",
            mode="max",
            max_trials=budget,
            executor="processes",
            concurrency=2,
        )

    with exp:  # ends DONE once the loop is over (or STOPPED, resumable, if it raises)
        # a new experiment starts from random points; a resumed one waits for the trials it
        # has (those that ended are ready; those interrupted run again)
        first = exp.trials() or exp.submit(SPACE.sample(np.random.default_rng(3), POPULATION))
        show(exp.wait(first)[-POPULATION:])
        while exp.budget_available():
            # the parents: the best of every trial so far, read back from the store
            population = [handle.trial for handle in exp.trials(status="SUCCEEDED")]
            parents = sorted(population, key=lambda trial: trial.value, reverse=True)[:PARENTS]
            rng = np.random.default_rng(len(population))  # a rerun makes the same children
            children = [mutate(parents[i % PARENTS].params, rng) for i in range(POPULATION)]
            show(exp.wait(exp.submit(children)))
    result = exp.result()
    print(f"experiment {exp.id}: {len(result.trials)} trials, {result.status}")
    print(f"best accuracy = {result.best_value:.4f} with {readable(result.best_params)}")


if __name__ == "__main__":
    main()
