"""What a crop batch run reports: :class:`BatchSummary`, the counts, rates and first failures of a run.

``multicrop batch crop`` prints it (``--json`` as its canonical JSON); the
first :data:`FAILED_SHOWN` failed photos are named, the rest are listed by
``multicrop batch failed``.  :mod:`multicrop.batch.runner` re-exports both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..serialize import Serializable

__all__ = ["BatchSummary", "FAILED_SHOWN"]

#: Failed photos a summary names (the rest are listed by ``multicrop batch failed``).
FAILED_SHOWN = 5


@dataclass
class BatchSummary(Serializable):
    """What a batch run did.

    Attributes
    ----------
    total : int
        Photos the source names.
    skipped : int
        Done before with the same settings and unchanged: not touched.
    done, failed : int
        Photos this run cropped, and photos that failed in it.
    failed_by_reason : dict of str to int
        Failures of this run per error kind (``ImageLoadError``, ...).
    elapsed_s : float
    photos_per_s : float
        Photos processed (done + failed) per second of this run.
    engine : str
    workers, threads : int
    manifest : str
    peak_pixels : int
        Most pixels ever admitted at once (0 without admission control).
    failed_examples : list of [str, str]
        The first :data:`FAILED_SHOWN` failed photos of this run: ``[path, error]``.
    quarantined : list of str
        Manifest parts that could not be read, moved aside (their photos are redone).
    redone_missing : int
        Photos done before whose listed outputs were missing (``verify_outputs``), redone.
    excluded : int
        Files under the destination (inside the source folder) that were not read.
    """

    total: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    failed_by_reason: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    photos_per_s: float = 0.0
    engine: str = "local"
    workers: int = 1
    threads: int = 1
    manifest: str = ""
    peak_pixels: int = 0
    failed_examples: list = field(default_factory=list)
    quarantined: list = field(default_factory=list)
    redone_missing: int = 0
    excluded: int = 0
