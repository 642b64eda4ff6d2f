"""Start-up cost of the ``multicrop`` command, in one paired run against floors.

Fresh processes, each repetition in a rotating order:

* ``bare``: ``python -c pass`` (the interpreter's own start; the floor of the small ones);
* ``import``: ``python -c 'import multicrop'``;
* ``help``: ``multicrop --help``; ``crop_help``: ``multicrop crop --help``;
* ``floor``: one Python process doing the least work the job needs -- full
  decode of a 12 MP JPEG, ``reduce(8)``, U^2-Netp at 320x320 with two threads,
  three q95 crops written (``bench_crop.py --floor``, Pillow + onnxruntime only);
* ``crop``: ``multicrop crop --no-preview -k 3`` on that photo (lossless cuts);
  ``crop_reencode``: the same with ``--lossless never``.

The photo is the bundled example photo (``multicrop example``'s 3600x1400)
upscaled to 12 MP, written into a temporary folder.  Ratios are per repetition
(paired), then the median, wall and CPU time (user + system, from ``wait4``);
the load average before and after and the thread counts come with them.
``--importtime`` adds, for ``help``, ``crop_help`` and ``crop``, the heaviest
imports of one ``python -X importtime`` run (cumulative ms, top-level entries).

``--alt DIR`` adds ``help_alt``, ``crop_alt`` and ``crop_reencode_alt``: the
same commands with ``DIR`` first on ``PYTHONPATH`` (e.g. another typer,
``pip install --no-deps --target DIR typer==0.28.0``, or an older checkout's
``src``: ``git archive REV src | tar -x -C DIR/..``), in the same rotation,
so a before/after pair comes from one run against the same floors.  For a
before/after pair of multicrop itself give ``--src DIR`` too (a checkout's
``src`` of the after side): its commands then import from ``PYTHONPATH`` as the
``--alt`` ones do (both trees byte-compiled first; with either option every
``multicrop`` command runs as ``python -m multicrop``).  Without it the two sides
import differently (installed package against a ``PYTHONPATH`` tree) and,
measured with the same code on both sides, the ``--alt`` side read about
0.1 s slower.

``--ten`` adds ``floor_10`` (the floor's work on ten copies of the photo in one
process) and ``crop_10`` (``multicrop crop --no-preview -k 3`` on the ten, one
process; with ``--alt`` also ``crop_10_alt``), paired against ``floor_10``.

Usage::

    MULTICROP_THREADS=2 python benchmarks/bench_startup.py --reps 7 --importtime
    MULTICROP_THREADS=2 python benchmarks/bench_startup.py --reps 7 --alt /tmp/typer-0.28
    MULTICROP_THREADS=2 python benchmarks/bench_startup.py --reps 5 --ten --alt /tmp/before/src

Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_crop  # noqa: E402 - the floor, the process timer and the thread report live there

PHOTO_SIZE = (5556, 2160)  # 12.0 MP at the example's 18:7


def make_photo(folder: Path) -> Path:
    """The bundled example photo upscaled to 12 MP, as a q90 JPEG in ``folder``."""
    from PIL import Image

    from multicrop.datasets.examples import example_image

    path = folder / "example_12mp.jpg"
    Image.fromarray(example_image()).resize(PHOTO_SIZE, Image.Resampling.BICUBIC).save(path, quality=90)
    return path


#: Set by ``--src``/``--alt``: each tree is run by ``python -m multicrop`` (its own ``__main__``), since the
#: installed console script names the entry point of the installed tree, which an older tree may lack.
AS_MODULE = False


def _multicrop() -> list[str]:
    """The ``multicrop`` console script of this interpreter's environment (as a user runs it), else ``-m``."""
    script = Path(sys.executable).parent / "multicrop"
    return [str(script)] if script.exists() and not AS_MODULE else [sys.executable, "-m", "multicrop"]


def ten_copies(photo: Path) -> list[str]:
    """Ten copies of ``photo`` beside it (``ten_0.jpg`` ...), for the one-process folder runs."""
    import shutil

    out = []
    for i in range(10):
        copy = photo.with_name(f"ten_{i}{photo.suffix}")
        shutil.copyfile(photo, copy)
        out.append(str(copy))
    return out


def ten_commands(photo: Path) -> dict[str, list[str]]:
    """``floor_10`` and ``crop_10``: the floor and ``multicrop crop`` on ten copies of ``photo``, one process each."""
    from multicrop.models import model_path

    ten = ten_copies(photo)
    return {"floor_10": [sys.executable, bench_crop.__file__, "--floor", str(model_path("u2netp")), "{out}", *ten],
            "crop_10": [*_multicrop(), "crop", "-o", "{out}", "-k", "3", "--no-preview", *ten]}


def commands(photo: Path) -> dict[str, list[str]]:
    from multicrop.models import model_path

    py, mc = sys.executable, _multicrop()
    crop = [*mc, "crop", "-o", "{out}", "-k", "3", "--no-preview", str(photo)]
    return {
        "bare": [py, "-c", "pass"],
        "import": [py, "-c", "import multicrop"],
        "help": [*mc, "--help"],
        "crop_help": [*mc, "crop", "--help"],
        "floor": [py, bench_crop.__file__, "--floor", str(model_path("u2netp")), "{out}", str(photo)],
        "crop": crop,
        "crop_reencode": [*crop, "--lossless", "never"],
    }


#: Each command's floor in the paired ratios.
BASE = {"import": "bare", "help": "bare", "crop_help": "bare", "crop": "floor", "crop_reencode": "floor"}

#: Commands run a second time under ``--alt``'s ``PYTHONPATH``.
ALT = ("help", "crop", "crop_reencode")


def alt_env(env: dict, directory: Path) -> dict:
    """``env`` with ``directory`` first on ``PYTHONPATH``."""
    rest = env.get("PYTHONPATH")
    return {**env, "PYTHONPATH": str(directory) + (os.pathsep + rest if rest else "")}


def importtime(cmd: list[str], env: dict, top: int = 12) -> dict[str, list[tuple[str, float]]]:
    """One ``-X importtime`` run of ``cmd``: the ``top`` heaviest top-level imports (cumulative ms) and modules (self ms).

    Top-level: imported by the program's own code (a command importing the
    library inside its function shows there too), not by another import.
    """
    with tempfile.TemporaryDirectory() as out:
        cmd = [out if c == "{out}" else c for c in cmd]
        if cmd[0] != sys.executable:  # the console script: run its module under this interpreter
            cmd = [sys.executable, "-m", "multicrop", *cmd[1:]]
        proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], capture_output=True, text=True, env=env,
                              check=False)
    cumulative, own = [], []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum, name = line[len("import time:"):].split("|")
        own.append((name.strip(), round(int(self_us) / 1000, 1)))
        if not name.startswith("  "):  # depth 0
            cumulative.append((name.strip(), round(int(cum) / 1000, 1)))
    return {"top_level_cumulative": sorted(cumulative, key=lambda r: -r[1])[:top],
            "modules_self": sorted(own, key=lambda r: -r[1])[:top],
            "total_ms": round(sum(ms for _, ms in own), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--importtime", action="store_true", help="also the heaviest imports of help, crop_help, crop")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--alt", type=Path, default=None, help="also run help and crop with this folder first on PYTHONPATH")
    ap.add_argument("--ten", action="store_true", help="also the floor and crop on ten copies, one process each")
    ap.add_argument("--src", type=Path, default=None,
                    help="run help and crop with this folder first on PYTHONPATH too (the after side of an --alt pair)")
    args = ap.parse_args(argv)
    global AS_MODULE
    AS_MODULE = args.src is not None or args.alt is not None
    env = bench_crop._env()
    envs = {}
    bench_crop._compile()
    for tree in (args.src, args.alt):
        if tree is not None:
            import compileall

            compileall.compile_dir(tree, quiet=1)
    with tempfile.TemporaryDirectory(prefix="multicrop-startup-") as work:
        photo = make_photo(Path(work))
        cmds = commands(photo)
        base = dict(BASE)
        alt = ALT
        if args.ten:
            cmds |= ten_commands(photo)
            base["crop_10"], alt = "floor_10", (*ALT, "crop_10")
        if args.src is not None:
            for k in alt:
                envs[k] = alt_env(env, args.src)
        if args.alt is not None:
            for k in alt:
                cmds[f"{k}_alt"], envs[f"{k}_alt"], base[f"{k}_alt"] = cmds[k], alt_env(env, args.alt), base[k]
        names = list(cmds)
        times: dict[str, list[dict]] = {k: [] for k in cmds}
        load = [os.getloadavg()]
        for r in range(args.reps):
            for name in names[r % len(names):] + names[: r % len(names)]:
                times[name].append(bench_crop._run(cmds[name], envs.get(name, env)))
        load.append(os.getloadavg())
        res: dict = {"reps": args.reps, "photo": PHOTO_SIZE, "threads": bench_crop.threads_info(),
                     "load_average": load, "typer": _version("typer"), "pydantic": _version("pydantic")}
        if args.alt is not None:
            res["alt"] = {"pythonpath": str(args.alt), "typer": _version("typer", args.alt)}
        if args.src is not None:
            res["src"] = str(args.src)
        res["medians"] = {k: {"wall_s": round(statistics.median(t["wall"] for t in v), 3),
                              "cpu_s": round(statistics.median(t["cpu"] for t in v), 3)} for k, v in times.items()}
        res["ratios"] = {k: {"against": b,
                             "wall": round(statistics.median(a["wall"] / c["wall"] for a, c in zip(times[k], times[b])), 2),
                             "cpu": round(statistics.median(a["cpu"] / c["cpu"] for a, c in zip(times[k], times[b])), 2)}
                         for k, b in base.items()}
        res["over_floor_s"] = {k: round(statistics.median(a["wall"] - c["wall"] for a, c in zip(times[k], times[b])), 3)
                               for k, b in base.items()}
        if args.importtime:
            res["importtime_ms"] = {k: importtime(cmds[k], env) for k in ("help", "crop_help", "crop")}
    for k, m in res["medians"].items():
        r = res["ratios"].get(k)
        vs = f"  {r['wall']:.2f}x wall, {r['cpu']:.2f}x CPU of {r['against']}" if r else ""
        print(f"{k:<14} {m['wall_s']:6.3f} s wall {m['cpu_s']:6.3f} s CPU{vs}")
    t = res["threads"]
    print(f"threads: onnxruntime intra-op {t['onnxruntime_intra_op_threads']} inter-op "
          f"{t['onnxruntime_inter_op_threads']}, OpenCV {t.get('opencv_threads')}, {t['cpu_count']} CPUs; "
          f"load {load[0][0]:.2f} -> {load[1][0]:.2f}; typer {res['typer']}"
          + (f"; *_alt: typer {res['alt']['typer']} from {res['alt']['pythonpath']}" if "alt" in res else ""))
    for k, rows in res.get("importtime_ms", {}).items():
        print(f"importtime {k} (total {rows['total_ms']} ms): "
              + ", ".join(f"{n} {ms}" for n, ms in rows["top_level_cumulative"][:8]))
    print(json.dumps(res))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


def _version(dist: str, path: Path | None = None) -> str | None:
    """The installed version of ``dist`` (found first in ``path`` when given)."""
    from importlib.metadata import PackageNotFoundError, distributions, version

    if path is not None:
        found = [d.version for d in distributions(path=[str(path)]) if d.metadata["Name"].lower() == dist]
        if found:
            return found[0]
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
