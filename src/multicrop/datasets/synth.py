"""carousel-synth: scenes rendered on the real Carousel label geometry.

The Carousel photos (1.4 GB) are not available offline, but their labels are
(shipped inside multicrop: :mod:`multicrop.datasets.carousel_labels`, the
default source; a directory of real label files works too).
For each real label file this module renders an image of the same aspect
(long side at most ``max_side``) whose salient subjects sit where the human
crops are, and writes it in the Carousel layout with the real boxes (scaled)
as ground truth, so ``multicrop eval carousel`` runs on it unchanged.

Subjects are public-domain and CC0 photos shipped inside multicrop
(:mod:`multicrop.datasets.photos`: scikit-image's astronaut, Chelsea the cat,
coffee cup, rocket, motorcycle, cameraman), cut out with their own U^2-Netp
saliency mask thresholded at 0.5 (largest connected component).
Backgrounds are blurred, low-contrast views of those photos and of
textures (Hubble deep field, grass, gravel, brick, ...), so subjects stand
out as they do in the real photos.  Composition follows the annotators: a
subject is centred in each box (with jitter) and fills 55-85 % of it, larger
boxes are painted first; overlapping boxes, mixed orientations and very wide
images come with the real geometry, and ``hard_failures.txt`` lists the same
names as the real one (all 45 real failures are among the 170 label files).

carousel-synth-hard (``hard=True``) removes what a framing prior and easy
saliency get for free: subjects are placed anywhere in their box that keeps
them inside it (not centred), subjects are painted in random order so larger
ones may partly hide smaller ones, and backgrounds are sharp, full-contrast
photographs: the user's own (``backgrounds``, a directory of JPEG/PNG files;
a benchmark may fetch free ones, e.g. Debian's desktop-background packages,
never committed) or, without them, the shipped photos unblurred.

Deterministic for a seed: the random stream of each image is seeded by
``(seed, crc32(name))``; the subject masks come from U^2-Netp on fixed
inputs (computed once per process).

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman, "Carousel:
   A High-Resolution Dataset for Multi-Target Automatic Image Cropping",
   sections III and IV-C; https://github.com/RafeLoya/carousel.
"""

from __future__ import annotations

import contextlib
import functools
import json
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DatasetError, InvalidParameterError, MissingExtraError, MulticropError
from ..io import LABEL_LIMIT, atomic_path, atomic_write_text, read_json_bounded
from ..serialize import Serializable
from .carousel import load_carousel
from .carousel_labels import write_labelme
from .synth_backgrounds import BACKGROUNDS, load_backgrounds, resize_to, sample_rgb, sharp_background, soft_background

__all__ = ["SYNTH_VERSION", "SUBJECTS", "BACKGROUNDS", "SynthSummary", "make_synth", "render_scene", "subject_cutout",
           "load_backgrounds"]

#: Bump when the rendered images or what the files say change (2: each image's metadata names the
#: subject painted in each box, ``subjects``, in the label file's box order; the images are those of 1).
SYNTH_VERSION = "carousel-synth-2"

#: Photos used as subjects (:data:`~multicrop.datasets.photos.SAMPLE_PHOTOS`, shipped inside multicrop).
SUBJECTS: tuple[str, ...] = ("astronaut", "chelsea", "coffee", "rocket", "motorcycle", "camera")


@dataclass(frozen=True)
class SynthSummary(Serializable):
    """What :func:`make_synth` wrote (``to_dict()`` is the content of ``synth_info.json``)."""

    out_dir: Path
    n_images: int
    n_boxes: int
    n_hard_failures: int
    seed: int
    max_side: int
    version: str = SYNTH_VERSION
    hard: bool = False
    n_backgrounds: int = 0


def _ndimage():
    """``scipy.ndimage`` (the ``eval`` extra), or an error saying how to install it."""
    try:
        from scipy import ndimage
    except ImportError as exc:
        raise MissingExtraError.for_module(
            "scipy", extra="eval", feature="carousel-synth (`multicrop bench synth`)") from exc
    return ndimage


@functools.lru_cache(maxsize=None)
def subject_cutout(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A subject photo cut out by its U^2-Netp mask.

    Returns
    -------
    rgb : ndarray of uint8, shape (h, w, 3)
        The subject's bounding box in the photo.
    alpha : ndarray of float32, shape (h, w)
        Its mask in [0, 1] (the largest component of saliency > 0.5, feathered).
    """
    from ..saliency import compute_saliency

    ndi = _ndimage()

    if name not in SUBJECTS:
        raise InvalidParameterError(f"subject must be one of {', '.join(SUBJECTS)}, got {name!r}")
    img = sample_rgb(name)
    sal = compute_saliency(img, method="u2netp")
    mask = sal > 0.5
    lab, n = ndi.label(mask)
    if n == 0:  # pragma: no cover - every shipped subject has a mask
        raise DatasetError(f"no salient object found in the sample photo {name!r}")
    sizes = ndi.sum(mask, lab, range(1, n + 1))
    mask = ndi.binary_fill_holes(lab == int(np.argmax(sizes)) + 1)
    ys, xs = np.nonzero(mask)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    alpha = ndi.gaussian_filter(mask.astype(np.float32), 1.0)[y0:y1, x0:x1]
    return img[y0:y1, x0:x1].copy(), np.clip(alpha, 0, 1).astype(np.float32)


def _paste(canvas: np.ndarray, rgb: np.ndarray, alpha: np.ndarray, x: int, y: int) -> None:
    h, w = alpha.shape
    H, W = canvas.shape[:2]
    cx0, cy0 = max(x, 0), max(y, 0)
    cx1, cy1 = min(x + w, W), min(y + h, H)
    if cx1 <= cx0 or cy1 <= cy0:
        return
    a = alpha[cy0 - y: cy1 - y, cx0 - x: cx1 - x, None]
    s = rgb[cy0 - y: cy1 - y, cx0 - x: cx1 - x].astype(np.float32)
    region = canvas[cy0:cy1, cx0:cx1]
    canvas[cy0:cy1, cx0:cx1] = region * (1 - a) + s * a


def render_scene(
    width: int, height: int, boxes: Sequence, rng: np.random.Generator, *, hard: bool = False,
    backgrounds: Sequence[np.ndarray] = (),
) -> np.ndarray:
    """An RGB image of ``width x height`` with one subject centred in each box.

    Parameters
    ----------
    boxes : sequence of Box
        Where the subjects go (output pixels).
    rng : numpy.random.Generator
    hard : bool
        carousel-synth-hard: subjects anywhere inside their box, painted in
        random order (partial occlusion), sharp backgrounds.
    backgrounds : sequence of ndarray
        ``hard``: photos to take backgrounds from (default: the shipped ones, unblurred).

    Returns
    -------
    ndarray of uint8, shape (height, width, 3)
    """
    return _render(width, height, boxes, rng, hard=hard, backgrounds=backgrounds)[0]


def _render(width: int, height: int, boxes: Sequence, rng: np.random.Generator, *, hard: bool,
            backgrounds: Sequence[np.ndarray]) -> tuple[np.ndarray, list[str]]:
    """:func:`render_scene`'s image and the name of the subject painted in each box (in ``boxes``' order)."""
    if hard:
        photos = list(backgrounds) or [sample_rgb(n) for n in BACKGROUNDS]
        canvas = sharp_background(width, height, rng, photos)
        order = [int(i) for i in rng.permutation(len(boxes))]
    else:
        canvas = soft_background(width, height, rng)
        order = sorted(range(len(boxes)), key=lambda i: -boxes[i].area)
    picks = rng.permutation(len(SUBJECTS))
    names = [""] * len(boxes)
    for j, i in enumerate(order):
        b = boxes[i]
        names[i] = SUBJECTS[int(picks[j % len(SUBJECTS)])]
        rgb, alpha = subject_cutout(names[i])
        sh, sw = alpha.shape
        fill = rng.uniform(0.55, 0.85)
        s = fill * min(b.w / sw, b.h / sh)
        nw, nh = max(int(round(sw * s)), 1), max(int(round(sh * s)), 1)
        if rng.random() < 0.5:
            rgb, alpha = rgb[:, ::-1], alpha[:, ::-1]
        rgb_s = resize_to(np.ascontiguousarray(rgb), nw, nh)
        a_s = resize_to(np.ascontiguousarray(alpha), nw, nh)
        if hard:  # anywhere that keeps the subject inside its box
            cx = b.x + nw / 2 + rng.uniform(0, max(b.w - nw, 0))
            cy = b.y + nh / 2 + rng.uniform(0, max(b.h - nh, 0))
        else:
            cx = b.x + b.w / 2 + rng.uniform(-0.08, 0.08) * b.w
            cy = b.y + b.h / 2 + rng.uniform(-0.08, 0.08) * b.h
        _paste(canvas, rgb_s, a_s, int(round(cx - nw / 2)), int(round(cy - nh / 2)))
    return np.clip(canvas + 0.5, 0, 255).astype(np.uint8), names


def make_synth(
    labels_dir: str | Path | None,
    out_dir: str | Path,
    *,
    seed: int = 0,
    max_side: int = 1600,
    names: Sequence[str] | None = None,
    quality: int = 90,
    progress: Callable[[str], None] | None = None,
    hard: bool = False,
    backgrounds: str | Path | None = None,
) -> SynthSummary:
    """Write a carousel-synth dataset in the Carousel layout.

    Parameters
    ----------
    labels_dir : path or None
        A Carousel directory (``dataset/*.json``, ``hard_failures.txt``;
        images are not needed), or None for the label geometry shipped with
        multicrop (the real files, :mod:`multicrop.datasets.carousel_labels`).
    out_dir : path
        Where to write ``dataset/<name>.jpg|.json|_metadata.json``,
        ``hard_failures.txt`` and ``synth_info.json``.  The items of an
        earlier carousel-synth set there that this set does not rewrite are
        removed (only files this function wrote, known by the ``creator`` of
        their ``_metadata.json``; other files are kept), so the folder holds
        exactly the set ``synth_info.json`` describes.
    seed : int
        Same seed, same bytes.
    max_side : int
        Long side of the rendered images (smaller sources are not enlarged).
    names : sequence of str, optional
        Only these items (default: all).
    quality : int
        JPEG quality.
    progress : callable, optional
        Called with each item's name after it is written.
    hard : bool
        Write carousel-synth-hard (see the module notes).
    backgrounds : path, optional
        ``hard``: a directory of photos used as sharp backgrounds.

    Raises
    ------
    InvalidParameterError
        Bad ``max_side``/``quality``/``seed`` or unknown names.
    DatasetError
        ``labels_dir`` is not a Carousel directory.
    MissingExtraError
        SciPy (the ``eval`` extra) is not installed.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidParameterError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 64:
        raise InvalidParameterError(f"max_side must be an integer >= 64, got {max_side!r}")
    if not 1 <= quality <= 100:
        raise InvalidParameterError(f"quality must be in [1, 100], got {quality!r}")
    _ndimage()  # fail before writing anything when the eval extra is missing
    if backgrounds is not None and not hard:
        raise InvalidParameterError("backgrounds: only used with hard=True (carousel-synth-hard)")
    photos = load_backgrounds(backgrounds) if backgrounds is not None else []
    with contextlib.ExitStack() as stack:
        where = str(labels_dir)
        if labels_dir is None:  # the shipped geometry, written out as the real files
            labels_dir = write_labelme(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "carousel")
            where = "the shipped Carousel labels"
        return _write_synth(Path(labels_dir), Path(out_dir), where=where, seed=seed, max_side=max_side,
                            names=names, quality=quality, progress=progress, hard=hard, photos=photos)


#: How every ``<name>_metadata.json`` this module writes starts its ``creator`` (then the version and seed).
_CREATOR_PREFIX = "multicrop carousel-synth"


def _remove_earlier_items(ddir: Path, *, keep: set[str]) -> list[str]:
    """Remove the items of an earlier carousel-synth set in ``ddir`` that the new set does not rewrite.

    An item is removed only when it is entirely this module's own: its
    ``<name>_metadata.json`` is a JSON object whose ``creator`` starts with
    :data:`_CREATOR_PREFIX`; then its ``<name>.jpg``, ``<name>.json`` and
    ``<name>_metadata.json`` go.  Every other file (a user's photos and labels,
    a metadata file that cannot be read) is left as it is.

    Returns
    -------
    list of str
        The names of the items removed, sorted.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for name, creator in (("old", "multicrop carousel-synth-2 (seed 0)"), ("mine", "Jane Doe")):
    ...     for suffix in (".jpg", ".json"):
    ...         _ = (d / f"{name}{suffix}").write_text("x")
    ...     _ = (d / f"{name}_metadata.json").write_text(json.dumps({"creator": creator}))
    >>> _remove_earlier_items(d, keep=set()), sorted(p.name for p in d.iterdir())
    (['old'], ['mine.jpg', 'mine.json', 'mine_metadata.json'])
    """
    if not ddir.is_dir():
        return []
    removed = []
    for meta in sorted(ddir.glob("*_metadata.json")):
        name = meta.name[: -len("_metadata.json")]
        if name in keep or not meta.is_file():
            continue
        try:
            doc = read_json_bounded(meta, limit=LABEL_LIMIT, what="carousel-synth metadata file")
        except MulticropError:  # not ours to judge: leave it
            continue
        if not (isinstance(doc, dict) and str(doc.get("creator", "")).startswith(_CREATOR_PREFIX)):
            continue
        for path in (ddir / f"{name}.jpg", ddir / f"{name}.json", meta):
            path.unlink(missing_ok=True)
        removed.append(name)
    return removed


def _write_synth(labels_dir: Path, out: Path, *, where: str, seed: int, max_side: int,
                 names: Sequence[str] | None, quality: int,
                 progress: Callable[[str], None] | None, hard: bool = False,
                 photos: Sequence[np.ndarray] = ()) -> SynthSummary:
    from PIL import Image

    src = load_carousel(labels_dir, require_images=False)
    items = src.items
    if not items:  # an empty, garbage or NaN label folder is no benchmark: say why instead of writing none
        why = "; ".join(f"{s.name}: {s.reason}" for s in src.skipped[:3]) or "no label file in dataset/"
        more = f" (and {len(src.skipped) - 3} more)" if len(src.skipped) > 3 else ""
        raise DatasetError(f"{where}: no usable Carousel label file ({why}{more})")
    if names is not None:
        known = {i.name for i in items}
        missing = [n for n in names if n not in known]
        if missing:
            raise InvalidParameterError(f"names not in {where}: {', '.join(missing)}")
        wanted = set(names)
        items = tuple(i for i in items if i.name in wanted)
    ddir = out / "dataset"
    _remove_earlier_items(ddir, keep={i.name for i in items})
    ddir.mkdir(parents=True, exist_ok=True)
    n_boxes = 0
    for item in items:
        raw = read_json_bounded(labels_dir / "dataset" / f"{item.name}.json", limit=LABEL_LIMIT,
                                what="Carousel label file")
        f = min(1.0, max_side / max(item.width, item.height))
        w, h = max(int(round(item.width * f)), 1), max(int(round(item.height * f)), 1)
        sx, sy = w / item.width, h / item.height
        rng = np.random.default_rng([seed, zlib.crc32(item.name.encode("utf-8"))])
        boxes = [b.scale(sx, sy) for b in item.boxes]
        img, painted = _render(w, h, boxes, rng, hard=hard, backgrounds=photos)
        with atomic_path(ddir / f"{item.name}.jpg") as tmp:
            Image.fromarray(img).save(tmp, format="JPEG", quality=quality)
        shapes = []
        for shape in raw["shapes"]:
            s = dict(shape)
            s["points"] = [[p[0] * sx, p[1] * sy] for p in shape["points"]]
            shapes.append(s)
        labels = {
            "version": raw.get("version", ""),
            "flags": {},
            "shapes": shapes,
            "imagePath": f"{item.name}.jpg",
            "imageData": None,
            "imageHeight": h,
            "imageWidth": w,
        }
        meta = {
            "website_url": "",
            "subcrops": item.k,
            "title": item.name,
            "creator": f"multicrop {SYNTH_VERSION}{' hard' if hard else ''} (seed {seed}) from scikit-image sample photos",
            "copyright_license_type": "scikit-image sample data (see skimage.data)",
            "source_size": [item.width, item.height],
            "subjects": painted,
        }
        atomic_write_text(ddir / f"{item.name}.json", json.dumps(labels, indent=2, ensure_ascii=False) + "\n")
        atomic_write_text(ddir / f"{item.name}_metadata.json", json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        n_boxes += len(boxes)
        if progress is not None:
            progress(item.name)
    hard_names = sorted(i.name for i in items if i.hard_failure)
    atomic_write_text(out / "hard_failures.txt", "".join(f"{n}\n" for n in hard_names))
    summary = SynthSummary(out, len(items), n_boxes, len(hard_names), seed, max_side, hard=hard,
                           n_backgrounds=len(photos))
    atomic_write_text(out / "synth_info.json", json.dumps(summary.to_dict(), indent=2) + "\n")
    return summary
