"""Run the scoreboard's sections: every photo cropped by the product, measured per photo.

Each photo is one task (in this process, or a pool of spawned worker
processes): its analysis copy is loaded as :func:`multicrop.crop_photo`
loads it, the saliency map and detections come from the
:class:`~multicrop.evaluation.scoreboard.cache.ModelCache`, the subjects are
made again (:func:`multicrop.crop.analysis.analysis_from`), and
``crop_photo(..., analysis=)`` crops it under each variant's
:class:`~multicrop.crop.config.CropConfig`.  Only the public API of the crop
wing is used, so the scoreboard keeps working while its internals change.

A photo yields one dict of counts per row (:data:`multicrop.evaluation.
scoreboard.figures.ROWS` says which figures each row adds up from them).
A photo the product cannot crop counts with no crop.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError, MulticropError
from ...ratios import PRESETS
from .cache import ModelCache
from .sets import OUTLINED, THIN_SUBJECT, frame_is_empty, holds_thin_subject, synth_dir

__all__ = ["SECTIONS", "Variant", "PhotoRows", "ScoreboardRun", "run_scoreboard", "synth_dir"]

#: The sections ``--only`` chooses among.
SECTIONS: tuple[str, ...] = ("coco", "synth", "hard")

#: The ratios every row crops at: the Carousel paper's 2:3 and 3:2 (a preset, so a new default never moves the board).
RATIOS = PRESETS["carousel"].text


@dataclass(frozen=True)
class Variant:
    """One way the product is asked to crop: a row name, a strategy and a k (``"given"``: the labelled k)."""

    row: str
    strategy: str = "direct"
    k: int | str = "auto"
    #: Settings changed from the defaults: ``CropConfig.replace`` names, and ``selection__...`` / ``subjects__...``
    #: paths into the nested settings (``selection__details__salient``).
    changes: tuple[tuple[str, Any], ...] = ()
    #: ``(head path, weight, top)``: the candidates are rated by a
    #: :class:`~multicrop.crop.scoring.learned.LearnedScorer` over the configured scorer.
    learned: tuple[str, float, int] | None = None

    def config(self, given_k: int | None = None):
        from ...crop.config import CropConfig

        k = given_k if self.k == "given" else self.k
        cfg = CropConfig(strategy=self.strategy, k=k, ratios=RATIOS)
        top: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in self.changes:
            head, _, rest = key.partition("__")
            if rest and dataclasses.is_dataclass(getattr(cfg, head, None)):
                nested.setdefault(head, {})[rest] = value
            else:
                top[key] = value
        for head, sub in nested.items():
            part = getattr(cfg, head)
            if hasattr(part, "set"):  # Settings: a__b paths, validated with the allowed names
                top[head] = part.set(**sub)
            else:  # a plain frozen dataclass (weights, candidates): one level of fields
                unknown = sorted(set(sub) - {f.name for f in dataclasses.fields(part)})
                if unknown:
                    raise InvalidParameterError(f"CropConfig.{head}: unknown setting {unknown[0]!r}")
                top[head] = dataclasses.replace(part, **sub)
        try:
            return cfg.replace(**top) if top else cfg
        except TypeError as exc:  # dataclasses.replace of a name that is no field
            raise InvalidParameterError(f"CropConfig: {exc}") from None


COCO_MULTI = (Variant("coco-multi k=auto"), Variant("coco-multi k=3", k=3),
              Variant("coco-multi instagram k=3", k=3, changes=(("ratios", "instagram"),)),
              Variant("coco-multi instagram k=auto", changes=(("ratios", "instagram"),)))
COCO_OTHER = (Variant("coco-other k=auto"),)
SYNTH = (Variant("synth k=auto"), Variant("synth k=given", k="given"))
HARD = (Variant("hard direct k=given", k="given"), Variant("hard partition k=given", "partition", "given"))


@dataclass(frozen=True)
class PhotoRows:
    """One photo's counts per row, its crops and failures, and how its models were found."""

    photo: str
    counts: dict[str, dict[str, float]]
    boxes: dict[str, list[list[int]]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class ScoreboardRun:
    """Every photo's rows, and how the run went.

    Attributes
    ----------
    photos : dict of str to dict of str to dict
        ``photos[row][photo_id]`` is the photo's counts in that row.
    boxes, failures : dict
        Keyed like ``photos`` (failures only where the product raised).
    seconds : float
        Wall time of the run.
    workers, threads : int
    hits, misses : int
        Model-cache lookups.
    """

    photos: dict[str, dict[str, dict[str, float]]]
    boxes: dict[str, dict[str, list[list[int]]]]
    failures: dict[str, dict[str, str]]
    seconds: float
    workers: int
    threads: int
    hits: int
    misses: int


# --------------------------------------------------------------------------- one photo


def _crop(loaded, variant: Variant, models: tuple, given_k: int | None, threads: int, analyses: dict):
    """The product's boxes for ``loaded`` under ``variant`` (source pixels), or a failure.

    ``analyses`` holds the photo's analyses by :func:`~multicrop.crop.analysis.settings_key`: variants
    that differ only in k, ratios or strategy share one (as the web page shares it).
    """
    from ...crop.analysis import analysis_from, settings_key
    from ...crop.pipeline import crop_photo

    cfg = variant.config(given_k)
    try:
        key = settings_key(cfg)
        if key not in analyses:
            analyses[key] = analysis_from(loaded.analysis, models[0], models[1], cfg)
        scorer = None if variant.learned is None else _learned_scorer(variant.learned, cfg.scorer, cfg.weights)
        res = crop_photo(loaded, cfg, analysis=analyses[key], threads=threads, scorer=scorer)
    except MulticropError as exc:
        return (), f"{type(exc).__name__}: {exc}"
    return tuple(c.box for c in res.crops), None


@functools.lru_cache(maxsize=4)
def _learned_scorer(learned: tuple[str, float, int], name: str, weights):
    """One :class:`~multicrop.crop.scoring.learned.LearnedScorer` per worker process (its embeddings stay warm)."""
    from ...crop.scoring import SCORERS
    from ...crop.scoring.learned import LearnedScorer
    from ...judges.heads import load_head

    path, weight, top = learned
    return LearnedScorer(load_head(path), SCORERS.create(name, weights=weights), weight=weight, top=top, threads=1)


def _load(path: Path):
    from ...crop.config import CropConfig
    from ...io import load_image

    return load_image(path, max_side=CropConfig().analysis_max_side)


def _coco_task(photo, rules, variants_multi, variants_other, cache_root, threads) -> PhotoRows:
    from ...evaluation.subjects.metrics import measure_photo

    t0 = time.perf_counter()
    cache = ModelCache(cache_root)
    masks, cats = photo.masks(), photo.categories
    crowd = tuple(o.crowd for o in photo.objects)
    multi = measure_photo(masks, cats, (), rules=rules, crowd=crowd).qualifies
    blank = frame_is_empty(masks, cats, photo.size, rules=rules, crowd=crowd)
    loaded = _load(photo.path)
    models = cache.models(loaded.analysis, variants_multi[0].config(), threads=threads)
    counts, boxes, failures, analyses = {}, {}, {}, {}
    for v in (variants_multi if multi else variants_other):
        got, failure = _crop(loaded, v, models, None, threads, analyses)
        if failure is None and loaded.size != photo.size:
            got, failure = (), (f"the photo is {loaded.size[0]}x{loaded.size[1]} as shown but its outlines are for "
                                f"{photo.size[0]}x{photo.size[1]} (EXIF orientation?)")
        m = measure_photo(masks, cats, got, rules=rules, crowd=crowd)
        c = {"photos": 1, "crops": m.n_crops, "person_cut": m.person_cut, "subject_cut": m.subject_cut,
             "empty": m.empty, "portrait": m.portrait, "person_cut_v1": m.person_cut_v1,
             "prominent": m.n_prominent, "covered": m.covered, "featured": m.featured}
        for r in [v.row] + ([f"{v.row} {OUTLINED}"] if not multi and not blank else []):
            counts[r] = c
            boxes[r] = [[round(b.x), round(b.y), round(b.w), round(b.h)] for b in got]
            if failure:
                failures[r] = failure
    return PhotoRows(photo.id, counts, boxes, failures, cache.hits, cache.misses, time.perf_counter() - t0)


def _carousel_task(item, variants, cache_root, threads, failures_suffix: str | None) -> PhotoRows:
    from ...metrics.kiou import KIOU_THRESHOLDS, image_kiou

    t0 = time.perf_counter()
    thin = holds_thin_subject(item)
    cache = ModelCache(cache_root)
    loaded = _load(item.image_path)
    models = cache.models(loaded.analysis, variants[0].config(item.k), threads=threads)
    counts, boxes, failures, analyses = {}, {}, {}, {}
    for v in variants:
        got, failure = _crop(loaded, v, models, item.k, threads, analyses)
        totals = [image_kiou(got, item.boxes, threshold=t).total for t in KIOU_THRESHOLDS]
        c = {"photos": 1, "crops": len(got), "gt": len(item.boxes), "kiou_50": totals[0],
             "kiou_50_95": statistics.fmean(totals), "k_exact": int(len(got) == item.k)}
        rows = [v.row] + ([f"{v.row} {failures_suffix}"] if failures_suffix and item.hard_failure else [])
        rows += [f"{v.row} without the {THIN_SUBJECT}"] if failures_suffix is None and thin is False else []
        for r in rows:
            counts[r] = c
            boxes[r] = [[round(b.x), round(b.y), round(b.w), round(b.h)] for b in got]
            if failure:
                failures[r] = failure
    return PhotoRows(item.name, counts, boxes, failures, cache.hits, cache.misses, time.perf_counter() - t0)


def _init_worker() -> None:
    """Each worker process uses one core's worth of threads (onnxruntime reads these at session start)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


# --------------------------------------------------------------------------- the run


def run_scoreboard(
    *,
    coco: str | Path | None = None,
    carousel: str | Path | None = None,
    only: Sequence[str] = SECTIONS,
    cache: str | Path | None = None,
    threads: int = 1,
    seed: int = 0,
    backgrounds: str | Path | None = None,
    limit: int | None = None,
    progress: Callable[[str], None] | None = None,
    changes: Mapping[str, Any] | None = None,
    learned: tuple[str | Path, float, int] | None = None,
) -> ScoreboardRun:
    """Crop every photo of the chosen sections with the product and count each row per photo.

    Parameters
    ----------
    coco : path, optional
        A folder of outlined photos (:func:`multicrop.datasets.outlines.load_outlines`);
        needed for the ``coco`` section.
    carousel : path, optional
        Real Carousel label files (``dataset/``, ``hard_failures.txt``) that
        carousel-synth is built on; default: the label geometry shipped with multicrop.
    only : sequence of str
        Sections to run, among :data:`SECTIONS`.
    cache : path, optional
        The model cache and the rendered synthetic sets live here (default:
        a temporary directory, removed afterwards).
    threads : int
        CPU cores to use: that many worker processes with one model thread each (1: this process).
    seed : int
        carousel-synth's seed.
    backgrounds : path, optional
        Photos for carousel-synth-hard's backgrounds (default: the shipped photos).
    limit : int, optional
        Only the first ``limit`` photos of each data set (a quick look; not comparable to a baseline).
    progress : callable, optional
        Called with each photo's id when it is done.
    changes : mapping, optional
        Settings to try instead of the defaults, in every row: names of
        :meth:`multicrop.crop.config.CropConfig.replace` (``{"ratios": "1:1"}``), or paths into its
        ``selection`` and ``subjects`` (``{"selection__details__salient": 0.5}``); a run with changes is no
        baseline.
    learned : (path, float, int), optional
        ``(head, weight, top)``: every row rates its candidates with a
        :class:`~multicrop.crop.scoring.learned.LearnedScorer` of that head
        file (:func:`multicrop.judges.heads.load_head`), weight and top; no baseline either.

    Raises
    ------
    InvalidParameterError
        For an unknown section, a bad ``threads``, a missing ``coco`` or a setting that is no field.
    """
    only = tuple(only)
    unknown = [s for s in only if s not in SECTIONS]
    if unknown or not only:
        raise InvalidParameterError(f"only must name sections among {', '.join(SECTIONS)}, got {list(only)!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidParameterError(f"threads must be a positive integer, got {threads!r}")
    if "coco" in only and coco is None:
        raise InvalidParameterError("the coco section needs coco=<a folder of outlined photos>")
    changed = tuple(sorted((changes or {}).items()))
    Variant("check", changes=changed).config()  # an unknown or invalid setting fails here, not in a worker
    if learned is not None:
        learned = (str(learned[0]), float(learned[1]), int(learned[2]))
        _learned_scorer(learned, "composition", Variant("check").config().weights)  # a bad head fails here too
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="scoreboard-") as tmp:
        root = Path(cache) if cache is not None else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        tasks = _tasks(only, coco, carousel, root, seed, backgrounds, limit, changed, learned)
        results = _execute(tasks, threads, progress)
    photos: dict = {}
    boxes: dict = {}
    failures: dict = {}
    for pr in sorted(results, key=lambda r: r.photo):
        for row, c in pr.counts.items():
            photos.setdefault(row, {})[pr.photo] = c
            boxes.setdefault(row, {})[pr.photo] = pr.boxes.get(row, [])
        for row, f in pr.failures.items():
            failures.setdefault(row, {})[pr.photo] = f
    return ScoreboardRun(photos, boxes, failures, time.perf_counter() - t0, threads, 1,
                         sum(r.hits for r in results), sum(r.misses for r in results))


def _tasks(only, coco, carousel, root: Path, seed: int, backgrounds, limit, changes=(), learned=None) -> list[tuple]:
    from ...datasets.carousel import load_carousel
    from ...datasets.outlines import load_outlines
    from ..subjects.metrics import SubjectRules

    tasks: list[tuple] = []
    cache_root = root

    def changed(variants):
        return tuple(dataclasses.replace(v, changes=v.changes + tuple(changes), learned=learned) for v in variants)

    if "coco" in only:
        photos = load_outlines(coco).photos[:limit]
        rules = SubjectRules()
        tasks += [(_coco_task, (p, rules, changed(COCO_MULTI), changed(COCO_OTHER), cache_root)) for p in photos]
    labels = None if carousel is None else Path(carousel)
    # carousel-synth-hard also counts its hard-failure geometries alone, in rows "<row> failures".
    for section, hard, variants, suffix in (("synth", False, SYNTH, None), ("hard", True, HARD, "failures")):
        if section not in only:
            continue
        data = synth_dir(root, labels, seed=seed, hard=hard,
                         backgrounds=None if (backgrounds is None or not hard) else Path(backgrounds))
        items = load_carousel(data).items[:limit]
        tasks += [(_carousel_task, (item, changed(variants), cache_root, suffix)) for item in items]
    # Slow photos first keeps both workers busy to the end: the synthetic scenes are the larger images.
    return tasks[::-1]


def _execute(tasks: list[tuple], threads: int, progress) -> list[PhotoRows]:
    out: list[PhotoRows] = []
    if threads == 1 or len(tasks) < 2:
        for fn, args in tasks:
            out.append(_call(fn, args, 1))
            if progress is not None:
                progress(out[-1].photo)
        return out
    with ProcessPoolExecutor(max_workers=threads, mp_context=get_context("spawn"), initializer=_init_worker) as pool:
        futures = [pool.submit(_call, fn, args, 1) for fn, args in tasks]
        for fut in as_completed(futures):
            out.append(fut.result())
            if progress is not None:
                progress(out[-1].photo)
    return out


def _call(fn, args, threads: int) -> PhotoRows:
    if fn is _carousel_task:
        item, variants, cache_root, suffix = args
        return fn(item, variants, cache_root, threads, suffix)
    photo, rules, multi, other, cache_root = args
    return fn(photo, rules, multi, other, cache_root, threads)
