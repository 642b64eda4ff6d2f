"""The images a judge command names: files, folders of photos and CSV files with an ``image`` column."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidParameterError

__all__ = ["expand_inputs", "paths_of"]


def expand_inputs(inputs: list[Path], *, recursive: bool = False):
    """Image paths from files, directories and CSV files (column ``image``).

    ``recursive``: directories also give the photos of their sub-folders.

    A file named twice (by any route) is judged once, under its first label.
    Labels are what the output table's ``image`` column shows, so two
    different files that would share one label are an error.
    """
    from ..judges.types import ImageRef

    refs: list = []
    seen: set[Path] = set()  # resolved paths
    owner: dict[str, Path] = {}  # label -> resolved path
    for item in inputs:
        for path, label in paths_of(item, recursive=recursive):
            real = path.resolve()
            if real in seen:
                continue
            if label in owner:
                raise InvalidParameterError(
                    f"two different files would both be labelled {label!r} in the output table: {owner[label]} and "
                    f"{real}; list them by distinct paths (e.g. in one CSV, or as files or directories)"
                )
            try:
                refs.append(ImageRef(path, label=label))
            except FileNotFoundError:
                raise InvalidParameterError(f"image {label!r} does not exist") from None
            except IsADirectoryError:
                raise InvalidParameterError(f"image {label!r} is a directory") from None
            seen.add(real)
            owner[label] = real
    if not refs:
        raise InvalidParameterError("no images to judge")
    return refs


def paths_of(item: Path, *, recursive: bool = False) -> list[tuple[Path, str]]:
    """``(path, label)`` of the images one input names: a file, a directory's images, or a CSV's ``image`` column.

    A directory gives its photos by the one rule of :func:`multicrop.io.is_photo`
    (a suffix of :data:`multicrop.io.FORMATS`, no dot-file, nothing inside a
    dot-folder), sorted, as ``multicrop crop`` lists a folder.  Unlike
    ``crop``, crops an earlier run wrote are photos to judge, and a directory
    without photos gives none (the command fails when no input gives any);
    a file or CSV entry named explicitly is taken whatever its name.
    """
    from ..io import folder_photos

    if item.is_dir():
        return [(p, str(p)) for p in folder_photos(item, recursive, outputs=True)]
    if item.suffix.lower() == ".csv":
        import io

        import pandas as pd

        from ..io import read_bytes_bounded
        from ..io.files import MANIFEST_LIMIT

        try:
            df = pd.read_csv(io.BytesIO(read_bytes_bounded(item, limit=MANIFEST_LIMIT, what="image list")))
        except (OSError, ValueError) as exc:
            raise InvalidParameterError(f"{item}: cannot read CSV ({exc})") from None
        if "image" not in df.columns:
            raise InvalidParameterError(f"{item}: needs a column 'image', has {list(df.columns)}")
        return [(Path(v) if Path(v).is_absolute() else item.parent / v, v) for v in df["image"].astype(str)]
    if item.exists():
        return [(item, str(item))]
    raise InvalidParameterError(f"input {str(item)!r} does not exist")
