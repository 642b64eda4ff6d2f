"""Judge-panel evaluation: the paper's protocol over a judge table and human ratings.

``protocol`` (alignment, arms, comparisons, MTMM, robustness, transfer) and
``probe`` (holistic headroom probe) compute; ``report`` orchestrates and
writes tables; ``figures`` draws the plots and the HTML page.
"""
