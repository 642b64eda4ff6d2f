"""Speed and agreement of the offline judges: the embedding, its heads, and the measured judge's run.

Run: ``.venv/bin/python benchmarks/bench_embedding.py [--para DIR] [--features DIR] [--run-photos N]``

``latency``
    Embedding one 1 MP photo (decode from JPEG bytes on disk included) on
    2 threads, beside two peers timed in the same run on the same photo:
    U^2-Netp saliency (the crop wing's network) and the measured judge's
    measurements.  Median of 15 runs after 2 warm-ups.
``run``
    ``judge_images`` with the measured judge over ``--run-photos`` synthetic
    photos, once as the judge runs now (deterministic: one call per prompt)
    and once as before (every repetition a call: the flags patched back),
    in the same process, so the two see the same machine load.
``para`` (with ``--para``)
    Heads fitted on PARA training photos (28,220; ``annotation/aggregation_1.csv``
    means) scored on the 3,000-photo test split (``PARA-GiaaTest.csv``), at
    label budgets 300 / 1,000 / 2,000 / all; dimension heads fitted out of
    fold on the test split (the only split with composition and colour) and
    compared with the holistic head by partial Spearman rho with the overall
    score partialled out.  ``--features DIR`` holds ``train.npy`` /
    ``test.npy`` and their ``.names.txt`` (made on first use and reused).
PARA is licensed for research only: nothing fitted here ships.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image


def _median_ms(fn, *, n: int = 15, warm: int = 2) -> float:
    for _ in range(warm):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def latency(threads: int = 2) -> None:
    from multicrop.datasets.photos import sample_photo
    from multicrop.embeddings import embed
    from multicrop.io import load_image
    from multicrop.judges.measures import measure
    from multicrop.saliency import compute_saliency

    photo = np.asarray(Image.fromarray(sample_photo("astronaut")).resize((1155, 866), Image.BICUBIC))  # 1.0 MP
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "photo.jpg"
        Image.fromarray(photo).save(path, quality=92)
        rows = {
            "embedding (decode at 448 + EfficientNet-Lite0 224)": lambda: embed(
                load_image(path, max_side=448).analysis, threads=threads),
            "peer: U^2-Netp saliency (decode at 1600 + 320 network)": lambda: compute_saliency(
                load_image(path).analysis, method="u2netp"),
            "peer: measured judge's measurements (decode at 1024)": lambda: measure(
                load_image(path, max_side=1024).analysis),
        }
        print(f"1 MP photo ({photo.shape[1]} x {photo.shape[0]}), {threads} onnxruntime threads, median of 15:")
        for name, fn in rows.items():
            print(f"  {name:58s} {_median_ms(fn):7.1f} ms")


def run_speed(n: int) -> None:
    from multicrop.judges.backends.measured import MeasuredBackend
    from multicrop.judges.panel import default_panel
    from multicrop.judges.runner import judge_images
    from multicrop.judges.store import CallStore
    from multicrop.judges.types import ImageRef

    rng = np.random.default_rng(0)
    refs = [ImageRef((rng.random((224, 224, 3)) * 255).astype(np.uint8), label=f"p{i}") for i in range(n)]
    out = {}
    for label, det, reads in (("now: one call per prompt", True, False), ("before: every repetition", False, True)):
        MeasuredBackend.deterministic, MeasuredBackend.reads_prompt = det, reads
        with tempfile.TemporaryDirectory() as tmp, CallStore(Path(tmp) / "r.sqlite") as store:
            t0 = time.perf_counter()
            summary, _ = judge_images(refs, default_panel(), store)
            out[label] = (time.perf_counter() - t0, summary.performed)
    MeasuredBackend.deterministic, MeasuredBackend.reads_prompt = True, False
    print(f"measured judge over {n} photos of 224 x 224 (default panel: 5 holistic + 3 x 5 dimension rows each):")
    for label, (s, performed) in out.items():
        print(f"  {label:28s} {performed:6d} calls  {s:6.1f} s")
    print(f"  speed-up {out['before: every repetition'][0] / out['now: one call per prompt'][0]:.1f} x")


def _features(para: Path, features: Path) -> dict:
    from multicrop.embeddings import embed_batch

    test = [r["imageName"] for r in csv.DictReader(open(para / "annotation" / "PARA-GiaaTest.csv"))]
    agg = {r["image_label"]: float(r["aesthetic_score"])
           for r in csv.DictReader(open(para / "annotation" / "aggregation_1.csv"))}
    test_set = set(test)
    train = [n for n in agg if n not in test_set]
    paths = {p.name: p for p in (para / "imgs").glob("*/*.jpg")}
    features.mkdir(parents=True, exist_ok=True)
    out = {}
    for split, names in (("test", test), ("train", train)):
        f = features / f"{split}.npy"
        if not f.exists():
            X = np.zeros((len(names), 1280), np.float32)
            for i in range(0, len(names), 32):
                X[i:i + 32] = embed_batch([np.asarray(Image.open(paths[n]).convert("RGB"))
                                           for n in names[i:i + 32]], threads=2)
            np.save(f, X)
            (features / f"{split}.names.txt").write_text("\n".join(names))
        names = (features / f"{split}.names.txt").read_text().split("\n")
        out[split] = (np.load(f), names)
    rows = {r["imageName"]: r for r in csv.DictReader(open(para / "annotation" / "PARA-GiaaTest.csv"))}
    out["agg"], out["test_rows"] = agg, rows
    return out


def para(para: Path, features: Path) -> None:
    from multicrop.fusion.ridge import fold_ids, ridge_cv, ridge_out_of_fold
    from multicrop.stats import partial_correlation, spearman

    d = _features(para, features)
    Xte, nte = d["test"]
    Xtr, ntr = d["train"]
    yte = np.array([float(d["test_rows"][n]["aestheticScore_mean"]) for n in nte])
    ytr = np.array([d["agg"][n] for n in ntr])
    rng = np.random.default_rng(0)
    print(f"PARA test split ({len(yte)} photos), heads fitted on PARA training photos:")
    for b in (300, 1000, 2000, len(ytr)):
        idx = rng.choice(len(ytr), b, replace=False) if b < len(ytr) else np.arange(len(ytr))
        fit = ridge_cv(Xtr[idx], ytr[idx], folds=fold_ids(b, n_folds=5, seed=0))
        print(f"  {b:6d} training photos: holistic rho {spearman(fit.predict(Xte), yte):.3f} (alpha {fit.alpha:.3g})")
    folds = fold_ids(len(yte), n_folds=5, seed=0)
    hol = ridge_out_of_fold(Xte, yte, folds=folds)
    print(f"  out of fold on the test split: holistic rho {spearman(hol, yte):.3f}")
    print("dimension heads vs the holistic head on their attribute (out of fold; partial rho | overall):")
    for dim, col in (("technical_quality", "qualityScore_mean"), ("composition", "compositionScore_mean"),
                     ("colour_and_tone", "colorScore_mean")):
        y = np.array([float(d["test_rows"][n][col]) for n in nte])
        head = ridge_out_of_fold(Xte, y, folds=folds)
        pd_, ph = partial_correlation(head, y, yte), partial_correlation(hol, y, yte)
        print(f"  {dim:18s} rho {spearman(head, y):.3f} (holistic head {spearman(hol, y):.3f}); partial "
              f"{pd_.estimate:+.3f} [{pd_.ci_low:+.3f}, {pd_.ci_high:+.3f}] vs holistic {ph.estimate:+.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--para", type=Path, help="PARA directory (imgs/, annotation/)")
    ap.add_argument("--features", type=Path, help="where PARA embeddings are cached (default PARA/features)")
    ap.add_argument("--run-photos", type=int, default=300)
    ap.add_argument("--skip", nargs="*", default=(), choices=("latency", "run", "para"))
    args = ap.parse_args()
    if "latency" not in args.skip:
        latency()
    if "run" not in args.skip:
        run_speed(args.run_photos)
    if args.para and "para" not in args.skip:
        para(args.para, args.features or args.para / "features")


if __name__ == "__main__":
    main()
