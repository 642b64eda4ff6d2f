"""``direct``: k distinct crops chosen from one pool over the whole image, k found or given.

The Carousel paper ends by asking for a method that produces the multi-target
crops directly, without the partitioning pre-step, and that decides k by
itself (§V).  This package is that method, one module per stage:

- :mod:`.settings` -- :class:`SelectionConfig`, the pool, the rules, the objective;
- :mod:`.rules` -- the photographer's hard rules, one frozen class each, and their table;
- :mod:`.terms` -- the soft terms, one frozen class each;
- :mod:`.pool` -- one pool of candidates (windows, anchors, framings of every subject);
- :mod:`.measure` -- one :class:`~.measure.Measurements` value per pool;
- :mod:`.quality` -- main subjects, the framing score plus the soft terms, validity;
- :mod:`.selector` -- the one greedy selector;
- :mod:`.select` -- the main loop, fills, shortlists, notes;
- :mod:`.zoom` -- close-ups, after the wide shot;
- :mod:`.cover` -- every body seen whole: a slide for a body no slide holds whole;
- :mod:`.shortlist` -- a slide's alternatives for a judge;
- :mod:`.views` -- a photo with no subject: views of the scene.

``docs/cropping.md`` ("How direct chooses") gives the objective and the rules.

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", sections IV-C and V (future work).
.. [2] G. L. Nemhauser, L. A. Wolsey and M. L. Fisher, "An analysis of
   approximations for maximizing submodular set functions", 1978 (greedy).
"""

import importlib

__all__ = ["DIRECT_VERSION", "DirectSelection", "SelectionConfig", "direct_pool", "min_long_side", "select_direct",
           "close_ups", "greedy", "scene_views"]

#: Part of every result's ``versions``: bump when direct selection changes.
#: direct-2: a blob held by a crop that frames another counts as covered at ``group_credit``.
#: direct-3: weak subjects are blobs too; the photo's own orientation gains; no crop under ``min_crop_share``.
#: direct-4: subjects from detectors, saliency and the user's focus; no body sliced or left as a sliver.
#: direct-5: close-ups; crowds are guards; a body held whole means 99 % of it; textures are no subjects.
#: direct-6: with ``k="auto"`` a subject far smaller than the largest is a detail; 90 % masks in close-ups.
#: direct-7: the same rules as frozen classes by stage (no crop changed by the split); a carousel zooms in:
#: groups of four or more by their sub-groups, and with a fixed k people to the waist and the chest.
#: direct-8: a fixed k still short goes on to zooms in or out of a detected subject's crop, no body cut.
#: direct-9: a salient thing is a detail at k auto only under a quarter of the largest body (was: the body).
#: direct-10: shared subject costs ``shared_weight`` 1.0 (was 2.0), so a wide shot of subjects shown one by one
#: can still follow them.
#: direct-11: a salient thing is a detail at k auto under a tenth of the largest body (was a quarter); close-ups hold
#: a thing no body rule guards whole or by a sliver, as zooms do.
#: direct-12: a photo with no subject gets up to k distinct views of the scene at a fixed k (was one).
#: direct-13: where every near-best framing of a subject no crop holds whole cuts a face, the most complete
#: one keeping the faces (and ``part`` of it) instead.
#: direct-14: with a fixed k, people whose face the pose sees are zoomed to the waist and the chest (portraits
#: on by default).
#: direct-15: with ``one_ratio``, a ratio whose set slices a body no longer wins by one slide more (the count of
#: slicing crops, ``DirectSelection.cut``, is weighed first).
#: direct-16: a group no crop holds whole nor parts without a cut is framed as a group portrait (every member it
#: cuts cut on a portrait line, faces seen) before any crop that slices someone; only a person whose face the pose
#: sees may be cut at a portrait line at all.
#: direct-17: k auto makes a carousel: a photo whose subjects fill one slide gets a second (``objective.min_slides``),
#: a close-up, a portrait or a zoom of its subject that breaks no hard rule, where one exists.
#: direct-18: the wide view first: a zoom out comes before the first crop it holds (was: after its subject's crops).
#: direct-19: every detected person, animal or vehicle no slide holds whole gets a slide that does (``every_body``).
#: direct-20: k auto gives a photo with no subject a closer view inside its view of the scene (two slides).
#: direct-21: ``every_body`` after the close-ups (a close-up counts as seeing a body whole; a fixed k keeps its zooms).
#: direct-22: k auto's last top-up: a one-slide carousel whose subjects give no close-up, portrait or zoom gets a
#: closer view inside its slide, as a photo with no subject does (breaking no hard rule, the slide's subject whole).
#: direct-23: a close-up holds the person it frames by ``close_ups.mask_own`` of their pose mask, not 99 % of it,
#: and also frames a box that holds that much.
#: direct-24: ... but trims them only between joints: no edge near a joint, hand or foot the pose sees
#: (``close_ups.joint_margin``).
#: direct-25: ... and only at its bottom edge (their legs; never a side, where the pose may miss an arm);
#: the core box is the person's box cut above the feet (:mod:`multicrop.crop.direct.trim`).
#: direct-26: a photo where no candidate meets the hard rules (a subject wider than every crop, a guard over the whole
#: frame) gets the largest part of its most important subject and a note saying why (was: no crop at all).
#: direct-27: a fixed k still short opens on a wide view of the subjects its slides show one by one
#: (:func:`~multicrop.crop.direct.zoom.establishing`).
#: direct-28: a subject wider (or taller) than every crop is shown in parts along it, k of them at a fixed k, as
#: few as cover it at k auto (:func:`~multicrop.crop.direct.quality.parts_along`; was: its largest part only).
DIRECT_VERSION = "direct-28"

_WHERE = {"close_ups": "zoom", "greedy": "selector", "direct_pool": "pool", "min_long_side": "pool",
          "select_direct": "select", "SelectionConfig": "settings", "DirectSelection": "types",
          "scene_views": "views"}


def __getattr__(name: str):
    # Lazy: multicrop.crop.config imports .settings, which must not pull the stages (they import config).
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
