"""Speed and memory of ``multicrop crop`` against smartcrop.py and libvips.

Builds 3-subject example photos (12, 48 and 200 MP JPEGs) and, for each size
and method, runs a fresh subprocess that times end-to-end work (decode,
analyse, cut and write full-resolution crops) and reports its own peak RSS.

* ``multicrop``: ``crop_photo`` + ``write_outputs`` (k=3 crops, JSON, preview),
  U^2-Netp warm (the session is created on a small image first).
* ``smartcrop``: smartcrop.py 0.5 (``SmartCrop().crop`` with prescale, a 2:3
  target of 400x600), then the one full-resolution crop cut and saved.
* ``vips``: ``pyvips`` ``smartcrop(interesting="attention")`` for the largest
  2:3 box, written as JPEG (one crop).

Whole processes against the floor (``--whole``): the **floor** is the least
work any tool must do for the job -- open the JPEG, full decode,
``reduce(8)``, U^2-Netp at 320x320 with two threads, three q95 crops written
(:func:`floor`, Pillow + onnxruntime only); **floor+detectors** adds the
inference of the detectors ``multicrop crop`` runs (``multicrop.detectors.detect``
with its default detectors, on the ``reduce(8)`` image), so that a pipeline
that finds subjects is compared with a floor that does too.  Each repetition
runs, in a rotating order, as fresh processes on one 12 MP photo: both floors
and ``multicrop crop`` with preview, ``--no-preview`` (lossless by default)
and ``--no-preview --lossless never``; then both floors and ``multicrop crop
--no-preview`` (lossless and re-encoded) on 10 photos in one process.
Ratios are per repetition (paired), then the median; wall time and CPU time
(user + system, from ``wait4``) are both given, as the CPU time is the
fairer number on a machine other jobs load.  The load average before and
after, the thread counts and the 200 MP peak memory (``--memory``) come with
them.

Stages (``--stages``): one process crops the 12 MP photo twice and prints
where the time goes -- imports, the sessions' start (the first photo minus
the second), each stage of the warm photo (``CropResult.timings``), the
models one by one (U^2-Netp, the faces, the detectors), the lossless cut and
the re-encoded writes against the floor's decode and writes, and the preview.

Usage::

    python benchmarks/bench_crop.py                       # 12, 48, 200 MP
    python benchmarks/bench_crop.py --sizes 12 --reps 9 --json bench.json
    MULTICROP_THREADS=2 python benchmarks/bench_crop.py --whole --reps 7 --memory --json whole.json
    MULTICROP_THREADS=2 python benchmarks/bench_crop.py --stages --reps 5

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = {12: (6000, 2000), 48: (12000, 4000), 200: (24495, 8165)}
METHODS = ("multicrop", "smartcrop", "vips")


def make_photo(mp: int, folder: Path) -> Path:
    """A 3-subject JPEG of about ``mp`` megapixels (cached in ``folder``)."""
    from PIL import Image

    from multicrop.datasets.examples import example_image

    path = folder / f"example_{mp}mp.jpg"
    if path.exists():
        return path
    w, h = SIZES[mp]
    if mp <= 48:
        img = Image.fromarray(example_image(width=w, height=h))
    else:  # build at 12 MP and upscale: the float canvas at 200 MP would need 2.4 GB
        img = Image.fromarray(example_image(width=SIZES[12][0], height=SIZES[12][1]))
        img = img.resize((w, h), Image.Resampling.BILINEAR)
    img.save(path, quality=90)
    return path


def _rss_mb() -> float:
    """Peak resident memory of this process in MiB.

    ``VmHWM`` from /proc, not ``getrusage(RUSAGE_SELF).ru_maxrss``: on Linux
    the latter survives ``exec`` and would report the parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:  # not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(method: str, path: Path, reps: int, out: Path) -> dict:
    """Run one method ``reps`` times in this process; return times and peak RSS."""
    times = []
    if method == "multicrop":
        import numpy as np

        from multicrop import CropConfig, crop_photo
        from multicrop.crop.outputs import write_outputs

        cfg = CropConfig(k=3)
        warm = np.zeros((300, 900, 3), np.uint8)
        warm[100:200, 100:200] = 255
        crop_photo(warm, cfg)  # creates the onnxruntime sessions
        stages: dict[str, list[float]] = {}
        for _ in range(reps):
            t = time.perf_counter()
            res = crop_photo(path, cfg)
            t1 = time.perf_counter()
            write_outputs(res, out)
            times.append(time.perf_counter() - t)
            for name, v in {**res.timings, "write": time.perf_counter() - t1}.items():
                stages.setdefault(name, []).append(v)
        return {
            "times": times, "peak_rss_mb": round(_rss_mb(), 1),
            "stages_median_s": {k: round(statistics.median(v), 3) for k, v in stages.items()},
            "stages_min_s": {k: round(min(v), 3) for k, v in stages.items()},
        }
    elif method == "smartcrop":
        from PIL import Image
        from smartcrop import SmartCrop

        Image.MAX_IMAGE_PIXELS = None  # the 200 MP photo is deliberate
        sc = SmartCrop()
        for _ in range(reps):
            t = time.perf_counter()
            with Image.open(path) as im:
                im = im.convert("RGB")
                box = sc.crop(im, 400, 600)["top_crop"]
                piece = im.crop((box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"]))
                piece.save(out / "smartcrop.jpg", quality=92)
            times.append(time.perf_counter() - t)
    elif method == "vips":
        import pyvips

        pyvips.cache_set_max(0)  # no operation cache: every repetition decodes again
        for _ in range(reps):
            t = time.perf_counter()
            im = pyvips.Image.new_from_file(str(path))
            h = im.height
            w = min(im.width, round(h * 2 / 3))
            im.smartcrop(w, h, interesting="attention").write_to_file(str(out / "vips.jpg"), Q=92)
            times.append(time.perf_counter() - t)
    else:
        raise SystemExit(f"unknown method {method!r}")
    return {"times": times, "peak_rss_mb": round(_rss_mb(), 1)}


_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)


def floor(model: str, out: Path, paths: list[str], threads: int = 2, detectors: bool = False) -> None:
    """The floor: decode, reduce(8), U^2-Netp 320x320 (``threads``), three q95 crops per photo.

    With ``detectors``, also the inference of ``multicrop crop``'s default
    detectors on the ``reduce(8)`` image.
    """
    import numpy as np
    import onnxruntime as ort
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = None  # the 200 MP photo is deliberate
    detect = None
    if detectors:
        from multicrop.detectors import detect
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    for n, path in enumerate(paths):
        with Image.open(path) as im:
            im.load()
            reduced = im.reduce(8)
            small = reduced.resize((320, 320))
            x = (np.asarray(small, np.float32) / 255 - np.array(_MEAN, np.float32)) / np.array(_STD, np.float32)
            sess.run(None, {name: np.ascontiguousarray(x.transpose(2, 0, 1)[None])})
            if detect is not None:
                detect(np.asarray(reduced.convert("RGB")), threads=threads)
            w, h = im.size
            for i in range(3):
                im.crop((i * w // 3, 0, (i + 1) * w // 3, h)).save(out / f"floor{n}_{i}.jpg", quality=95)


def _run(cmd: list[str], env: dict) -> dict:
    """Run ``cmd`` in a fresh temporary output folder: wall s, CPU s (user + system) and peak RSS (MiB)."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile() as err:
        cmd = [out if c == "{out}" else c for c in cmd]
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode(errors='replace').strip()[-800:]}")
    return {"wall": dt, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def _paired(times: dict[str, list[dict]], base_of) -> dict:
    """Medians and per-repetition ratios (wall and CPU) of each command to its floor."""
    out: dict[str, dict] = {}
    for k, v in times.items():
        base = times[base_of(k)]
        out[k] = {
            "median_wall_s": round(statistics.median(r["wall"] for r in v), 3),
            "median_cpu_s": round(statistics.median(r["cpu"] for r in v), 3),
            "ratio_wall": round(statistics.median(a["wall"] / b["wall"] for a, b in zip(v, base)), 2),
            "ratio_cpu": round(statistics.median(a["cpu"] / b["cpu"] for a, b in zip(v, base)), 2),
            "peak_rss_mb": round(max(r["rss_mb"] for r in v), 1),
        }
    return out


def _env() -> dict:
    return {**os.environ, "MULTICROP_THREADS": os.environ.get("MULTICROP_THREADS", "2")}


def _compile() -> None:
    """Byte-compile multicrop first, as an installed wheel is.

    Without it (``PYTHONDONTWRITEBYTECODE`` set, or a fresh checkout) every
    process compiles multicrop's modules again -- about 0.06 s of CPU per
    process measured on the 12 MP run -- while the floor's packages come
    compiled from their wheels.
    """
    import compileall

    import multicrop

    compileall.compile_dir(Path(multicrop.__file__).parent, quiet=1)


def whole(work: Path, reps: int) -> dict:
    """Whole-process medians and paired ratios to the floors (12 MP, k=3), one photo and 10 in one process."""
    import shutil

    from multicrop.models import model_path

    photo = make_photo(12, work)
    ten = []
    for i in range(10):
        p = work / f"ten_{i}.jpg"
        if not p.exists():
            shutil.copy(photo, p)
        ten.append(str(p))
    env = _env()
    py, model = sys.executable, str(model_path("u2netp"))
    mc = [py, "-m", "multicrop", "crop", "-o", "{out}", "-k", "3"]
    fl = [py, __file__, "--floor", model, "{out}"]
    fd = [py, __file__, "--detectors", "--floor", model, "{out}"]
    cmds = {
        "floor": [*fl, str(photo)],
        "floor_detectors": [*fd, str(photo)],
        "preview": [*mc, str(photo)],
        "no_preview": [*mc, "--no-preview", str(photo)],
        "no_preview_reencode": [*mc, "--no-preview", "--lossless", "never", str(photo)],
        "floor_10": [*fl, *ten],
        "floor_detectors_10": [*fd, *ten],
        "batch_10": [*mc, "--no-preview", *ten],
        "batch_10_reencode": [*mc, "--no-preview", "--lossless", "never", *ten],
    }
    times: dict[str, list[dict]] = {k: [] for k in cmds}
    load = [os.getloadavg()]
    names = list(cmds)
    for r in range(reps):
        for name in names[r % len(names):] + names[: r % len(names)]:
            times[name].append(_run(cmds[name], env))
    load.append(os.getloadavg())
    ten_names = {"floor_10", "floor_detectors_10", "batch_10", "batch_10_reencode"}
    res = {"reps": reps, "threads": env["MULTICROP_THREADS"], "load_average": load, "photo": SIZES[12],
           "against_floor": _paired(times, lambda k: "floor_10" if k in ten_names else "floor"),
           "against_floor_detectors": _paired(
               times, lambda k: "floor_detectors_10" if k in ten_names else "floor_detectors"),
           "times": {k: [{m: round(x, 3) for m, x in r.items()} for r in v] for k, v in times.items()}}
    return res


def memory(work: Path, reps: int = 1) -> dict:
    """Peak RSS of whole processes on the 200 MP photo: the floor and ``multicrop crop --no-preview``."""
    from multicrop.models import model_path

    photo = make_photo(200, work)
    env, py = _env(), sys.executable
    mc = [py, "-m", "multicrop", "crop", "-o", "{out}", "-k", "3", "--no-preview", str(photo)]
    cmds = {"floor": [py, __file__, "--floor", str(model_path("u2netp")), "{out}", str(photo)],
            "no_preview": mc, "no_preview_reencode": [*mc, "--lossless", "never"]}
    runs = {k: [_run(c, env) for _ in range(reps)] for k, c in cmds.items()}
    return {"photo": SIZES[200], "load_average": os.getloadavg(),
            **{k: {"peak_rss_mb": round(max(r["rss_mb"] for r in v), 1),
                   "median_wall_s": round(statistics.median(r["wall"] for r in v), 3)} for k, v in runs.items()}}


def _clock(fn, reps: int) -> dict:
    """Median wall and CPU seconds of ``fn()`` over ``reps`` calls."""
    wall, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return {"wall_s": round(statistics.median(wall), 4), "cpu_s": round(statistics.median(cpu), 4)}


def stages(work: Path, reps: int) -> dict:
    """Where one 12 MP photo's time goes, in this process (run it fresh: the first photo pays the imports)."""
    t0 = time.perf_counter()
    import numpy as np  # noqa: F401  (the floor imports these too)
    import onnxruntime  # noqa: F401
    from PIL import Image

    t_base = time.perf_counter() - t0
    from multicrop.cli.main import app  # noqa: F401  (what `multicrop crop` imports before it starts)

    t_cli = time.perf_counter() - t0 - t_base
    from multicrop import CropConfig, crop_photo
    from multicrop.crop.outputs import WriteOptions, render_preview, write_outputs
    from multicrop.io.lossless import backend
    from multicrop.models import thread_count
    from multicrop.saliency.u2netp import u2netp_saliency

    t_crop = time.perf_counter() - t0 - t_base - t_cli

    photo = make_photo(12, work)
    out = work / "stages"
    threads = thread_count()
    cfg = CropConfig(k=3)
    t, c = time.perf_counter(), time.process_time()
    first = crop_photo(photo, cfg)
    t_first, c_first = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    res = crop_photo(photo, cfg)
    t_second, c_second = time.perf_counter() - t, time.process_time() - c
    img = res.image.analysis
    models = {"u2netp": _clock(lambda: u2netp_saliency(img, threads=threads), reps)}
    try:
        from multicrop.saliency.faces import detect_faces

        models["faces"] = _clock(lambda: detect_faces(img, threads=threads), reps)
    except ImportError:  # pragma: no cover - an older tree
        pass
    try:
        from multicrop.detectors import DEFAULT_DETECTORS, detect

        models["detectors " + "+".join(DEFAULT_DETECTORS)] = _clock(lambda: detect(img, threads=threads), reps)
    except ImportError:  # pragma: no cover - before the detectors
        pass

    def floor_writes():
        with Image.open(photo) as im:
            im.load()
            w, h = im.size
            for i in range(3):
                im.crop((i * w // 3, 0, (i + 1) * w // 3, h)).save(out / f"floor_{i}.jpg", quality=95)

    out.mkdir(exist_ok=True)
    from multicrop.crop.config import OutputConfig

    plain = OutputConfig(preview=False, record=False)
    writes = {
        "floor: full decode + 3 q95 writes": _clock(floor_writes, reps),
        f"lossless cut + write ({backend()})": _clock(lambda: write_outputs(res, out / "l", config=plain), reps),
        "re-encoded (one full decode, 3 writes)": _clock(
            lambda: write_outputs(res, out / "r", config=plain, options=WriteOptions(lossless="never")), reps),
        "preview (render + q80 JPEG)": _clock(lambda: render_preview(res).save(out / "p.jpg", quality=80), reps),
    }
    lossless = writes[f"lossless cut + write ({backend()})"]
    floor_w = writes["floor: full decode + 3 q95 writes"]
    return {
        "threads": threads, "load_average": os.getloadavg(), "backend": backend(),
        "imports_s": {"numpy+onnxruntime+PIL": round(t_base, 3), "multicrop.cli.main on top": round(t_cli, 3),
                      "crop_photo, outputs, models on top": round(t_crop, 3)},
        "first_photo": {"wall_s": round(t_first, 3), "cpu_s": round(c_first, 3)},
        "second_photo": {"wall_s": round(t_second, 3), "cpu_s": round(c_second, 3)},
        "session_start_and_first_runs": {"wall_s": round(t_first - t_second, 3), "cpu_s": round(c_first - c_second, 3)},
        "first_photo_timings": {k: round(v, 4) for k, v in first.timings.items()},
        "warm_photo_timings": {k: round(v, 4) for k, v in res.timings.items()},
        "models_warm": models, "writes": writes,
        "lossless_vs_floor_writes": {"wall": round(lossless["wall_s"] / floor_w["wall_s"], 2),
                                     "cpu": round(lossless["cpu_s"] / floor_w["cpu_s"], 2)},
    }


def threads_info() -> dict:
    info = {"cpu_count": os.cpu_count()}
    try:
        import cv2

        info["opencv_threads"] = cv2.getNumThreads()
    except ImportError:  # pragma: no cover
        pass
    from multicrop.models import thread_count

    info["onnxruntime_intra_op_threads"] = thread_count()
    info["onnxruntime_inter_op_threads"] = 1
    for var in ("MULTICROP_THREADS", "OMP_NUM_THREADS", "VIPS_CONCURRENCY"):
        info[var] = os.environ.get(var)
    try:
        import pyvips

        info["vips_concurrency"] = pyvips.vips_lib.vips_concurrency_get()
    except Exception:  # noqa: BLE001 - optional peer
        info["vips_concurrency"] = None
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="12,48,200", help="comma list of megapixels among 12, 48, 200")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--reps", type=int, default=0, help="repetitions (default: 9 / 3 / 2 by size)")
    ap.add_argument("--work", type=Path, default=None, help="folder for photos and outputs (default: temp)")
    ap.add_argument("--json", type=Path, default=None, help="also write results here")
    ap.add_argument("--whole", action="store_true", help="whole processes against the floor (12 MP)")
    ap.add_argument("--memory", action="store_true", help="200 MP peak memory of whole processes")
    ap.add_argument("--stages", action="store_true", help="where one 12 MP photo's time goes (a fresh process)")
    ap.add_argument("--detectors", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--stages-child", nargs=2, metavar=("WORK", "REPS"), help=argparse.SUPPRESS)
    ap.add_argument("--floor", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    ap.add_argument("--child", nargs=4, metavar=("METHOD", "PATH", "REPS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.floor:
        floor(args.floor[0], Path(args.floor[1]), args.floor[2:], detectors=args.detectors)
        return 0
    if args.stages_child:
        print(json.dumps(stages(Path(args.stages_child[0]), int(args.stages_child[1]))))
        return 0
    if args.whole or args.stages or args.memory:
        work = args.work or Path(tempfile.mkdtemp(prefix="multicrop-bench-"))
        work.mkdir(parents=True, exist_ok=True)
        _compile()
        res = {}
        if args.stages:  # a fresh process, so that its imports are timed as the CLI's are
            make_photo(12, work)
            proc = subprocess.run([sys.executable, __file__, "--stages-child", str(work), str(args.reps or 5)],
                                  capture_output=True, text=True, env=_env(), check=False)
            if proc.returncode:
                raise SystemExit(f"--stages failed: {proc.stderr.strip()[-800:]}")
            res["stages"] = json.loads(proc.stdout.strip().splitlines()[-1])
        res["threads"] = threads_info()
        if args.whole:
            res["whole"] = whole(work, args.reps or 7)
        if args.memory:
            res["memory_200mp"] = memory(work)
        print(json.dumps(res, indent=2))
        if args.json:
            args.json.write_text(json.dumps(res, indent=2) + "\n")
        return 0
    if args.child:
        method, path, reps, out = args.child
        print(json.dumps(child(method, Path(path), int(reps), Path(out))))
        return 0

    work = args.work or Path(tempfile.mkdtemp(prefix="multicrop-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    methods = args.methods.split(",")
    results = {"threads": threads_info(), "load_average_before": os.getloadavg(), "runs": []}
    print(json.dumps(results["threads"]))
    for mp in sizes:
        path = make_photo(mp, work)
        reps = args.reps or {12: 9, 48: 3, 200: 2}[mp]
        row = {"megapixels": mp, "size": list(SIZES[mp])}
        for method in methods:
            out = work / f"out_{mp}_{method}"
            out.mkdir(exist_ok=True)
            proc = subprocess.run(
                [sys.executable, __file__, "--child", method, str(path), str(reps), str(out)],
                capture_output=True, text=True, check=False,
            )
            if proc.returncode:
                row[method] = {"error": proc.stderr.strip().splitlines()[-1:]}
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            r["median_s"] = round(statistics.median(r["times"]), 3)
            r["min_s"] = round(min(r["times"]), 3)
            r["times"] = [round(t, 3) for t in r["times"]]
            row[method] = r
        base = row.get("multicrop", {}).get("median_s")
        for method in methods:
            m = row.get(method, {})
            if base and m.get("median_s"):
                m["time_vs_multicrop"] = round(m["median_s"] / base, 2)
        results["runs"].append(row)
        print(json.dumps(row))
    results["load_average_after"] = os.getloadavg()
    print(json.dumps({"load_average": [results["load_average_before"], results["load_average_after"]]}))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
