"""The judge settings of ``multicrop crop --judge``, checked once before a batch.

Examples
--------
>>> s = JudgeSettings.create(measured_panel_path())
>>> s.shortlist, s.store, [f.name for f in s.panel.families]
(4, None, ['measured'])
>>> JudgeSettings.create(measured_panel_path(), shortlist=0)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: --shortlist must be a positive integer, got 0
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidParameterError
from ..judges.panel import Panel

__all__ = ["JudgeSettings", "measured_panel_path"]


def measured_panel_path() -> Path:
    """The shipped offline panel (the ``measured`` judge alone, one holistic call per crop)."""
    from importlib import resources

    return Path(str(resources.files("multicrop").joinpath("data/panel.measured.toml")))


@dataclass(frozen=True)
class JudgeSettings:
    """A loaded panel, the shortlist length and the call store of a ranking run.

    Attributes
    ----------
    panel : Panel
    panel_name : str
        The panel file's name, as the summary line shows it.
    shortlist : int
        Alternatives per crop the panel judges.
    store : Path or None
        The call store (None: a temporary store per photo).
    """

    panel: Panel
    panel_name: str
    shortlist: int
    store: Path | None = None

    @classmethod
    def create(cls, panel: str | os.PathLike, *, shortlist: int | None = None,
               store: str | os.PathLike | None = None) -> JudgeSettings:
        """Load and check the panel file, ``shortlist`` (default 4) and the store path.

        Raises
        ------
        InvalidParameterError
            A missing or malformed panel, ``shortlist`` < 1, or a store path
            that is a directory.
        """
        from .shortlists import DEFAULT_SHORTLIST, load_ranking_panel

        n = DEFAULT_SHORTLIST if shortlist is None else shortlist
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidParameterError(f"--shortlist must be a positive integer, got {n!r}")
        p = load_ranking_panel(panel)
        path = None if store is None else Path(store)
        if path is not None:
            if path.is_dir():
                raise InvalidParameterError(f"--judge-store {path}: is a directory; give the store's file, "
                                            "e.g. judge.sqlite")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InvalidParameterError(f"--judge-store {path}: cannot create its directory "
                                            f"({exc.strerror or exc})") from None
        return cls(p, Path(panel).name, n, path)

    @classmethod
    def from_options(cls, panel: str | os.PathLike | None, *, shortlist: int | None = None,
                     store: str | os.PathLike | None = None, strategy: str = "direct",
                     warn: Callable[[str], None] | None = None) -> JudgeSettings | None:
        """The settings of ``--judge``, ``--shortlist`` and ``--judge-store`` (None without ``--judge``).

        ``panel`` ``"measured"`` (no file of that name here) is the shipped
        offline panel, :func:`measured_panel_path`.  ``warn`` receives one line
        when ``strategy`` finds no alternatives (only ``direct`` does), so the
        panel cannot change a crop.

        Raises
        ------
        InvalidParameterError
            ``--shortlist`` or ``--judge-store`` without ``--judge``, and the
            errors of :meth:`create`.
        """
        if panel is None:
            given = [name for name, v in (("--shortlist", shortlist), ("--judge-store", store)) if v is not None]
            if given:
                raise InvalidParameterError(f"{' and '.join(given)} need{'s' * (len(given) == 1)} --judge PANEL.toml")
            return None
        if os.fspath(panel) == "measured" and not os.path.exists(panel):
            panel = measured_panel_path()
        settings = cls.create(panel, shortlist=shortlist, store=store)
        if strategy != "direct" and warn is not None:
            warn(f"--judge: strategy {strategy} lists each crop alone, so the panel scores the crops but cannot "
                 "change them; use --strategy direct")
        return settings

    def rank(self, result: Any) -> Any:
        """:func:`~multicrop.ranking.shortlists.rank_crops` of one photo's result."""
        from .shortlists import rank_crops

        return rank_crops(result, self.panel, store=self.store, shortlist=self.shortlist)

    def summary(self, result: Any) -> str:
        """The one-line summary of a ranked result."""
        from .shortlists import summary_line

        return summary_line(result.ranking, panel_name=self.panel_name)
