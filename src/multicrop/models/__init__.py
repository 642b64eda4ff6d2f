"""The model files shipped inside multicrop, their model cards, and the one way to run them.

Every model file in this package has a **model card** beside it,
``<name>.toml``, with the keys

``name``
    The key in :data:`MODELS` (``"u2netp"``, ``"yunet"``, ``"nanodet"``, ...).
``file``
    The file's name inside this package.
``sha256``
    SHA-256 (hex) of the file's bytes, checked when the file is first loaded.
``licence``
    SPDX identifier of the weights' licence (text in ``LICENSES/``).
``origin``
    Where the file came from: upstream project, registry package, version and
    path inside it.
``input_size``
    ``[width, height]`` of the network input.
``normalisation``
    How pixels are fed (channel order, scaling, mean and std).
``script``
    The script under ``scripts/`` that rebuilds the file from its pinned
    registry package, or ``""`` for a file taken unchanged.

:data:`MODELS` is built by reading every card of the package, so a new model
ships by dropping its file and its card here.  A file whose SHA-256 differs
from its card is refused with :class:`~multicrop.errors.ModelFileError`: a
corrupt or replaced file must never silently change results.  Licence texts
are in ``LICENSES/`` and origins in ``NOTICE`` at the root of the source tree
(both also in the wheel's ``.dist-info/licenses``).  Nothing is downloaded.

Every model runs through :func:`onnx_session` (:mod:`multicrop.models.sessions`).

Examples
--------
>>> {"u2netp", "yunet", "nanodet"} <= set(MODELS)
True
>>> model_path("yunet").name
'face_detection_yunet_2023mar.onnx'
>>> MODELS["nanodet"].input_size
(416, 416)
"""

from __future__ import annotations

import atexit
import contextlib
import difflib
import functools
import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import InvalidParameterError, ModelFileError
from .sessions import MAX_THREADS, onnx_session, prefetch, thread_count

__all__ = [
    "ModelFile", "MODELS", "CARD_KEYS", "model_path", "verify_file", "sha256_of", "read_card", "load_cards",
    "model_card", "onnx_session", "prefetch", "thread_count", "MAX_THREADS",
]

#: The keys every model card has (all required, no others).
CARD_KEYS = ("name", "file", "sha256", "licence", "origin", "input_size", "normalisation", "script")


@dataclass(frozen=True)
class ModelFile:
    """One shipped model file, as its card describes it.

    Attributes
    ----------
    name : str
        Key in :data:`MODELS`.
    file : str
        File name inside this package.
    sha256 : str
        Expected SHA-256 (hex) of the file's bytes.
    licence : str
        SPDX identifier of the weights' licence (text in ``LICENSES/``).
    origin : str
        Where the file was taken from.
    input_size : tuple of int
        ``(width, height)`` of the network input.
    normalisation : str
        How pixels are fed to it.
    script : str
        The ``scripts/`` file that rebuilds it, ``""`` when taken unchanged.
    """

    name: str
    file: str
    sha256: str
    licence: str
    origin: str
    input_size: tuple[int, ...] = ()
    normalisation: str = ""
    script: str = ""

    @property
    def filename(self) -> str:
        """Alias of :attr:`file`."""
        return self.file

    @property
    def version(self) -> str:
        """Short identity of the weights: the first 12 hex digits of their SHA-256."""
        return self.sha256[:12]


def read_card(text: str, *, source: str = "<card>") -> ModelFile:
    """Parse one model card (TOML text).

    Raises
    ------
    ModelFileError
        If the card is not TOML, lacks a key, has an unknown key, or a value
        of the wrong type (the message names the card and the key).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelFileError(f"model card {source} is not valid TOML: {exc}") from None
    missing = [k for k in CARD_KEYS if k not in data]
    unknown = sorted(set(data) - set(CARD_KEYS))
    if missing or unknown:
        raise ModelFileError(
            f"model card {source}: " + "; ".join(
                ([f"missing key(s) {', '.join(missing)}"] if missing else [])
                + ([f"unknown key(s) {', '.join(unknown)}"] if unknown else [])
            ) + f" (a card has exactly: {', '.join(CARD_KEYS)})"
        )
    for key in CARD_KEYS:
        want = list if key == "input_size" else str
        if not isinstance(data[key], want):
            raise ModelFileError(f"model card {source}: {key} must be a {want.__name__}, got {data[key]!r}")
    size = data["input_size"]
    if not size or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size):
        raise ModelFileError(f"model card {source}: input_size must be a list of positive integers, got {size!r}")
    sha = data["sha256"]
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ModelFileError(f"model card {source}: sha256 must be 64 lowercase hex digits, got {sha!r}")
    return ModelFile(**{**data, "input_size": tuple(size)})


def load_cards() -> dict[str, ModelFile]:
    """Every model card of this package, by name.

    Raises
    ------
    ModelFileError
        If a card is malformed, or two cards share a name.
    """
    cards: dict[str, ModelFile] = {}
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        card = read_card(entry.read_text(encoding="utf-8"), source=entry.name)
        if card.name in cards:
            raise ModelFileError(f"model cards {entry.name} and {cards[card.name].file}'s card both name {card.name!r}")
        cards[card.name] = card
    return cards


#: The shipped model files, by name (one card each).
MODELS: dict[str, ModelFile] = load_cards()

# Keeps files extracted by ``importlib.resources.as_file`` (zip imports) alive until exit.
_FILES = contextlib.ExitStack()
atexit.register(_FILES.close)


def sha256_of(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_file(path: str | Path, sha256: str) -> Path:
    """Return ``path`` if its bytes have the SHA-256 ``sha256``.

    Raises
    ------
    ModelFileError
        If the file is missing, or its hash differs (the message names the
        file and both hashes).
    """
    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"model file {p} is missing; reinstall multicrop (`pip install --force-reinstall multicrop`)")
    actual = sha256_of(p)
    if actual != sha256:
        raise ModelFileError(
            f"model file {p} is corrupt or was replaced: its SHA-256 is {actual}, expected {sha256}; "
            "reinstall multicrop (`pip install --force-reinstall multicrop`)"
        )
    return p


def model_card(name: str) -> ModelFile:
    """The card of the shipped model ``name``.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a shipped model (the message suggests close names).
    """
    if name not in MODELS:
        close = difflib.get_close_matches(str(name), list(MODELS), n=3, cutoff=0.5)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        raise InvalidParameterError(f"model must be one of {', '.join(sorted(MODELS))}, got {name!r}{hint}")
    return MODELS[name]


@functools.lru_cache(maxsize=None)
def model_path(name: str) -> Path:
    """Path of the shipped model ``name``, checked against its SHA-256 (once per process).

    Parameters
    ----------
    name : str
        A key of :data:`MODELS`.

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a shipped model.
    ModelFileError
        If the file is missing or does not match its SHA-256.
    """
    model = model_card(name)
    resource = resources.files(__name__).joinpath(model.file)
    path = _FILES.enter_context(resources.as_file(resource))
    return verify_file(path, model.sha256)
