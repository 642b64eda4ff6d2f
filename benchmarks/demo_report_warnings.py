"""The judge report's warnings on a single-family, deterministic panel (the offline ``measured`` judge).

Run: ``.venv/bin/python benchmarks/demo_report_warnings.py [WORKDIR]``

Writes 60 photos derived from the bundled samples (crops, blur, noise, exposure: a spread of
quality), judges them with the default panel (``measured`` only, 3 holistic repetitions), invents
5 raters per photo whose scores follow the photos' degradation, and runs
``multicrop eval judges`` on the result.  The warnings go to stderr and into the report's
``summary.json`` and ``index.html``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import pandas as pd

from multicrop.datasets.photos import SAMPLE_PHOTOS, sample_photo


def make_photos(out: Path, n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = [k for k in SAMPLE_PHOTOS if sample_photo(k).ndim == 3]
    rows = []
    for i in range(n):
        img = sample_photo(names[i % len(names)])
        h, w = img.shape[:2]
        f = rng.uniform(0.6, 1.0)
        y0, x0 = rng.integers(0, int(h * (1 - f)) + 1), rng.integers(0, int(w * (1 - f)) + 1)
        img = img[y0 : y0 + int(h * f), x0 : x0 + int(w * f)]
        damage = rng.uniform(0, 1)
        if damage > 0.3:
            img = cv2.GaussianBlur(img, (0, 0), 3 * (damage - 0.3) + 0.1)
        img = np.clip(img * rng.uniform(0.7, 1.3) + rng.normal(0, 25 * damage, img.shape), 0, 255).astype(np.uint8)
        path = out / f"p{i:03d}.png"
        cv2.imwrite(str(path), img[..., ::-1])
        for r in range(5):
            rows.append({"image": path.name, "rater": f"r{r}", "score": 7 - 5 * damage + rng.normal(0, 1)})
    return pd.DataFrame(rows)


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mc_warn_"))
    photos = work / "photos"
    photos.mkdir(parents=True, exist_ok=True)
    make_photos(photos).to_csv(work / "ratings.csv", index=False)
    mc = [sys.executable, "-m", "multicrop.cli.main"]
    subprocess.run([*mc, "judge", str(photos), "--db", str(work / "store.sqlite"), "-o", str(work / "judges.csv"),
                    "--holistic-repetitions", "3", "--dimension-repetitions", "1"], check=True)
    cmd = [*mc, "eval", "judges", "-s", str(work / "judges.csv"), "-r", str(work / "ratings.csv"),
           "-o", str(work / "report"), "-B", "500", "-c", "ridge", "--partitions", "2"]
    print("$", " ".join(cmd[2:]), file=sys.stderr)
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
