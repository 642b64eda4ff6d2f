"""The commands' one progress bar (rich, on stderr, on terminals only)."""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressBar"]


class ProgressBar:
    """The commands' progress bar: rich, on stderr, shown only on a terminal and when ``enabled``.

    ``what``, done of total, the rate in ``unit``/s, failures (when
    ``failures``), any ``fields`` (``name: format``, e.g. ``{"spend":
    "${:.4f}"}``, summed from :meth:`advance`) and the time left.  rich is
    imported only when the bar is shown.  Use as a context manager;
    :meth:`start` (the total, or None while unknown), :meth:`advance` and
    :meth:`row` are the callbacks the library's runners take.

    With ``unit=None`` the bar follows the stages of one job instead of a
    count: :meth:`stage` names the step and the share of the job done, and
    the bar shows the step, the share and the time so far.
    """

    def __init__(self, what: str, *, enabled: bool = True, unit: str | None = "photos", failures: bool = True,
                 fields: dict[str, str] | None = None, transient: bool = False) -> None:
        self.fields = dict(fields or {})
        self.values = dict.fromkeys(self.fields, 0.0)
        self.task = None
        self.t0 = time.perf_counter()
        self.n = self.failed = 0
        self.what, self.fraction = what, 0.0
        self.bar = None
        if not (enabled and sys.stderr.isatty()):
            return
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        if unit is None:
            columns = [TextColumn("{task.description}", markup=False), BarColumn(), TaskProgressColumn(), TimeElapsedColumn()]
        else:
            columns = [TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                       TextColumn(f"{{task.fields[rate]}} {unit}/s")]
            columns += [TextColumn(f"{{task.fields[{name}]}}") for name in self.fields]
            if failures:
                columns.append(TextColumn("{task.fields[failed]} failed"))
            columns.append(TimeRemainingColumn())
        self.bar = Progress(*columns, console=Console(stderr=True), transient=transient)

    @property
    def shown(self) -> bool:
        """Whether the bar is drawn (enabled, on a terminal)."""
        return self.bar is not None

    def __enter__(self) -> ProgressBar:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def _shown_fields(self) -> dict[str, str]:
        return {name: fmt.format(self.values[name]) for name, fmt in self.fields.items()}

    def start(self, total: int | float | None, *_: object, done: int = 0) -> None:
        """Begin counting towards ``total``, ``done`` of it already done (a resumed run: not in the rate).

        Extra positional arguments, such as a runner's count done before, are ignored.
        """
        self.t0 = time.perf_counter()
        if self.bar is not None:
            self.task = self.bar.add_task(self.what, total=total, completed=done, rate="0.00", failed=0,
                                          **self._shown_fields())

    def stage(self, what: str, fraction: float) -> None:
        """``unit=None``: the job is at step ``what``, ``fraction`` (0-1) of it done."""
        self.what, self.fraction = what, min(max(float(fraction), 0.0), 1.0)
        if self.bar is None:
            return
        if self.task is None:
            self.start(1.0)
        self.bar.update(self.task, completed=self.fraction, description=what)

    def advance(self, n: int = 1, failed: int = 0, **values: float) -> None:
        """``n`` more done, ``failed`` of them failed; ``values`` add to the named fields."""
        self.n += n
        self.failed += failed
        for name, v in values.items():
            self.values[name] += v
        if self.bar is None:
            return
        if self.task is None:
            self.start(None)
        rate = self.n / max(time.perf_counter() - self.t0, 1e-9)
        self.bar.update(self.task, advance=n, rate=f"{rate:.2f}", failed=self.failed, **self._shown_fields())

    def row(self, row: dict) -> None:
        """A batch manifest row: one photo done (or failed)."""
        self.advance(1, failed=int(row["status"] != "done"))

    def echo(self, line: str) -> None:
        """One line on stderr, above the bar while it is drawn (taken as text: no markup)."""
        if self.bar is None:
            print(line, file=sys.stderr, flush=True)
        else:
            self.bar.console.print(line, soft_wrap=True, markup=False, highlight=False)
