"""Search spaces: parameter types, NNI JSON in and out, sampling, grids, unit-cube encoding.

The parameter types and their semantics are NNI's (``_type`` / ``_value`` search-space JSON):

==========================  ==================================================================
builder                     value
==========================  ==================================================================
``choice(*options)``        one of the options, equally likely
``randint(low, high)``      an int in ``low .. high - 1`` (``high`` excluded)
``uniform(low, high)``      a float uniform on ``[low, high]``
``quniform(lo, hi, q)``     ``clip(round(x / q) * q, lo, hi)``, ``x ~ uniform(lo, hi)``
``loguniform(lo, hi)``      ``exp(uniform(log(lo), log(hi)))``
``qloguniform(lo, hi, q)``  ``clip(round(x / q) * q, lo, hi)``, ``x ~ loguniform(lo, hi)``
``normal(mu, sigma)``       a float from ``N(mu, sigma)``
``qnormal(mu, sigma, q)``   ``round(x / q) * q``, ``x ~ normal(mu, sigma)``; not clipped
``lognormal(mu, sigma)``    ``exp(normal(mu, sigma))``
``qlognormal(mu, s, q)``    ``round(x / q) * q``, ``x ~ lognormal(mu, s)``; not clipped
==========================  ==================================================================

``round`` is round-half-to-even (as numpy and Python round). The q-types give floats, as NNI does:
``quniform(16, 128, 16)`` gives ``32.0``; use ``randint`` or ``choice`` for ints. Bounds must be
finite real numbers (not bools); randint's must be integers.

``choice(*options)`` takes one option per positional argument, so ``choice("a", "b")`` picks a
string and ``choice(["a", "b"])`` always gives the list ``["a", "b"]`` (and warns: Ray Tune writes
``tune.choice(["a", "b"])`` for a pick). An option written as a dict
with a ``"_name"`` key is a *nested* option: its other keys are sub-parameters (Parameters, NNI
spec dicts or JSON constants), and picking it gives ``{"_name": ..., <sub>: <value>, ...}``,
exactly what NNI passes to trials. Nesting may be recursive.

Example:
    >>> import numpy as np
    >>> from hyperlab.space import SearchSpace, choice, loguniform, randint
    >>> space = SearchSpace({
    ...     "lr": loguniform(1e-5, 1e-1),
    ...     "layer": choice({"_name": "conv", "kernel": randint(1, 8)}, {"_name": "skip"}),
    ... })
    >>> [p["layer"] for p in space.sample(np.random.default_rng(1), 3)]
    [{'_name': 'skip'}, {'_name': 'skip'}, {'_name': 'conv', 'kernel': 3}]

Invalid spaces raise :class:`hyperlab.errors.SearchSpaceError` whose message starts with the
parameter's path (``"layer/conv/kernel: randint needs low < high ..."``). A builder called on its
own has no path yet, so its message starts with the rule. So does a space beyond a limit, checked
before it is parsed: ``MAX_OPTIONS`` options of a choice, ``MAX_PARAMETERS`` parameters (nested
ones included), ``MAX_NESTING`` levels of nested choices, ``MAX_SPACE_SIZE`` characters of JSON.
"""

from hyperlab.space._choice import Choice, NestedOption, sample_group
from hyperlab.space._codec import Dimension
from hyperlab.space._limits import MAX_NESTING, MAX_OPTIONS, MAX_PARAMETERS, MAX_SPACE_SIZE
from hyperlab.space._params import (
    NNI_TYPES,
    LogNormal,
    LogUniform,
    Normal,
    Parameter,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    Uniform,
    copy_json,
)
from hyperlab.space._space import (
    SearchSpace,
    choice,
    lognormal,
    loguniform,
    normal,
    qlognormal,
    qloguniform,
    qnormal,
    quniform,
    randint,
    uniform,
)

__all__ = [
    "MAX_NESTING",
    "MAX_OPTIONS",
    "MAX_PARAMETERS",
    "MAX_SPACE_SIZE",
    "NNI_TYPES",
    "Choice",
    "Dimension",
    "LogNormal",
    "LogUniform",
    "NestedOption",
    "Normal",
    "Parameter",
    "QLogNormal",
    "QLogUniform",
    "QNormal",
    "QUniform",
    "Randint",
    "SearchSpace",
    "Uniform",
    "choice",
    "copy_json",
    "lognormal",
    "loguniform",
    "normal",
    "qlognormal",
    "qloguniform",
    "qnormal",
    "quniform",
    "randint",
    "sample_group",
    "uniform",
]
