"""The NumPy ridge of the embedding heads, checked against scikit-learn's Ridge."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from multicrop.errors import InvalidParameterError
from multicrop.fusion.ridge import ALPHAS, fold_ids, ridge_cv, ridge_out_of_fold


def _data(n=150, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d) + rng.normal(size=d)
    w = rng.normal(size=d)
    return X, X @ w + rng.normal(scale=2.0, size=n)


def test_a_fit_equals_sklearn_ridge_on_standardised_features_with_the_same_penalty():
    X, y = _data()
    fit = ridge_cv(X, y, folds=fold_ids(len(y), n_folds=5, seed=1))
    assert fit.alpha in ALPHAS and fit.n == len(y)
    Z = StandardScaler().fit_transform(X)  # population sd, as ours
    lam = np.linalg.eigvalsh(Z.T @ Z)
    ref = Ridge(alpha=fit.alpha * lam.mean()).fit(Z, y)
    np.testing.assert_allclose(fit.predict(X), ref.predict(Z), rtol=1e-8, atol=1e-8)


def test_the_penalty_is_chosen_by_cross_validation():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 40))
    pure_noise = rng.normal(size=60)
    signal = X[:, 0] * 3 + rng.normal(scale=0.1, size=60)
    folds = fold_ids(60, n_folds=5, seed=0)
    noisy, clean = ridge_cv(X, pure_noise, folds=folds).alpha, ridge_cv(X, signal, folds=folds).alpha
    assert noisy >= 1.0 and clean <= 0.01  # nothing to learn: shrink hard; a clean signal: barely


def test_out_of_fold_predictions_never_see_their_fold():
    X, y = _data(n=100)
    folds = fold_ids(100, n_folds=4, seed=0)
    oof = ridge_out_of_fold(X, y, folds=folds)
    y2 = y.copy()
    y2[folds == 0] += 100.0  # change fold 0's targets only
    oof2 = ridge_out_of_fold(X, y2, folds=folds)
    np.testing.assert_allclose(oof[folds == 0], oof2[folds == 0])
    assert not np.allclose(oof[folds != 0], oof2[folds != 0])


def test_a_label_budget_fits_only_on_the_train_rows_but_predicts_all():
    X, y = _data(n=120)
    folds = fold_ids(120, n_folds=5, seed=0)
    train = np.zeros(120, bool)
    train[:60] = True
    oof = ridge_out_of_fold(X, y, folds=folds, train=train)
    y2 = y.copy()
    y2[~train] = 0.0  # targets of rows outside the budget play no part
    np.testing.assert_allclose(oof, ridge_out_of_fold(X, y2, folds=folds, train=train))
    assert np.isfinite(oof).all()


@pytest.mark.parametrize("kw, match", [
    ({"folds": np.zeros(10)}, "at least two folds"),
    ({"folds": np.zeros(9)}, "one entry per row"),
])
def test_bad_inputs_are_refused(kw, match):
    X, y = _data(n=10, d=3)
    with pytest.raises(InvalidParameterError, match=match):
        ridge_cv(X, y, **kw)
    with pytest.raises(InvalidParameterError, match="n_folds"):
        fold_ids(3, n_folds=5)
    with pytest.raises(InvalidParameterError, match="finite"):
        ridge_cv(X, np.where(np.arange(10) == 2, np.nan, y), folds=fold_ids(10, n_folds=2))
