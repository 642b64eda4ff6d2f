"""The exceptions multicrop raises, in one place.

Every library error derives from :class:`MulticropError`, so a caller (and the
CLI) can catch one type.  Errors about bad values also derive from
:class:`ValueError`, following scikit-image and the standard library.
"""

from __future__ import annotations

__all__ = [
    "MulticropError",
    "InvalidParameterError",
    "ImageLoadError",
    "ImageTooLargeError",
    "ImageFormatError",
    "ImageTruncatedError",
    "ImageMetadataError",
    "InputFileError",
    "ImageTooSmallError",
    "PartitionFailure",
    "RegistryError",
    "UnknownNameError",
    "DatasetError",
    "JudgeError",
    "MissingCredentialsError",
    "StoreError",
    "ModelFileError",
    "MissingExtraError",
]


class MulticropError(Exception):
    """Base class of every error raised by multicrop."""


class InvalidParameterError(MulticropError, ValueError):
    """A parameter received a value outside what is allowed.

    Messages name the parameter, the value received and what is allowed.
    """


class ImageLoadError(MulticropError, ValueError):
    """A file is missing, is not an image, or is truncated or corrupt."""


class ImageTooLargeError(ImageLoadError):
    """An image has more pixels than the configured decompression-bomb limit."""


class ImageFormatError(ImageLoadError):
    """A file holds an image format multicrop does not open (see :data:`multicrop.io.FORMATS`)."""


class ImageTruncatedError(ImageLoadError):
    """A file's data ends before the image its header declares (truncated, or a header that lies)."""


class ImageMetadataError(ImageLoadError):
    """A metadata block (PNG text or ICC chunk, EXIF, XMP) is a decompression bomb or unreadable."""


class InputFileError(MulticropError, ValueError):
    """An input file (config, manifest, photo) is not a regular file, or is larger than allowed.

    FIFOs, devices and sockets are refused before they are opened, so a read
    can never block or run forever.
    """


class ImageTooSmallError(MulticropError, ValueError):
    """An image is too small to hold the requested crops."""


class PartitionFailure(MulticropError):
    """Saliency partitioning produced an unusable partition.

    Raised (or reported) instead of silently returning bad crops, e.g. when a
    partition has an extreme aspect ratio or a cut bisects a salient box.
    """


class RegistryError(MulticropError):
    """A registry was used wrongly, e.g. a name registered twice."""


class UnknownNameError(RegistryError, KeyError):
    """A name is not in a registry; the message suggests close matches."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the text plain
        return str(self.args[0]) if self.args else ""


class DatasetError(MulticropError, ValueError):
    """A dataset file is malformed or missing."""


class JudgeError(MulticropError):
    """A judge backend failed in a way that is not recorded as data."""


class MissingCredentialsError(JudgeError):
    """An API key environment variable is not set."""


class StoreError(MulticropError):
    """The checkpoint store is unusable (bad schema, failed verification...)."""


class ModelFileError(MulticropError):
    """A model file shipped inside multicrop is missing or does not match its SHA-256."""


class MissingExtraError(MulticropError, ImportError):
    """An optional dependency is not installed.

    The message names the ``pip install 'multicrop[extra]'`` command that
    installs it; build it with :meth:`for_module`.

    Examples
    --------
    >>> print(MissingExtraError.for_module("sklearn", extra="eval", feature="`multicrop eval judges`"))
    `multicrop eval judges` needs the optional package 'sklearn', which is not installed; install it with: pip install 'multicrop[eval]'
    """

    @classmethod
    def for_module(cls, module: str, *, extra: str, feature: str | None = None) -> MissingExtraError:
        """The error for a missing ``module`` that the extra ``extra`` installs.

        (A classmethod rather than ``__init__`` arguments, so the exception
        still pickles across worker processes.)
        """
        who = feature or "this feature"
        return cls(
            f"{who} needs the optional package {module!r}, which is not installed; "
            f"install it with: pip install 'multicrop[{extra}]'"
        )
