"""Build a held-out set of real photos in the coco-subjects layout, from Ultralytics' coco128-seg.

coco-subjects (the development set) is the first 100 photos of coco128-seg that carry instance
outlines; the other 28 are photos the crop rules were never tuned on.  This copies them, with their
labels turned from the detector's class indices (0-79) into COCO category ids (1-90, the layout of
coco-subjects' ``labels/<id>.txt``), into ``DST``::

    python benchmarks/coco_heldout.py SRC DST --exclude DEV
    python benchmarks/scoreboard.py --coco DST --only coco --cache /tmp/sb-cache

``SRC`` is a coco128-seg folder (``images/train2017/*.jpg``, ``labels/train2017/*.txt``), such as
the copy committed in the public GitHub repository Goodccccl/yolov8_python (commit 0f2dcc3,
``coco128-seg/``).  Photos whose id is in ``--exclude``'s ``images/`` (``DEV``, the development set's
folder, which the project never ships) are left out; ``classes.txt`` is written from
:mod:`multicrop.detectors.coco`.  The photos
and outlines are COCO's (annotations CC BY 4.0, images under their Flickr owners' licences): the
set is a measurement, never committed.  Its outlines are COCO's own polygons where coco-subjects
holds a re-drawn copy, and regions COCO marks as crowds are absent (the Ultralytics export drops
them), so figures on it are close to, not strictly like, coco-subjects' (docs/scoreboard.md).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from multicrop.detectors.coco import CATEGORY_IDS, NAMES


def convert_line(line: str) -> str:
    """One label line of class index and polygon -> the same polygon under its COCO category id."""
    parts = line.split()
    index = int(parts[0])
    if not 0 <= index < len(CATEGORY_IDS):
        raise ValueError(f"class index {index} is not one of the 80 COCO classes")
    return " ".join([str(CATEGORY_IDS[index])] + parts[1:])


def build(src: Path, dst: Path, exclude: Path | None = None) -> list[str]:
    """Copy every labelled photo of ``src`` not in ``exclude`` into ``dst``; return their ids."""
    images, labels = src / "images" / "train2017", src / "labels" / "train2017"
    if not images.is_dir() or not labels.is_dir():
        raise SystemExit(f"{src}: no images/train2017 and labels/train2017 folders (a coco128-seg folder?)")
    skip = {p.stem for p in (exclude / "images").glob("*.jpg")} if exclude else set()
    (dst / "images").mkdir(parents=True, exist_ok=True)
    (dst / "labels").mkdir(parents=True, exist_ok=True)
    done = []
    for label in sorted(labels.glob("*.txt")):
        photo = images / f"{label.stem}.jpg"
        if label.stem in skip or not photo.is_file():
            continue
        lines = [convert_line(x) for x in label.read_text(encoding="utf-8").splitlines() if x.strip()]
        (dst / "labels" / label.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        shutil.copyfile(photo, dst / "images" / photo.name)
        done.append(label.stem)
    lines = ["# COCO thing category ids (as in the labels' first column)"]
    lines += [f"{cid}: {name}" for cid, name in zip(CATEGORY_IDS, NAMES)]
    (dst / "classes.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path, help="a coco128-seg folder")
    ap.add_argument("dst", type=Path, help="the folder to write (coco-subjects layout)")
    ap.add_argument("--exclude", type=Path, help="a coco-subjects folder whose photos are left out")
    args = ap.parse_args(argv)
    ids = build(args.src, args.dst, args.exclude)
    print(f"{len(ids)} photos written to {args.dst}: {', '.join(i.lstrip('0') for i in ids)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
