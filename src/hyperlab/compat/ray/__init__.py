"""Ray Tune's common surface on hyperlab: change ``from ray import tune`` into
``from hyperlab.compat.ray import tune`` (and ``ray.tune.schedulers``... into
``hyperlab.compat.ray.tune.schedulers``...), and a Ray Tune script runs as an ordinary hyperlab
experiment: stored, listed by ``hyperlab ls``, resumable. Ray itself is not needed (it is
imported only by ``executor="ray"``).

``tune`` holds the Tuner, ``tune.run``, the search primitives, the trial-side calls and the
Trainable class; ``train`` holds what Ray 2.x examples take from ``ray.train`` (``RunConfig``,
``Checkpoint``, ``report``...). What is mapped, approximated and refused:
``docs/migrating.md``.
"""

__all__ = ["train", "tune"]
