#!/usr/bin/env python3
"""Build ``src/multicrop/data/photos/`` from scikit-image's sample photos (run once; the output is committed).

    pip install scikit-image && python scripts/build_sample_photos.py

Each photo that ``multicrop example`` and carousel-synth use is taken from
the installed ``skimage/data`` folder: PNGs are re-saved losslessly with
Pillow's ``optimize`` (smaller files, same pixels), JPEGs are copied byte for
byte (re-encoding would change them).  The script then checks that
:func:`multicrop.datasets.photos.sample_photo` gives exactly the array that
``skimage.data`` gives, so carousel-synth and the example photo keep their
bytes.  Credits and licences: ``multicrop.datasets.photos.SAMPLE_PHOTOS``
and ``NOTICE``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "multicrop" / "data" / "photos"


def main() -> int:
    import numpy as np
    import skimage
    import skimage.data as data
    from PIL import Image

    sys.path.insert(0, str(ROOT / "src"))
    from multicrop.datasets.photos import SAMPLE_PHOTOS, sample_photo

    src_dir = Path(skimage.__file__).parent / "data"
    OUT.mkdir(parents=True, exist_ok=True)
    for name, photo in SAMPLE_PHOTOS.items():
        src = src_dir / photo.source_file
        dst = OUT / photo.filename
        if dst.suffix == ".png":
            with Image.open(src) as im:
                im.save(dst, format="PNG", optimize=True)
        else:
            shutil.copyfile(src, dst)
        ref = data.stereo_motorcycle()[0] if name == "motorcycle" else getattr(data, name)()
        got = sample_photo(name)
        if got.shape != ref.shape or got.dtype != ref.dtype or not np.array_equal(got, ref):
            print(f"{name}: the stored photo differs from skimage.data.{name}", file=sys.stderr)
            return 1
        print(f"{dst.relative_to(ROOT)}: {dst.stat().st_size} bytes, {got.shape}, same pixels as skimage.data")
    print(f"scikit-image {skimage.__version__}; total {sum(p.stat().st_size for p in OUT.iterdir())} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
