"""File names as a terminal may show them: control, format and bidi characters escaped.

A file name may hold anything but ``/`` and NUL: an ANSI escape sequence that
clears the screen, a right-to-left override that shows ``gpj.exe`` as
``exe.jpg``, a line separator (U+2028) that looks like a new line, or bytes
that are not UTF-8 (Python keeps them as lone surrogates).  Every message
that names a user's file names it through :func:`shown`, so what reaches the
terminal is one line of visible characters that says which file it was.

Examples
--------
>>> shown("ok photo.jpg")
'ok photo.jpg'
>>> shown("\\x1b[2Jx.jpg"), shown("a\\u202egpj.exe"), shown("l\\u2028m.jpg")
('\\\\x1b[2Jx.jpg', 'a\\\\u202egpj.exe', 'l\\\\u2028m.jpg')
>>> shown(b"caf\\xe9.jpg".decode("utf-8", "surrogateescape"))
'caf\\\\xe9.jpg'
"""

from __future__ import annotations

import os

__all__ = ["shown", "unprefixed"]


def _escape(c: str) -> str:
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    if o < 0x100:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def shown(name: str | bytes | os.PathLike) -> str:
    """``name`` with every character a terminal would not print as itself escaped (``\\x1b``, ``\\u202e``).

    Spaces stay; a backslash stays (so a plain name is shown unchanged).
    """
    text = os.fsdecode(name) if isinstance(name, (bytes, os.PathLike)) else str(name)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def unprefixed(text: str, name: str | os.PathLike) -> str:
    """``text`` without a leading ``"<name>: "``: a message that names its file, shown where the file is named.

    >>> unprefixed("a.jpg: empty file", "a.jpg"), unprefixed("empty file", "a.jpg")
    ('empty file', 'empty file')
    """
    prefix = f"{os.fspath(name)}: "
    return text[len(prefix):] if text.startswith(prefix) else text
