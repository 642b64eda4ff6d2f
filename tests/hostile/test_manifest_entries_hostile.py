"""Input manifests mean what they say: entries normalised, decoded once, remote schemes named; rows tell the truth.

A CSV naming ``p00.jpg`` and ``./p00.jpg`` names one photo; one byte that is
not UTF-8 refuses that entry and no other; an ``s3://`` or ``https://``
entry whose filesystem package is missing says which package, in one line;
``batch failed`` on a folder that is no manifest says so; a photo's failed
row records the library's own reason, and an internal error is called one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from multicrop.batch.sources import list_photos
from multicrop.errors import InvalidParameterError, MulticropError


def _photos(folder: Path, hb, n: int = 2) -> list[Path]:
    return [hb.good_photo(folder / f"p{i:02d}.jpg", seed=i) for i in range(n)]


def _csv(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"path\n" + b"".join(line + b"\n" for line in lines))
    return path


def test_spellings_of_one_photo_are_one_entry(tmp_path, hb):
    _photos(tmp_path, hb)
    (tmp_path / "sub").mkdir()
    m = _csv(tmp_path / "m.csv", [b"p00.jpg", b"./p00.jpg", b"sub/../p00.jpg", str(tmp_path / "p00.jpg").encode(),
                                  b"p01.jpg"])
    got = list_photos(m)
    assert [Path(p.path).name for p in got] == ["p00.jpg", "p01.jpg"] and all(p.refused is None for p in got)


def test_one_undecodable_byte_refuses_that_entry_only(tmp_path, hb):
    _photos(tmp_path, hb)
    m = _csv(tmp_path / "m.csv", [b"p00.jpg", b"caf\xe9.jpg", b"p01.jpg"])
    got = {Path(p.path).name: p.refused for p in list_photos(m)}
    assert got["p00.jpg"] is None and got["p01.jpg"] is None
    (bad,) = [why for name, why in got.items() if name.startswith("caf")]
    assert "not UTF-8" in bad and "\n" not in bad
    assert not any(name.startswith("b'") for name in got)


def test_a_nul_in_a_parquet_entry_refuses_that_entry_only(tmp_path, hb):
    import pyarrow as pa
    import pyarrow.parquet as pq

    _photos(tmp_path, hb)
    pq.write_table(pa.table({"path": ["p00.jpg", "p0\x001.jpg", "p01.jpg"]}), tmp_path / "m.parquet")
    got = {p.path: p.refused for p in list_photos(tmp_path / "m.parquet")}
    assert sum(why is None for why in got.values()) == 2
    assert any(why and "NUL" in why for why in got.values())


_NO_S3 = importlib.util.find_spec("s3fs") is None
_NO_HTTP = importlib.util.find_spec("aiohttp") is None


@pytest.mark.skipif(not _NO_S3, reason="s3fs is installed")
def test_an_s3_entry_names_the_package_it_needs_and_the_rest_goes_on(tmp_path, hb):
    _photos(tmp_path, hb, 1)
    m = _csv(tmp_path / "m.csv", [b"p00.jpg", b"s3://bucket/key.jpg"])
    got = {p.path: p.refused for p in list_photos(m)}
    assert got[str(tmp_path / "p00.jpg")] is None
    assert "pip install s3fs" in got["s3://bucket/key.jpg"]


@pytest.mark.skipif(not _NO_S3, reason="s3fs is installed")
def test_an_s3_source_is_one_line_naming_the_package():
    with pytest.raises(MulticropError) as err:
        list_photos("s3://bucket/2024/*.jpg")
    assert "pip install s3fs" in str(err.value) and "\n" not in str(err.value)
    assert not isinstance(err.value, ModuleNotFoundError)


@pytest.mark.skipif(not _NO_HTTP, reason="aiohttp is installed")
def test_an_https_entry_allowed_by_protocol_names_the_package(tmp_path):
    m = _csv(tmp_path / "m.csv", [b"https://example.org/a.jpg"])
    (photo,) = list_photos(m, protocols=("file", "local", "https"))
    assert photo.refused and "pip install aiohttp" in photo.refused


@pytest.mark.parametrize("make, words", [
    (lambda d, hb: (_photos(d, hb), d)[1], "no manifest part"),
    (lambda d, hb: ((d / "manifest.parquet").mkdir(), (d / "x_1.jpg").write_bytes(b""), d)[2], "did you mean"),
])
def test_batch_failed_on_a_folder_that_is_no_manifest_says_so(tmp_path, hb, capsys, make, words):
    from multicrop.cli import main as cli_main

    folder = make(tmp_path / "f", hb) if (tmp_path / "f").mkdir() is None else None
    capsys.readouterr()
    assert cli_main.main(["batch", "failed", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err, err


def test_failed_rows_refuses_an_empty_folder(tmp_path):
    from multicrop.batch.manifest import failed_rows

    (tmp_path / "m").mkdir()
    with pytest.raises(InvalidParameterError, match="not a batch manifest"):
        failed_rows(tmp_path / "m")
    with pytest.raises(InvalidParameterError, match="no such folder"):
        failed_rows(tmp_path / "none")


def test_a_ratio_too_thin_for_the_photo_is_recorded_as_the_crop_wing_says(tmp_path, hb):
    from multicrop.batch import read_manifest, run_crop_batch
    from multicrop.crop.config import CropConfig, OutputConfig

    _photos(tmp_path / "src", hb, 1)
    cfg = CropConfig.from_dict({"ratios": ["1:1000"], "saliency": "spectral", "faces": False})
    s = run_crop_batch(tmp_path / "src", tmp_path / "out", crop=cfg, output=OutputConfig(preview=False), workers=1)
    assert s.failed == 1
    (row,) = read_manifest(tmp_path / "out" / "manifest.parquet")
    assert row["error_kind"] == "ImageTooSmallError" and "1:1000" in row["error"], row["error"]
    assert "argmax" not in row["error"]


def test_an_internal_error_is_recorded_as_one_never_as_the_photos_reason(tmp_path, hb, monkeypatch):
    from multicrop.batch.crop_job import CropJob, crop_task
    from multicrop.batch.sources import Photo
    from multicrop.crop import pipeline
    from multicrop.crop.config import CropConfig, OutputConfig

    (photo,) = _photos(tmp_path, hb, 1)

    def broken(*a, **k):
        raise ValueError("attempt to get argmax of an empty sequence")

    monkeypatch.setattr(pipeline, "crop_photo", broken)
    job = CropJob(out_dir=str(tmp_path / "out"), crop=CropConfig(saliency="spectral", faces=False),
                  output=OutputConfig(preview=False))
    row = crop_task(job, Photo(str(photo), photo.name), "p00", "sha256:x")
    assert row["status"] == "failed" and row["error_kind"] == "ValueError"
    assert row["error"].startswith("internal error in multicrop") and "please report" in row["error"]
