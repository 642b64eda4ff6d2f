"""A simulated study and the report on it, shared by the judge-evaluation tests (computed once)."""

import numpy as np
import pytest

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.datasets.simulate import simulate_study
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges


@pytest.fixture(scope="session")
def protocol_config():
    return JudgesReportConfig(n_resamples=300, n_partitions=3, n_splits=10, combiners=("gb", "ridge"))


@pytest.fixture(scope="session")
def study():
    return simulate_study(120, n_families=3, rng=np.random.default_rng(5))


@pytest.fixture(scope="session")
def report(study, protocol_config):
    return evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), protocol_config)
