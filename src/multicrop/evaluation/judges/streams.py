"""Independent random streams of the judge protocol, all derived from one seed.

Each step that draws random numbers takes its own stream,
``numpy.random.default_rng([seed, stream])``, so adding draws to one step
never shifts another's.  The bootstrap over images, for one, is
``stream_rng(seed, BOOTSTRAP).integers(0, n, (B, n))`` (replayed by the
tests with scipy).
"""

from __future__ import annotations

import numpy as np

__all__ = ["BOOTSTRAP", "CEILING", "MTMM", "TRANSFER", "PROBE", "stream_rng"]

#: stream ids (their values are part of every result: never renumber them)
BOOTSTRAP, CEILING, MTMM, TRANSFER, PROBE = range(5)


def stream_rng(seed: int, stream: int) -> np.random.Generator:
    """The generator of ``stream`` under ``seed``.

    Examples
    --------
    >>> a = stream_rng(0, BOOTSTRAP).integers(0, 100, 3)
    >>> b = np.random.default_rng([0, 0]).integers(0, 100, 3)
    >>> bool((a == b).all())
    True
    """
    return np.random.default_rng([int(seed), stream])
