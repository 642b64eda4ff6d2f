"""Reads and waits that are bounded: FIFOs and devices refused before opening, sized reads, capped Retry-After.

Nothing here may block: a FIFO opened for reading waits for a writer
forever, ``/dev/zero`` never ends, a ``Retry-After`` date in 2099 sleeps for
75 years.  Each case must end in one line (or a recorded failed call) while
the rest of the work is done.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import socket

import numpy as np
import pytest

from multicrop.batch.admission import header_pixels
from multicrop.errors import ImageLoadError, InputFileError, InvalidParameterError
from multicrop.judges.clock import ManualClock
from multicrop.io import load_image, read_bytes_bounded, read_header, read_text_bounded


def _special(tmp_path, kind: str):
    """A path named like a photo that is not a regular file."""
    path = tmp_path / f"{kind}.jpg"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    elif kind in ("zero", "null", "urandom"):
        path.symlink_to(f"/dev/{kind}")
    elif kind == "dangling":
        path.symlink_to(tmp_path / "nowhere.jpg")
    return path


_KINDS = ["fifo", "dir", "socket", "zero", "null", "urandom", "dangling"]


@pytest.mark.parametrize("kind", _KINDS)
def test_a_non_regular_photo_is_refused_before_it_is_opened(tmp_path, kind):
    path = _special(tmp_path, kind)
    for read in (lambda: load_image(path), lambda: read_header(path)):
        with pytest.raises(ImageLoadError) as err:
            read()
        assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert header_pixels(str(path)) == 0


@pytest.mark.parametrize("kind", _KINDS)
def test_a_non_regular_config_is_refused_before_it_is_read(tmp_path, kind):
    path = _special(tmp_path, kind)
    with pytest.raises(InputFileError) as err:
        read_text_bounded(path, what="--config")
    assert str(err.value).startswith(f"--config {path}: ")


@pytest.mark.parametrize("size,limit,ok", [(0, 10, True), (10, 10, True), (11, 10, False), (5 << 20, 1 << 20, False)])
def test_bounded_reads_refuse_files_over_the_limit(tmp_path, size, limit, ok):
    path = tmp_path / "c.json"
    path.write_bytes(b"a" * size)
    if ok:
        assert read_bytes_bounded(path, limit=limit) == b"a" * size
    else:
        with pytest.raises(InputFileError, match="larger than"):
            read_bytes_bounded(path, limit=limit)


def test_a_config_that_is_not_utf8_is_one_line(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(InputFileError, match="not UTF-8"):
        read_text_bounded(path)


@pytest.mark.parametrize("kind", ["fifo", "zero", "socket"])
def test_batch_crop_config_from_a_device_or_fifo_is_one_line(tmp_path, kind):
    from multicrop.cli.main import main

    src = tmp_path / "src"
    src.mkdir()
    cfg = _special(tmp_path, kind)
    assert main(["batch", "crop", str(src), "-o", str(tmp_path / "out"), "-c", str(cfg), "--no-progress"]) == 1


@pytest.mark.parametrize("kind", ["fifo", "zero", "dir"])
def test_a_manifest_that_is_not_a_regular_file_is_one_line(tmp_path, kind):
    from multicrop.batch.sources import list_photos

    path = tmp_path / f"m-{kind}.csv"
    target = _special(tmp_path, kind)
    target.rename(path) if kind != "zero" else path.symlink_to("/dev/zero")
    with pytest.raises(InvalidParameterError, match="manifest|folder|no photos"):
        list_photos(path)


def test_a_manifest_naming_devices_and_fifos_records_them_and_crops_the_good_photo(tmp_path, hb):
    import pandas as pd

    from multicrop.batch import run_crop_batch
    from multicrop.crop.config import CropConfig, OutputConfig

    src = tmp_path / "src"
    good = hb.good_photo(src / "good.jpg")
    fifo = _special(src, "fifo")
    zero = _special(src, "zero")
    manifest = src / "list.csv"
    pd.DataFrame({"path": ["/dev/zero", str(fifo), str(zero), "good.jpg", "../escape.jpg", "ftp://h/x.jpg",
                           "memory://x.jpg", "notes.txt"]}).to_csv(manifest, index=False)
    s = run_crop_batch(manifest, tmp_path / "out", crop=CropConfig(saliency="spectral", faces=False, k=2),
                       output=OutputConfig(preview=False), workers=1)
    # the link zero.jpg and /dev/zero are one file: one entry once normalised
    assert (s.total, s.done, s.failed) == (7, 1, 6)
    assert s.failed_by_reason == {"RefusedInput": 6}
    from multicrop.batch.manifest import latest_rows, read_manifest

    rows = latest_rows(read_manifest(tmp_path / "out" / "manifest.parquet"))
    assert rows[str(good)]["status"] == "done"
    assert "FIFO" in rows[str(fifo)]["error"] and "leaves the manifest's folder" in rows[
        str((tmp_path / "escape.jpg"))]["error"]
    assert "protocol ftp://" in rows["ftp://h/x.jpg"]["error"]


@pytest.mark.parametrize("value", ["../a.jpg", "sub/../../a.jpg", "./../x/a.jpg"])
def test_manifest_entries_leaving_its_folder_need_allow_outside(tmp_path, hb, value):
    import pandas as pd

    from multicrop.batch.sources import list_photos

    hb.good_photo(tmp_path / "a.jpg")
    hb.good_photo(tmp_path / "x" / "a.jpg")
    m = tmp_path / "m" / "list.csv"
    m.parent.mkdir()
    (m.parent / "sub").mkdir()
    pd.DataFrame({"path": [value]}).to_csv(m, index=False)
    (p,) = list_photos(m)
    assert p.refused and "--allow-outside" in p.refused
    (p,) = list_photos(m, allow_outside=True)
    assert p.refused is None


@pytest.mark.parametrize("url", ["http://example.invalid/a.jpg", "https://x/a.jpg", "ftp://x/a.jpg",
                                 "memory://a.jpg", "github://o:r@/a.jpg", "simplecache::http://x/a.jpg",
                                 "zip://a.jpg::file:///tmp/x.zip", "sftp://h/a.jpg"])
def test_protocols_other_than_the_documented_ones_are_refused(tmp_path, url):
    from multicrop.batch.sources import _protocol_refusal, list_photos

    assert _protocol_refusal(url, ("file", "s3")) is not None
    with pytest.raises(InvalidParameterError, match="is not read unless allowed"):
        list_photos(url)


# --- waits -------------------------------------------------------------------------------------------

def _date(year: int) -> str:
    return f"Fri, 31 Dec {year} 23:59:59 GMT"


#: The instant the waits are measured from (an injected clock: no test reads the wall clock).
_NOW = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC


@pytest.mark.parametrize("header,expect_capped", [
    ({"retry-after": _date(2099)}, True), ({"retry-after": "1e9"}, True), ({"retry-after": "1e400"}, True),
    ({"retry-after": "86400"}, True), ({"retry-after-ms": "1e15"}, True), ({"retry-after": _date(99999)}, True),
    ({"retry-after": "2"}, False), ({"retry-after": "-5"}, False), ({"retry-after": _date(1999)}, False),
    ({"retry-after": "nan"}, False), ({"retry-after": "soon"}, False), ({}, False),
])
def test_retry_after_is_capped_by_the_call_timeout_and_said(header, expect_capped):
    from multicrop.judges.backends.openai_compatible import capped_wait, retry_after_s

    wait, note = capped_wait(retry_after_s(header, now=_NOW), 30.0)
    assert wait is None or 0.0 <= wait <= 30.0
    assert bool(note) == expect_capped
    if expect_capped:
        assert wait == 30.0 and "call timeout, 30 s" in note


def _httpx():
    return pytest.importorskip("httpx2")  # the HTTP client the openai package uses here


def _mock_backend(monkeypatch, handler):
    import openai

    httpx = _httpx()

    from multicrop.judges.backends import JUDGE_BACKENDS
    from multicrop.judges.backends.openai_compatible import OpenAICompatibleBackend

    def client(self):
        if self._client is None:
            self._client = openai.AsyncOpenAI(api_key="x", base_url="http://judge.invalid/v1", max_retries=0,
                                              http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
        return self._client

    monkeypatch.setattr(OpenAICompatibleBackend, "_get_client", client)
    return JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="", max_side=64)


@pytest.mark.parametrize("retry_after", [_date(2099), "1e12", "3600"])
def test_a_429_asking_for_a_long_wait_raises_with_the_capped_wait(monkeypatch, retry_after):
    from multicrop.judges.backends import TransientCallError

    httpx = _httpx()
    be = _mock_backend(monkeypatch, lambda req: httpx.Response(429, headers={"Retry-After": retry_after},
                                                               json={"error": {"message": "slow"}}))
    be.clock = ManualClock(now=_NOW)

    async def go():
        try:
            await be._post({"model": "m", "messages": []}, timeout_s=2.5)
        finally:
            await be.aclose()

    with pytest.raises(TransientCallError) as err:
        asyncio.run(go())
    assert err.value.retry_after == 2.5 and "Retry-After asked" in str(err.value)


def _reply(content) -> str:
    return json.dumps({"model": "m", "choices": [{"message": {"content": content}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 2}})


@pytest.mark.parametrize("body", ["[" * 200_000 + "]" * 200_000, '{"a":' * 100_000 + "1" + "}" * 100_000,
                                  "[" * 5000, '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"])
def test_a_deeply_nested_reply_is_an_error_reply_not_a_crash(body):
    from multicrop.judges.backends import JUDGE_BACKENDS

    be = JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="")
    reply = be._reply_from_body(body)
    assert reply.error is not None and len(reply.text or "") <= 65536


def test_a_nested_json_reply_is_stored_as_an_unparsed_call_and_the_run_goes_on(monkeypatch, tmp_path):
    from multicrop.judges.panel import Family, Panel
    from multicrop.judges.runner import RunConfig, judge_images
    from multicrop.judges.store import CallStore
    from multicrop.judges.types import ImageRef

    httpx = _httpx()
    nested = "[" * 200_000 + "]" * 200_000
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(200, text=nested if len(calls) % 2 else _reply('{"score": 5}'))

    _mock_backend(monkeypatch, handler)
    panel = Panel((Family("m", "openai-compatible", "m", {"api_key_env": "", "max_side": 64}),),
                  holistic_repetitions=1, dimension_repetitions=0)
    rng = np.random.default_rng(0)
    refs = [ImageRef((rng.random((40, 50, 3)) * 255).astype(np.uint8), label=f"im{i}") for i in range(2)]
    with CallStore(tmp_path / "runs.sqlite") as store:
        judge_images(refs, panel, store, config=RunConfig(concurrency=1, timeout_s=2.0, max_retries=0))
        records = list(store.iter_records())
    assert len(records) == len(calls) >= 2
    assert any(r.parse_error and "nests JSON too deeply" in r.parse_error for r in records)
    assert any(r.score == 5 for r in records)


@pytest.mark.parametrize("tokens", [-10 ** 12, -1, 10 ** 15, True, 2.5, "7"])
def test_absurd_token_counts_in_a_reply_are_not_believed(tokens):
    from multicrop.judges.backends import JUDGE_BACKENDS

    be = JUDGE_BACKENDS.create("openai-compatible", model="m", api_key_env="", price_input_per_mtok=1.0)
    body = json.dumps({"model": "m", "choices": [{"message": {"content": '{"score": 3}'}}],
                       "usage": {"prompt_tokens": tokens, "completion_tokens": tokens}})
    reply = be._reply_from_body(body)
    assert reply.prompt_tokens is None and reply.completion_tokens is None and reply.cost_usd is None


@pytest.mark.parametrize("field,value", [("prompt_tokens", -10 ** 12), ("completion_tokens", -1),
                                         ("prompt_tokens", 10 ** 13), ("completion_tokens", 1.5),
                                         ("cost_usd", -0.01), ("cost_usd", math.inf), ("latency_s", math.nan),
                                         ("prompt_tokens", True)])
def test_the_store_refuses_records_with_impossible_counts(field, value):
    from multicrop.judges.store import CallRecord

    base = dict(key_fields={"backend": "x", "model": "m", "repetition": 0}, family="m", backend="x",
                model_requested="m", model_returned="m", image="a.jpg", image_sha256="sha256:00",
                prompt_kind="holistic", dimension="overall", template="holistic@1", rubric_sha256="sha256:11",
                temperature=0.3, repetition=0, prompt_tokens=10, completion_tokens=2, cost_usd=0.0,
                latency_s=0.01, attempts=1, raw_reply='{"score": 7}', score=7.0, reason=None, parse_error=None)
    CallRecord.new(**base)  # the base record is fine
    with pytest.raises(InvalidParameterError, match=field):
        CallRecord.new(**{**base, field: value})


def test_a_date_header_is_read_as_a_wait_from_now():
    from multicrop.judges.backends.openai_compatible import retry_after_s

    soon = email.utils.formatdate(_NOW + 5, usegmt=True)
    assert retry_after_s({"retry-after": soon}, now=_NOW) == 5.0


def test_a_429_date_is_measured_by_the_backends_clock_and_the_wait_by_the_runs(monkeypatch):
    import random

    from multicrop.judges.config import RunConfig
    from multicrop.judges.execute import call_with_retries
    from multicrop.judges.types import ImageRef, JudgeRequest

    httpx = _httpx()
    seen = []

    def handler(req):
        seen.append(1)
        if len(seen) == 1:
            return httpx.Response(429, headers={"Retry-After": email.utils.formatdate(_NOW + 7, usegmt=True)},
                                  json={"error": {"message": "slow"}})
        return httpx.Response(200, text=_reply('{"score": 4, "reason": "ok"}'))

    be = _mock_backend(monkeypatch, handler)
    clock = ManualClock(now=_NOW)
    be.clock = clock
    img = ImageRef(np.full((16, 16, 3), 90, np.uint8), label="g")
    req = JudgeRequest(prompt="p", prompt_kind="holistic", dimension="overall", scale=(1, 10), image=img,
                       temperature=0.3, repetition=0)

    async def go():
        try:
            return await call_with_retries(be, req, RunConfig(max_retries=2, timeout_s=30.0), random.Random(0),
                                           clock=clock)
        finally:
            await be.aclose()

    tried = asyncio.run(go())
    assert tried.reply is not None and tried.attempts == 2 and clock.waits == [7.0]


@pytest.mark.parametrize("kind", ["fifo", "zero", "socket"])
def test_a_carousel_label_file_that_is_not_regular_is_one_dataset_error(tmp_path, kind):
    from multicrop.datasets.carousel_item import _read_json
    from multicrop.errors import DatasetError

    path = _special(tmp_path, kind)
    label = path.with_suffix(".json")
    path.rename(label)
    with pytest.raises(DatasetError, match="unreadable.*not a regular file"):
        _read_json(label)
