"""The local engine end to end: real worker processes, real photos, corrupt files, a killed run resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from multicrop.batch import MANIFEST_NAME, latest_rows, read_manifest, run_crop_batch
from multicrop.batch.admission import header_pixels

from .conftest import FAST, NO_PREVIEW, make_photo
from .test_admission import fake_large_png


def _state(out: Path) -> dict[str, dict]:
    return latest_rows(read_manifest(out / MANIFEST_NAME))


def test_bad_photos_are_recorded_while_the_others_finish_and_a_rerun_skips_or_redoes(tree, tmp_path):
    root, good, bad = tree
    out = tmp_path / "out"
    big = fake_large_png(root / "set0" / "huge.png", 20000, 10000)  # 200 MP header, no pixels
    s1 = run_crop_batch(root, out, crop=FAST, output=NO_PREVIEW, workers=2, pixel_budget=250_000_000)
    assert (s1.total, s1.done, s1.failed, s1.skipped) == (len(good) + 3, len(good), 3, 0)
    assert s1.failed_by_reason == {"ImageLoadError": 1, "ImageTruncatedError": 2}  # corrupt; truncated, huge header
    assert s1.peak_pixels >= header_pixels(str(big))  # it was admitted, alone with small ones
    state = _state(out)
    for g in good:
        row = state[str(g)]
        assert row["status"] == "done" and row["content_hash"].startswith("sha256:")
        assert len(row["boxes"]) == FAST.k == len(row["scores"])
        stem = out / row["stem"]
        assert row["outputs"] == [f"{stem.name}_1{g.suffix}", f"{stem.name}_2{g.suffix}"]
        assert all((stem.parent / name).is_file() for name in row["outputs"])
        assert (stem.parent / f"{stem.name}.json").is_file()
    errors = {Path(p).name: r["error"] for p, r in state.items() if r["status"] == "failed"}
    assert set(errors) == {"corrupt.jpg", "truncated.png", "huge.png"}
    assert errors["corrupt.jpg"].startswith("cannot open")
    assert "truncated" in errors["truncated.png"]

    # Same settings: the done photos are skipped, the failed ones tried again.
    s2 = run_crop_batch(root, out, crop=FAST, output=NO_PREVIEW, workers=1)
    assert (s2.skipped, s2.done, s2.failed) == (len(good), 0, 3)
    # A changed photo is redone, the rest skipped.
    make_photo(good[0], seed=1234)
    s3 = run_crop_batch(root, out, crop=FAST, output=NO_PREVIEW, workers=1, retry_failed=False)
    assert (s3.skipped, s3.done, s3.failed) == (len(good) + 2, 1, 0)
    assert _state(out)[str(good[0])]["content_hash"] != state[str(good[0])]["content_hash"]
    # Changed settings: everything is redone.
    s4 = run_crop_batch(root, out, crop=FAST.replace(k=3), output=NO_PREVIEW, workers=2)
    assert (s4.skipped, s4.done, s4.failed) == (0, len(good), 3)
    assert all(len(_state(out)[str(g)]["boxes"]) == 3 for g in good)


_DRIVER = textwrap.dedent("""
    import sys
    from multicrop.batch import run_crop_batch
    from multicrop.crop.config import CropConfig, OutputConfig
    if __name__ == "__main__":
        run_crop_batch(sys.argv[1], sys.argv[2], crop=CropConfig(strategy="partition", saliency="spectral",
                       faces=False), output=OutputConfig(preview=False), workers=1, flush_rows=1)
""")


def test_a_run_killed_midway_resumes_without_redoing_done_photos(tmp_path):
    root, out = tmp_path / "photos", tmp_path / "out"
    good = [make_photo(root / f"p{i:02d}.png", i, size=(900, 600)) for i in range(24)]
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    proc = subprocess.Popen([sys.executable, str(script), str(root), str(out)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / MANIFEST_NAME).exists() and len(read_manifest(out / MANIFEST_NAME)) >= 4:
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver and its pool workers: a real crash
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    before = _state(out)
    assert 4 <= len(before) < len(good)
    # Only whole parts, and the dead run's lock (taken over by the next run).
    assert {p.name for p in (out / MANIFEST_NAME).iterdir() if not p.name.startswith("part-")} == {".lock"}

    summary = run_crop_batch(root, out, crop=FAST, output=NO_PREVIEW, workers=2)
    assert summary.skipped == len(before) and summary.done == len(good) - len(before) and summary.failed == 0
    after = _state(out)
    assert sorted(after) == sorted(str(g) for g in good) and all(r["status"] == "done" for r in after.values())
    for path, row in before.items():
        assert after[path]["run_id"] == row["run_id"]  # done before the kill: not redone
    rows = read_manifest(out / MANIFEST_NAME)
    assert len(rows) == len(good)  # compacted: one row per photo, each processed once in the manifest
