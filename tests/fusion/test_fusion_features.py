"""Judge table reader and feature blocks on small hand-made tables."""

import numpy as np
import pandas as pd
import pytest

from multicrop.errors import DatasetError, InvalidParameterError
from multicrop.fusion.features import (
    DIMENSIONS,
    build_features,
    calls_per_image,
    panel_mean,
    read_judge_table,
    split_holistic_block,
    validate_judge_table,
)


def _table():
    rows = []
    for img, base in (("a", 1.0), ("b", 5.0), ("c", 3.0)):
        for fam, off in (("m1", 0.0), ("m2", 1.0)):
            for rep in range(5):
                rows.append((img, fam, "holistic", "overall", rep, base + off + rep))
            for k, dim in enumerate(DIMENSIONS):
                for rep in range(3):
                    rows.append((img, fam, "dimension", dim, rep, base + k + rep))
    return pd.DataFrame(rows, columns=["image", "family", "prompt_kind", "dimension", "repetition", "score"])


def test_a_table_without_dimension_rows_gives_an_empty_p_block():
    """Holistic-only panels are valid input: P has no columns (it used to raise a pandas TypeError)."""
    frame = _table()
    t = validate_judge_table(frame[frame.prompt_kind == "holistic"])
    assert build_features(t, "P").shape[1] == 0
    hp = build_features(t, "H+P")
    assert list(hp.columns) == ["H:m1", "H:m2"]
    assert hp.loc["a", "H:m1"] == pytest.approx(3.0)


def test_blocks_by_hand():
    t = validate_judge_table(_table())
    H = build_features(t, "H")
    assert list(H.columns) == ["H:m1", "H:m2"]
    assert H.loc["a", "H:m1"] == pytest.approx(1.0 + 2.0)  # mean of reps 0..4 adds 2
    assert H.loc["b", "H:m2"] == pytest.approx(5.0 + 1.0 + 2.0)
    P = build_features(t, "P")
    assert P.shape == (3, 10)
    assert P.loc["c", "P:m2:composition"] == pytest.approx(3.0 + 1 + 1.0)  # base + k + mean(0, 1, 2)
    assert build_features(t, "H+P").shape == (3, 12)
    S = split_holistic_block(t, n_blocks=2)
    # reps 0..4 split as [0, 1, 2] and [3, 4]
    assert S.loc["a", "Hsplit:m1:0"] == pytest.approx(1.0 + 1.0)
    assert S.loc["a", "Hsplit:m1:1"] == pytest.approx(1.0 + 3.5)
    assert build_features(t, "Hsplit").shape[1] == 10  # as many columns as P
    with pytest.raises(InvalidParameterError, match="n_blocks=6 exceeds the 5 holistic repetitions"):
        split_holistic_block(t, n_blocks=6)
    with pytest.raises(InvalidParameterError, match="block must be one of"):
        build_features(t, "X")


def test_nan_scores_are_dropped_and_counted(tmp_path):
    df = _table()
    df.loc[0, "score"] = np.nan
    df.loc[7, "score"] = np.nan
    path = tmp_path / "judges.csv"
    df.to_csv(path, index=False)
    t = read_judge_table(path)
    assert t.n_dropped == 2 and len(t.data) == len(df) - 2
    # image a, m1 holistic: reps 1..4 remain -> 1 + mean(1, 2, 3, 4)
    assert build_features(t, "H").loc["a", "H:m1"] == pytest.approx(1.0 + 2.5)
    calls = calls_per_image(t).set_index(["family", "prompt_kind"])["calls_per_image"]
    assert calls[("m1", "holistic")] == 5.0 and calls[("m1", "dimension")] == 15.0  # failures still cost


def test_parquet_roundtrip(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "judges.parquet"
    _table().to_parquet(path)
    assert read_judge_table(path).data.shape == (len(_table()), 6)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.drop(columns="repetition"), "missing column"),
        (lambda d: d.assign(prompt_kind="verdict"), "prompt_kind must be one of"),
        (lambda d: d.assign(dimension=np.where(d.prompt_kind == "dimension", "sharpness", d.dimension)),
         "dimension must be one of"),
        (lambda d: d.assign(dimension="composition"), "holistic rows must have dimension 'overall'"),
        (lambda d: d.assign(repetition=1.5), "repetition must be an integer"),
        (lambda d: d.assign(score=["x"] + [1.0] * (len(d) - 1)), "non-numeric score 'x' on line 2"),
        (lambda d: pd.concat([d, d.iloc[:1]]), "duplicate call"),
    ],
)
def test_malformed_tables_raise(mutate, message):
    with pytest.raises(DatasetError, match=message):
        validate_judge_table(mutate(_table()))


def test_missing_file_and_extension(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        read_judge_table(tmp_path / "nope.csv")
    p = tmp_path / "x.json"
    p.write_text("{}")
    with pytest.raises(DatasetError, match=".csv or .parquet"):
        read_judge_table(p)


def test_panel_mean_is_mean_of_population_zscores():
    from scipy import stats

    H = pd.DataFrame({"H:a": [1.0, 2.0, 4.0, 7.0], "H:b": [10.0, 30.0, 20.0, 40.0]})
    ref = (stats.zscore(H["H:a"]) + stats.zscore(H["H:b"])) / 2  # scipy zscore uses ddof=0
    np.testing.assert_allclose(panel_mean(H).to_numpy(), ref, atol=1e-15)


def test_the_judge_table_schema_has_one_definition_and_loads_nothing_heavy():
    import subprocess
    import sys

    from multicrop.fusion import features
    from multicrop import schema
    from multicrop.judges import rubric, runner

    assert features.JUDGE_COLUMNS is schema.TABLE_COLUMNS is runner.TABLE_COLUMNS
    assert features.DIMENSIONS is schema.DIMENSION_IDS is rubric.DIMENSION_IDS
    assert features.PROMPT_KINDS is schema.PROMPT_KINDS and rubric.OVERALL is schema.OVERALL
    code = ("import sys, multicrop.fusion.features\n"
            "heavy = [m for m in ('sklearn', 'PIL', 'openai', 'multicrop.judges.backends', 'multicrop.judges.store',"
            " 'multicrop.judges.runner', 'multicrop.judges') if m in sys.modules]\n"
            "print(heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
