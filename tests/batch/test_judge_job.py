"""``batch judge`` on the local engine: each call paid once, bad images reported, reruns free."""

from __future__ import annotations

import shutil

import pandas as pd

from multicrop.batch.judge_job import run_judge_batch
from multicrop.judges.store import CallStore


def test_judge_batch_pays_each_call_once_across_workers_and_reruns(tree, tmp_path):
    root, good, bad = tree
    twin = shutil.copy(good[0], root / "twin.png")  # same bytes: same call keys, kept in one chunk
    db = tmp_path / "runs.sqlite"
    out = tmp_path / "images.parquet"
    s1 = run_judge_batch(root, db, workers=2, chunk=2, output=out)
    assert (s1.total, s1.done, s1.failed) == (len(good) + 1 + len(bad), len(good) + 1, len(bad))
    assert s1.failed_by_reason == {"ImageLoadError": len(bad)}
    with CallStore(db) as store:
        n_calls = len(store)
        assert store.verify().ok
    rows = s1.planned // s1.total  # 20 planned rows an image: 5 holistic and 3 x 5 dimension repetitions
    calls = 6  # the measured judge is deterministic: one call per prompt (holistic + 5 dimensions)
    assert n_calls == s1.performed == calls * len(good)  # the twin shares every call of good[0]
    table = pd.read_parquet(out).set_index("path")
    assert table.loc[str(twin), "content_hash"] == table.loc[str(good[0]), "content_hash"]
    assert set(table.index[table.status == "failed"]) == {str(b) for b in bad}
    s2 = run_judge_batch(root, db, workers=2, chunk=3)
    assert (s2.performed, s2.already_done, s2.done) == (0, rows * (len(good) + 1), len(good) + 1)
