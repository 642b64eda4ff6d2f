"""The paper's baselines and ablations as extra arms of ``eval judges``.

Every arm here predicts the human mean of the same aligned images and is
scored with the same shared paired bootstrap as the judge arms
(:func:`~multicrop.evaluation.judges.arms.bootstrap_arms`), so its interval
and its comparison with the best single judge read like theirs.

``embedding_ridge``
    The embedding ridge probe (App. F): a ridge on the 1280-d shipped
    embedding, out of fold with the *same folds* as the fused arms (the
    fused arms' label budget: each image predicted by a model fitted on the
    other folds), penalty by inner CV on the training folds.
``embedding_ridge@N``, ``H+P_ridge@N``
    The label-budget curve: the same, fitted on at most ``N`` labelled images
    of the training folds (a fixed random subset, the same for both arms);
    ``N`` in :data:`LABEL_BUDGETS` where smaller than the training folds.
``iaa:<name>``
    A user-supplied supervised aesthetic model (App. C): any ONNX file with
    a declared input size (:mod:`multicrop.embeddings.iaa`), zero-shot on
    every image.
``select_all`` / ``select_oracle`` / ``select_infold``
    Feature selection (§6), a ridge on the ``H+P`` block: all features; the
    half of the features that correlate best with the human mean on *all*
    images (oracle: it has seen the held-out labels); that half chosen
    inside each training fold (honest).
``rounded:<family>``
    Repetitions as tie-breakers (§6): the family's holistic mean of its
    repetitions rounded back to the scale's integers, beside
    ``member:<family>`` (the mean itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...fusion.ridge import ridge_out_of_fold
from .align import AlignedData

__all__ = ["BASELINE", "LABEL_BUDGETS", "Baselines", "shared_folds", "baseline_arms"]

#: kind of the arms added here
BASELINE = "baseline"
#: label budgets of the curve (the full training folds are the plain arms)
LABEL_BUDGETS = (100, 300, 1000)


@dataclass(frozen=True, eq=False)
class Baselines:
    """Inputs of the baseline arms beyond the judge table.

    Attributes
    ----------
    embeddings : DataFrame or None
        One row per image (index: the judge table's image labels, or names
        that match them), the embedding's columns.
    iaa : mapping of str to Series
        Model name -> its score of each image (same index rules).
    """

    embeddings: pd.DataFrame | None = None
    iaa: Mapping[str, pd.Series] = field(default_factory=dict)


def shared_folds(n: int, *, n_folds: int, seed: int) -> np.ndarray:
    """Fold index of each image, the partition the fused arms use (scikit-learn's shuffled KFold)."""
    from sklearn.model_selection import KFold

    out = np.empty(n, int)
    for k, (_, test) in enumerate(KFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.zeros(n))):
        out[test] = k
    return out


def _align(frame, images: pd.Index):
    """Rows of ``frame`` for ``images``, matched exactly, else by file name, else by stem; None if some lack one."""
    from pathlib import PurePath

    idx = frame.index.astype(str)
    for key in (lambda s: s, lambda s: PurePath(s).name, lambda s: PurePath(s).stem):
        keyed = pd.Index([key(s) for s in idx])
        if keyed.has_duplicates:
            continue
        wanted = [key(str(s)) for s in images]
        if set(wanted) <= set(keyed):
            pos = keyed.get_indexer(wanted)
            return frame.iloc[pos]
    return None


def _budget_mask(folds: np.ndarray, budget: int, seed: int) -> np.ndarray | None:
    """Rows fitted on under ``budget``: a fixed random subset of at most ``budget`` per training split.

    The subset is drawn once over all images so that every outer fold's
    training rows number at most ``budget`` (about ``budget`` of them).
    None when the training folds are no larger than the budget.
    """
    n_folds = len(np.unique(folds))
    n_train = len(folds) * (n_folds - 1) / n_folds
    if budget >= n_train:
        return None
    keep = int(round(budget * n_folds / (n_folds - 1)))
    mask = np.zeros(len(folds), bool)
    mask[np.random.default_rng(seed).permutation(len(folds))[:keep]] = True
    return mask


def _selected_ridge(X: np.ndarray, y: np.ndarray, folds: np.ndarray, *, oracle: bool) -> np.ndarray:
    from ...stats import spearman

    k = max(1, X.shape[1] // 2)

    def top(rows):
        r = np.array([abs(spearman(X[rows, j], y[rows])) if np.ptp(X[rows, j]) > 0 else 0.0
                      for j in range(X.shape[1])])
        return np.argsort(-r)[:k]

    out = np.empty(len(y))
    chosen = top(np.ones(len(y), bool)) if oracle else None
    for f in np.unique(folds):
        test = folds == f
        cols = chosen if oracle else top(~test)
        # fitted on the other folds only, its penalty by inner CV over them
        out[test] = ridge_out_of_fold(X[:, cols], y, folds=folds, train=~test)[test]
    return out


def baseline_arms(data: AlignedData, *, families: Sequence[str], baselines: Baselines | None, n_folds: int,
                  seed: int, table_scale: tuple[int, int] | None = None) -> tuple[list, dict[str, str]]:
    """The extra arms for ``data`` and notes on those left out (name -> why).

    Returns
    -------
    (arms, notes)
        :class:`~multicrop.evaluation.judges.arms.Arm` objects of kind
        :data:`BASELINE`, and why an arm could not be made.
    """
    from .arms import Arm

    y = data.y
    folds = shared_folds(len(y), n_folds=n_folds, seed=seed)
    arms, notes = [], {}
    hp = data.blocks.get("H+P")
    if hp is not None and hp.shape[1] >= 2:
        X = hp.to_numpy(float)
        arms.append(Arm("select_all", BASELINE, X.shape[1], ridge_out_of_fold(X, y, folds=folds)))
        arms.append(Arm("select_oracle", BASELINE, max(1, X.shape[1] // 2), _selected_ridge(X, y, folds, oracle=True)))
        arms.append(Arm("select_infold", BASELINE, max(1, X.shape[1] // 2),
                        _selected_ridge(X, y, folds, oracle=False)))
    else:
        notes["feature_selection"] = "needs the H+P block with at least two features"
    for f in families:
        col = f"H:{f}"
        if col in data.members and data.holistic:
            arms.append(Arm(f"rounded:{f}", BASELINE, 1, np.round(data.members[col].to_numpy(float))))
    emb = None
    if baselines is not None and baselines.embeddings is not None:
        emb = _align(baselines.embeddings, data.images)
        if emb is None:
            notes["embedding_ridge"] = "the embeddings do not cover every aligned image"
    if emb is not None:
        E = emb.to_numpy(float)
        arms.append(Arm("embedding_ridge", BASELINE, E.shape[1], ridge_out_of_fold(E, y, folds=folds)))
    for budget in LABEL_BUDGETS:
        mask = _budget_mask(folds, budget, seed)
        if mask is None:
            continue
        if emb is not None:
            arms.append(Arm(f"embedding_ridge@{budget}", BASELINE, emb.shape[1],
                            ridge_out_of_fold(emb.to_numpy(float), y, folds=folds, train=mask)))
        if hp is not None and mask.sum() >= 2 * n_folds:
            arms.append(Arm(f"H+P_ridge@{budget}", BASELINE, hp.shape[1],
                            ridge_out_of_fold(hp.to_numpy(float), y, folds=folds, train=mask)))
    for name, scores in (baselines.iaa.items() if baselines is not None else ()):
        s = _align(scores.to_frame("s"), data.images)
        if s is None:
            notes[f"iaa:{name}"] = "its scores do not cover every aligned image"
            continue
        arms.append(Arm(f"iaa:{name}", BASELINE, 0, s["s"].to_numpy(float)))
    return arms, notes
