"""``multicrop crop``, ``multicrop saliency list``, ``multicrop example``."""

import json

import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.crop.config import CropConfig
from multicrop.datasets.examples import example_image

FAST = ["--saliency", "spectral", "--no-faces"]


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "ex.jpg"
    Image.fromarray(example_image(width=900, height=350)).save(path, quality=90)
    return path


def test_crop_writes_crops_json_and_preview(tmp_path, photo, capsys):
    # the default strategy, direct, writes one crop per distinct subject it finds, then fills k with a
    # close-up of one of them (the astronaut to the waist or chest: the pose sees her face), and says so
    assert main(["crop", str(photo), "-o", str(tmp_path), "-k", "3", *FAST]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["ex.json", "ex_1.jpg", "ex_2.jpg", "ex_3.jpg", "ex_preview.jpg"]
    rec = json.loads((tmp_path / "ex.json").read_text())
    assert rec["k"] == 3 and rec["size"] == [900, 350]
    assert "1 portrait of a person another crop shows whole, cut at the chest or waist" in rec["notes"]
    assert {"box", "score", "parts", "ratio", "path", "index", "resized"} <= set(rec["crops"][0])
    assert set(rec["versions"]) >= {"multicrop", "scorer", "saliency"}
    cfg = CropConfig.from_dict(rec["config"])
    assert cfg.k == 3 and cfg.strategy == "direct"
    out = capsys.readouterr()
    assert "ex_1.jpg" in out.out and "1 portrait of a person" in out.err


def test_crop_builds_each_models_session_once_ahead_of_the_photo(tmp_path, photo, monkeypatch):
    # the sessions are prefetched on a second thread while the photo is read; the pipeline then takes
    # them from there: each model of the config is built exactly once, none on the main thread
    import threading

    from multicrop.crop.analysis import model_files
    from multicrop.models import onnx_session, sessions, thread_count

    built = []
    real = sessions._build

    def spy(name, threads):
        built.append((name, threads, threading.current_thread() is threading.main_thread()))
        return real(name, threads)

    monkeypatch.setattr(sessions, "_build", spy)
    onnx_session.cache_clear()
    try:
        assert main(["crop", str(photo), "-o", str(tmp_path), "-k", "2", "--no-preview"]) == 0
    finally:
        onnx_session.cache_clear()
    n = thread_count()
    assert built == [(name, n, False) for name in model_files(CropConfig())]
    assert [name for name, _, _ in built] == ["nanodet", "yunet", "pose_landmark_full", "u2netp"]


def test_json_ratios_preset_and_width(tmp_path, photo, capsys):
    code = main(["crop", str(photo), "--out", str(tmp_path), "--preset", "instagram", "--width", "200",
                 "--json", "--strategy", "topk", *FAST])
    assert code == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["config"]["ratios"] == ["4:5", "1:1", "1.91:1"] and rec["config"]["strategy"] == "topk"
    for c in rec["crops"]:
        assert c["ratio"] in ("4:5", "1:1", "1.91:1")
        with Image.open(tmp_path / c["resized"]["200"]) as im:
            assert im.width == 200


def test_bad_inputs_one_line_each_batch_continues(tmp_path, photo, capsys):
    (tmp_path / "text.jpg").write_text("hello")
    Image.new("RGB", (30, 30)).save(tmp_path / "tiny.png")
    out = tmp_path / "out"
    code = main(["crop", str(tmp_path / "missing.jpg"), str(tmp_path / "text.jpg"), str(tmp_path / "tiny.png"),
                 str(photo), "-o", str(out), "-s", "partition", *FAST])  # no notes beside the errors
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"multicrop: {tmp_path / 'missing.jpg'}: no such file",
        f"multicrop: {tmp_path / 'text.jpg'}: not an image Pillow can read",
        f"multicrop: {tmp_path / 'tiny.png'}: 30x30 is smaller than the smallest crop side of 64 px",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["ex.json", "ex_1.jpg", "ex_2.jpg", "ex_preview.jpg"]


def test_k_too_large(tmp_path, photo, capsys):
    assert main(["crop", str(photo), "-o", str(tmp_path), "-k", "20", *FAST]) == 1
    assert "cannot hold k=20 crops" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_unknown_ratio_and_option_fail(tmp_path, photo, capsys):
    assert main(["crop", str(photo), "-o", str(tmp_path), "--ratio", "wide"]) == 1
    err = capsys.readouterr().err
    assert "multicrop: error: --ratio: ratio setting 'wide' is neither a preset" in err
    assert "instagram (4:5,1:1,1.91:1)" in err and err.count("carousel") == 1  # the presets once, with ratios
    assert main(["crop", str(photo), "--bogus"]) == 2
    assert main(["crop", str(photo), "--saliency", "u2nt"]) == 1
    assert "did you mean 'u2netp'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_config_file(tmp_path, photo, capsys):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(CropConfig(k=3, ratios="1:1", strategy="partition", saliency="spectral", faces=False).to_json())
    assert main(["crop", str(photo), "-o", str(tmp_path / "o"), "-c", str(cfg), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["k"] == 3 and rec["config"]["ratios"] == ["1:1"]
    cfg.write_text('{"colour": 1}')
    assert main(["crop", str(photo), "-c", str(cfg)]) == 1
    assert f"multicrop: error: {cfg}: unknown key 'colour'; allowed: analysis_max_side," in capsys.readouterr().err
    cfg.write_text('{"qualty": 80}')  # every key a file may hold is listed, the output settings too
    assert main(["crop", str(photo), "-c", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert "unknown key 'qualty' (did you mean 'quality'?)" in err and ", lossless, " in err and ", widths" in err


def test_config_file_may_hold_output_settings(tmp_path, photo, capsys):
    # a record's config from before the split still loads: quality and max_pixels are output settings
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({**CropConfig(k=3, strategy="partition", saliency="spectral", faces=False).to_dict(), "quality": 80,
                               "max_pixels": 300_000, "format": "png", "preview": False}))
    assert main(["crop", str(photo), "-o", str(tmp_path / "o"), "-c", str(cfg)]) == 1
    assert "exceeds the limit of 300,000 pixels" in capsys.readouterr().err
    assert main(["crop", str(photo), "-o", str(tmp_path / "o"), "-c", str(cfg), "--max-pixels", "400000"]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["ex.json", "ex_1.png", "ex_2.png", "ex_3.png"]


def test_saliency_list(capsys):
    assert main(["saliency", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"u2netp", "spectral"} <= {r["name"] for r in rows}
    assert main(["saliency", "list"]) == 0
    assert "u2netp" in capsys.readouterr().out


def test_example_command(tmp_path, capsys):
    assert main(["example", str(tmp_path / "e.jpg"), "-w", "600", "-H", "240"]) == 0
    with Image.open(tmp_path / "e.jpg") as im:
        assert im.size == (600, 240)


def test_example_never_replaces_a_file(tmp_path, capsys):
    mine = tmp_path / "mine.jpg"
    Image.new("RGB", (64, 48), "red").save(mine)
    before = mine.read_bytes()
    assert main(["example", str(mine)]) == 1
    assert "mine.jpg exists and is not this example photo" in capsys.readouterr().err and mine.read_bytes() == before
    # the same example again is left as it is (a rerun of the README's first command); another size is refused
    ex = tmp_path / "e.jpg"
    assert main(["example", str(ex), "-w", "600", "-H", "240"]) == 0
    stamp = ex.stat().st_mtime_ns
    assert main(["example", str(ex), "-w", "600", "-H", "240"]) == 0 and ex.stat().st_mtime_ns == stamp
    assert main(["example", str(ex), "-w", "700", "-H", "240"]) == 1
    assert main(["example", str(tmp_path)]) == 1
    assert f"{tmp_path} is a folder" in capsys.readouterr().err
