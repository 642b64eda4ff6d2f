"""Carousel evaluation: registered methods, kIoU scoring, resumable runs, the report.

``methods`` (the registry, our pipeline's methods, the floor) and ``peers``
(single-crop peers on our partitions) are what is evaluated →
``evaluate`` (run a method over a Carousel directory, score with kIoU; each
image's record in ``records``) → ``report`` (tables, per-image CSV, HTML).
"""

from . import peers  # noqa: F401  (importing it registers the peer methods in METHODS)
