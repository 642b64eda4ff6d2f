"""Two runs over one store never pay for the same call twice (real processes, real loopback server),
and claims held by a dead or expired run are taken over."""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from multicrop.judges.store import CallStore

from .test_store import _rec

_SERVER = Path(__file__).resolve().parents[1] / "fake_openai_server.py"


def _server_module():
    spec = importlib.util.spec_from_file_location("fake_openai_server_two", _SERVER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process handling")
def test_two_processes_on_one_store_split_the_work_and_pay_once_per_key(tmp_path):
    rng = np.random.default_rng(3)
    imgs = []
    for i in range(6):
        p = tmp_path / f"im{i}.png"
        Image.fromarray((rng.random((24, 32, 3)) * 255).astype(np.uint8)).save(p)
        imgs.append(str(p))
    total = 6 * (5 + 5 * 3)
    db = tmp_path / "runs.sqlite"
    with _server_module().FakeOpenAIServer() as srv:
        panel = tmp_path / "panel.toml"
        panel.write_text(
            '[[families]]\nname = "slow"\nbackend = "openai-compatible"\nmodel = "slow:0.15"\n'
            f'options = {{ base_url = "{srv.base_url}", api_key_env = "", max_side = 64 }}\n'
        )
        cmds = [[sys.executable, "-m", "multicrop", "judge", *imgs, "--panel", str(panel), "--db", str(db),
                 "--concurrency", "4", "--no-progress", "--json", "-o", str(tmp_path / f"t{n}.csv")]
                for n in (1, 2)]
        procs = [subprocess.Popen(c, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for c in cmds]
        outs = [p.communicate(timeout=120) for p in procs]
        bodies = [json.dumps(b, sort_keys=True) for b in srv.bodies]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    infos = [json.loads(o[0]) for o in outs]
    # Paid requests: exactly one per call key.  Repetitions of one prompt send one body,
    # so each distinct body is paid for exactly as many times as it has keys.
    assert srv.requests == total == sum(i["performed"] for i in infos)
    per_body = Counter(hashlib.sha256(b.encode()).hexdigest() for b in bodies)
    holistic = [n for b, n in zip(bodies, [per_body[hashlib.sha256(b.encode()).hexdigest()] for b in bodies])
                if "as a whole" in b]
    assert set(per_body.values()) <= {3, 5} and set(holistic) == {5}
    # Both ran and split the work; each one's table holds every call.
    assert all(i["performed"] > 0 for i in infos), infos
    assert sum(i["performed"] + i["done_elsewhere"] for i in infos) >= total
    for n in (1, 2):
        assert len(pd.read_csv(tmp_path / f"t{n}.csv")) == total
    with CallStore(db, readonly=True) as store:
        assert len(store) == total and store.verify().ok and store.claims() == []
        runs = store.runs()
    assert [r.status for r in runs] == ["finished", "finished"]
    assert sorted(r.performed for r in runs) == sorted(i["performed"] for i in infos)


def test_claims_of_live_runs_are_respected_and_of_dead_or_expired_runs_taken_over(tmp_path):
    import socket

    keys = [_rec(i).call_key for i in range(4)]
    with CallStore(tmp_path / "r.sqlite") as store:
        store.record([_rec(0)])
        got = store.claim(keys[:3], owner="elsewhere:1:a", lease_s=60)
        assert got.done == (keys[0],) and got.claimed == tuple(keys[1:3])
        # Another live owner (another host: never declared gone) holds keys 1 and 2.
        again = store.claim(keys[1:], owner="me:2:b", lease_s=60)
        assert again.busy == tuple(keys[1:3]) and again.claimed == (keys[3],)
        # A dead process on this host: its claims are taken over at once.
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
        ghost = f"{socket.gethostname()}:{int(dead.stdout)}:c"
        assert store.claim([keys[3]], owner=ghost, lease_s=60).busy == (keys[3],)  # "me" looks alive
        store.release_claims(owner="me:2:b")
        assert store.claim([keys[3]], owner=ghost, lease_s=60).claimed == (keys[3],)
        assert store.claim([keys[3]], owner="me:2:b", lease_s=60).claimed == (keys[3],)
        # An expired lease is taken over even from a live owner elsewhere.
        store.renew_claims(owner="elsewhere:1:a", lease_s=-1)
        assert store.claim(keys[1:3], owner="me:2:b", lease_s=60).claimed == tuple(keys[1:3])
        # Recording a call releases its claim; the owner's renewals keep the rest alive.
        store.record([_rec(1)], owner="me:2:b", release=[keys[2]])
        assert {k for k, o, _ in store.claims()} == {keys[3]}
        before = store.claims()[0][2]
        time.sleep(0.01)
        assert store.renew_claims(owner="me:2:b", lease_s=60) == 1 and store.claims()[0][2] > before
        assert os.getpid() != int(dead.stdout)
