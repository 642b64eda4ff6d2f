"""The one grammar of a count of slides, ``k``: a positive integer or ``auto``.

The other half of a carousel's shape setting (the ratios are :mod:`.presets`):
the command line (``--k``, ``--slides``) and the web page (a request's ``k``)
read a count through :func:`count_or_auto`, so a value one face takes the other
takes too, with the same error.  Whether ``auto`` suits the chosen strategy is
the crop config's to say, not the grammar's.
"""

from __future__ import annotations

from ..errors import InvalidParameterError

__all__ = ["AUTO", "count_or_auto"]

#: The word that leaves the count to the photo (``k="auto"``).
AUTO = "auto"


def count_or_auto(value: str | int, option: str) -> int | str:
    """A count: ``auto`` (any case, spaces around ignored) or a positive integer.

    ``value`` is text as typed (the command line, a form) or a JSON integer
    (the web page); ``option`` names the setting in the error.

    Raises
    ------
    InvalidParameterError
        Anything else: zero, a negative number, a word, ``True``/``False``,
        a fraction.

    Examples
    --------
    >>> count_or_auto(" Auto ", "--k"), count_or_auto("3", "--k"), count_or_auto(3, "k")
    ('auto', 3, 3)
    >>> count_or_auto("0", "--slides")
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: --slides must be a positive integer or auto, got '0'
    """
    if isinstance(value, str):
        if value.strip().lower() == AUTO:
            return AUTO
        try:
            n = int(value)
        except ValueError:
            n = 0
    elif isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        n = 0
    if n < 1:
        raise InvalidParameterError(f"{option} must be a positive integer or auto, got {value!r}")
    return n
