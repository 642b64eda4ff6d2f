"""Combiners that fuse judge features into one score (scikit-learn estimators).

Settings follow Jadhav et al. (2026), §3.3: gradient boosting with 100 trees,
depth 3, learning rate 0.1, fixed and never tuned; ridge as the linear
alternative.  Predictions are always out of fold.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import GroupKFold, KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import check_is_fitted, validate_data

from ..errors import InvalidParameterError
from ..registry import Registry

__all__ = ["GradientBoostingCombiner", "RidgeCombiner", "COMBINERS", "out_of_fold_predict"]


class GradientBoostingCombiner(RegressorMixin, BaseEstimator):
    """Gradient-boosted trees on judge features (the paper's fixed combiner).

    Parameters
    ----------
    n_estimators : int, default 100
    max_depth : int, default 3
    learning_rate : float, default 0.1
    random_state : int, default 0

    Attributes
    ----------
    model_ : sklearn.ensemble.GradientBoostingRegressor
    n_features_in_ : int

    Examples
    --------
    >>> X = np.arange(40.0).reshape(20, 2); y = X[:, 0] ** 2
    >>> GradientBoostingCombiner().fit(X, y).predict(X[:2]).shape
    (2,)
    """

    name = "gb"
    version = "1"
    description = "gradient-boosted trees (100 trees, depth 3, learning rate 0.1; never tuned)"

    def __init__(self, n_estimators=100, max_depth=3, learning_rate=0.1, random_state=0):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        self.model_ = GradientBoostingRegressor(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            learning_rate=self.learning_rate,
            random_state=self.random_state,
        ).fit(X, y)
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.model_.predict(X)


class RidgeCombiner(RegressorMixin, BaseEstimator):
    """Standardised features, then ridge regression.

    Parameters
    ----------
    alpha : float, default 1.0
    random_state : int, default 0
        Unused by the solver; kept so every combiner takes one.

    Attributes
    ----------
    model_ : sklearn.pipeline.Pipeline
    coef_ : ndarray, shape (n_features,)
        Coefficients on the standardised features.
    """

    name = "ridge"
    version = "1"
    description = "standardised features, then ridge regression (alpha 1)"

    def __init__(self, alpha=1.0, random_state=0):
        self.alpha = alpha
        self.random_state = random_state

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True)
        if not self.alpha >= 0:
            raise InvalidParameterError(f"alpha must be >= 0, got {self.alpha!r}")
        self.model_ = make_pipeline(StandardScaler(), Ridge(alpha=self.alpha)).fit(X, y)
        self.coef_ = self.model_[-1].coef_
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.model_.predict(X)


#: Registered combiner classes: ``COMBINERS.create("gb", random_state=0)``.
COMBINERS: Registry = Registry("combiner")
COMBINERS.register(GradientBoostingCombiner)
COMBINERS.register(RidgeCombiner)


def out_of_fold_predict(
    estimator, X, y, *, n_folds: int = 5, seed: int = 0, groups=None
) -> np.ndarray:
    """Out-of-fold predictions: every image is predicted by a model that never saw it.

    Parameters
    ----------
    estimator : sklearn estimator
        Cloned for each fold.
    X : array_like, shape (n, p)
    y : array_like, shape (n,)
        Human mean scores.
    n_folds : int, default 5
    seed : int, default 0
        Seed of the shuffled fold partition (ignored with ``groups``, where
        groups are shuffled by permuting their labels with this seed).
    groups : array_like, shape (n,), optional
        Images of one group never straddle folds.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = X @ [1.0, 0.5, 0.0]
    >>> p = out_of_fold_predict(COMBINERS.create("ridge"), X, y, seed=1)
    >>> p.shape, bool(np.corrcoef(p, y)[0, 1] > 0.9)
    ((60,), True)
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if int(n_folds) < 2 or int(n_folds) > len(y):
        raise InvalidParameterError(f"n_folds must be in [2, n={len(y)}], got {n_folds!r}")
    if groups is None:
        cv = KFold(n_splits=int(n_folds), shuffle=True, random_state=int(seed))
        return cross_val_predict(clone(estimator), X, y, cv=cv)
    codes = np.unique(np.asarray(groups), return_inverse=True)[1]
    perm = np.random.default_rng(seed).permutation(codes.max() + 1)
    return cross_val_predict(clone(estimator), X, y, cv=GroupKFold(n_splits=int(n_folds)), groups=perm[codes])
