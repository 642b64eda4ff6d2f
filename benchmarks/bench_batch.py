"""Batch throughput: photos/s of ``multicrop batch crop`` on the local pool and on Ray.

    python benchmarks/bench_batch.py --copies 3 --workers 1,2 --engines local,ray
    python benchmarks/bench_batch.py --copies 20 --megapixels 12 --workers 1,2   # 200 photos of 12 MP

The photos are the sample photos shipped with multicrop (10), each written
``--copies`` times (with ``--megapixels``, upscaled to about that many pixels
and saved as JPEG, quality 90, like a camera's output).  Every configuration
crops the whole folder into a fresh destination with the default settings
(u2netp saliency, faces on; ``--fast`` for spectral saliency without faces).
The table gives, per engine and worker count: wall seconds of the run
(including pool or Ray start), photos/s, and the mean seconds per photo
inside a worker (the manifest's ``seconds``).  Ray's own start is timed apart
(``ray.init``), so its per-run overhead can be read against the local pool.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image

from multicrop.batch import MANIFEST_NAME, read_manifest, run_crop_batch
from multicrop.crop.config import CropConfig, OutputConfig
from multicrop.datasets.photos import SAMPLE_PHOTOS, sample_photo


def _photos(folder: Path, copies: int, megapixels: float | None) -> int:
    n = 0
    for name in SAMPLE_PHOTOS:
        im = Image.fromarray(sample_photo(name))
        if megapixels:
            f = (megapixels * 1e6 / (im.width * im.height)) ** 0.5
            im = im.resize((round(im.width * f), round(im.height * f)), Image.Resampling.BICUBIC)
        for c in range(copies):
            suffix = ".jpg" if megapixels else ".png"
            im.save(folder / f"{Path(name).stem}-{c:03d}{suffix}", quality=90)
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--megapixels", type=float, default=None)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--fast", action="store_true", help="spectral saliency, no faces")
    ap.add_argument("--keep", type=Path, default=None, help="work folder to keep (default: a temporary one)")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-batch-"))
    src = work / "photos"
    src.mkdir(parents=True, exist_ok=True)
    n = _photos(src, args.copies, args.megapixels)
    crop = CropConfig(saliency="spectral", faces=False) if args.fast else CropConfig()
    print(f"{n} photos in {src} ({args.megapixels or 'original'} MP), threads per worker {args.threads}")
    print(f"{'engine':<7} {'workers':>7} {'wall s':>8} {'photos/s':>9} {'s/photo in worker':>18}")
    for engine in args.engines.split(","):
        if engine == "ray":
            import ray

            t = time.perf_counter()
            ray.init(num_cpus=max(int(w) for w in args.workers.split(",")) * args.threads,
                     include_dashboard=False, log_to_driver=False)
            print(f"ray.init: {time.perf_counter() - t:.1f} s")
        for w in (int(x) for x in args.workers.split(",")):
            out = work / f"out-{engine}-{w}"
            shutil.rmtree(out, ignore_errors=True)
            s = run_crop_batch(src, out, crop=crop, output=OutputConfig(preview=False), engine=engine, workers=w,
                               threads=args.threads)
            per = statistics.mean(r["seconds"] for r in read_manifest(out / MANIFEST_NAME))
            print(f"{engine:<7} {s.workers:>7} {s.elapsed_s:>8.1f} {s.photos_per_s:>9.2f} {per:>18.3f}"
                  + (f"  ({s.failed} failed)" if s.failed else ""))
        if engine == "ray":
            ray.shutdown()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
