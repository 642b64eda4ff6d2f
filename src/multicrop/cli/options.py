"""The one grammar of the options several commands share, and their one progress bar.

``crop``, ``batch crop`` and ``bench subjects`` read ``--k`` (a count or
``auto``), ``--ratio`` / ``--preset``, ``--detectors``, ``--focus`` and the
``--config`` file (JSON or TOML of the library's settings) through these
functions, so a value one command takes the others take too, with the same
error (a count is :func:`multicrop.ratios.count_or_auto`, the grammar the
web page reads ``k`` with too); their one progress bar is
:class:`~multicrop.cli.progress.ProgressBar` (imported here too).  Nothing
heavy is imported here: the library is imported inside each function, when
an option is given.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import InvalidParameterError, MulticropError
from ..ratios import DEFAULT_RATIOS, count_or_auto  # count_or_auto: the one k grammar, the web page's too
from ..ratios import PRESETS as RATIO_SPECS
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..crop.config import CropConfig, OutputConfig
    from ..crop.outputs import WriteOptions
    from ..geometry import Box
    from ..ratios import RatioSpec

__all__ = ["HELP_DEFAULTS", "PRESET_LIST", "WRITE_KEYS", "ProgressBar", "Settings", "apply_options",
           "count_or_auto", "detectors_option", "focus_option", "given", "k_option", "ratios_option",
           "read_config_file", "write_options"]

# Help-text copies of defaults whose home is crop.config / datasets.examples (checked by tests;
# importing those here would import numpy and Pillow on `multicrop --help`).  Ratios and presets come
# from their one table, multicrop.ratios, which imports nothing heavy.
HELP_DEFAULTS = {"k": 2, "ratios": DEFAULT_RATIOS, "strategy": "direct", "strategies": ("partition", "topk", "direct"),
                 "saliency": "u2netp", "faces": True, "quality": 92, "max_pixels": 300_000_000, "preview": True,
                 "example_width": 3600, "example_height": 1400,
                 "presets": {name: spec.text for name, spec in RATIO_SPECS.items()}}
#: The presets as ``--help`` and the errors list them: ``carousel (2:3,3:2), instagram (...), ...``.
PRESET_LIST = ", ".join(f"{k} ({v})" for k, v in HELP_DEFAULTS["presets"].items())
#: Keys of a config file that are write options (how crops are cut and what they keep), not settings.
WRITE_KEYS = ("keep_metadata", "lossless")

K_HELP = (f"Crops per photo, or auto (strategy direct: a crop per distinct subject and close-ups, at least two "
          f"where a second framing breaks no rule, at most --max-k; default {HELP_DEFAULTS['k']}).")
RATIO_HELP = f"Ratio or comma list, e.g. 2:3,3:2 (default {HELP_DEFAULTS['ratios']})."
PRESET_HELP = f"Ratio preset: {PRESET_LIST}."
DETECTORS_HELP = ("Comma list of detectors whose subjects crops are built on, or none (default: all shipped; "
                  "see docs/cropping.md).")
CONFIG_HELP = ("JSON or TOML (.toml) of CropConfig and OutputConfig fields, keep_metadata, lossless "
               "(options override it).")


def k_option(value: str | None, option: str = "--k") -> int | str | None:
    """``--k``: a positive integer or ``auto`` (None: not given)."""
    return None if value is None else count_or_auto(value, option)


def ratios_option(ratio: str | None, preset: str | None) -> RatioSpec | None:
    """``--ratio`` / ``--preset`` as a :class:`~multicrop.ratios.RatioSpec` (None: neither given).

    The spec carries the preset's one-ratio rule (``instagram``: one ratio for
    all crops) into the CropConfig.  Every preset error lists the presets.

    Examples
    --------
    >>> ratios_option(None, "Instagram").one_ratio, ratios_option("2:3", None).text
    (True, '2:3')
    """
    from ..ratios import PRESETS, parse_ratio_spec

    if ratio and preset:
        raise InvalidParameterError("give --ratio or --preset, not both")
    if preset is not None and preset.strip().lower() not in PRESETS:
        raise InvalidParameterError(f"--preset: unknown preset {preset!r}; presets: {PRESET_LIST}")
    if not (ratio or preset):
        return None
    try:
        return parse_ratio_spec(preset.strip().lower() if preset else ratio)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"--ratio: {exc}") from None  # the message names the presets


def detectors_option(value: str | None) -> tuple[str, ...] | None:
    """``--detectors``: a comma list of registered detector names, or ``none`` (None: not given)."""
    if value is None:
        return None
    if value.strip().lower() in ("none", ""):
        return ()
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    from ..detectors import DETECTORS

    for n in names:
        try:
            DETECTORS.get(n)
        except MulticropError as exc:
            raise InvalidParameterError(f"--detectors: {exc}") from None
    return names


def focus_option(value: str | None) -> Box | None:
    """``--focus``: ``X,Y`` or ``X,Y,W,H`` in source pixels, as a Box (None: not given)."""
    if value is None:
        return None
    from ..crop.analysis import parse_focus

    try:
        return parse_focus(value)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"--focus: {exc}") from None


def given(**options: Any) -> dict[str, Any]:
    """The options the user gave (not None)."""
    return {k: v for k, v in options.items() if v is not None}


class Settings(NamedTuple):
    """A config file's settings: the crop settings, the output settings and the write options."""

    crop: CropConfig
    output: OutputConfig
    write: dict[str, Any]


def _parse_config_text(path: Path, option: str) -> Any:
    """A config file's data: TOML when it ends in ``.toml``, else JSON.

    Read bounded (:func:`multicrop.io.read_text_bounded`): a FIFO, a device
    such as ``/dev/zero`` or a file over the config limit is refused at once
    in one line, never read without end.
    """
    from ..io import read_text_bounded

    text = read_text_bounded(path, what=option)
    if path.suffix.lower() == ".toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidParameterError(f"{path}: not valid TOML ({exc})") from None
        except RecursionError:
            raise InvalidParameterError(f"{path}: TOML nested too deep") from None
    from ..io.files import MAX_JSON_DEPTH, json_depth

    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise InvalidParameterError(f"{option} {path}: JSON nested {depth:,} deep, more than the {MAX_JSON_DEPTH} allowed")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InvalidParameterError(
            f"{path}: not valid JSON ({str(exc).splitlines()[0] if str(exc) else exc!r}); a TOML config must end "
            "in .toml") from None


def read_config_file(path: Path | None, *, option: str = "--config", write: bool = True) -> Settings:
    """The settings of a config file (JSON or TOML): CropConfig fields, OutputConfig fields, write options.

    ``path`` None gives the defaults.  A record's ``config`` is such a file;
    so is one from before the two were split (its ``quality`` and
    ``max_pixels`` go to the OutputConfig).  ``write=False``: the command
    writes no lossless cuts or metadata of its own choosing, so the write
    keys are refused by name.
    """
    from ..crop.config import CropConfig, OutputConfig

    if path is None:
        return Settings(CropConfig(), OutputConfig(), {})
    data = _parse_config_text(path, option)
    if not isinstance(data, dict):
        raise InvalidParameterError(f"{path}: a config file holds an object (table), got {type(data).__name__}")
    output_keys = {f.name for f in dataclasses.fields(OutputConfig)}
    allowed = sorted({f.name for f in dataclasses.fields(CropConfig)} | output_keys | set(WRITE_KEYS))
    for key in data:  # one list of every key a file may hold, not CropConfig's alone ("direct": the old flat one)
        if key not in allowed and key != "direct":
            import difflib

            near = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise InvalidParameterError(f"{path}: unknown key {key!r}{hint}; allowed: {', '.join(allowed)}")
    write_settings = {k: data.pop(k) for k in WRITE_KEYS if k in data}
    if write_settings and not write:
        raise InvalidParameterError(f"{path}: {', '.join(write_settings)} cannot be set for this command")
    try:
        crop_cfg = CropConfig.from_dict({k: v for k, v in data.items() if k not in output_keys})
        out_cfg = OutputConfig.from_dict({k: v for k, v in data.items() if k in output_keys})
        write_options(write_settings)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"{path}: {exc}") from None
    return Settings(crop_cfg, out_cfg, write_settings)


def write_options(options: dict[str, Any], **extra: Any) -> WriteOptions:
    """The write options of ``options`` (``keep_metadata``, ``lossless``), checked."""
    from ..crop.outputs import WriteOptions

    keep = options.get("keep_metadata", False)
    if not isinstance(keep, bool):
        raise InvalidParameterError(f"keep_metadata must be true or false, got {keep!r}")
    return WriteOptions(keep_metadata=keep, lossless=options.get("lossless", "auto"), **extra)


def apply_options(base: Settings, crop_options: dict[str, Any],
                  output_options: dict[str, Any]) -> tuple[CropConfig, OutputConfig]:
    """``base`` (the config file's settings, or the defaults) with the command-line options applied.

    Options wrong for the whole batch (a bad value, saliency backend or
    format) fail here, before the first photo.
    """
    crop_cfg = base.crop.replace(**crop_options)
    if "saliency" in crop_options:
        from ..saliency import SALIENCY

        SALIENCY.get(crop_options["saliency"])  # fail once, before the batch, on a bad name
    if "format" in output_options:
        from ..io import format_suffix

        try:
            format_suffix(output_options["format"])
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"--format: {exc}") from None
    return crop_cfg, base.output.replace(**output_options)
