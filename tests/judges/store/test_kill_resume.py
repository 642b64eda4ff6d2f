"""SIGKILL in the middle of a run loses at most the calls in flight, and a
resume repeats none of the completed ones (real subprocess, real loopback server)."""

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.judges.store import CallStore
from multicrop.judges.store.store import readonly_uri

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

_SERVER = Path(__file__).resolve().parents[1] / "fake_openai_server.py"
CONCURRENCY = 4


def _server_module():
    spec = importlib.util.spec_from_file_location("fake_openai_server_kill", _SERVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(readonly_uri(db), uri=True, timeout=5)
    try:
        return con.execute("SELECT count(*) FROM calls").fetchone()[0]
    except sqlite3.OperationalError:  # not migrated yet
        return 0
    finally:
        con.close()


def test_sigkill_then_resume_performs_exactly_the_missing_calls(tmp_path):
    rng = np.random.default_rng(1)
    imgs = []
    for i in range(8):
        p = tmp_path / f"im{i}.png"
        Image.fromarray((rng.random((24, 32, 3)) * 255).astype(np.uint8)).save(p)
        imgs.append(str(p))
    total = 8 * (5 + 5 * 3)
    db = tmp_path / "runs.sqlite"
    with _server_module().FakeOpenAIServer() as srv:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            '[[families]]\nname = "slow"\nbackend = "openai-compatible"\nmodel = "slow:0.04"\n'
            f'options = {{ base_url = "{srv.base_url}", api_key_env = "", max_side = 64 }}\n'
        )
        cmd = [sys.executable, "-m", "multicrop", "judge", *imgs, "--panel", str(panel), "--db", str(db),
               "--concurrency", str(CONCURRENCY), "--no-progress"]
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while _count(db) < 40 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.02)
            assert proc.poll() is None, "run finished before it could be killed"
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            out, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.2)  # let the server finish writing replies nobody reads
        kept = _count(db)
        answered_first = srv.answered
        requests_first = srv.requests
        assert 40 <= kept < total
        # Replies received but not yet committed are the only loss: at most the calls in flight.
        assert answered_first - kept <= CONCURRENCY, (answered_first, kept)

        done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert f"{kept} already in" in done.stdout
        second = srv.requests - requests_first
    assert second == total - kept  # nothing completed was asked again
    with CallStore(db, readonly=True) as store:
        recs = list(store.iter_records())
        runs = store.runs()
        assert store.claims() == []  # the killed run's claims were taken over and released
    cells = Counter((r.image_sha256, r.dimension, r.repetition) for r in recs)
    assert len(recs) == len({r.call_key for r in recs}) == total and max(cells.values()) == 1
    # The killed run stays "running" in the log (it never ended); the resume finished.
    assert [r.status for r in runs] == ["running", "finished"] and runs[1].performed == total - kept
