"""Uploaded photos, their cached analysis, and crops for given settings.

The web page changes k, the ratios or the strategy many times per photo; the
analysis (saliency map, detections, subjects:
:class:`multicrop.crop.analysis.Analysis`) depends on none of these, so each
photo is analysed once (in a worker thread) and every later request hands
that analysis to :func:`multicrop.crop.pipeline.crop_photo`.  Analyses are
cached per photo under :func:`multicrop.crop.analysis.settings_key` (every
setting and model version an analysis depends on), so a request whose
analysis settings differ computes its own and never meets a stale one.

Photos belong to the browser session that uploaded them (a random id in a
cookie): another session cannot list, see or change them.

An upload's record and display copy are :mod:`multicrop.web.upload`; k and
the strategies that take ``k="auto"`` :mod:`multicrop.web.crop_settings`
(both re-exported here).
"""

from __future__ import annotations

import dataclasses
import io
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..crop.analysis import Analysis, analyse, settings_key
from ..crop.config import CropConfig
from ..crop.pipeline import CropResult, crop_photo
from ..errors import ImageLoadError, ImageTooSmallError, InvalidParameterError, MulticropError
from ..geometry import Box
from ..io import DEFAULT_MAX_PIXELS, load_image
from ..ratios import parse_ratio_spec
from .crop_settings import _parse_k, auto_k_strategies  # noqa: F401 - re-exported
from .upload import DISPLAY_SIDE, Photo, _strip_path, display_jpeg  # noqa: F401 - re-exported

__all__ = ["Photo", "PhotoStore", "DISPLAY_SIDE"]


class PhotoStore:
    """The photos of one server process, in a temporary directory deleted on :meth:`close`.

    Parameters
    ----------
    config : CropConfig
        Base settings; requests change only k, ratios and strategy.
    max_pixels : int
        Decompression-bomb limit for uploads.
    ttl_s : float
        Photos untouched for this long are deleted (with their files).
    threads : int, optional
        Threads for the saliency model.
    """

    def __init__(self, config: CropConfig | None = None, *, max_pixels: int = DEFAULT_MAX_PIXELS,
                 ttl_s: float = 6 * 3600, threads: int | None = None) -> None:
        self.config = config or CropConfig()
        self.max_pixels = max_pixels
        self.ttl_s = ttl_s
        self.threads = threads
        self.dir = Path(tempfile.mkdtemp(prefix="multicrop-web-"))
        self._photos: dict[str, Photo] = {}
        self._touched: dict[str, float] = {}
        self._lock = threading.Lock()
        # One analysis at a time (it uses every thread it is given); crops for
        # settings are quick and run beside it so other photos stay live.
        self._analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="multicrop-analyse")
        self._crop_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="multicrop-crops")
        self.analysis_runs = 0

    # -- photos --------------------------------------------------------------------------
    def add(self, name: str, data: bytes, *, session: str = "") -> Photo:
        """Store and decode one upload of browser session ``session``; the analysis starts in the background.

        Raises
        ------
        ImageLoadError
            The bytes are not an image the loader can decode, or it is too large.
        ImageTooSmallError
            Its short side is under the config's ``min_crop_side``: no crop fits.
        """
        self.expire()
        pid = uuid.uuid4().hex
        folder = self.dir / pid
        folder.mkdir()
        suffix = Path(name).suffix.lower()
        path = folder / ("upload" + (suffix if suffix.isascii() and len(suffix) <= 6 else ""))
        path.write_bytes(data)
        try:
            loaded = load_image(path, max_side=self.config.analysis_max_side, max_pixels=self.max_pixels)
            W, H = loaded.size
            m = self.config.min_crop_side
            if min(W, H) < m:  # no crop can be cut from it: an error now, never "ready"
                raise ImageTooSmallError(f"{name}: {W}×{H} px is smaller than the smallest crop ({m} px a side), "
                                         "so no carousel can be cut from it")
            display = display_jpeg(path, self.max_pixels)
        except ImageLoadError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise ImageLoadError(f"{name}: {_strip_path(str(exc), path)}") from None
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        photo = Photo(pid, name, path, loaded, display, session)
        with self._lock:
            self._photos[pid] = photo
            self._touched[pid] = time.monotonic()
        photo.future = self._analysis_pool.submit(self._analyse, photo)
        photo.analyses[settings_key(self.config)] = photo.future
        return photo

    def get(self, pid: str, session: str | None = None) -> Photo:
        """The photo ``pid`` (of browser session ``session``, when given).

        Raises
        ------
        KeyError
            No such photo (never uploaded, deleted, expired, or another session's).
        """
        with self._lock:
            photo = self._photos[pid]
            if session is not None and photo.session != session:
                raise KeyError(pid)
            self._touched[pid] = time.monotonic()
        return photo

    def remove(self, pid: str) -> None:
        """Forget a photo and delete its files."""
        with self._lock:
            photo = self._photos.pop(pid, None)
            self._touched.pop(pid, None)
        if photo is not None:
            shutil.rmtree(photo.path.parent, ignore_errors=True)

    def expire(self) -> list[str]:
        """Delete the photos untouched for longer than ``ttl_s``; their ids."""
        now = time.monotonic()
        with self._lock:
            old = [pid for pid, t in self._touched.items() if now - t > self.ttl_s]
        for pid in old:
            self.remove(pid)
        return old

    def list(self, session: str | None = None) -> list[dict[str, Any]]:
        """The photos (of browser session ``session``, when given), in upload order."""
        with self._lock:
            return [p.info() for p in self._photos.values() if session is None or p.session == session]

    def close(self) -> None:
        """Stop the workers and delete every uploaded file."""
        self._analysis_pool.shutdown(wait=False, cancel_futures=True)
        self._crop_pool.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- work ----------------------------------------------------------------------------
    def _analyse(self, photo: Photo) -> Analysis:
        photo.status, photo.stage = "analysing", "saliency map, faces and subjects"
        try:
            result = analyse(photo.loaded.analysis, self.config, threads=self.threads)
            self.analysis_runs += 1
            photo.status, photo.stage = "ready", "analysed"
            return result
        except Exception as exc:  # reported on the page; the server goes on
            photo.status, photo.error, photo.stage = "error", f"{photo.name}: {exc}", "failed"
            raise

    def _analyse_again(self, photo: Photo, config: CropConfig) -> Analysis:
        result = analyse(photo.loaded.analysis, config, threads=self.threads)
        self.analysis_runs += 1
        return result

    def analysis(self, photo: Photo, config: CropConfig | None = None) -> Analysis:
        """The photo's analysis under ``config``'s analysis settings (waits for it; made once per setting)."""
        if photo.future is None:
            raise InvalidParameterError(f"{photo.name}: not analysed")
        key = settings_key(config or self.config)
        with self._lock:
            fut = photo.analyses.get(key)
            if fut is None:
                fut = photo.analyses[key] = self._analysis_pool.submit(self._analyse_again, photo, config)
        return fut.result()

    def config_for(self, k: Any = None, ratios: Any = None, strategy: str | None = None, *,
                   mixed: bool | None = None) -> CropConfig:
        """The base config with the request's k, ratio setting and strategy (validated by CropConfig).

        ``ratios`` is parsed once (:func:`multicrop.ratios.parse_ratio_spec`):
        a platform preset such as ``instagram`` keeps one ratio for the whole
        carousel unless ``mixed`` asks for each crop to take its own.
        """
        changes: dict[str, Any] = {}
        if k is not None and k != "":
            changes["k"] = _parse_k(k)
        if ratios:
            spec = parse_ratio_spec(ratios)
            changes["ratios"] = spec.ratios
            changes["one_ratio"] = spec.one_ratio and not mixed
        if strategy:
            changes["strategy"] = strategy
        return self.config.replace(**changes) if changes else self.config

    def crops(self, photo: Photo, config: CropConfig, *, focus: Box | None = None) -> CropResult:
        """The crops of ``photo`` for ``config`` (and the user's ``focus``, source px), reusing its analysis.

        Raises
        ------
        MulticropError
            As :func:`crop_photo`, the message naming the upload, never the server's file.
        """
        try:
            return crop_photo(photo.loaded, config, threads=self.threads, analysis=self.analysis(photo, config),
                              focus=focus)
        except MulticropError as exc:
            text = _strip_path(str(exc), photo.path)
            raise type(exc)(text if str(photo.path) not in str(exc) else f"{photo.name}: {text}") from None

    def submit_crops(self, photo: Photo, config: CropConfig, *, focus: Box | None = None) -> Future:
        """:meth:`crops` in the crop worker pool."""
        return self._crop_pool.submit(self.crops, photo, config, focus=focus)

    def saliency_png(self, photo: Photo) -> bytes:
        """The photo's saliency map as a greyscale PNG (analysis size)."""
        sal = np.asarray(self.analysis(photo).saliency, dtype=np.float64)
        lo, hi = float(np.min(sal)), float(np.max(sal))
        img = ((sal - lo) / (hi - lo or 1.0) * 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img, mode="L").save(buf, format="PNG")
        return buf.getvalue()

    def with_boxes(self, result: CropResult, boxes: list) -> CropResult:
        """``result`` with its crops replaced by ``boxes`` (ScoredCrop list, source pixels)."""
        return dataclasses.replace(result, crops=tuple(boxes))
