"""The Carousel label geometry shipped inside multicrop, and a writer of it as LabelMe files.

``multicrop/data/carousel_labels.json`` holds the label files of the real
Carousel dataset [1]_ (the copy the project was developed against: 170 of
its 277 images, without the photos), field for field: each item's
``<name>.json`` (label strings, raw corner points, shape types, image size)
and ``<name>_metadata.json`` (``subcrops``, title, creator, licence, URL), and
the lines of ``hard_failures.txt``.  It was built once by
``scripts/build_carousel_labels.py``, which checks that
:func:`write_labelme` gives back the real files byte for byte, so the
quirks that :mod:`multicrop.datasets.carousel` handles (a ``subcrops``
mismatch in 6 files, a contradicting label, a negative coordinate, mixed
orientations, overlapping boxes) are all there.

Tests and ``multicrop bench synth`` use it, so neither needs the real
dataset; the real files stay readable from any directory
(:func:`~multicrop.datasets.carousel.load_carousel`).

Examples
--------
>>> import tempfile
>>> from multicrop.datasets.carousel import load_carousel
>>> root = write_labelme(tempfile.mkdtemp(), names=["Hockey_players"])
>>> item = load_carousel(root, require_images=False)["Hockey_players"]
>>> item.k, len(item.boxes), item.labels
(2, 2, ('2x3', '2x3'))
>>> len(label_names()), len(hard_failure_names())
(170, 45)

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping"; data at https://github.com/RafeLoya/carousel.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import DatasetError, InvalidParameterError
from ..io import atomic_write_text

__all__ = ["FORMAT", "DATA_FILE", "label_names", "hard_failure_names", "write_labelme", "dumps"]

#: Format tag of the data file (bump when its layout changes).
FORMAT = "multicrop-carousel-labels-1"
#: The data file, inside the ``multicrop`` package.
DATA_FILE = "data/carousel_labels.json"


def dumps(data: Mapping[str, Any]) -> str:
    """Text of a labels data file: one JSON document, one item per line (reviewable diffs).

    Examples
    --------
    >>> print(dumps({"format": FORMAT, "items": [{"name": "a"}, {"name": "b"}]}))
    {
    "format": "multicrop-carousel-labels-1",
    "items": [
    {"name":"a"},
    {"name":"b"}
    ]
    }
    <BLANKLINE>
    """

    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    fields = []
    for key, value in data.items():
        if key == "items":
            fields.append('"items": [\n' + ",\n".join(one(v) for v in value) + "\n]")
        else:
            fields.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    text = resources.files("multicrop").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return _checked(json.loads(text))


def _checked(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise DatasetError(f"Carousel labels data: format must be {FORMAT!r}, got {got!r}")
    return data


def label_names() -> tuple[str, ...]:
    """Names of the shipped items, sorted as :func:`~multicrop.datasets.carousel.load_carousel` sorts them."""
    return tuple(sorted(item["name"] for item in _shipped()["items"]))


def hard_failure_names() -> tuple[str, ...]:
    """The lines of the shipped ``hard_failures.txt``, in file order."""
    return tuple(_shipped()["hard_failures"])


def write_labelme(
    out_dir: str | Path,
    *,
    names: Sequence[str] | None = None,
    data: Mapping[str, Any] | None = None,
) -> Path:
    """Write the label geometry as a Carousel directory of LabelMe files (no images).

    Writes ``OUT/dataset/<name>.json``, ``OUT/dataset/<name>_metadata.json``
    and ``OUT/hard_failures.txt`` exactly as the real dataset has them, for
    :func:`~multicrop.datasets.carousel.load_carousel` (with
    ``require_images=False``) or :func:`~multicrop.datasets.synth.make_synth`.

    Parameters
    ----------
    out_dir : path
        Directory to write (created if needed).
    names : sequence of str, optional
        Only these items (default: all); ``hard_failures.txt`` then lists
        only those among them.
    data : mapping, optional
        Parsed content of a labels data file (default: the shipped one).

    Returns
    -------
    Path
        ``out_dir``.

    Raises
    ------
    InvalidParameterError
        If a name is not in the data.
    DatasetError
        If ``data`` is not a labels data file of this format.
    """
    data = _shipped() if data is None else _checked(dict(data))
    items = data["items"]
    hard = list(data["hard_failures"])
    if names is not None:
        known = {item["name"] for item in items}
        missing = [n for n in names if n not in known]
        if missing:
            raise InvalidParameterError(f"names not in the Carousel labels: {', '.join(missing)}")
        wanted = set(names)
        items = [item for item in items if item["name"] in wanted]
        hard = [n for n in hard if n in wanted]
    out = Path(out_dir)
    ddir = out / "dataset"
    ddir.mkdir(parents=True, exist_ok=True)
    for item in items:
        # The real files' own layout: labels indented by 2 in UTF-8, metadata indented by 4
        # with non-ASCII escaped (\uXXXX), neither with a final newline.
        atomic_write_text(ddir / f"{item['name']}.json", json.dumps(item["labels"], indent=2, ensure_ascii=False))
        atomic_write_text(ddir / f"{item['name']}_metadata.json", json.dumps(item["metadata"], indent=4))
    atomic_write_text(out / "hard_failures.txt", "".join(f"{n}\n" for n in hard))
    return out
