"""Where a batch's inputs live: fsspec filesystems and the URI protocols a batch may read.

Every input is opened through :mod:`fsspec`, so local files always work and
``s3://``, ``gs://``, ... work once the user installs those filesystems
(``s3fs``, ``gcsfs``).  Only the protocols of :data:`PROTOCOLS` are taken
(others only when asked for); a missing filesystem package or a bad URL is
said in one line.  :mod:`multicrop.batch.sources` lists photos through these
helpers and re-exports them.
"""

from __future__ import annotations

from ..errors import InvalidParameterError, MissingExtraError

__all__ = ["PROTOCOLS", "PROTOCOL_PACKAGES"]

#: URI protocols a batch reads without being asked: local files and the object stores.
PROTOCOLS = ("file", "local", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss")


def _fsspec():
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec ships with the batch extra
        raise MissingExtraError.for_module("fsspec", extra="batch", feature="`multicrop batch`") from None
    return fsspec


#: The package the fsspec filesystem of each remote protocol needs (fsspec itself names none of them as an extra).
PROTOCOL_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
                     "abfss": "adlfs", "http": "aiohttp", "https": "aiohttp"}


def _missing_filesystem(text: str, exc: ImportError, what: str) -> MissingExtraError:
    """One line naming the package a URL's protocol needs (fsspec raises a bare ImportError)."""
    protos = _protocols(text) or ["file"]
    proto = next((p for p in protos if p in PROTOCOL_PACKAGES), protos[-1])
    pkg = PROTOCOL_PACKAGES.get(proto)
    if pkg is None:
        return MissingExtraError(f"{what}: reading {proto}:// needs a package that is not installed ({exc})")
    return MissingExtraError(f"{what}: reading {proto}:// needs the optional package {pkg!r}, which is not "
                             f"installed; install it with: pip install {pkg}")


def _url_to_fs(text: str, what: str):
    """``fsspec.core.url_to_fs(text)`` with a missing filesystem package or a bad URL said in one line."""
    fsspec = _fsspec()
    try:
        return fsspec.core.url_to_fs(text)
    except ImportError as exc:
        raise _missing_filesystem(text, exc, what) from None
    except (OSError, ValueError, TypeError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InvalidParameterError(f"{what}: cannot open that location ({first[:200]})") from None


def _protocols(text: str) -> list[str]:
    """The protocols a URL names (``simplecache::s3://b/k`` names two); ``[]`` for a plain path."""
    if "://" not in text and "::" not in text:
        return []
    out = []
    for part in text.split("::"):
        if "://" in part:
            out.append(part.split("://", 1)[0].lower())
        elif part and "/" not in part and ":" not in part:
            out.append(part.lower())
    return out


def _protocol_refusal(text: str, protocols: tuple[str, ...]) -> str | None:
    bad = [p for p in _protocols(text) if p not in protocols]
    if not bad:
        return None
    return (f"protocol {bad[0]}:// is not read unless allowed (allowed: {', '.join(protocols)}; "
            f"allow more with --protocol {bad[0]})")


def _is_local(fs) -> bool:
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(fs, LocalFileSystem)
