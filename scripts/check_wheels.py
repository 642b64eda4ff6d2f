#!/usr/bin/env python3
"""Check that every dependency of multicrop has wheels for each supported Python.

For each Python version (default 3.11, 3.12, 3.13, 3.14) and each dependency
group of ``pyproject.toml`` (the core, then the core with each extra), run::

    pip download --only-binary=:all: --python-version X --dest DIR <requirements>

and print what each package resolves to, as a table, and which groups
failed to resolve (no wheel for that Python).  Exit status 1 if any group
failed.  A package published only as a pure-Python sdist (``PURE_SDISTS``:
pyvips) cannot be wheel-checked: its sdist is downloaded on its own
(``--no-deps``, which pip allows with ``--python-version``) and its
dependencies are resolved as wheels with the rest.  Needs network access to the package index; the wheels are
downloaded once per Python version into a temporary directory (``--keep``
to keep them).

    python scripts/check_wheels.py                      # all versions, all groups, this platform
    python scripts/check_wheels.py --python 3.14 --groups core eval
    python scripts/check_wheels.py --platform win_amd64
    python scripts/check_wheels.py --platform macosx_14_0_arm64   # onnxruntime wheels need macOS >= 13 on arm64
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ("3.11", "3.12", "3.13", "3.14")
_SAVED = re.compile(r"(?:Saved|File was already downloaded) (\S+)")
#: Packages published as a pure-Python sdist only (they build a py3-none-any wheel on
#: any Python), with the runtime dependencies of that sdist.
PURE_SDISTS: dict[str, list[str]] = {"pyvips": ["cffi>=1.0.0"]}


def dependency_groups(pyproject: Path) -> dict[str, list[str]]:
    """``{"core": [...], "<extra>": core + extra, ...}`` from ``pyproject.toml``, self-references expanded."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    name = project["name"]
    extras: dict[str, list[str]] = project.get("optional-dependencies", {})

    def expand(reqs: list[str]) -> list[str]:
        out: list[str] = []
        for r in reqs:
            m = re.fullmatch(rf"{re.escape(name)}\[([^\]]+)\]", r.replace(" ", ""))
            out += expand([x for e in m.group(1).split(",") for x in extras[e]]) if m else [r]
        return out

    core = list(project["dependencies"])
    return {"core": core, **{e: core + expand(reqs) for e, reqs in extras.items()}}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dist(filename: str) -> tuple[str, str]:
    """(normalised name, version) of a wheel or sdist file name; sdist versions end in " (sdist)"."""
    name = Path(filename).name
    if name.endswith(".whl"):
        dist, version = name.split("-")[:2]
        return _canonical(dist), version
    stem = re.sub(r"\.(tar\.gz|zip)$", "", name)
    dist, version = stem.rsplit("-", 1)
    return _canonical(dist), f"{version} (sdist)"


def _pip_download(args: list[str], python: str, dest: Path, platforms: list[str]) -> tuple[dict[str, str] | None, str]:
    cmd = [sys.executable, "-m", "pip", "download", "--python-version", python, "--dest", str(dest),
           "--disable-pip-version-check", "--progress-bar", "off"]
    for p in platforms:
        cmd += ["--platform", p]
    proc = subprocess.run(cmd + args, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.startswith("ERROR")]
        return None, " | ".join(lines[-2:]) or f"pip exited with {proc.returncode}"
    return dict(_dist(f) for f in _SAVED.findall(proc.stdout)), ""


def resolve(reqs: list[str], python: str, dest: Path, platforms: list[str]) -> tuple[dict[str, str] | None, str]:
    """``pip download`` ``reqs`` as wheels; ({name: version}, "") or (None, pip's error lines)."""
    wheels, sdists = [], []
    for r in reqs:
        name = _canonical(re.split(r"[\s<>=!~;\[(]", r, maxsplit=1)[0])
        if name in PURE_SDISTS:
            sdists.append(r)
            wheels += PURE_SDISTS[name]
        else:
            wheels.append(r)
    got, err = _pip_download(["--only-binary=:all:", *wheels], python, dest, platforms)
    for r in sdists:
        if got is None:
            break
        more, err = _pip_download(["--no-deps", r], python, dest, platforms)
        got = None if more is None else {**got, **more}
    return got, err


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", nargs="+", default=list(VERSIONS), help="Python versions (default: %(default)s)")
    ap.add_argument("--groups", nargs="+", help="core and/or extras to check (default: core and every extra)")
    ap.add_argument("--platform", action="append", default=[], help="pip --platform tag (default: this machine)")
    ap.add_argument("--keep", type=Path, help="keep the downloaded wheels under this directory")
    args = ap.parse_args()

    groups = dependency_groups(ROOT / "pyproject.toml")
    wanted = args.groups or list(groups)
    unknown = sorted(set(wanted) - set(groups))
    if unknown:
        ap.error(f"unknown group(s) {', '.join(unknown)}; known: {', '.join(groups)}")
    top = tempfile.mkdtemp(prefix="check-wheels-") if args.keep is None else str(args.keep)
    table: dict[str, dict[str, str]] = {}
    failures: list[str] = []
    platform = ", ".join(args.platform) or "this machine's platform"
    print(f"pip download --only-binary=:all: for Python {', '.join(args.python)} on {platform}", flush=True)
    try:
        for py in args.python:
            dest = Path(top) / f"py{py}"
            dest.mkdir(parents=True, exist_ok=True)
            for group in wanted:
                got, err = resolve(groups[group], py, dest, args.platform)
                status = f"{len(got)} files" if got is not None else f"FAILED: {err}"
                print(f"  Python {py:5s} {group:8s} {status}", flush=True)
                if got is None:
                    failures.append(f"Python {py} [{group}]: {err}")
                    continue
                for dist, version in got.items():
                    table.setdefault(dist, {})[py] = version
    finally:
        if args.keep is None:
            shutil.rmtree(top, ignore_errors=True)

    width = max([len(d) for d in table] + [7])
    print(f"\n{'package':<{width}} " + " ".join(f"{py:>14}" for py in args.python))
    for dist in sorted(table):
        print(f"{dist:<{width}} " + " ".join(f"{table[dist].get(py, '-'):>14}" for py in args.python))
    if failures:
        print("\nno wheels:\n  " + "\n  ".join(failures))
        return 1
    print(f"\nevery group resolves to wheels on Python {', '.join(args.python)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
