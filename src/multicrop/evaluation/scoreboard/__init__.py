"""The scoreboard every change to the crop wing quotes (docs/scoreboard.md).

:func:`run_scoreboard` crops coco-subjects, carousel-synth and
carousel-synth-hard with the product (``crop_photo(..., analysis=)``) from
cached model outputs (:mod:`.cache`); :func:`compare` turns the per-photo
counts into figures with bootstrap intervals and verdicts against a baseline
(:mod:`.figures`); :func:`render` prints the table (:mod:`.report`).
"""

from .cache import ModelCache, models_key, models_settings
from .figures import ROWS, Estimate, Figure, Row, Target, Verdict, compare, estimate, flag
from .report import SCOREBOARD_VERSION, read_photos, read_scoreboard, render, to_json
from .run import SECTIONS, ScoreboardRun, run_scoreboard

__all__ = ["ModelCache", "models_key", "models_settings", "ROWS", "Estimate", "Figure", "Row", "Target", "Verdict",
           "compare", "estimate", "flag", "SCOREBOARD_VERSION", "read_photos", "read_scoreboard", "render", "to_json",
           "SECTIONS", "ScoreboardRun", "run_scoreboard"]
