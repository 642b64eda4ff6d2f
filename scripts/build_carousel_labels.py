#!/usr/bin/env python3
"""Build ``src/multicrop/data/carousel_labels.json`` from a directory of real Carousel label files.

Run once by a maintainer (the output is committed); users and tests never need
the real files::

    python scripts/build_carousel_labels.py ../shared/data/carousel

Every label file (``dataset/<name>.json``) and metadata file
(``dataset/<name>_metadata.json``) is stored as parsed, field for field and in
file order, quirks included (label strings, raw corner points, ``subcrops``,
image sizes, credit fields), with ``hard_failures.txt`` as its list of lines.
The script then writes the stored data back out with
:func:`multicrop.datasets.carousel_labels.write_labelme` and checks that every
file comes back byte for byte, so the shipped copy is exactly the real one.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "multicrop" / "data" / "carousel_labels.json"
_META = "_metadata.json"
SOURCE = ("Carousel (R. Loya et al.), https://github.com/RafeLoya/carousel: label and metadata files and "
          "hard_failures.txt, without the images. Per-image licences: each item's "
          "metadata.copyright_license_type. See NOTICE.")


def read_source(src: Path) -> dict:
    """The data file's content for the Carousel directory ``src``."""
    ddir = src / "dataset"
    names = sorted(p.name[: -len(".json")] for p in ddir.glob("*.json") if not p.name.endswith(_META))
    items = []
    for name in names:
        labels = json.loads((ddir / f"{name}.json").read_text(encoding="utf-8"))
        if labels.get("imageData") is not None:  # an embedded image would bloat the package
            sys.exit(f"{name}.json: imageData is not null")
        meta = json.loads((ddir / f"{name}{_META}").read_text(encoding="utf-8"))
        items.append({"name": name, "labels": labels, "metadata": meta})
    hard = (src / "hard_failures.txt").read_text(encoding="utf-8").splitlines()
    return {"hard_failures": hard, "items": items}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="Carousel directory (dataset/*.json, hard_failures.txt)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from multicrop.datasets.carousel_labels import FORMAT, dumps, write_labelme

    data = {"format": FORMAT, "source": SOURCE, **read_source(args.source)}
    args.out.write_text(dumps(data), encoding="utf-8")
    # Round trip: the LabelMe directory written from the file just saved must
    # equal the source, byte for byte.
    with tempfile.TemporaryDirectory() as tmp:
        back = write_labelme(tmp, data=json.loads(args.out.read_text(encoding="utf-8")))
        names = sorted(p.name for p in (args.source / "dataset").glob("*.json"))
        assert names == sorted(p.name for p in (back / "dataset").iterdir()), "file lists differ"
        _, mismatch, errors = filecmp.cmpfiles(args.source / "dataset", back / "dataset", names, shallow=False)
        mismatch += [] if filecmp.cmp(args.source / "hard_failures.txt", back / "hard_failures.txt", shallow=False) \
            else ["hard_failures.txt"]
        if mismatch or errors:
            print(f"round trip differs: {mismatch + errors}", file=sys.stderr)
            return 1
    print(f"{args.out}: {len(data['items'])} items, {len(data['hard_failures'])} hard failures, "
          f"{args.out.stat().st_size} bytes; round trip byte-identical ({len(names) + 1} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
