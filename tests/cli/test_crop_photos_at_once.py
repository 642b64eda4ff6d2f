"""``multicrop crop`` on a folder: two photos analysed at once, each with half the threads, written in order."""

import json
import threading

import pytest
from PIL import Image

from multicrop.cli.crop_steps import in_order, photo_workers
from multicrop.cli.main import main
from multicrop.datasets.examples import example_image


@pytest.mark.parametrize(("threads", "n", "plain", "expect"), [
    ("2", 10, True, (2, 1)), ("4", 3, True, (2, 2)), ("3", 2, True, (2, 1)),
    ("1", 10, True, (1, 1)),           # one thread: one photo at a time
    ("2", 1, True, (1, 2)),            # one photo gets every thread
    ("2", 10, False, (1, 2)),          # a judge panel, a learned head, the seamless layout
])
def test_two_photos_at_once_share_the_threads(monkeypatch, threads, n, plain, expect):
    monkeypatch.setenv("MULTICROP_THREADS", threads)
    assert photo_workers(n, plain=plain) == expect


def test_in_order_runs_ahead_on_the_workers_and_gives_the_items_back_in_order():
    both = threading.Barrier(2, timeout=60)   # the first two steps wait for each other: they run at once
    started = []

    def step(x):
        started.append(x)
        if x < 2:
            both.wait()
        return x * 10

    got = []
    for item, result in in_order(list(range(6)), step, workers=2, ahead=True):
        if item == 0:  # the caller holds item 0: 1 ran beside it, and at most 3 items are handed out ahead of it
            assert {0, 1} <= set(started) <= {0, 1, 2, 3}
        got.append((item, result))
    assert got == [(i, i * 10) for i in range(6)]


def test_in_order_hands_out_a_bounded_few_ahead_and_none_after_the_caller_stops():
    """Not the whole folder at once (as ``pool.map`` would): at most ``workers + 1`` beyond the one held."""
    started = []
    gen = in_order(list(range(10)), lambda x: started.append(x) or x, workers=1, ahead=True)
    assert next(gen) == (0, 0)
    gen.close()
    assert len(started) <= 3 and sorted(started) == list(range(len(started)))


def test_in_order_without_running_ahead_runs_each_step_when_asked():
    started = []
    gen = in_order([1, 2, 3], lambda x: started.append(x) or x, workers=2, ahead=False)
    assert next(gen) == (1, 1) and started == [1]
    assert list(gen) == [(2, 2), (3, 3)] and started == [1, 2, 3]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("photos")
    for i, (w, h) in enumerate([(900, 350), (700, 300), (640, 320), (1200, 400), (1000, 400)]):
        im = Image.fromarray(example_image(width=w, height=h, seed=i))
        (im.rotate(90, expand=True) if i == 2 else im).save(d / f"p{i}.jpg", quality=90)  # one portrait
    return d


def _run(folder, out, threads, monkeypatch, capsys) -> tuple[list[str], dict]:
    monkeypatch.setenv("MULTICROP_THREADS", threads)
    assert main(["crop", str(folder), "-o", str(out), "-k", "3", "--no-preview", "--detectors", "none"]) == 0
    lines = capsys.readouterr().out.splitlines()
    recs = {}
    for p in sorted(out.glob("*.json")):
        rec = json.loads(p.read_text())
        rec.pop("timings")
        recs[p.name] = rec
    files = {p.name: p.read_bytes() for p in out.glob("*.jpg")}
    return lines, recs | {"files": files}


def test_a_folder_cropped_two_at_a_time_is_the_folder_cropped_one_by_one(folder, tmp_path, monkeypatch, capsys):
    """Two photos at once with one model thread each (MULTICROP_THREADS=2) write the same crops, records and
    lines, in the photos' order, as one photo at a time (MULTICROP_THREADS=1)."""
    from multicrop.models import onnx_session, sessions

    onnx_session.cache_clear()
    try:
        two = _run(folder, tmp_path / "two", "2", monkeypatch, capsys)
        assert set(sessions._SESSIONS) == {("u2netp", 1)}   # each photo's U^2-Netp ran on one thread
    finally:
        onnx_session.cache_clear()
    one = _run(folder, tmp_path / "one", "1", monkeypatch, capsys)
    assert [line.split(":")[0] for line in two[0]] == [str(folder / f"p{i}.jpg") for i in range(5)]
    assert two == one
    assert len(one[1]["files"]) >= 5


def test_a_bad_photo_among_good_ones_fails_alone_in_its_place_and_the_bar_counts_it(folder, tmp_path, monkeypatch,
                                                                                   capsys):
    """The default detectors, two photos at a time: a truncated JPEG between good photos is reported in its
    place, the others are written as one photo at a time writes them, and the progress bar counts 1 failed."""
    import shutil

    from multicrop.cli import crop as crop_cli

    mixed = tmp_path / "mixed"
    shutil.copytree(folder, mixed)
    data = (folder / "p1.jpg").read_bytes()
    (mixed / "p1b.jpg").write_bytes(data[: len(data) // 2] + b"\xff\xd9")   # cut part-way, still ends in EOI
    advanced = []

    class Bar:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def start(self, total):
            advanced.append(("start", total))

        def advance(self, n=1, failed=0):
            advanced.append((n, failed))

    monkeypatch.setattr(crop_cli, "ProgressBar", Bar)
    runs = {}
    for threads in ("2", "1"):
        monkeypatch.setenv("MULTICROP_THREADS", threads)
        out = tmp_path / f"out{threads}"
        assert main(["crop", str(mixed), "-o", str(out), "-k", "3", "--no-preview"]) == 1
        got = capsys.readouterr()
        recs = {p.name: {k: v for k, v in json.loads(p.read_text()).items() if k != "timings"}
                for p in out.glob("*.json")}
        runs[threads] = (got.out.splitlines(), recs, {p.name: p.read_bytes() for p in out.glob("*.jpg")})
        assert [line.split(":")[0] for line in got.out.splitlines()] == [
            str(mixed / f"{n}.jpg") for n in ("p0", "p1", "p2", "p3", "p4")]
        assert "p1b.jpg: truncated or corrupt image" in got.err and not any(out.glob("p1b*"))
    assert runs["2"] == runs["1"]
    assert advanced.count(("start", 6)) == 2 and sum(f for n, f in advanced if n == 1) == 2   # 1 failed a run
