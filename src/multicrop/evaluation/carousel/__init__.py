"""Carousel evaluation: registered methods, kIoU scoring, resumable runs, the report.

``methods`` (what is evaluated) → ``evaluate`` (run a method over a Carousel
directory, score with kIoU) → ``report`` (tables, per-image CSV, HTML).
"""
