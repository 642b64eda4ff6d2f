"""What the scoreboard reads, and the rows a photo or scene counts in beside its own.

:func:`synth_dir` builds carousel-synth (or -hard) once under the cache
folder, named by what it was built from.  Two diagnoses count some photos
apart, in rows of their own with no target: the other coco-subjects photos
whose frame holds an outlined object (:func:`frame_is_empty`: on the rest
every crop is "empty"), and the carousel-synth scenes without its one thin
subject (:func:`holds_thin_subject`, from the scene's metadata).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ...errors import MulticropError
from ...geometry import Box
from ...io.files import LABEL_LIMIT, read_json_bounded

__all__ = ["OUTLINED", "THIN_SUBJECT", "frame_is_empty", "holds_thin_subject", "synth_dir"]

#: The other coco-subjects photos are also counted without those whose frame holds no outlined object large
#: enough to count (any crop of them is "empty"), in rows "<row> with something outlined".
OUTLINED = "with something outlined"
#: carousel-synth's one thin subject of six (a rocket a few pixels wide in a box drawn around something
#: larger): U^2-Netp barely marks it beside the others, so its scenes are also counted apart, in rows
#: "<row> without the rocket", read from each scene's metadata (carousel-synth-2 on).
THIN_SUBJECT = "rocket"


def frame_is_empty(masks, categories, size: tuple[int, int], *, rules=None, crowd=None) -> bool:
    """Whether the whole frame is an "empty" crop: no outlined object large enough to count, so every crop of
    the photo is empty (:func:`multicrop.evaluation.subjects.metrics.measure_photo`)."""
    from ...evaluation.subjects.metrics import measure_photo

    return measure_photo(masks, categories, [Box(0, 0, *size)], rules=rules, crowd=crowd).empty > 0


def holds_thin_subject(item) -> bool | None:
    """Whether a carousel-synth scene's metadata names :data:`THIN_SUBJECT` among its subjects (None: it
    names none, e.g. a set rendered before carousel-synth-2, or a real Carousel photo)."""
    if item.image_path is None:
        return None
    meta = Path(item.image_path).with_name(f"{item.name}_metadata.json")
    try:
        names = read_json_bounded(meta, limit=LABEL_LIMIT, what="metadata").get("subjects")
    except (OSError, MulticropError, AttributeError):
        return None
    return THIN_SUBJECT in names if isinstance(names, list) else None


def _files_digest(paths) -> str:
    """A short hash of the names and bytes of ``paths`` (files only)."""
    h = hashlib.sha256()
    for p in paths:
        if p.is_file():
            h.update(p.name.encode("utf-8") + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def _labels_digest(labels: Path | None) -> str:
    if labels is None:
        return "shipped"
    return _files_digest(sorted(list((Path(labels) / "dataset").glob("*.json")) + [Path(labels) / "hard_failures.txt"]))


def synth_dir(root: Path, labels: Path | None, *, seed: int, hard: bool, backgrounds: Path | None = None) -> Path:
    """carousel-synth (or -hard) of ``seed`` under ``root``, built once (its name says what it was built from)."""
    from ...datasets.synth import SYNTH_VERSION, make_synth

    bg = "" if backgrounds is None else "-bg" + _files_digest(sorted(Path(backgrounds).glob("*")))
    name = f"{SYNTH_VERSION}{'-hard' if hard else ''}-seed{seed}-{_labels_digest(labels)}{bg}"
    out = Path(root) / "synth" / name
    if not (out / "synth_info.json").is_file():
        make_synth(labels, out, seed=seed, hard=hard, backgrounds=backgrounds)
    return out
