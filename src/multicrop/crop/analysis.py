"""One photo's analysis: saliency map, detections and subjects, as one typed value with its hash.

:func:`analyse` runs the saliency model and the detectors named by
:attr:`CropConfig.detectors` on the analysis copy of a photo and turns what
they found into :class:`~multicrop.crop.subjects.Subject` values.  The
result, :class:`Analysis`, is what :func:`multicrop.crop.pipeline.crop_photo`
selects crops from; it can be made once and handed to ``crop_photo(...,
analysis=)`` for every k, ratio and strategy the user tries (the web page
does), because nothing in it depends on those.  Its :attr:`Analysis.key`
hashes the image, the settings that shape it and every model's version, so a
cache keyed on it never returns the analysis of another setting.

Examples
--------
>>> import numpy as np
>>> from multicrop.crop.config import CropConfig
>>> img = np.full((64, 96, 3), 40, np.uint8); img[20:40, 60:80] = 230
>>> a = analyse(img, CropConfig(saliency="spectral", detectors=()))
>>> a.size, a.detections, [s.kind for s in a.subjects]
((96, 64), (), ['salient'])
>>> a.key == analyse(img, CropConfig(saliency="spectral", detectors=())).key
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box
from ..hashing import content_hash, hash_bytes
from ..saliency import SALIENCY, compute_saliency
from .config import CropConfig
from .subjects import Subject, find_subjects

__all__ = ["Analysis", "analyse", "analysis_from", "analysis_settings", "detector_versions_of", "model_files",
           "parse_focus", "run_models", "settings_key", "with_focus"]

#: Bump when the way detections become subjects changes (part of every Analysis key).
#: subjects-3: animals and vehicles from ``guard_area`` up to ``min_subject_area`` are guards; a body is behind
#: another only when the other's box ends lower by ``behind_margin`` of its height.
SUBJECTS_VERSION = "subjects-3"


@dataclass(frozen=True)
class Analysis:
    """What the crop wing knows of one photo before it chooses crops (analysis pixels).

    Attributes
    ----------
    size : (int, int)
        ``(width, height)`` of the analysed copy.
    saliency : ndarray of float32, shape (H, W)
        The saliency map, faces raised to full saliency.
    detections : tuple of Detection
        Everything the detectors found.
    subjects : tuple of Subject
        The subjects made of them and of the saliency (most important first).
    versions : dict of str to str
        Saliency and detector versions (part of every record).
    key : str
        Content hash of the image, the settings that shape the analysis
        (:func:`analysis_settings`), ``versions`` and the focus.
    focus : Box or None
        The user's point or region (analysis pixels), if given.
    """

    size: tuple[int, int]
    saliency: np.ndarray = field(repr=False, compare=False)
    detections: tuple = field(default=(), repr=False, compare=False)
    subjects: tuple[Subject, ...] = field(default=(), repr=False, compare=False)
    versions: dict[str, str] = field(default_factory=dict, compare=False)
    key: str = ""
    focus: Box | None = None

    @property
    def faces(self) -> tuple[Box, ...]:
        """Face boxes (analysis pixels)."""
        return tuple(d.box for d in self.detections if d.kind == "face")


def _saliency_version(config: CropConfig) -> dict[str, str]:
    return {"saliency": f"{config.saliency}/{SALIENCY.get(config.saliency).version}"}


def _detectors_module():
    """:mod:`multicrop.detectors` when it offers ``detect`` (None on a checkout without it)."""
    try:
        from .. import detectors
    except ImportError:  # pragma: no cover - the package always ships it
        return None
    return detectors if hasattr(detectors, "detect") else None


def detector_versions_of(config: CropConfig) -> dict[str, str]:
    """``{"detector:<name>": version}`` for every detector ``config`` runs (``{"detectors": "off"}`` for none)."""
    names = config.active_detectors
    if not names:
        return {"detectors": "off"}
    mod = _detectors_module()
    if mod is not None:
        return {f"detector:{k}": v for k, v in mod.detector_versions(names).items()}
    return {f"detector:{n}": ("yunet" if n == "yunet" else "unavailable") for n in names}


def model_files(config: CropConfig) -> tuple[str, ...]:
    """The shipped model files analysing a photo under ``config`` runs, in the order it runs them
    (keys of :data:`multicrop.models.MODELS`; for :func:`multicrop.models.prefetch`).

    Examples
    --------
    >>> model_files(CropConfig())
    ('nanodet', 'yunet', 'pose_landmark_full', 'u2netp')
    >>> model_files(CropConfig(saliency="spectral", detectors=("yunet",)))
    ('yunet',)
    """
    names = []
    mod = _detectors_module()
    for d in config.active_detectors:
        if mod is not None:
            names += mod.DETECTORS.get(d).models
        elif d == "yunet":  # no detector registry: the faces alone, as _run_detectors runs them
            names.append("yunet")
    return tuple(dict.fromkeys(names + list(SALIENCY.get(config.saliency).models)))


def analysis_settings(config: CropConfig) -> dict:
    """The settings an :class:`Analysis` depends on: saliency, detectors, analysis size, subject thresholds.

    ``k``, ratios, strategy and the scorer are not among them: one analysis
    serves them all.
    """
    d = config.subjects.to_dict()
    return {"saliency": config.saliency, "detectors": list(config.active_detectors),
            "analysis_max_side": config.analysis_max_side, "subjects": d, "version": SUBJECTS_VERSION}


def settings_key(config: CropConfig) -> str:
    """A short hash of :func:`analysis_settings` and the model versions: the part of
    :attr:`Analysis.key` a cache of one photo's analyses keys on."""
    return content_hash({"settings": analysis_settings(config), "versions": detector_versions_of(config)
                         | _saliency_version(config)}).split(":", 1)[1][:16]


def _run_detectors(image: np.ndarray, names: tuple[str, ...], threads: int | None) -> tuple:
    mod = _detectors_module()
    if mod is not None:
        return tuple(mod.detect(image, detectors=names, threads=threads))
    if "yunet" not in names:
        return ()
    from ..detectors.types import Detection
    from ..saliency.faces import detect_faces

    return tuple(Detection("face", "face", -1, f.box, float(min(max(f.score, 0.0), 1.0)), detector="yunet")
                 for f in detect_faces(image))


def _checked(image: np.ndarray) -> np.ndarray:
    img = np.ascontiguousarray(image)
    if img.ndim != 3 or img.shape[2] != 3:
        raise InvalidParameterError(f"image must have shape (H, W, 3), got {img.shape}")
    return img


def run_models(image: np.ndarray, config: CropConfig | None = None, *,
               threads: int | None = None) -> tuple[np.ndarray, tuple]:
    """The expensive half of :func:`analyse`: the saliency map and the detections, nothing made of them.

    Shaped only by the image, ``config.saliency``, ``config.active_detectors``
    and the models' versions; a cache of its output (the scoreboard's) keys on
    those alone.  :func:`analysis_from` turns it into the :class:`Analysis`.

    Returns
    -------
    saliency : ndarray of float32, shape (H, W)
        The saliency model's map (faces not yet raised).
    detections : tuple of Detection
    """
    cfg = config or CropConfig()
    img = _checked(image)
    # The detectors' short runs first: the sessions are built on a second thread while the photo is opened
    # (models.prefetch, in model_files' order), and U^2-Netp's long run then has both cores to itself
    # (docs/speed.md, "The detectors first"); neither result depends on the other.
    dets = _run_detectors(img, cfg.active_detectors, threads)
    return compute_saliency(img, method=cfg.saliency, threads=threads), dets


def analysis_from(image: np.ndarray, saliency: np.ndarray, detections: Sequence, config: CropConfig | None = None, *,
                  focus: Box | None = None, given: bool = False) -> Analysis:
    """The cheap half of :func:`analyse`: faces raised in ``saliency``, subjects made, the key (no model run).

    ``analysis_from(image, *run_models(image, config), config)`` is
    ``analyse(image, config)``.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        The analysis copy the map and detections were made from (hashed into the key).
    saliency : ndarray of float, shape (H, W)
        The saliency model's map (not changed).
    detections : sequence of Detection
    config : CropConfig, optional
    focus : Box, optional
    given : bool
        The detections were given by the caller (``analyse(..., detections=)``),
        not found by ``config``'s detectors: they go into the key.
    """
    cfg = config or CropConfig()
    img = _checked(image)
    h, w = img.shape[:2]
    sal = saliency
    versions = _saliency_version(cfg) | detector_versions_of(cfg)
    dets = tuple(detections)
    faces = [d for d in dets if d.kind == "face"]
    if faces:
        from ..saliency.faces import Face, add_faces

        sal = add_faces(sal, [Face(d.box, d.score) for d in faces])
    subjects = find_subjects(sal, dets, config=cfg.subjects, focus=focus)
    key = content_hash({
        "image": hash_bytes(img.tobytes()), "shape": list(img.shape),
        "given": None if not given else [
            [d.kind, d.label, d.box.x, d.box.y, d.box.w, d.box.h, round(float(d.score), 6)] for d in dets],
        "focus": None if focus is None else [focus.x, focus.y, focus.w, focus.h],
    }) + "/" + settings_key(cfg)
    return Analysis((w, h), sal, dets, subjects, versions, key, focus)


def analyse(image: np.ndarray, config: CropConfig | None = None, *, threads: int | None = None,
            detections: Sequence | None = None, focus: Box | None = None) -> Analysis:
    """Saliency, detections and subjects of ``image`` (the analysis copy of a photo).

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        The analysis copy (``LoadedImage.analysis``), RGB.
    config : CropConfig, optional
        ``saliency``, ``detectors`` (``faces=False`` drops YuNet),
        ``analysis_max_side`` and the subject settings in ``subjects``.
    threads : int, optional
        Threads for the models; never changes the result.
    detections : sequence of Detection, optional
        Use these instead of running the detectors (analysis pixels; tests and
        evaluations with known objects).
    focus : Box, optional
        The user's point (a box of zero size) or region, analysis pixels: a
        subject one crop must hold.

    Returns
    -------
    Analysis
    """
    cfg = config or CropConfig()
    img = _checked(image)
    if detections is None:
        sal, dets = run_models(img, cfg, threads=threads)
    else:
        sal, dets = compute_saliency(img, method=cfg.saliency, threads=threads), tuple(detections)
    return analysis_from(img, sal, dets, cfg, focus=focus, given=detections is not None)


def with_focus(analysis: Analysis, focus: Box | None, config: CropConfig | None = None) -> Analysis:
    """``analysis`` with another focus (analysis pixels): the subjects made again, no model run.

    ``config`` must carry the subject settings ``analysis`` was made with.
    """
    cfg = config or CropConfig()
    subjects = find_subjects(analysis.saliency, analysis.detections, config=cfg.subjects, focus=focus)
    base = analysis.key.split("/", 1)
    key = content_hash({"base": base[0], "focus": None if focus is None else [focus.x, focus.y, focus.w, focus.h]})
    key = key + "/" + (base[1] if len(base) > 1 else settings_key(cfg))
    return Analysis(analysis.size, analysis.saliency, analysis.detections, subjects, dict(analysis.versions), key,
                    focus)


def parse_focus(text: str) -> Box:
    """``"X,Y"`` (a point) or ``"X,Y,W,H"`` (a region), source pixels, as a Box.

    Examples
    --------
    >>> parse_focus("120,80"), parse_focus("10, 20, 30, 40")
    (Box(x=120.0, y=80.0, w=0.0, h=0.0), Box(x=10.0, y=20.0, w=30.0, h=40.0))
    """
    parts = [p.strip() for p in str(text).split(",")]
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        vals = []
    if len(vals) not in (2, 4) or any(not np.isfinite(v) or v < 0 for v in vals):
        raise InvalidParameterError(
            f"focus must be X,Y or X,Y,W,H in source pixels (non-negative numbers), got {text!r}")
    if len(vals) == 2:
        vals += [0.0, 0.0]
    return Box(*vals)
