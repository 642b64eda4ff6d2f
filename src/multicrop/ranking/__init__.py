"""Crops chosen by a judge panel: the join of the crop wing and the judge wing.

The crop wing shortlists alternatives for each crop
(``crop_photo(..., shortlist=n)``); a judge panel scores the rendered
alternatives and the best of each shortlist is kept.
"""
