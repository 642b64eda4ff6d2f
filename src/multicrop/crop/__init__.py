"""The crop wing, in pipeline order.

``config`` (what changes the crops, and apart from it how files are written)
→ ``partition`` (Carousel §IV-A saliency partitioning; its smallest-box
search in ``search``, its cutting into regions in ``cuts``) → ``candidates``
(grid anchors, windows, subject framings) → ``scoring/`` (registered crop
scorers) → ``select`` (one crop per region, or top-k) → ``pipeline``
(:func:`crop_photo`, the one entry point) → ``outputs`` (files on disk).
Saliency maps come from :mod:`multicrop.saliency`, which knows nothing of
crops; the array measurements shared with the judges from
:mod:`multicrop.measures`.
"""
