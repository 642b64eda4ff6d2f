"""The import layers of docs/architecture.md, enforced by import-linter's contracts in .importlinter."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint(config: Path, cwd: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "lint-imports not found: install the test extra"
    env = None
    if extra_path is not None:
        import os

        env = {**os.environ, "PYTHONPATH": str(extra_path)}
    return subprocess.run([exe, "--config", str(config), "--no-cache"], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


def test_the_layer_contracts_are_kept():
    out = _lint(ROOT / ".importlinter", ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


@pytest.mark.slow
def test_a_wrong_way_import_breaks_the_contracts(tmp_path):
    """The contracts catch what they promise: stats importing the judges wing fails."""
    pkg = tmp_path / "multicrop"
    shutil.copytree(ROOT / "src" / "multicrop", pkg, ignore=shutil.ignore_patterns("__pycache__", "*.onnx", "*.png", "*.jpg"))
    bad = pkg / "stats" / "correlation.py"
    bad.write_text(bad.read_text() + "\nfrom ..judges import rubric  # noqa: E402 - deliberately wrong\n")
    out = _lint(ROOT / ".importlinter", tmp_path, extra_path=tmp_path)
    assert out.returncode != 0
    assert "BROKEN" in out.stdout and "multicrop.stats.correlation -> multicrop.judges.rubric" in out.stdout


# --- the "the one X" sentences of docs/architecture.md, checked on the source's syntax tree ------------------

import ast  # noqa: E402
import re  # noqa: E402

SRC = ROOT / "src" / "multicrop"
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp", ".gif", ".heic", ".heif"}
RATIO_LIST = re.compile(r"^\d+(\.\d+)?:\d+(\.\d+)?(,\d+(\.\d+)?:\d+(\.\d+)?)+$")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (prose may quote a ratio list)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            out.add(id(body[0].value))
    return out


def _image_open(tree, rel):
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "open" and isinstance(n.func.value, ast.Name) and n.func.value.id == "Image"]


def _inference_session(tree, rel):
    return [n.lineno for n in ast.walk(tree) if (isinstance(n, ast.Attribute) and n.attr == "InferenceSession")
            or (isinstance(n, ast.Name) and n.id == "InferenceSession")]


def _suffix_table(tree, rel):
    out = []
    for n in ast.walk(tree):
        items = n.keys if isinstance(n, ast.Dict) else n.elts if isinstance(n, (ast.Tuple, ast.List, ast.Set)) else []
        found = {e.value.lower() for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        if len(found & IMAGE_SUFFIXES) >= 2:
            out.append(n.lineno)
    return out


def _ratio_table(tree, rel):
    docs = _docstrings(tree)
    out = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
           and id(n) not in docs and RATIO_LIST.match(n.value)]
    out += [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef))
            and n.name in ("Ratio", "parse_ratio", "parse_ratios", "parse_ratio_spec")]
    return out


def _coco_ids(tree, rel):
    """A module-level table of COCO ids: ``*_IDS = (1, ...)``, ``range(...)`` or ``frozenset(...)`` of literals."""
    def literal(v):
        if isinstance(v, (ast.Tuple, ast.Set, ast.List)):
            return bool(v.elts) and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in v.elts)
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("range", "frozenset", "tuple"):
            return all(literal(a) or isinstance(a, ast.Constant) for a in v.args)
        return False
    out = []
    for n in tree.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Name) and t.id.endswith("_IDS") for t in targets) and n.value is not None \
                    and literal(n.value):
                out.append(n.lineno)
    return out


def _geometry_imports_ratios(tree, rel):
    return [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
            and ("ratios" in (getattr(n, "module", None) or "") or any("ratios" in a.name for a in n.names))]


def _exif_transpose(tree, rel):
    return [n.lineno for n in ast.walk(tree) if (isinstance(n, ast.Attribute) and n.attr == "exif_transpose")
            or (isinstance(n, ast.Name) and n.id == "exif_transpose")]


def _suffix_test(tree, rel):
    """``x in SOME_SUFFIXES``: deciding which files are photos by a suffix table instead of ``io.is_photo``."""
    def table(n):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        return name.endswith("SUFFIXES")
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Compare)
            and any(isinstance(op, (ast.In, ast.NotIn)) and table(c) for op, c in zip(n.ops, n.comparators))]


def _threads_variable(tree, rel):
    docs = _docstrings(tree)
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == "MULTICROP_THREADS"
            and id(n) not in docs]


def _hand_converter(tree, rel):
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in ("to_dict", "to_record")]


#: claim -> (its sentence in docs/architecture.md, the checker, where it may happen: path prefixes under src/multicrop)
CLAIMS = {
    "open_image": ("Every image multicrop reads is opened by `io.open_image`", _image_open, ("io/",)),
    "onnx_session": ("Every model runs through `models.onnx_session(", _inference_session, ("models/",)),
    "formats": ("the accepted suffixes follow from it", _suffix_table, ("io/",)),
    "ratios": ("ratios Ratio, the one preset table and ratio parser", _ratio_table, ("ratios/",)),
    "coco": ("COCO class ids live in `detectors.coco`", _coco_ids, ("detectors/coco.py",)),
    "geometry": ("geometry holds boxes only and never imports ratios", _geometry_imports_ratios, ("",)),
    "serialize": ("no class writes its own converter", _hand_converter, ("serialize/",)),
    "orientation": ("Photos turn upright in one place, `io.orientation.transpose`", _exif_transpose,
                    ("io/orientation.py",)),
    "photos": ("Which files of a folder are photos is decided by one rule, `io.is_photo`", _suffix_test, ("io/",)),
    "threads": ("`models.thread_count(workers)` is the one function that reads `MULTICROP_THREADS`",
                _threads_variable, ("models/sessions.py",)),
}


def claim_violations(claim: str, root: Path = SRC) -> list[str]:
    """``path:line`` of every place under ``root`` that breaks ``claim``."""
    _, check, allowed = CLAIMS[claim]
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if claim == "geometry":
            if rel != "geometry.py":
                continue
        elif any(rel.startswith(a) for a in allowed):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [f"{rel}:{line}" for line in check(tree, rel)]
    return out


#: Places that still break a claim, per file (how many), in modules another issue owns this round; a new
#: place anywhere fails the claim, and so does fixing one of these until it is dropped from here.
PENDING: dict[str, dict[str, int]] = {}


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_the_architecture_claims_hold(claim):
    sentence = CLAIMS[claim][0]
    doc = " ".join((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split())
    assert sentence in doc, "the doc no longer says it"
    found = claim_violations(claim)
    pending = PENDING.get(claim, {})
    assert [v for v in found if v.split(":")[0] not in pending] == [], f"{sentence!r} is broken at"
    still = {f: sum(v.split(":")[0] == f for v in found) for f in pending}
    assert still == pending, "a pending place was fixed or another added there: update PENDING"


@pytest.mark.parametrize("claim, planted", [
    ("open_image", "from PIL import Image\n\ndef f(p):\n    return Image.open(p)\n"),
    ("onnx_session", "import onnxruntime as ort\n\ndef f(p):\n    return ort.InferenceSession(p)\n"),
    ("formats", "SUFFIXES = ('.jpg', '.png')\n"),
    ("ratios", "DEFAULT = '2:3,3:2'\n"),
    ("coco", "PERSON_IDS = (1,)\n"),
    ("serialize", "class R:\n    def to_dict(self):\n        return {}\n"),
    ("orientation", "from PIL import ImageOps\n\ndef f(im):\n    return ImageOps.exif_transpose(im)\n"),
    ("photos", "from multicrop.io import SUPPORTED_SUFFIXES\n\ndef f(p):\n    return p.suffix in SUPPORTED_SUFFIXES\n"),
    ("threads", "import os\n\ndef f():\n    return os.environ.get('MULTICROP_THREADS')\n"),
])
def test_each_claim_catches_a_planted_violation(tmp_path, claim, planted):
    (tmp_path / "crop").mkdir()
    (tmp_path / "crop" / "planted.py").write_text('"""A docstring may say 2:3,3:2."""\n' + planted)
    assert claim_violations(claim, tmp_path) and claim_violations(claim, tmp_path)[0].startswith("crop/planted.py:")


def test_the_geometry_claim_catches_an_import_of_ratios(tmp_path):
    (tmp_path / "geometry.py").write_text("def f():\n    from .ratios import Ratio\n    return Ratio\n")
    assert claim_violations("geometry", tmp_path) == ["geometry.py:2"]


def test_the_layer_table_is_generated_from_the_contract():
    """docs/architecture.md shows exactly the `layers` contract of .importlinter (scripts/architecture_layers.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("architecture_layers", ROOT / "scripts" / "architecture_layers.py")
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    assert layers.render() in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), \
        "the layer table drifted from .importlinter: run python scripts/architecture_layers.py"
    shown = [m for _, modules in layers.layers() for m in modules]
    assert {"geometry", "ratios", "defaults", "embeddings", "measures"} <= set(shown)


def test_the_layer_table_follows_a_changed_contract(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("architecture_layers", ROOT / "scripts" / "architecture_layers.py")
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    changed = tmp_path / ".importlinter"
    changed.write_text((ROOT / ".importlinter").read_text().replace("    multicrop.ranking\n", ""))
    assert "ranking" not in layers.render(changed) and "ranking" in layers.render()


# --- the size of the web pages' JavaScript modules (issue 28: no module over 400 lines) ----------------------

STATIC = SRC / "web" / "static"
MAX_JS_LINES = 400


def js_modules_over(limit: int, root: Path = STATIC) -> dict[str, int]:
    """``{file name: lines}`` of every JavaScript module in ``root`` longer than ``limit`` lines."""
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(root.glob("*.js"))}
    return {name: n for name, n in sizes.items() if n > limit}


def test_no_static_javascript_module_is_over_400_lines():
    assert sorted(STATIC.glob("*.js")), f"no JavaScript in {STATIC}"
    assert js_modules_over(MAX_JS_LINES) == {}, "split these by job"


def test_the_size_check_catches_a_long_module(tmp_path):
    (tmp_path / "short.js").write_text("export const a = 1;\n" * MAX_JS_LINES)
    (tmp_path / "long.js").write_text("export const a = 1;\n" * (MAX_JS_LINES + 1))
    assert js_modules_over(MAX_JS_LINES, tmp_path) == {"long.js": MAX_JS_LINES + 1}


# --- the size of the Python modules: none over 400 lines, none of the ground floor or the faces over 250 ------

MAX_PY_LINES = 400
#: The ground floor (every module of the ground-floor contract in .importlinter) and the faces stay smaller.
MAX_SMALL_PY_LINES = 250
FACES = ("multicrop.cli", "multicrop.web", "multicrop.batch")


def ground_floor(config: Path = ROOT / ".importlinter") -> tuple[str, ...]:
    """The modules the ground-floor contract of ``config`` lists (``multicrop.io``, ``multicrop.geometry``, ...)."""
    parser = configparser.ConfigParser()
    parser.read(config, encoding="utf-8")
    return tuple(parser["importlinter:contract:ground-floor"]["source_modules"].split())


def module_files(module: str, root: Path = SRC) -> list[Path]:
    """The Python files of ``module`` (``multicrop.io``: every file of the package; ``multicrop.geometry``: one)."""
    path = root.joinpath(*module.split(".")[1:])
    if path.is_dir():
        return sorted(path.rglob("*.py"))
    return [f for f in [path.with_name(path.name + ".py")] if f.is_file()]


def py_modules_over(limit: int, root: Path = SRC, modules: tuple[str, ...] | None = None) -> dict[str, int]:
    """``{path under root: lines}`` of every Python module in ``root`` (or in ``modules``) longer than ``limit`` lines."""
    files = sorted(root.rglob("*.py")) if modules is None else [f for m in modules for f in module_files(m, root)]
    sizes = {p.relative_to(root).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    return {name: n for name, n in sizes.items() if n > limit}


def test_no_python_module_is_over_400_lines():
    assert sorted(SRC.rglob("*.py")), f"no Python in {SRC}"
    assert py_modules_over(MAX_PY_LINES) == {}, "split these by job"


def test_no_ground_floor_or_face_module_is_over_250_lines():
    modules = ground_floor() + FACES
    assert "multicrop.io" in modules and "multicrop.geometry" in modules
    assert [m for m in modules if not module_files(m)] == [], "a module the check names has no Python file"
    assert py_modules_over(MAX_SMALL_PY_LINES, modules=modules) == {}, "split these by job"


def test_the_python_size_check_catches_a_long_module(tmp_path):
    for name, lines in [("crop/short.py", MAX_PY_LINES), ("crop/long.py", MAX_PY_LINES + 1),
                        ("crop/middle.py", MAX_SMALL_PY_LINES + 1), ("geometry.py", MAX_SMALL_PY_LINES),
                        ("io/deep/long.py", MAX_SMALL_PY_LINES + 1), ("cli/long.py", MAX_SMALL_PY_LINES + 1)]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("a = 1\n" * lines)
    assert py_modules_over(MAX_PY_LINES, tmp_path) == {"crop/long.py": MAX_PY_LINES + 1}
    small = py_modules_over(MAX_SMALL_PY_LINES, tmp_path, ("multicrop.io", "multicrop.geometry", "multicrop.cli"))
    assert small == {"io/deep/long.py": MAX_SMALL_PY_LINES + 1, "cli/long.py": MAX_SMALL_PY_LINES + 1}
