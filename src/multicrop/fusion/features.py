"""Read the tidy judge table and build the feature blocks the combiners see.

The judge table's schema (columns and values) is defined once, in
:mod:`multicrop.schema` (dependency-free); :data:`JUDGE_COLUMNS`,
:data:`DIMENSIONS` and :data:`PROMPT_KINDS` here are the same objects.

Blocks (Jadhav et al. 2026, §3.1): **H** — per family, the holistic mean over
repetitions; **P** — per family and dimension, the mean over repetitions;
**H+P** — both; **Hsplit** — the feature-count control: each family's
holistic repetitions cut into as many contiguous blocks as P has dimensions,
one mean per block, so the combiner sees as many holistic columns as P has.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DatasetError, InvalidParameterError
from ..schema import CALL_KEY_COLUMNS, DIMENSION, DIMENSION_IDS, HOLISTIC, OVERALL, PROMPT_KINDS, TABLE_COLUMNS

__all__ = [
    "DIMENSIONS",
    "PROMPT_KINDS",
    "BLOCKS",
    "JUDGE_COLUMNS",
    "JudgeTable",
    "read_judge_table",
    "validate_judge_table",
    "holistic_block",
    "dimension_block",
    "split_holistic_block",
    "build_features",
    "panel_mean",
    "calls_per_image",
]

DIMENSIONS = DIMENSION_IDS
JUDGE_COLUMNS = TABLE_COLUMNS
BLOCKS = ("H", "P", "H+P", "Hsplit")


@dataclass(frozen=True)
class JudgeTable:
    """A validated judge table.

    Attributes
    ----------
    data : pandas.DataFrame
        Rows with a finite score, columns :data:`JUDGE_COLUMNS`.
    dropped : pandas.DataFrame
        Count of NaN (unparsed) scores per ``family, prompt_kind, dimension``.
    calls : pandas.DataFrame
        All rows including the dropped ones (every row cost one call).
    """

    data: pd.DataFrame
    dropped: pd.DataFrame
    calls: pd.DataFrame

    @property
    def families(self) -> list[str]:
        """Sorted family names."""
        return sorted(self.data["family"].unique().tolist())

    @property
    def n_dropped(self) -> int:
        """Total number of rows dropped for a NaN score."""
        return int(self.dropped["n_dropped"].sum()) if len(self.dropped) else 0


def validate_judge_table(frame: pd.DataFrame, *, source: str = "judge table") -> JudgeTable:
    """Check a judge table frame and split off NaN scores.

    Raises
    ------
    DatasetError
        Missing columns, unknown ``prompt_kind``/``dimension`` values,
        holistic rows whose dimension is not ``overall``, non-integer
        repetitions, non-numeric scores, or duplicate calls.

    Examples
    --------
    >>> df = pd.DataFrame({"image": ["a", "a"], "family": ["m", "m"],
    ...     "prompt_kind": ["holistic", "holistic"], "dimension": ["overall"] * 2,
    ...     "repetition": [0, 1], "score": [7.0, float("nan")]})
    >>> t = validate_judge_table(df)
    >>> len(t.data), t.n_dropped
    (1, 1)
    """
    missing = [c for c in JUDGE_COLUMNS if c not in frame.columns]
    if missing:
        raise DatasetError(
            f"{source}: missing column(s) {', '.join(missing)}; expected {', '.join(JUDGE_COLUMNS)}"
        )
    df = frame.loc[:, list(JUDGE_COLUMNS)].copy()
    for col in ("image", "family", "prompt_kind", "dimension"):
        if df[col].isna().any():
            line = int(np.flatnonzero(df[col].isna().to_numpy())[0]) + 2
            raise DatasetError(f"{source}: empty {col!r} on line {line}")
        df[col] = df[col].astype(str).str.strip()
    bad_kind = sorted(set(df["prompt_kind"]) - set(PROMPT_KINDS))
    if bad_kind:
        raise DatasetError(f"{source}: prompt_kind must be one of {PROMPT_KINDS}, got {bad_kind}")
    hol = df["prompt_kind"] == HOLISTIC
    if (df.loc[hol, "dimension"] != OVERALL).any():
        raise DatasetError(f"{source}: {HOLISTIC} rows must have dimension {OVERALL!r}")
    bad_dim = sorted(set(df.loc[~hol, "dimension"]) - set(DIMENSIONS))
    if bad_dim:
        raise DatasetError(f"{source}: dimension must be one of {DIMENSIONS}, got {bad_dim}")
    rep = pd.to_numeric(df["repetition"], errors="coerce")
    if rep.isna().any() or (rep != np.round(rep)).any():
        raise DatasetError(f"{source}: repetition must be an integer on every row")
    if (rep < 0).any():
        line = int(np.flatnonzero((rep < 0).to_numpy())[0]) + 2
        raise DatasetError(f"{source}: repetition must be >= 0, got {int(rep.iloc[line - 2])} on line {line}")
    df["repetition"] = rep.astype(np.int64)
    score = pd.to_numeric(df["score"], errors="coerce")
    garbage = score.isna() & df["score"].notna() & (df["score"].astype(str).str.strip().str.lower() != "nan")
    if garbage.any():
        line = int(np.flatnonzero(garbage.to_numpy())[0]) + 2
        raise DatasetError(f"{source}: non-numeric score {df['score'].iloc[line - 2]!r} on line {line}")
    df["score"] = score.astype(float)
    key = list(CALL_KEY_COLUMNS)
    dup = df.duplicated(key)
    if dup.any():
        first = int(np.flatnonzero(dup.to_numpy())[0])
        row = df.iloc[first]
        what = ", ".join(f"{k}={row[k]!s}" for k in key)
        raise DatasetError(f"{source}: duplicate call ({what}) on line {first + 2}")
    nan = ~np.isfinite(df["score"].to_numpy())
    dropped = (
        df.loc[nan].groupby(["family", "prompt_kind", "dimension"]).size().rename("n_dropped").reset_index()
        if nan.any()
        else pd.DataFrame(columns=["family", "prompt_kind", "dimension", "n_dropped"])
    )
    data = df.loc[~nan].sort_values(key, kind="stable").reset_index(drop=True)
    if data.empty:
        raise DatasetError(f"{source}: no rows with a finite score")
    return JudgeTable(data, dropped, df.reset_index(drop=True))


def read_judge_table(path) -> JudgeTable:
    """Read a judge table from CSV or Parquet (by extension) and validate it.

    Parameters
    ----------
    path : str or Path
        ``.csv`` or ``.parquet`` file with the columns :data:`JUDGE_COLUMNS`.

    Returns
    -------
    JudgeTable

    Raises
    ------
    DatasetError
        If the file is missing, unreadable or malformed.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"judge table {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        elif suffix in (".csv", ".txt"):
            frame = pd.read_csv(path, dtype={"image": str, "family": str})
        else:
            raise DatasetError(f"judge table {str(path)!r}: extension must be .csv or .parquet")
    except DatasetError:
        raise
    except ImportError as exc:
        raise DatasetError(f"reading {path.name} needs pyarrow: pip install 'multicrop[parquet]' ({exc})") from exc
    except Exception as exc:  # parser errors of many kinds
        raise DatasetError(f"cannot read judge table {str(path)!r}: {exc}") from exc
    return validate_judge_table(frame, source=path.name)


def _families(table: JudgeTable, families) -> list[str]:
    if families is None:
        return table.families
    fams = list(families)
    unknown = sorted(set(fams) - set(table.families))
    if unknown:
        raise InvalidParameterError(f"families {unknown} not in the judge table; available: {table.families}")
    return fams


def holistic_block(table: JudgeTable, *, families=None) -> pd.DataFrame:
    """Block H: per family, the mean holistic score over repetitions.

    Returns a frame indexed by image with columns ``H:<family>``.
    """
    fams = _families(table, families)
    d = table.data
    d = d[(d["prompt_kind"] == HOLISTIC) & d["family"].isin(fams)]
    out = d.pivot_table(index="image", columns="family", values="score", aggfunc="mean")
    out = out.reindex(columns=fams)
    out.columns = [f"H:{f}" for f in fams]
    return out.sort_index()


def dimension_block(table: JudgeTable, *, families=None) -> pd.DataFrame:
    """Block P: per family and dimension, the mean score over repetitions.

    Returns a frame indexed by image with columns ``P:<family>:<dimension>``
    (no columns when the table has no dimension rows).
    """
    fams = _families(table, families)
    d = table.data
    d = d[(d["prompt_kind"] == DIMENSION) & d["family"].isin(fams)]
    out = d.pivot_table(index="image", columns=["family", "dimension"], values="score", aggfunc="mean")
    cols = [(f, dim) for f in fams for dim in DIMENSIONS if (f, dim) in out.columns]
    # no dimension rows (of these families): an empty block, not an error
    out = out.reindex(columns=pd.MultiIndex.from_tuples(cols)) if cols else out.iloc[:, :0]
    out.columns = [f"P:{f}:{dim}" for f, dim in cols]
    return out.sort_index()


def split_holistic_block(table: JudgeTable, *, n_blocks: int = len(DIMENSIONS), families=None) -> pd.DataFrame:
    """The feature-count control: holistic repetitions split into blocks.

    Each family's holistic repetitions (sorted by ``repetition``) are cut into
    ``n_blocks`` contiguous groups of near-equal size and averaged per group,
    giving columns ``Hsplit:<family>:<k>``.

    Raises
    ------
    InvalidParameterError
        If a family has fewer holistic repetitions than ``n_blocks``.
    """
    if int(n_blocks) < 1:
        raise InvalidParameterError(f"n_blocks must be >= 1, got {n_blocks!r}")
    fams = _families(table, families)
    d = table.calls
    d = d[(d["prompt_kind"] == HOLISTIC) & d["family"].isin(fams)]
    frames = []
    for fam in fams:
        reps = np.sort(d.loc[d["family"] == fam, "repetition"].unique())
        if reps.size < n_blocks:
            raise InvalidParameterError(
                f"n_blocks={n_blocks} exceeds the {reps.size} holistic repetitions of family {fam!r}"
            )
        block_of = {int(r): k for k, chunk in enumerate(np.array_split(reps, n_blocks)) for r in chunk}
        sub = table.data[(table.data["prompt_kind"] == HOLISTIC) & (table.data["family"] == fam)]
        sub = sub.assign(block=sub["repetition"].map(block_of))
        piv = sub.pivot_table(index="image", columns="block", values="score", aggfunc="mean")
        piv = piv.reindex(columns=range(n_blocks))
        piv.columns = [f"Hsplit:{fam}:{k}" for k in range(n_blocks)]
        frames.append(piv)
    return pd.concat(frames, axis=1).sort_index()


def build_features(table: JudgeTable, block: str, *, families=None) -> pd.DataFrame:
    """Feature matrix of one block (``"H"``, ``"P"``, ``"H+P"`` or ``"Hsplit"``).

    Examples
    --------
    >>> from multicrop.datasets.simulate import simulate_study
    >>> sim = simulate_study(10, n_families=2, rng=np.random.default_rng(0))
    >>> t = validate_judge_table(sim.judge_table)
    >>> [build_features(t, b).shape[1] for b in BLOCKS]
    [2, 10, 12, 10]
    """
    if block == "H":
        return holistic_block(table, families=families)
    if block == "P":
        return dimension_block(table, families=families)
    if block == "H+P":
        return pd.concat(
            [holistic_block(table, families=families), dimension_block(table, families=families)], axis=1
        )
    if block == "Hsplit":
        return split_holistic_block(table, families=families)
    raise InvalidParameterError(f"block must be one of {BLOCKS}, got {block!r}")


def panel_mean(holistic: pd.DataFrame) -> pd.Series:
    """Unweighted mean of z-scored holistic verdicts (the panel comparator).

    Each column is standardised across images (population sd) before the
    row mean; images missing a family average the families they have.  A
    constant column is left out (all constant: 0 for every image).
    """
    sd = holistic.std(ddof=0)
    z = (holistic - holistic.mean()) / sd.where(sd > 0)  # a constant judge has no ranks to add: left out
    z = z.loc[:, sd > 0] if (sd > 0).any() else z.fillna(0.0)
    return z.mean(axis=1, skipna=True).rename("panel_mean")


def calls_per_image(table: JudgeTable) -> pd.DataFrame:
    """Mean number of API calls per image, by family and prompt kind.

    Every row of the original table counts, including unparsed replies.
    """
    c = table.calls
    n_img = c["image"].nunique()
    out = c.groupby(["family", "prompt_kind"]).size().rename("calls").reset_index()
    out["calls_per_image"] = out["calls"] / n_img
    return out
