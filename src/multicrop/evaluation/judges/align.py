"""First step of the protocol: the images that have both human ratings and judge scores.

:func:`match_images` re-keys the two sides so that they meet (paths against
ids); :func:`align` builds the feature blocks and keeps the images that have
a human score and complete features, as an :class:`AlignedData`.
:func:`calls_per_arm` and :func:`unparsed_families` read the cost side of
the judge table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath, PureWindowsPath

import numpy as np
import pandas as pd

from ...datasets.ratings import Ratings
from ...errors import DatasetError, InvalidParameterError
from ...fusion.features import BLOCKS, JudgeTable, build_features, calls_per_image
from ...schema import DIMENSION, HOLISTIC
from .config import check_image_key

__all__ = ["MIN_IMAGES", "AlignedData", "align", "calls_per_arm", "match_images", "unparsed_families"]

#: fewest images the protocol runs on
MIN_IMAGES = 10


@dataclass(frozen=True, eq=False)
class AlignedData:
    """Feature blocks and the human mean on the same images (sorted).

    Attributes
    ----------
    blocks : mapping of str to DataFrame
        Feature block (``H``, ``P``, ``H+P``, ``Hsplit``; those that could be
        built) -> features, one row per image of :attr:`images`.
    human : Series
        Mean human overall score, indexed by image.
    n_rated : int
        Images with a human overall score (before matching).
    n_scored : int
        Images with holistic judge scores (before matching).
    notes : mapping of str to str
        Blocks skipped and why.
    members : DataFrame
        ``H:<family>``: each single judge's score of every image (the ``H``
        block, or each family's mean dimension score when there are no
        holistic rows).
    """

    blocks: Mapping[str, pd.DataFrame]
    human: pd.Series
    n_rated: int
    n_scored: int
    notes: Mapping[str, str] = field(default_factory=dict)
    members: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        if self.members is None:
            object.__setattr__(self, "members", self.blocks["H"])

    @property
    def holistic(self) -> bool:
        """Whether the judge table has holistic rows (members are holistic verdicts)."""
        return "H" in self.blocks

    @property
    def images(self) -> pd.Index:
        """The images, sorted."""
        return self.human.index

    @property
    def y(self) -> np.ndarray:
        """The human mean as floats, shape (n_images,)."""
        return self.human.to_numpy(dtype=float)

    @property
    def n_images(self) -> int:
        return int(len(self.human))

    def subset(self, images: pd.Index) -> AlignedData:
        """The same data on ``images`` only."""
        return replace(self, blocks={b: f.loc[images] for b, f in self.blocks.items()}, human=self.human.loc[images],
                       members=self.members.loc[images])


# ---------------------------------------------------------------- matching


def _image_key(value: str, mode: str) -> str:
    if mode == "exact":
        return value
    path = PureWindowsPath(value) if "\\" in value else PurePosixPath(value)
    return path.name if mode == "name" else path.stem


def _keyed(images: pd.Index, mode: str) -> pd.Series:
    return pd.Series([_image_key(str(v), mode) for v in images], index=images)


def _collisions(*keyed: pd.Series) -> list[str]:
    return [name for side in keyed for name in side[side.duplicated()].unique().tolist()]


def _best_mode(j_imgs: pd.Index, r_imgs: pd.Index) -> str:
    """The key of exact/name/stem that matches most images without collisions."""
    best, best_n = "exact", -1
    for m in ("exact", "name", "stem"):
        jk, rk = _keyed(j_imgs, m), _keyed(r_imgs, m)
        n = len(set(jk) & set(rk))
        if not _collisions(jk, rk) and n > best_n:
            best, best_n = m, n
    return best


def match_images(table: JudgeTable, ratings: Ratings, mode: str = "auto") -> tuple[JudgeTable, Ratings, str]:
    """Re-key judge-table and rating images so that they meet.

    Judge tables usually name images by path (``photos/123.jpg``) while
    rating files use ids (``123``).  ``mode`` ``"name"`` keys both sides by
    file name, ``"stem"`` by file name without extension; ``"auto"`` picks
    whichever of exact/name/stem matches most images without collisions.

    Parameters
    ----------
    table : JudgeTable
    ratings : Ratings
    mode : {"auto", "exact", "name", "stem"}

    Returns
    -------
    (JudgeTable, Ratings, str)
        Re-keyed copies and the mode used.

    Raises
    ------
    InvalidParameterError
        Unknown ``mode``.
    DatasetError
        If a key collides (two images share one key) in an explicit mode.

    Examples
    --------
    >>> _image_key("photos/123.jpg", "stem"), _image_key("photos/123.jpg", "name")
    ('123', '123.jpg')
    """
    check_image_key(mode)
    j_imgs = pd.Index(table.calls["image"].unique())
    r_imgs = pd.Index(ratings.means.index)
    if mode == "auto":
        mode = _best_mode(j_imgs, r_imgs)
    if mode == "exact":
        return table, ratings, mode
    jk, rk = _keyed(j_imgs, mode), _keyed(r_imgs, mode)
    clash = _collisions(jk, rk)
    if clash:
        raise DatasetError(f"image_key={mode!r} maps several images to {clash[:3]}; use another image key")
    data = table.data.assign(image=table.data["image"].map(jk))
    calls = table.calls.assign(image=table.calls["image"].map(jk))
    new_table = replace(table, data=data, calls=calls)
    means = ratings.means.copy()
    means.index = means.index.map(rk)
    raters = ratings.raters
    if raters is not None:
        raters = raters.assign(image=raters["image"].map(rk))
    return new_table, replace(ratings, means=means.sort_index(), raters=raters), mode


# ---------------------------------------------------------------- alignment


def _feature_blocks(table: JudgeTable, families: Sequence[str]) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Every block that can be built, in :data:`BLOCKS` order, and notes on those that cannot.

    A table with dimension rows only has no ``H``, ``H+P`` or ``Hsplit``
    block; one with holistic rows only has no ``P`` or ``H+P``.
    """
    has_h = bool((table.data["prompt_kind"] == HOLISTIC).any())
    has_p = bool((table.data["prompt_kind"] == DIMENSION).any())
    if not has_h and not has_p:
        raise DatasetError("judge table has neither holistic nor dimension rows with a score")
    blocks: dict[str, pd.DataFrame] = {}
    notes: dict[str, str] = {}
    if not has_h:
        notes["H"] = ("no holistic rows: the H, H+P and Hsplit arms are skipped, and each single judge (and "
                      "panel_mean) is its family's mean dimension score")
        blocks["P"] = build_features(table, "P", families=families)
        return blocks, notes
    for b in BLOCKS:
        if b in ("P", "H+P") and not has_p:
            continue
        try:
            blocks[b] = build_features(table, b, families=families)
        except InvalidParameterError as exc:
            if b != "Hsplit":
                raise
            notes["Hsplit"] = f"feature-count control skipped: {exc}"
    if not has_p or blocks["P"].shape[1] == 0:
        notes["P"] = "no dimension rows: P and H+P arms skipped"
        blocks.pop("P", None)
        blocks.pop("H+P", None)
    return blocks, notes


def _members(blocks: Mapping[str, pd.DataFrame], families: Sequence[str]) -> pd.DataFrame:
    """One column ``H:<family>`` per family: its holistic mean, or (no holistic rows) its mean dimension score."""
    if "H" in blocks:
        return blocks["H"]
    P = blocks["P"]
    return pd.DataFrame({f"H:{f}": P[[c for c in P.columns if c.startswith(f"P:{f}:")]].mean(axis=1, skipna=False)
                         for f in families}, index=P.index)


def align(table: JudgeTable, ratings: Ratings, *, families: Sequence[str]) -> AlignedData:
    """Feature blocks of ``families`` and the human mean on the images that have both.

    Raises
    ------
    DatasetError
        No holistic rows, or fewer than :data:`MIN_IMAGES` images with a
        human score and complete features.
    """
    blocks, notes = _feature_blocks(table, families)
    members = _members(blocks, families)
    human = ratings.means["score"].dropna()
    images = human.index
    for b in (*blocks.values(), members):
        images = images.intersection(b.dropna().index)
    images = images.sort_values()
    if len(images) < MIN_IMAGES:
        raise DatasetError(
            f"only {len(images)} images have human ratings and complete judge scores; need at least {MIN_IMAGES}"
        )
    return AlignedData(
        blocks={b: f.loc[images] for b, f in blocks.items()},
        human=human.loc[images],
        n_rated=int(len(human)),
        n_scored=int(members.shape[0]),
        notes=notes,
        members=members.loc[images],
    )


# ---------------------------------------------------------------- cost


def calls_per_arm(table: JudgeTable, *, families: Sequence[str], paid: Sequence[str] = ()) -> dict[str, float]:
    """API calls per image of every arm, keyed by block (fused arms) or arm name.

    ``paid`` are families whose calls count towards the panel arms although
    none of their replies parsed.
    """
    c = calls_per_image(table)
    c = c[c["family"].isin([*families, *paid])]

    def kind(k: str) -> float:
        return float(c.loc[c["prompt_kind"] == k, "calls_per_image"].sum())

    member_kind = HOLISTIC if (c["prompt_kind"] == HOLISTIC).any() else DIMENSION  # dimension-only tables
    per = {f: float(c.loc[(c["family"] == f) & (c["prompt_kind"] == member_kind), "calls_per_image"].sum())
           for f in families}
    return {"H": kind(HOLISTIC), "P": kind(DIMENSION), "H+P": kind(HOLISTIC) + kind(DIMENSION),
            "Hsplit": kind(HOLISTIC), **{f"member:{f}": v for f, v in per.items()}, "panel_mean": kind(member_kind)}


def unparsed_families(table: JudgeTable) -> dict[str, int]:
    """Families with calls but not one parsed score -> their number of calls."""
    gone = sorted(set(table.calls["family"]) - set(table.data["family"]))
    return {f: int((table.calls["family"] == f).sum()) for f in gone}
