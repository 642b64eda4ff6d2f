"""Crops of real photos measured against human instance outlines.

``metrics``: the rules (person-cut, subject-cut, empty, covered, featured)
on masks and boxes; ``run``: every method over an outlined folder
(:mod:`multicrop.datasets.outlines`); ``report``: table, JSON, CSV;
``preview``: a grid of the worst photos.  ``multicrop bench subjects DIR``
is the command; docs/subjects-benchmark.md says what each number means.
"""

from .metrics import SUBJECTS_METRIC_VERSION, PhotoMeasures, SubjectRules, SubjectsSummary, measure_photo, summarise
from .run import PEERS, PhotoResult, SubjectsMethod, SubjectsRun, methods_for, remeasure, run_subjects

__all__ = [
    "SUBJECTS_METRIC_VERSION",
    "SubjectRules",
    "PhotoMeasures",
    "SubjectsSummary",
    "measure_photo",
    "summarise",
    "PEERS",
    "SubjectsMethod",
    "PhotoResult",
    "SubjectsRun",
    "methods_for",
    "run_subjects",
    "remeasure",
]
