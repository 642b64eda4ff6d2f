"""Evaluation of the two wings: ``carousel/`` (crop methods against Carousel
labels with kIoU), ``subjects/`` (crops of real photos against human instance
outlines: person-cut, subject-cut, empty, covered, featured) and ``judges/``
(judge panels against human ratings).

Each subpackage has its configuration, its typed steps and its report writer.
"""
