"""Speed of the judge-protocol statistics (a benchmark, never a timed test).

    .venv/bin/python benchmarks/bench_stats.py            # full run
    .venv/bin/python benchmarks/bench_stats.py --quick    # smaller naive peer

1. 10,000 paired bootstrap resamples of delta-rho for n = 500 images
   (vectorised ranks; target <= 1 s) against a naive loop calling
   scipy.stats.spearmanr on the *same* index draws (results must agree).
2. The full report (evaluate + write) for 500 images x 5 families x 6 prompts
   (holistic + 5 rubric dimensions; target <= 60 s on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
from scipy import stats


def thread_info() -> dict:
    info = {
        "load_average_1_5_15": [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
    }
    try:
        from threadpoolctl import threadpool_info

        info["threadpools"] = [
            {"api": p.get("internal_api"), "num_threads": p.get("num_threads"), "lib": os.path.basename(p.get("filepath", ""))}
            for p in threadpool_info()
        ]
    except ImportError:  # pragma: no cover
        info["threadpools"] = "threadpoolctl not installed"
    return info


def bench_bootstrap(n: int, n_resamples: int, naive_resamples: int, repeats: int) -> dict:
    from multicrop.stats.bootstrap import paired_bootstrap

    rng = np.random.default_rng(0)
    h = rng.normal(size=n)
    a = h + rng.normal(size=n)
    b = np.round(h + 1.5 * rng.normal(size=n), 1)  # ties in one arm
    paired_bootstrap(h, a, b, n_resamples=200, rng=np.random.default_rng(1))  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        res = paired_bootstrap(h, a, b, n_resamples=n_resamples, rng=np.random.default_rng(1))
        times.append(time.perf_counter() - t)
    fast = min(times)

    idx = np.random.default_rng(1).integers(0, n, size=(n_resamples, n))[:naive_resamples]
    t = time.perf_counter()
    d = np.array([stats.spearmanr(a[i], h[i]).statistic - stats.spearmanr(b[i], h[i]).statistic for i in idx])
    naive = (time.perf_counter() - t) * n_resamples / naive_resamples
    agree = None
    if naive_resamples == n_resamples:
        lo, hi = np.percentile(d, [2.5, 97.5])
        agree = bool(abs(lo - res.ci_low) < 1e-12 and abs(hi - res.ci_high) < 1e-12)
    return {"n": n, "n_resamples": n_resamples, "vectorised_s": round(fast, 4), "all_runs_s": [round(x, 4) for x in times],
            "naive_scipy_s": round(naive, 3), "naive_measured_resamples": naive_resamples,
            "speedup": round(naive / fast, 1), "ci": [res.ci_low, res.ci_high], "naive_ci_identical": agree}


def bench_report(n: int, n_jobs: int) -> dict:
    from multicrop.datasets.ratings import ratings_from_frame
    from multicrop.evaluation.judges.config import JudgesReportConfig
    from multicrop.evaluation.judges.report import evaluate_judges, write_judges_report
    from multicrop.datasets.simulate import simulate_study

    sim = simulate_study(n, n_families=5, n_holistic=5, n_dimension=3, rng=np.random.default_rng(0))
    ratings = ratings_from_frame(sim.ratings)
    steps: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    rep = evaluate_judges(sim.judge_table, ratings, JudgesReportConfig(n_jobs=n_jobs),
                          progress=lambda s, f: steps.append((s, time.perf_counter() - t0)))
    with tempfile.TemporaryDirectory() as d:
        write_judges_report(rep, d)
    total = time.perf_counter() - t0
    marks = {}
    for (s, t), (_, t_next) in zip(steps, steps[1:] + [("end", total)]):
        key = s.split(" with ")[0] if s.startswith("out-of-fold") else s
        marks[key] = round(marks.get(key, 0.0) + (t_next - t), 2)
    return {"images": n, "families": 5, "prompts": 6, "judge_rows": len(sim.judge_table), "n_jobs": n_jobs,
            "total_s": round(total, 2), "steps_s": marks}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="naive peer on 1,000 resamples, extrapolated")
    ap.add_argument("--jobs", type=int, default=2, help="n_jobs for the report's robustness refits")
    ap.add_argument("--skip-report", action="store_true")
    args = ap.parse_args(argv)
    out = {"python": sys.version.split()[0], "threads": thread_info()}
    out["bootstrap"] = bench_bootstrap(500, 10_000, 1_000 if args.quick else 10_000, repeats=3)
    if not args.skip_report:
        out["report"] = bench_report(500, args.jobs)
    out["load_average_after"] = [round(v, 2) for v in os.getloadavg()] if hasattr(os, "getloadavg") else None
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
