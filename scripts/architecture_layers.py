"""Write the layer table of docs/architecture.md from the `layers` contract in .importlinter.

The contract is the truth (import-linter checks it); the table is generated from it, one row per
layer, top to bottom, with the words in ``WORDS`` beside each module.  ``tests/test_architecture.py``
checks that the doc holds exactly what :func:`render` gives.  Run ``python scripts/architecture_layers.py``
to rewrite the block between the two markers after changing the contract.
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- layers: generated from .importlinter by scripts/architecture_layers.py -->"
END = "<!-- end of generated layers -->"

#: What each module of the contract holds (a module missing here is an error: say what it is).
WORDS = {
    "cli": "command modules; `register(app)` adds one or more (judge.py: judge and judges)",
    "web": "the web page", "batch": "batch jobs (fsspec, Ray)",
    "evaluation": "carousel/ (kIoU), judges/ (panels against ratings), subjects/ (coco-subjects)",
    "ranking": "the join of the wings: a judge panel chooses among each crop's shortlist",
    "crop": "the crop wing", "judges": "the judge wing; neither wing imports the other",
    "datasets": "Carousel, carousel-synth, outlines (YOLO/COCO), ratings, simulated studies, examples",
    "saliency": "saliency maps", "metrics": "kIoU", "detectors": "people, animals, objects, faces",
    "embeddings": "image embeddings and IAA models",
    "fusion": "judge-table features, combiners (scikit-learn estimators)",
    "stats": "pure functions on arrays: correlations, bootstrap, BH, ceilings, partial r",
    "io": "formats, opener, load, loaded, orientation, integrity, jpeg, save, tables, lossless, jpeg_segments, jpeg_cutters, guard, parts",
    "geometry": "boxes", "ratios": "Ratio, the one preset table and ratio parser",
    "hashing": "canonical JSON", "schema": "the judge table's columns", "registry": "the registry shape",
    "distributions": "installed versions and entry-point groups, read without importlib.metadata when sure",
    "errors": "the exception hierarchy", "measures": "summed-area tables, luminance, sharpness",
    "quality": "whole-image faults: noise, blur, blocking, tilt",
    "serialize": "to_data / from_data and the rules classes declare (rules, dump, load)", "models": "the shipped ONNX files, their cards, onnx_session",
    "defaults": "defaults several floors name (DEFAULT_DETECTORS), importing nothing",
}


def layers(config: Path = ROOT / ".importlinter") -> list[tuple[str, list[str]]]:
    """``(separator, [module, ...])`` per layer, top to bottom (separator ``|`` independent, ``:`` siblings)."""
    parser = configparser.ConfigParser()
    parser.read(config, encoding="utf-8")
    out = []
    for line in parser["importlinter:contract:layers"]["layers"].strip().splitlines():
        sep = "|" if "|" in line else ":"
        out.append((sep, [m.strip().removeprefix("multicrop.") for m in re.split(r"[|:]", line) if m.strip()]))
    return out


def render(config: Path = ROOT / ".importlinter") -> str:
    """The layer table as the doc shows it, between its markers."""
    rows = []
    for sep, modules in layers(config):
        for i, m in enumerate(modules):  # one module per line; a continuation line starts with its separator
            rows.append(f"{(m if i == 0 else f'  {sep} {m}'):<24} {WORDS[m]}")
    return "\n".join([BEGIN, "```text", "top", *rows, "bottom (the ground floor: `:` siblings may import each other)",
                      "```", END])


def main() -> int:
    doc = ROOT / "docs" / "architecture.md"
    text = doc.read_text(encoding="utf-8")
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    doc.write_text(text[:start] + render() + text[stop:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
