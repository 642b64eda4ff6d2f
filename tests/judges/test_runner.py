"""Planning (call keys), resume, and the tidy output table."""

import numpy as np
import pandas as pd
import pytest

from multicrop.judges.clock import ManualClock
from multicrop.errors import InvalidParameterError
from multicrop.judges.backends import JUDGE_BACKENDS
from multicrop.judges.panel import Family, Panel, default_panel, load_panel, parse_panel
from multicrop.io.tables import write_table
from multicrop.judges.runner import TABLE_COLUMNS, RunConfig, judge_images, plan_calls, scores_table
from multicrop.judges.rubric import load_rubric
from multicrop.judges.types import ImageRef
from multicrop.hashing import canonical_json, hash_text
from multicrop.judges.store import CallStore


def _refs(n, seed=0):
    rng = np.random.default_rng(seed)
    return [ImageRef((rng.random((32, 40, 3)) * 255).astype(np.uint8), label=f"im{i}") for i in range(n)]


def _backends(panel):
    return {f.name: f.create() for f in panel.families}


def test_plan_keys_are_hashes_of_canonical_json_of_all_key_fields():
    panel = default_panel()
    img = _refs(1)[0]
    plan = plan_calls([img], panel, _backends(panel))
    # 20 rows as the protocol asks; measured is deterministic, so one key per prompt
    assert len(plan) == 5 + 5 * 3 and len({c.key for c in plan}) == 1 + 5
    c = plan[7]
    assert c.repetition == 2
    fields = {
        "backend": "measured", "backend_version": _backends(panel)["measured"].version, "model": "measured-v1", "options": {"max_side": 1024},
        "prompt_kind": "dimension", "dimension": c.prompt.dimension, "scale": [1, 5],
        "image_sha256": img.sha256, "temperature": 0.3,
        "repetition": 0,  # measured reads no prompt and is deterministic: kind, scale, repetition 0
    }
    assert c.key_json == canonical_json(fields)
    assert c.key == hash_text(c.key_json) and c.key.startswith("sha256:")


def test_a_backend_that_reads_prompts_keys_every_repetition_and_the_template():
    panel = parse_panel({"families": [{"name": "vlm", "backend": "openai-compatible", "model": "m",
                                       "options": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": ""}}]})
    img = _refs(1)[0]
    plan = plan_calls([img], panel, _backends(panel))
    assert len(plan) == 20 and len({c.key for c in plan}) == 20
    c = plan[7]
    assert f'"rubric_sha256":"{load_rubric().sha256}"' in c.key_json and '"template":"dimension@1"' in c.key_json
    assert f'"repetition":{c.repetition}' in c.key_json


@pytest.mark.parametrize("change", [
    {"temperature": 0.7},
    {"families": [{"name": "measured", "backend": "measured", "model": "measured-v1", "options": {"max_side": 512}}]},
    {"families": [{"name": "measured", "backend": "measured", "model": "other-model"}]},
])
def test_anything_that_changes_replies_changes_keys(change):
    base = default_panel()
    other = parse_panel({**base.to_dict(), **change})
    img = _refs(1)[0]
    k0 = {c.key for c in plan_calls([img], base, _backends(base))}
    k1 = {c.key for c in plan_calls([img], other, _backends(other))}
    assert not (k0 & k1)


def test_family_name_and_image_label_do_not_change_keys():
    img = _refs(1)[0]
    p1 = Panel((Family("a", "measured", "measured-v1"),))
    p2 = Panel((Family("b", "measured", "measured-v1"),))
    relabelled = ImageRef(np.asarray(img.array(64)), label="renamed")
    k1 = [c.key for c in plan_calls([img], p1, _backends(p1))]
    k2 = [c.key for c in plan_calls([relabelled], p2, _backends(p2))]
    assert k1 == k2


def test_rerun_performs_only_missing_calls_and_table_has_exact_columns(tmp_path):
    panel = parse_panel({**default_panel().to_dict(), "holistic_repetitions": 2, "dimension_repetitions": 1})
    with CallStore(tmp_path / "r.sqlite") as store:
        s1, _ = judge_images(_refs(2), panel, store)
        s2, plan = judge_images(_refs(3), panel, store)
        df = scores_table(plan, store)
    # 7 rows per image (2 holistic + 5 dimensions), 6 calls (the two holistic repetitions are one)
    assert (s1.planned, s1.performed, s1.collapsed) == (14, 12, 2)
    assert (s2.planned, s2.already_done, s2.performed) == (21, 14, 6)
    assert tuple(df.columns) == TABLE_COLUMNS
    assert len(df) == 21 and df.score.notna().all()
    assert set(df.prompt_kind) == {"holistic", "dimension"}
    assert set(df[df.prompt_kind == "holistic"].dimension) == {"overall"}
    assert df.repetition.dtype == "int64"
    for ext in ("csv", "parquet"):
        write_table(df, tmp_path / f"t.{ext}")
        back = pd.read_csv(tmp_path / "t.csv") if ext == "csv" else pd.read_parquet(tmp_path / "t.parquet")
        assert tuple(back.columns) == TABLE_COLUMNS and len(back) == 21
    with pytest.raises(InvalidParameterError, match=r"\.csv or \.parquet"):
        write_table(df, tmp_path / "t.xlsx")


def test_panel_file_validation(tmp_path):
    p = tmp_path / "panel.toml"
    p.write_text('holistic_repetitions = 25\n[[families]]\nname = "m"\nbackend = "measured"\nmodel = "measured-v1"\n'
                 '[[families]]\nname = "v"\nbackend = "openai-compatible"\nmodel = "gpt-x"\n'
                 'options = { api_key_env = "" }\n[prices]\n"gpt-x" = { input = 1.5, output = 6.0 }\n')
    panel = load_panel(p)
    assert panel.holistic_repetitions == 25 and panel.dimension_repetitions == 3 and panel.temperature == 0.3
    assert panel.families[1].options["price_output_per_mtok"] == 6.0
    assert "price_input_per_mtok" not in panel.families[0].options
    for bad, match in [
        ({"families": []}, "at least one"),
        ({"families": [{"name": "a", "backend": "measured"}]}, "'model' must be"),
        ({"families": [{"name": "a", "backend": "measured", "model": "m", "opts": {}}]}, "unknown key"),
        ({"families": [{"name": "a", "backend": "measured", "model": "m"}] * 2}, "duplicate family"),
        ({"families": [{"name": "a", "backend": "measured", "model": "m"}], "temperature": 3}, "temperature"),
        ({"families": [{"name": "a", "backend": "measured", "model": "m"}], "holistic_repetitions": -1},
         r"in \[0, 100\], got -1"),
        ({"families": [{"name": "a", "backend": "measured", "model": "m"}], "dimension_repetitions": 101},
         r"dimension_repetitions must be an integer in \[0, 100\], got 101"),  # refused as the panel loads
    ]:
        with pytest.raises(InvalidParameterError, match=match):
            parse_panel(bad)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        load_panel(tmp_path / "nope.toml")


def test_families_that_would_make_the_same_calls_are_rejected(tmp_path):
    # Family names are not in the key (renaming reuses calls), so two families
    # with the same backend, model and key options would share every call.
    p = tmp_path / "dup.toml"
    p.write_text('[[families]]\nname = "a"\nbackend = "measured"\nmodel = "measured-v1"\n'
                 '[[families]]\nname = "b"\nbackend = "measured"\nmodel = "measured-v1"\n')
    with pytest.raises(InvalidParameterError, match=r"families 'a' and 'b' are the same judge"):
        load_panel(p)
    same_server = {"api_key_env": "MULTICROP_TEST_UNSET_KEY", "base_url": "http://localhost:8000/v1"}
    with pytest.raises(InvalidParameterError, match=r"'vllm' and 'again'"):  # no credentials needed to tell
        parse_panel({"families": [
            {"name": "vllm", "backend": "openai-compatible", "model": "q", "options": same_server},
            {"name": "again", "backend": "openai-compatible", "model": "q",
             "options": {**same_server, "base_url": "http://localhost:8000/v1/",
                                                           "api_key_env": "ANOTHER_UNSET_KEY"}},
        ]})
    two_servers = parse_panel({"families": [
        {"name": "vllm", "backend": "openai-compatible", "model": "q", "options": same_server},
        {"name": "openrouter", "backend": "openai-compatible", "model": "q",
         "options": {**same_server, "base_url": "https://openrouter.ai/api/v1"}},
        {"name": "m512", "backend": "measured", "model": "measured-v1", "options": {"max_side": 512}},
        {"name": "m", "backend": "measured", "model": "measured-v1"},
    ]})
    assert [f.name for f in two_servers.families] == ["vllm", "openrouter", "m512", "m"]
    # A Panel built in code, bypassing parse_panel, is caught when planning.
    dup = Panel((Family("a", "measured", "measured-v1"), Family("b", "measured", "measured-v1")))
    with pytest.raises(InvalidParameterError, match="'a' and 'b'"):
        plan_calls(_refs(1), dup, _backends(dup))


def test_an_unreadable_image_is_reported_once_and_the_others_run(tmp_path):
    good = tmp_path / "good.png"
    from PIL import Image

    Image.fromarray((np.random.default_rng(1).random((32, 40, 3)) * 255).astype(np.uint8)).save(good)
    bad = tmp_path / "bad.jpg"
    bad.write_text("this is not a JPEG")
    panel = parse_panel({**default_panel().to_dict(), "holistic_repetitions": 2, "dimension_repetitions": 1})
    seen, progress = [], []
    with CallStore(tmp_path / "r.sqlite") as store:
        s, plan = judge_images([ImageRef(bad), ImageRef(good)], panel, store, config=RunConfig(concurrency=4),
                               on_bad_image=lambda label, problem: seen.append((label, problem)),
                               on_progress=lambda n, failed, cost: progress.append(n))
        df = scores_table(plan, store)
        n_fail = store.stats().n_failures
    assert len(seen) == 1 and seen[0][0] == str(bad) and seen[0][1].startswith(f"{bad}: not an image")
    assert s.bad_images == seen
    assert (s.planned, s.performed, s.skipped, s.failed) == (14, 6, 6, 0) and sum(progress) == 12
    assert set(df.image) == {str(good)} and df.score.notna().all() and n_fail == 1
    assert s.to_dict()["bad_images"] == [{"image": str(bad), "error": seen[0][1]}]


def test_example_panel_shipped_in_the_package_is_valid():
    from importlib import resources

    text = resources.files("multicrop").joinpath("data/panel.example.toml").read_text()
    import tomllib

    panel = parse_panel(tomllib.loads(text))
    assert [f.backend for f in panel.families] == ["measured", "openai-compatible", "openai-compatible"]


def test_run_config_validation():
    with pytest.raises(InvalidParameterError, match="concurrency"):
        RunConfig(concurrency=0)
    with pytest.raises(InvalidParameterError, match="max_retries"):
        RunConfig(max_retries=-1)
    assert JUDGE_BACKENDS.create("measured", model="measured-v1").deterministic


def test_identical_images_are_paid_for_once_and_both_listed(tmp_path):
    arr = _refs(1)[0].array(64)
    a, b = ImageRef(np.array(arr), label="a.jpg"), ImageRef(np.array(arr), label="copy/a.jpg")
    panel = default_panel()
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, plan = judge_images([a, b], panel, store)
        df = scores_table(plan, store)
        assert len(store) == 6
    assert (summary.planned, summary.performed, summary.identical, summary.collapsed,
            summary.already_done) == (40, 6, 6, 28, 0)  # 2 x 14 repetitions collapse, b's 6 calls are a's
    assert summary.to_dict()["identical"] == 6 and summary.to_dict()["collapsed"] == 28
    assert len(df) == 40 and set(df.image) == {"a.jpg", "copy/a.jpg"}
    by = df.pivot_table(index=["prompt_kind", "dimension", "repetition"], columns="image", values="score")
    assert (by["a.jpg"] == by["copy/a.jpg"]).all()


def test_planned_calls_carry_the_rubric_hash_that_is_in_their_key(tmp_path):
    panel = default_panel()
    rubric = load_rubric()
    plan = plan_calls(_refs(1), panel, _backends(panel), rubric)
    assert {c.rubric_sha256 for c in plan} == {rubric.sha256}
    # measured reads no prompt: its keys hold the scale, not the rubric hash (the record still names the rubric)
    assert not any("rubric_sha256" in c.key_json for c in plan)
    with CallStore(tmp_path / "r.sqlite") as store:
        judge_images(_refs(1), panel, store)
        assert {r.rubric_sha256 for r in store.iter_records()} == {rubric.sha256}


def test_an_unreachable_endpoint_stops_its_family_and_the_others_run_on(tmp_path):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    panel = parse_panel({
        "holistic_repetitions": 2, "dimension_repetitions": 1,
        "families": [
            {"name": "measured", "backend": "measured", "model": "measured-v1"},
            {"name": "dead", "backend": "openai-compatible", "model": "m",
             "options": {"base_url": f"http://127.0.0.1:{port}/v1", "api_key_env": ""}},
        ],
    })
    cfg = RunConfig(concurrency=1, timeout_s=5.0, max_retries=1, backoff_base_s=0.001, max_connection_errors=3)
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, plan = judge_images(_refs(2), panel, store, config=cfg, clock=ManualClock())
        assert {r.family for r in store.iter_records()} == {"measured"} and len(store) == 12
    # call 1: 2 attempts, both refused -> a failure; call 2: the 3rd refusal stops the family
    assert summary.performed == 12 and summary.failed == 1 and summary.abandoned == 13
    assert [f for f, _ in summary.stopped_families] == ["dead"]
    assert "3 connection errors in a row" in summary.stopped_families[0][1]
    assert summary.to_dict()["stopped_families"][0]["family"] == "dead"


def test_run_config_max_connection_errors_is_validated():
    assert RunConfig().max_connection_errors == 20
    for bad in (0, -1, 2.5):
        with pytest.raises(InvalidParameterError, match="max_connection_errors"):
            RunConfig(max_connection_errors=bad)


def test_a_price_for_a_model_no_family_uses_is_an_error():
    doc = {"families": [{"name": "v", "backend": "openai-compatible", "model": "gpt-4o",
                         "options": {"api_key_env": ""}}],
           "prices": {"gpt-4o": {"input": 2.5, "output": 10.0}, "gpt-40": {"input": 1.0, "output": 1.0}}}
    with pytest.raises(InvalidParameterError, match=r"\[prices\] names model\(s\) 'gpt-40' that no family uses"):
        parse_panel(doc)
    doc["prices"].pop("gpt-40")
    assert parse_panel(doc).families[0].options["price_input_per_mtok"] == 2.5


def test_panel_round_trips_through_its_dict_and_parse_panel():
    from importlib import resources
    import tomllib

    panel = parse_panel(tomllib.loads(resources.files("multicrop").joinpath("data/panel.example.toml").read_text()))
    data = panel.to_dict()
    assert data["families"][0] == {"name": "measured", "backend": "measured", "model": "measured-v1", "options": {}}
    assert list(data) == ["families", "temperature", "holistic_repetitions", "dimension_repetitions"]
    assert Panel.from_dict(data) == panel and parse_panel(data) == panel


@pytest.mark.parametrize("kind", ["fifo", "directory", "too-large"])
def test_a_panel_path_that_is_no_small_regular_file_is_one_error_not_a_hang(tmp_path, kind):
    import os

    path = tmp_path / "panel.toml"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would block until a writer came
    elif kind == "directory":
        path.mkdir()
    else:
        path.write_text("# " + "x" * (2 << 20) + "\n")
    with pytest.raises(InvalidParameterError, match="panel file"):
        load_panel(path)
