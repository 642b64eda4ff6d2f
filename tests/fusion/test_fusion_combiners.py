"""Combiners follow the scikit-learn contract; predictions are out of fold."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import KFold
from sklearn.utils.estimator_checks import check_estimator

from multicrop.errors import InvalidParameterError, UnknownNameError
from multicrop.fusion.combiners import COMBINERS, out_of_fold_predict


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
@pytest.mark.parametrize("name", COMBINERS.names())
def test_sklearn_estimator_checks(name):
    est = COMBINERS.create(name)
    if name == "gb":
        est.set_params(n_estimators=10)
    results = check_estimator(est, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


def test_gb_settings_are_the_papers():
    # Jadhav et al. 2026, §3.3: 100 trees, depth 3, learning rate 0.1, never tuned
    p = COMBINERS.create("gb").get_params()
    assert (p["n_estimators"], p["max_depth"], p["learning_rate"]) == (100, 3, 0.1)


@pytest.mark.parametrize("name", COMBINERS.names())
def test_out_of_fold_prediction_ignores_own_label(name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = X[:, 0] + 0.1 * rng.normal(size=50)
    p1 = out_of_fold_predict(COMBINERS.create(name), X, y, n_folds=5, seed=3)
    y2 = y.copy()
    y2[17] += 100.0  # an image's own label must not reach its prediction
    p2 = out_of_fold_predict(COMBINERS.create(name), X, y2, n_folds=5, seed=3)
    assert p1[17] == p2[17]
    assert not np.allclose(p1, p2)


def test_gb_oof_equals_manual_kfold_with_sklearn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, -1.0, 0.5]
    got = out_of_fold_predict(COMBINERS.create("gb", random_state=0), X, y, n_folds=5, seed=9)
    ref = np.empty(40)
    for tr, te in KFold(5, shuffle=True, random_state=9).split(X):
        m = GradientBoostingRegressor(n_estimators=100, max_depth=3, learning_rate=0.1, random_state=0)
        ref[te] = m.fit(X[tr], y[tr]).predict(X[te])
    np.testing.assert_array_equal(got, ref)


def test_grouped_folds_keep_groups_together():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 2))
    y = X[:, 0].copy()
    groups = np.repeat(np.arange(5), 4)
    p1 = out_of_fold_predict(COMBINERS.create("ridge"), X, y, n_folds=5, groups=groups)
    y2 = y.copy()
    y2[groups == 2] += 50.0  # a group's labels never train the model that predicts it
    p2 = out_of_fold_predict(COMBINERS.create("ridge"), X, y2, n_folds=5, groups=groups)
    np.testing.assert_array_equal(p1[groups == 2], p2[groups == 2])
    assert not np.allclose(p1[groups != 2], p2[groups != 2])


def test_errors():
    with pytest.raises(UnknownNameError, match="did you mean 'ridge'"):
        COMBINERS.create("rigde")
    with pytest.raises(InvalidParameterError, match="n_folds"):
        out_of_fold_predict(COMBINERS.create("ridge"), np.zeros((4, 1)), np.zeros(4), n_folds=9)
