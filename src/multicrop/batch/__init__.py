"""Collections at scale: resumable batch jobs on one machine or on a Ray cluster.

``multicrop batch crop`` and ``multicrop batch judge`` are thin faces over
this package (it sits on the CLI's floor: it may import the wings, nothing
imports it).  :func:`run_crop_batch` lists the photos
(:mod:`~multicrop.batch.sources`), skips what the results manifest
(:mod:`~multicrop.batch.manifest`) says is done with the same settings, and
runs :func:`~multicrop.batch.crop_job.crop_task` on the others through an
engine (:mod:`~multicrop.batch.engines`: a local process pool or Ray), with
admission by estimated pixels (:mod:`~multicrop.batch.admission`).
"""

from .admission import PixelBudget, header_pixels
from .crop_job import CropJob, crop_task
from .manifest import latest_rows, read_manifest
from .runner import MANIFEST_NAME, BatchSummary, plan_batch, run_crop_batch
from .sources import Photo, list_photos

__all__ = ["PixelBudget", "header_pixels", "CropJob", "crop_task", "latest_rows", "read_manifest", "MANIFEST_NAME",
           "BatchSummary", "plan_batch", "run_crop_batch", "Photo", "list_photos"]
