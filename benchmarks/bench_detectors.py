"""Speed of the detectors against the U^2-Netp floor, and their recall and precision on outlined photos.

Speed: a 12 MP JPEG (the photo given with ``--photo``, else the astronaut
sample photo, enlarged to 4000 x 3000) is loaded as the crop pipeline loads
it (the analysis copy, long side 1024); then, ``--reps`` times in a rotating
order, U^2-Netp (the floor: the saliency map every crop already pays for)
and each detector run on that copy with ``--threads`` threads.  Reported:
the median milliseconds of each and their ratio to the floor, and the whole
``detect()`` (NanoDet, YuNet, pose landmarks on each person).

Quality (``--labelled DIR``): a folder of photos with instance outlines in
YOLO-segmentation format (``images/<id>.jpg``, ``labels/<id>.txt`` with
``class x1 y1 x2 y2 ...`` normalised polygons whose class is a COCO category
id, as in ``coco-subjects``).  For each confidence threshold: per kind
(person, animal, vehicle, object) the recall of the outlined objects'
boxes at IoU 0.5 (same class), for all objects and for the prominent ones
(at least 3 % of the frame), and for the prominent ones also by a
detection of their kind under any of its class names (a truck found as a
car); the precision of the detections (a detection is
right when it matches an outlined object of its class at IoU 0.5), for all
and for those of at least 3 % of the frame; NanoDet's milliseconds per photo.
For YuNet (no face outlines there): per threshold the faces found and the
share of them with at least 30 % of their box on a person's outline.
And for the pose landmarks: the share of the keypoints the model calls
visible (visibility > 0.5) that fall inside the person's outline (grown by 2 %
of the photo's diagonal), over the people NanoDet found.

Usage::

    python benchmarks/bench_detectors.py --threads 2 --reps 7
    python benchmarks/bench_detectors.py --labelled DIR_OF_OUTLINED_PHOTOS --json det.json
    (DIR: photos with instance outlines, images/ and labels/ as YOLO-segmentation polygons, or a COCO JSON;
    see docs/subjects-benchmark.md)

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
KINDS = ("person", "animal", "vehicle", "object")


def make_12mp(source: Path | None, folder: Path) -> Path:
    """A 4000 x 3000 JPEG (q 92) of ``source`` (or the astronaut sample photo), enlarged."""
    from PIL import Image

    if source is None:
        from multicrop.datasets.photos import sample_photo

        img = Image.fromarray(sample_photo("astronaut"))
    else:
        img = Image.open(source).convert("RGB")
    path = folder / "photo_12mp.jpg"
    img.resize((4000, 3000), Image.LANCZOS).save(path, quality=92)
    return path


def bench_speed(photo: Path, *, threads: int, reps: int) -> dict:
    from multicrop.detectors import DETECTORS, detect
    from multicrop.io import load_image
    from multicrop.saliency.u2netp import u2netp_saliency

    t0 = time.perf_counter()
    image = load_image(photo, max_side=1024).analysis
    load_ms = (time.perf_counter() - t0) * 1000
    people = tuple(d for d in DETECTORS.create("nanodet", threads=threads)(image) if d.kind == "person")
    steps = {
        "u2netp (floor)": lambda: u2netp_saliency(image, threads=threads),
        "nanodet": lambda: DETECTORS.create("nanodet", threads=threads)(image),
        "yunet": lambda: DETECTORS.create("yunet", threads=threads)(image),
        "pose": lambda: DETECTORS.create("pose", threads=threads)(image, found=people),
        "detect()": lambda: detect(image, threads=threads),
    }
    for fn in steps.values():  # sessions built, caches warm
        fn()
    times: dict[str, list[float]] = {k: [] for k in steps}
    names = list(steps)
    for r in range(reps):
        for k in names[r % len(names):] + names[: r % len(names)]:
            t = time.perf_counter()
            steps[k]()
            times[k].append((time.perf_counter() - t) * 1000)
    med = {k: statistics.median(v) for k, v in times.items()}
    floor = med["u2netp (floor)"]
    return {
        "photo": str(photo), "analysis_copy": list(image.shape[:2]), "load_ms": load_ms, "threads": threads,
        "reps": reps, "people": len(people),
        "median_ms": med, "ratio_to_floor": {k: v / floor for k, v in med.items()},
    }


def read_labels(path: Path, width: int, height: int) -> list[tuple[int, np.ndarray]]:
    """``(COCO id, polygon in pixels)`` per outlined object."""
    out = []
    for line in path.read_text().splitlines():
        v = line.split()
        if len(v) < 7:
            continue
        pts = np.array(v[1:], float).reshape(-1, 2) * [width, height]
        out.append((int(v[0]), pts))
    return out


def bench_quality(folder: Path, *, threads: int, thresholds=THRESHOLDS) -> dict:
    from multicrop.detectors import DETECTORS
    from multicrop.detectors.boxes import iou_matrix
    from multicrop.detectors.coco import kind_of

    nanodet = DETECTORS.create("nanodet", threads=threads, min_score=min(thresholds))
    pose = DETECTORS.create("pose", threads=threads)
    from multicrop.models.yunet import yunet_faces

    face_thresholds = (0.5, 0.6, 0.7, 0.8, 0.9)
    faces = {t: [0, 0] for t in face_thresholds}
    photos = sorted((folder / "images").glob("*.jpg"))
    rows = []
    ms = []
    kp_in = kp_all = 0
    for p in photos:
        image = cv2.cvtColor(cv2.imread(str(p)), cv2.COLOR_BGR2RGB)
        h, w = image.shape[:2]
        objects = read_labels(folder / "labels" / (p.stem + ".txt"), w, h)
        t = time.perf_counter()
        found = nanodet(image)
        ms.append((time.perf_counter() - t) * 1000)
        gt_boxes = np.array([[q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()] for _, q in objects]).reshape(-1, 4)
        gt_ids = np.array([c for c, _ in objects], int)
        det_boxes = np.array([[d.box.x, d.box.y, d.box.x2, d.box.y2] for d in found]).reshape(-1, 4)
        det_ids = np.array([d.class_id for d in found], int)
        det_scores = np.array([d.score for d in found])
        rows.append((w * h, gt_boxes, gt_ids, det_boxes, det_ids, det_scores))
        # Pose landmarks against the outlines of the people they were run on.
        people = [d for d in found if d.kind == "person" and d.score >= nanodet.default_min_score]
        refined = pose(image, found=people)
        person_masks = []
        for c, q in objects:
            if c == 1:
                m = np.zeros((h, w), np.uint8)
                cv2.fillPoly(m, [q.round().astype(np.int32)], 1)
                grow = max(1, int(0.02 * np.hypot(w, h)))
                person_masks.append(cv2.dilate(m, np.ones((grow, grow), np.uint8)))
        outline = np.zeros((h, w), np.uint8)
        for c, q in objects:
            if c == 1:
                cv2.fillPoly(outline, [q.round().astype(np.int32)], 1)
        fb, fs, _ = yunet_faces(image, threads=threads, score_threshold=min(face_thresholds))
        for (x1, y1, x2, y2), score in zip(fb, fs):
            on_person = outline[int(y1): int(y2) + 1, int(x1): int(x2) + 1].mean() >= 0.3
            for t in face_thresholds:
                if score >= t:
                    faces[t][0] += int(on_person)
                    faces[t][1] += 1
        if person_masks:
            union = np.maximum.reduce(person_masks)
            for d in refined:
                if d.keypoints is None:
                    continue
                vis = d.keypoints[d.keypoints[:, 2] > 0.5]
                xs = vis[:, 0].round().astype(int).clip(0, w - 1)
                ys = vis[:, 1].round().astype(int).clip(0, h - 1)
                inside_frame = (vis[:, 0] >= 0) & (vis[:, 0] < w) & (vis[:, 1] >= 0) & (vis[:, 1] < h)
                kp_in += int((union[ys, xs].astype(bool) & inside_frame).sum())
                kp_all += len(vis)
    table = []
    for thr in thresholds:
        hit = {(k, s): [0, 0] for k in KINDS for s in ("all", "prominent")}
        kind_hit = dict.fromkeys(KINDS, 0)
        tp = fp = tp_big = fp_big = 0
        for area, gb, gi, db, di, ds in rows:
            keep = ds >= thr
            db2, di2 = db[keep], di[keep]
            match = (iou_matrix(gb, db2) >= 0.5) & (gi[:, None] == di2[None, :]) if len(db2) and len(gb) else \
                np.zeros((len(gb), len(db2)), bool)
            gk = np.array([kind_of(int(c)) for c in gi])
            dk = np.array([kind_of(int(c)) for c in di2])
            kind_match = (iou_matrix(gb, db2) >= 0.5) & (gk[:, None] == dk[None, :]) if len(db2) and len(gb) else match
            found_gt = match.any(axis=1)
            found_kind = kind_match.any(axis=1)
            frac = (gb[:, 2] - gb[:, 0]) * (gb[:, 3] - gb[:, 1]) / area
            for c, f, fk, a in zip(gi, found_gt, found_kind, frac):
                for s in ("all", "prominent") if a >= 0.03 else ("all",):
                    hit[(kind_of(int(c)), s)][0] += int(f)
                    hit[(kind_of(int(c)), s)][1] += 1
                    if s == "prominent":
                        kind_hit[kind_of(int(c))] += int(fk)
            right = match.any(axis=0)
            big = (db2[:, 2] - db2[:, 0]) * (db2[:, 3] - db2[:, 1]) / area >= 0.03
            tp += int(right.sum())
            fp += int((~right).sum())
            tp_big += int((right & big).sum())
            fp_big += int((~right & big).sum())
        table.append({
            "threshold": thr,
            "recall": {f"{k}/{s}": (v[0] / v[1] if v[1] else None, v[1]) for (k, s), v in hit.items()},
            "recall_prominent_any_name_of_the_kind": {
                k: kind_hit[k] / hit[(k, "prominent")][1] if hit[(k, "prominent")][1] else None for k in KINDS},
            "precision": tp / max(tp + fp, 1), "detections": tp + fp,
            "precision_3pct": tp_big / max(tp_big + fp_big, 1), "detections_3pct": tp_big + fp_big,
        })
    return {
        "folder": str(folder), "photos": len(photos), "nanodet_ms_per_photo": statistics.median(ms),
        "table": table,
        "pose_visible_keypoints_inside_outline": kp_in / kp_all if kp_all else None, "pose_visible_keypoints": kp_all,
        "faces_on_a_person_outline": {t: (v[0] / v[1] if v[1] else None, v[1]) for t, v in faces.items()},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photo", type=Path, help="photo to enlarge to 12 MP (default: the astronaut sample)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--labelled", type=Path, help="folder of photos with YOLO-segmentation outlines")
    ap.add_argument("--json", type=Path, help="write the results here too")
    ap.add_argument("--no-speed", action="store_true", help="only the quality table")
    args = ap.parse_args(argv)
    out: dict = {}
    if not args.no_speed:
        with tempfile.TemporaryDirectory() as tmp:
            photo = make_12mp(args.photo, Path(tmp))
            out["speed"] = sp = bench_speed(photo, threads=args.threads, reps=args.reps)
        print(f"12 MP photo ({args.photo or 'astronaut sample'}), analysis copy "
              f"{sp['analysis_copy'][1]}x{sp['analysis_copy'][0]}, {sp['people']} people, {args.threads} threads, "
              f"median of {args.reps}")
        for k, v in sp["median_ms"].items():
            print(f"  {k:16s} {v:7.1f} ms   x{sp['ratio_to_floor'][k]:.2f} of the floor")
    if args.labelled:
        out["quality"] = q = bench_quality(args.labelled, threads=args.threads)
        print(f"\n{q['photos']} photos of {q['folder']}; NanoDet {q['nanodet_ms_per_photo']:.0f} ms per photo")
        head = "thr   " + " ".join(f"{k[:6]:>6s}/all {k[:6]:>6s}/3%" for k in KINDS) + "  prec(n)  prec3%(n)"
        print(head)
        for row in q["table"]:
            rec = " ".join(
                f"{row['recall'][f'{k}/all'][0]:10.2f} {row['recall'][f'{k}/prominent'][0] or 0:9.2f}" for k in KINDS
            )
            print(f"{row['threshold']:.2f} {rec}  {row['precision']:.2f}({row['detections']})"
                  f"  {row['precision_3pct']:.2f}({row['detections_3pct']})")
        print("recall of the prominent objects by a detection of their kind (any class name of it):")
        for row in q["table"]:
            r = row["recall_prominent_any_name_of_the_kind"]
            print(f"{row['threshold']:.2f} " + " ".join(f"{k} {r[k]:.2f}" for k in KINDS))
        counts = q["table"][0]["recall"]
        print("objects: " + ", ".join(f"{k} {counts[f'{k}/all'][1]} ({counts[f'{k}/prominent'][1]} prominent)"
                                      for k in KINDS))
        if q["pose_visible_keypoints"]:
            print(f"pose: {q['pose_visible_keypoints_inside_outline']:.1%} of {q['pose_visible_keypoints']} "
                  "visible keypoints inside the person's outline")
        print("yunet: faces (share with at least 30 % of the box on a person's outline): " + ", ".join(
            f"{t}: {n} ({share:.0%})" for t, (share, n) in q["faces_on_a_person_outline"].items() if n))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
