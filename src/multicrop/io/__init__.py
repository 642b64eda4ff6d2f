"""Image loading and atomic saving.

``load_image`` decodes a reduced copy for analysis (JPEG DCT scaling) and
remembers how to get the full-resolution pixels for the crops themselves.
"""

from .files import CONFIG_LIMIT, LABEL_LIMIT, check_regular, loads_json, open_regular, read_bytes_bounded, read_json_bounded, read_text_bounded
from .names import shown
from .formats import ALLOWED_FORMATS, DEFAULT_MAX_PIXELS, FORMATS, OPEN_FORMATS, SUPPORTED_SUFFIXES, is_photo
from .load import load_image
from .loaded import LoadedImage
from .opener import Header, open_image, read_header
from .photos import folder_photos, list_photos
from .modes import to_output_mode, to_rgb
from .save import DEFAULT_QUALITY, atomic_path, atomic_write_bytes, atomic_write_text, format_suffix, save_image
from .tables import write_table

__all__ = [
    "CONFIG_LIMIT",
    "LABEL_LIMIT",
    "DEFAULT_MAX_PIXELS",
    "DEFAULT_QUALITY",
    "FORMATS",
    "ALLOWED_FORMATS",
    "OPEN_FORMATS",
    "SUPPORTED_SUFFIXES",
    "is_photo",
    "folder_photos",
    "list_photos",
    "Header",
    "open_image",
    "read_header",
    "check_regular",
    "read_bytes_bounded",
    "read_text_bounded",
    "read_json_bounded",
    "loads_json",
    "open_regular",
    "shown",
    "LoadedImage",
    "load_image",
    "to_rgb",
    "to_output_mode",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "save_image",
    "format_suffix",
    "write_table",
]
