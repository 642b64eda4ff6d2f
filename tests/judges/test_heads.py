"""Head files, fitting a head from ratings, and the embedding judge backend."""

import asyncio
import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from multicrop.embeddings import EMBEDDING
from multicrop.errors import InvalidParameterError
from multicrop.judges.backends import JUDGE_BACKENDS
from multicrop.judges.fitting import FeatureCache, fit_head_from_ratings, head_targets, match_images
from multicrop.judges.heads import fit_head, head_sha256, load_head, rescale, save_head
from multicrop.judges.panel import parse_panel
from multicrop.judges.runner import judge_images, plan_calls, scores_table
from multicrop.judges.store import CallStore
from multicrop.judges.types import ImageRef, JudgeRequest
from multicrop.stats import spearman


def test_a_head_round_trips_through_its_file_bit_for_bit(tmp_path, toy_head):
    path = toy_head()
    head = load_head(path, embedding=EMBEDDING.id)
    again = tmp_path / "again.json"
    assert save_head(head, again) == head_sha256(path) == head_sha256(again)
    assert head.names() == ("overall", "composition") and head.target("colour_and_tone") is None
    doc = json.loads(path.read_text())
    assert doc["format"] == "multicrop-judge-head" and doc["version"] == 1 and path.stat().st_size < 20_000


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(format="x"), "not a multicrop judge head"),
    (lambda d: d.update(version=2), "format version 2"),
    (lambda d: d.update(embedding="other@1"), "fitted on embedding 'other@1'"),
    (lambda d: d["targets"][0].update(dim=3), "coef has 1280 values, dim says 3"),
    (lambda d: d["targets"][0].pop("intercept"), "malformed"),
    (lambda d: d.update(targets=[]), "has no targets"),
])
def test_bad_head_files_are_refused_with_the_reason(tmp_path, toy_head, edit, match):
    doc = json.loads(toy_head().read_text())
    edit(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InvalidParameterError, match=match):
        load_head(bad, embedding=EMBEDDING.id)


def test_fit_head_recovers_a_linear_target_and_measures_it_out_of_fold():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 30))
    overall = 3 + 0.4 * X[:, 0] + rng.normal(scale=0.2, size=200)
    comp = np.where(np.arange(200) < 150, 2 + 0.3 * X[:, 1], np.nan)  # rated on 150 photos only
    seen = []
    head = fit_head(X, {"overall": overall, "composition": comp}, scales={"overall": (1, 5), "composition": (1, 5)},
                    embedding="toy@0", on_target=seen.append)
    assert [t.name for t in seen] == ["overall", "composition"] and head.target("composition").n == 150
    assert head.target("overall").oof_spearman > 0.85 and head.target("composition").oof_spearman > 0.95
    assert spearman(head.target("overall").predict(X), overall) > head.target("overall").oof_spearman - 0.05
    with pytest.raises(InvalidParameterError, match="target must be 'overall' or a rubric dimension"):
        fit_head(X, {"quality": overall}, scales={"quality": (1, 5)}, embedding="toy@0")
    with pytest.raises(InvalidParameterError, match="5 rated photos, need at least 20"):
        fit_head(X[:5], {"overall": overall[:5]}, scales={"overall": (1, 5)}, embedding="toy@0")


def test_rescale_maps_the_ratings_scale_onto_the_prompt_scale():
    assert rescale(1, (1, 5), (1, 10)) == 1 and rescale(5, (1, 5), (1, 10)) == 10
    assert rescale(0, (1, 5), (1, 10)) == 1 and rescale(2, (0, 4), (1, 5)) == 3


def test_match_images_by_name_then_stem():
    files = ["/a/x.jpg", "/b/y.png", "/c/x.jpg", "/d/z.jpeg"]
    assert match_images(["x.jpg", "y", "z.jpg", "w.jpg"], files) == {"x.jpg": "/a/x.jpg", "y": "/b/y.png",
                                                                       "z.jpg": "/d/z.jpeg"}


def test_head_targets_come_from_the_attributes_that_match_rubric_dimensions():
    means = pd.DataFrame({"score": [1.0, 2, 3, 4], "quality": [2.0, 3, np.nan, 5], "light": [1.0, 1, 1, 1]})
    targets, cols, scales = head_targets(means, ("quality", "light"))
    assert cols == {"overall": "score", "technical_quality": "quality"}
    assert np.isnan(targets["technical_quality"][2]) and scales["overall"] == (1, 5)


def _photos(folder, n, seed=0):
    """Photos whose brightness is their 'rating' (a pattern the embedding sees)."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths, scores = [], []
    for i in range(n):
        level = rng.uniform(0.1, 0.9)
        arr = (np.clip(rng.normal(level, 0.1, size=(48, 64, 3)), 0, 1) * 255).astype(np.uint8)
        p = folder / ("sub" if i % 2 else ".") / f"p{i:03d}.png"
        p.parent.mkdir(exist_ok=True)
        Image.fromarray(arr).save(p)
        paths.append(p)
        scores.append(1 + 4 * level)
    return paths, np.array(scores)


class _Ratings:
    def __init__(self, names, scores):
        self.means = pd.DataFrame({"score": scores}, index=pd.Index(names, name="image"))
        self.attributes = ()
        self.source = "toy.csv"


def test_fit_from_ratings_embeds_each_photo_once_and_the_cache_serves_a_refit(tmp_path):
    paths, scores = _photos(tmp_path / "photos", 40)
    ratings = _Ratings([p.name for p in paths] + ["missing.jpg"], list(scores) + [3.0])
    cache = FeatureCache(tmp_path / "cache.npz", model_id=EMBEDDING.id)
    done = []
    res = fit_head_from_ratings(ratings, paths, cache=cache, on_embedding=done.append, threads=1)
    assert (res.n_rated, res.n_matched, res.unmatched) == (41, 40, ("missing.jpg",)) and sum(done) == 40
    assert res.head.target("overall").oof_spearman > 0.8  # brightness is easy for ImageNet features
    again = FeatureCache(tmp_path / "cache.npz", model_id=EMBEDDING.id)
    assert len(again.rows) == 40
    res2 = fit_head_from_ratings(ratings, paths, cache=again, threads=1)
    np.testing.assert_array_equal(res2.head.target("overall").coef, res.head.target("overall").coef)
    with pytest.raises(InvalidParameterError, match="holds embeddings of"):
        FeatureCache(tmp_path / "cache.npz", model_id="other@0")
    with pytest.raises(InvalidParameterError, match="the ratings rate 2 photos; a head needs at least 20"):
        fit_head_from_ratings(_Ratings(["a.jpg", "b.jpg"], [1.0, 2.0]), paths)
    names = [f"x{i}.jpg" for i in range(25)]
    with pytest.raises(InvalidParameterError, match="only 0 of the 25 rated images were found .* at least 20"):
        fit_head_from_ratings(_Ratings(names, [1.0 + i % 3 for i in range(25)]), paths)


def _request(img, dimension, scale):
    return JudgeRequest(prompt="ignored", prompt_kind="holistic" if dimension == "overall" else "dimension",
                        dimension=dimension, scale=scale, image=img, temperature=0.3, repetition=0)


def test_the_backend_answers_with_typed_scores_from_the_head_and_errors_for_missing_targets(toy_head):
    path = toy_head()
    be = JUDGE_BACKENDS.create("embedding", model="efficientnet_lite0", head=str(path))
    assert be.deterministic and not be.reads_prompt and not be.needs_network
    img = ImageRef(np.full((60, 80, 3), 120, np.uint8), label="grey")

    async def go():
        return [await be.execute(_request(img, d, s)) for d, s in
                (("overall", (1, 10)), ("composition", (1, 5)), ("distinctiveness", (1, 5)))]

    hol, comp, missing = asyncio.run(go())
    head = load_head(path)
    from multicrop.embeddings import embed

    raw = float(head.target("overall").predict(embed(img.array(448))))
    assert hol.text is None and hol.score == pytest.approx(rescale(raw, (1, 5), (1, 10)), abs=1e-6)
    assert 1 <= comp.score <= 5 and "composition" in comp.reason
    assert missing.score is None and "no 'distinctiveness' target" in missing.error


def test_head_content_enters_the_keys_and_its_path_does_not(tmp_path, toy_head):
    a = toy_head(seed=0)
    copy = tmp_path / "renamed.json"
    copy.write_bytes(a.read_bytes())
    b = toy_head(seed=1)
    img = ImageRef(np.zeros((16, 16, 3), np.uint8))

    def keys(head):
        panel = parse_panel({"families": [{"name": "e", "backend": "embedding", "model": "efficientnet_lite0",
                                           "options": {"head": str(head)}}]})
        return [c.key for c in plan_calls([img], panel, {f.name: f.create() for f in panel.families})]

    assert keys(a) == keys(copy) and not set(keys(a)) & set(keys(b))
    assert len(set(keys(a))) == 6  # deterministic: one call per prompt


def test_a_run_with_the_embedding_judge_fills_the_protocols_rows(tmp_path, toy_head):
    refs = [ImageRef(np.full((30, 40, 3), v, np.uint8), label=f"im{v}") for v in (40, 200)]
    panel = parse_panel({"families": [{"name": "e", "backend": "embedding", "model": "efficientnet_lite0",
                                       "options": {"head": str(toy_head())}}]})
    with CallStore(tmp_path / "r.sqlite") as store:
        summary, plan = judge_images(refs, panel, store)
        df = scores_table(plan, store)
        assert len(store) == 12 and store.verify().ok
    assert (summary.planned, summary.performed, summary.collapsed, summary.parse_failures) == (40, 12, 28, 8)
    assert len(df) == 40  # 5 holistic + 3 x 5 dimension rows per image
    hol = df[df.prompt_kind == "holistic"]
    assert hol.groupby("image").score.nunique().eq(1).all() and sorted(hol.repetition.unique()) == [0, 1, 2, 3, 4]
    assert df[df.dimension == "distinctiveness"].score.isna().all()  # the toy head has no such target
    assert df[df.dimension == "composition"].score.notna().all()
