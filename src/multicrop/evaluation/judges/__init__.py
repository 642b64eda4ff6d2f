"""Judge-panel evaluation: the paper's protocol over a judge table and human ratings.

Modules, in the order the protocol runs (each imports only those above it):

``config``      :class:`JudgesReportConfig`, :class:`ProbeConfig`: every setting and default
``streams``     the seeded random streams; ``metrics``: :func:`precision_at_top`
``align``       :func:`match_images`, :class:`AlignedData` (blocks and human mean on shared images)
``arms``        :class:`Arm` predictions and :class:`ArmScores` (correlations on shared resamples)
``compare``     paired bootstrap comparisons; ``ceiling``: the human noise ceiling
``mtmm``        the multitrait-multimethod check
``robustness``  fold partitions and precision at the top; ``transfer``: label transfer
``result``      :class:`JudgesReport`; ``figures``: plots and the HTML page
``report``      :func:`evaluate_judges` (runs the steps) and :func:`write_judges_report`
``probe``       the cheap holistic headroom probe

The names below are imported from their module on first use, so importing
this package (the command line does) loads neither pandas nor scikit-learn.
"""

import lazy_loader

_EXPORTS = {
    "config": ("IMAGE_KEYS", "PROBE_HIGH", "PROBE_LOW", "JudgesReportConfig", "ProbeConfig"),
    "align": ("AlignedData", "match_images"),
    "arms": ("Arm", "ArmScores"),
    "metrics": ("precision_at_top",),
    "result": ("JudgesReport", "summary_jsonable"),
    "report": ("check_report_dir", "evaluate_judges", "write_judges_report"),
    "probe": ("ProbeResult", "probe_headroom", "probe_verdict"),
}
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={m: list(n) for m, n in _EXPORTS.items()})
