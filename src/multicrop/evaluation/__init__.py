"""Evaluation of the two wings: ``carousel/`` (crop methods against Carousel
labels with kIoU) and ``judges/`` (judge panels against human ratings).

Each subpackage has its configuration, its typed steps and its report writer.
"""
