"""Hostile store files for ``multicrop store stats|verify|export|runs|show`` and ``judge --db``.

Every case asserts exit code 1, one line on stderr naming the store file and
the problem (no traceback), and that nothing new is left beside it: no export
file, no table, no ``-wal``/``-shm`` sidecars, no stray files from a
mis-parsed name.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.cli import main as cli_main


def _real_store(path: Path, photo: Path) -> Path:
    assert cli_main.main(["judge", str(photo), "--db", str(path), "--holistic-repetitions", "2",
                          "--dimension-repetitions", "1", "--json"]) == 0
    return path


def _sqlite(path: Path, script: str) -> Path:
    con = sqlite3.connect(path)
    con.executescript(script)
    con.close()
    return path


def _damaged(path: Path, photo: Path) -> Path:
    _real_store(path, photo)
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        for page in range(1, size // 4096):
            fh.seek(page * 4096 + 16)
            fh.write(b"\xa5" * 2000)
    return path


def _prefix(n: int):
    def make(path: Path, photo: Path) -> Path:
        data = _real_store(path.with_name("whole.sqlite"), photo).read_bytes()
        path.with_name("whole.sqlite").unlink()
        path.write_bytes(data[:n] if n > 0 else data[: len(data) // 3])
        return path
    return make


#: (case id, file name, builder, words the one line must hold besides the file name)
STORES = [
    ("text", "notes.sqlite", lambda p, ph: (p.write_text("hello, not a database\n"), p)[1], "not a usable SQLite"),
    ("random", "noise.sqlite", lambda p, ph: (p.write_bytes(os.urandom(8192)), p)[1], "not a usable SQLite"),
    ("zero-bytes", "empty.sqlite", lambda p, ph: (p.write_bytes(b""), p)[1], "not a multicrop store"),
    ("header-only", "head.sqlite", _prefix(100), ""),
    ("truncated", "cut.sqlite", _prefix(0), ""),
    ("newer", "new.sqlite", lambda p, ph: _sqlite(p, "CREATE TABLE calls (x); PRAGMA user_version = 99;"),
     "newer than this multicrop"),
    ("foreign", "photos.db", lambda p, ph: _sqlite(p, "CREATE TABLE photos (id INTEGER, path TEXT);"),
     "not a multicrop store"),
    ("foreign-calls", "crm.sqlite", lambda p, ph: _sqlite(p, "CREATE TABLE calls (who TEXT, phone TEXT);"),
     "not a multicrop store"),
    ("damaged-pages", "dmg.sqlite", _damaged, "damaged"),
    ("directory", "dir.sqlite", lambda p, ph: (p.mkdir(), p)[1], ""),
    ("missing", "ghost#1?.sqlite", lambda p, ph: p, "no such store"),
    ("broken-symlink", "link.sqlite", lambda p, ph: (p.symlink_to(p.with_name("nowhere.sqlite")), p)[1], ""),
]

COMMANDS = {
    "stats": lambda db, d: ["store", "stats", db],
    "verify": lambda db, d: ["store", "verify", db],
    "export": lambda db, d: ["store", "export", db, "-o", d / "out.csv"],
    "runs": lambda db, d: ["store", "runs", db],
    "show": lambda db, d: ["store", "show", "ab12", "--db", db],
    "judge": lambda db, d: ["judge", d / "p.png", "--db", db, "-o", d / "t.csv"],
}

# judge --db on a store it can read and write through: the two that are not refused.
_JUDGE_OK = {"zero-bytes", "missing"}
# Read-only commands on a missing file say "no such store"; judge creates it (a new store).


def _listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def photo_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("photo")
    rng = np.random.default_rng(0)
    Image.fromarray((rng.random((30, 40, 3)) * 255).astype(np.uint8)).save(d / "p.png")
    return d


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case, name, make, words", STORES, ids=[s[0] for s in STORES])
def test_hostile_store(tmp_path, photo_dir, capsys, monkeypatch, case, name, make, words, command):
    if sys.platform == "win32" and case == "broken-symlink":  # pragma: no cover
        pytest.skip("symlinks need privileges on Windows")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.png").write_bytes((photo_dir / "p.png").read_bytes())
    db = make(tmp_path / name, tmp_path / "p.png")
    capsys.readouterr()
    before = _listing(tmp_path)
    code = cli_main.main([str(a) for a in COMMANDS[command](db, tmp_path)])
    out, err = capsys.readouterr()
    if command == "judge" and case in _JUDGE_OK:
        assert code == 0, err  # an empty file or a new name is a new store
        assert _listing(tmp_path) - before <= {name, "t.csv"}
        return
    assert code == 1, (out, err)
    assert err.count("\n") == 1 and err.startswith("multicrop: error: "), err
    assert name in err and words in err, err
    assert "Traceback" not in err and "sqlite3." not in err
    assert _listing(tmp_path) == before  # no export, no table, no sidecars, no stray files


import sys  # noqa: E402  (used in the test above)
