"""The per-photo function of ``multicrop batch crop``: one photo in, one manifest row out.

:func:`crop_task` is what every engine runs (a process of the local pool, a
Ray task on any node): it reads the photo through fsspec, hashes its bytes,
calls :func:`multicrop.crop.pipeline.crop_photo` and
:func:`multicrop.crop.outputs.write_outputs`, and turns whatever happened
into a plain-data row.  It never raises for a bad photo: the error is the
row's ``status``, ``error_kind`` and ``error``.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..crop.config import CropConfig, OutputConfig
from ..errors import ImageLoadError, InputFileError, MulticropError
from ..hashing import canonical_json, content_hash, hash_stream
from ..io.files import check_regular
from ..io.names import unprefixed
from .sources import Photo

__all__ = ["CropJob", "crop_task", "row_outputs"]


@dataclass(frozen=True)
class CropJob:
    """What every photo of a batch is cropped with, and where its files go.

    Attributes
    ----------
    crop : CropConfig
        Decides the crops (hashed into ``settings_hash``).
    output : OutputConfig
        How files are written (also hashed: a different format must rewrite them).
    out_dir : str
        Destination folder (local, or a mount every node shares).
    threads : int
        Threads per worker for the saliency model (never changes a result).
    """

    crop: CropConfig
    output: OutputConfig
    out_dir: str
    threads: int = 1

    def settings(self) -> dict:
        """What decides a photo's row and files: the crop settings, the versions and the output settings."""
        from ..crop.pipeline import pipeline_versions

        return {"crop": self.crop.to_dict(), "versions": pipeline_versions(self.crop),
                "output": self.output.to_dict()}

    def settings_hash(self) -> str:
        return content_hash(self.settings())


#: Largest photo copied from a remote filesystem (bytes): a stream that never ends is refused.
MAX_REMOTE_BYTES = 4 << 30


def _local_copy(photo: Photo, stack: contextlib.ExitStack) -> str:
    """A local path holding the photo's bytes (the photo itself when it is local, checked to be a regular file)."""
    if photo.is_local:
        check_regular(photo.path, error=ImageLoadError)  # a FIFO or /dev/zero would block the hash
        return photo.path
    import fsspec

    suffix = os.path.splitext(photo.path)[1]
    fd, tmp = tempfile.mkstemp(prefix="multicrop-batch-", suffix=suffix)
    os.close(fd)
    stack.callback(lambda: Path(tmp).unlink(missing_ok=True))
    copied = 0
    with fsspec.open(photo.path, "rb") as src, open(tmp, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            copied += len(chunk)
            if copied > MAX_REMOTE_BYTES:
                raise InputFileError(f"{photo.path}: more than {MAX_REMOTE_BYTES:,} bytes; not a photo")
            dst.write(chunk)
    return tmp


def _one_line(exc: BaseException, path: str) -> str:
    """The row's reason: a library error's own line (the path it starts with dropped).

    An exception that is no multicrop error and no file error (a ``ValueError``
    from deep inside numpy, say) is not a reason the photo can be blamed for:
    it is recorded as what it is, an internal error to report, never as if it
    described the photo.
    """
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    msg = unprefixed(msg, path)
    if not isinstance(exc, (MulticropError, OSError, MemoryError)):
        return f"internal error in multicrop ({type(exc).__name__}: {msg[:200]}); please report it with this photo"
    return msg


def row_outputs(rec: dict) -> list[str]:
    """The file names a :func:`~multicrop.crop.outputs.write_outputs` record lists (crops, copies, preview)."""
    names = []
    for c in rec.get("crops", []):
        names.append(c["path"])
        names.extend(v for v in c.get("resized", {}).values() if v)
    if rec.get("preview"):
        names.append(rec["preview"])
    return names


def crop_task(job: CropJob, photo: Photo, stem: str, settings_hash: str) -> dict:
    """Crop one photo and write its files; the manifest row of what happened.

    Parameters
    ----------
    job : CropJob
    photo : Photo
    stem : str
        Output path relative to ``job.out_dir`` without extension
        (``a/b/x`` writes ``a/b/x_1.jpg``, ``a/b/x.json``, ...).
    settings_hash : str
        ``job.settings_hash()``, computed once by the driver.

    Returns
    -------
    dict
        The row (see :func:`multicrop.batch.manifest.schema`), without the
        fields the driver adds (``run_id``, ``seq``, ``finished_utc``).
    """
    from ..crop.outputs import write_outputs
    from ..crop.pipeline import crop_photo

    t0 = time.perf_counter()
    row: dict = {"path": photo.path, "rel": photo.rel, "size": photo.size, "modified": photo.modified,
                 "settings_hash": settings_hash, "stem": stem, "config": job.crop.to_json(),
                 "worker": f"{socket.gethostname()}:{os.getpid()}", "content_hash": None}
    try:
        with contextlib.ExitStack() as stack:
            local = _local_copy(photo, stack)
            with open(local, "rb") as fh:
                row["content_hash"] = hash_stream(fh)
            result = crop_photo(Path(local), job.crop, max_pixels=job.output.max_pixels, threads=job.threads)
            out = Path(job.out_dir) / stem
            rec = write_outputs(result, out.parent, config=job.output, stem=out.name)
        written = rec.get("stem") if isinstance(rec.get("stem"), str) else out.name  # moved when a name was taken
        row.update(
            stem=posixpath.join(posixpath.dirname(stem), written) if posixpath.dirname(stem) else written,
            status="done", error=None, error_kind=None, width=result.size[0], height=result.size[1],
            boxes=[{"x": c.box.x, "y": c.box.y, "w": c.box.w, "h": c.box.h} for c in result.crops],
            scores=[float(c.score) for c in result.crops],
            ratios=[str(c.ratio) if c.ratio is not None else None for c in result.crops],
            partition_failure=result.failure, outputs=row_outputs(rec),
            versions=canonical_json(result.versions),
            timings=json.dumps({k: round(v, 4) for k, v in result.timings.items()}, sort_keys=True),
        )
    except Exception as exc:  # noqa: BLE001 - one bad photo never stops the run: it becomes its row
        kind = type(exc).__name__
        row.update(status="failed", error_kind=kind, error=_one_line(exc, photo.path) or kind,
                   boxes=[], scores=[], ratios=[], outputs=[])
    row["seconds"] = time.perf_counter() - t0
    return row
