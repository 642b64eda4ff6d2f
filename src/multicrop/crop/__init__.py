"""The crop wing, in pipeline order.

``config`` (what changes the crops) → ``partition`` (Carousel §IV-A saliency
partitioning) → ``candidates`` (grid anchors, windows, subject framings) →
``scoring/`` (registered crop scorers) → ``select`` (one crop per region, or
top-k) → ``pipeline`` (:func:`crop_photo`, the one entry point) → ``outputs``
(files on disk).  Saliency maps come from :mod:`multicrop.saliency`, which
knows nothing of crops.
"""
