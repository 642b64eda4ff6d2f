"""The ``multicrop`` command: assembles the command groups.

Each group lives in its own module and exposes ``register(app)``, which adds
its commands to the Typer app it is given.  The root lists them from
:data:`COMMANDS` and imports a module only when one of its commands runs
(:mod:`multicrop.cli.lazy`): ``multicrop --help`` imports no command module,
``multicrop crop`` only :mod:`multicrop.cli.crop`, and the command modules
import the library inside their commands.  This file also turns library
errors into one clear line and a non-zero exit.
"""

from __future__ import annotations

import os
import sys

import typer

from ..errors import MissingExtraError, MulticropError
from .invocation import set_command_line
from .lazy import Lazy, lazy_group

#: Every command of the root, in the order ``--help`` lists them: the module under
#: ``multicrop.cli`` whose ``register(app)`` adds it (or a group of such) and its one-line help,
#: which tests/cli/test_main.py checks against the command's own.
COMMANDS: dict[str, Lazy] = {
    "crop": Lazy("Cut k distinct full-resolution crops from each photo; originals are never written over.",
                 "crop"),
    "example": Lazy("Write a multi-subject example photo built from scikit-image's sample images.", "shipped"),
    "saliency": Lazy("Saliency backends.", "shipped"),
    "batch": Lazy("Resumable batch jobs over folders, globs or manifests (local pool or Ray).", "batch"),
    "judge": Lazy("Score photos with judges; `judge fit` fits a head.", "judge"),
    "judges": Lazy("Judge backends.", "judge"),
    "store": Lazy("The SQLite checkpoint store of judge calls.", "store"),
    "eval": Lazy("Evaluate cropping methods and aesthetic judges.", commands={
        "carousel": Lazy("Evaluate a multi-crop method on Carousel: kIoU@0.5:0.95, kIoU@0.5, k, orientation and "
                         "blob-cut share.", "eval_carousel"),
        "judges": Lazy("Run the judge-panel protocol and write tables, figures and index.html.", "eval_judges"),
        "probe": Lazy("Cheap holistic headroom probe: is a dimension-scored panel worth paying for?", "eval_judges"),
    }),
    "bench": Lazy("Build benchmark datasets and run benchmarks (synth, subjects).", commands={
        "synth": Lazy("Render carousel-synth: one image per real label file, the labelled boxes as ground truth.",
                      "bench"),
        "subjects": Lazy("Measure crops against human outlines: person-cut, subject-cut, empty, covered, featured.",
                         "bench"),
    }),
    "serve": Lazy("Serve the carousel page (and, with --label, the label page) until interrupted.", "serve"),
}

app = typer.Typer(
    cls=lazy_group(COMMANDS),
    name="multicrop",
    help="Turn photos into carousels of distinct crops; evaluate crops and aesthetic judges.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

#: Top-level packages that only an extra installs (pyproject.toml), and that extra; pandas
#: comes with both `judges` and `eval`, so the judge-side commands name `judges`.
_EXTRA_OF = {
    "pandas": "eval", "scipy": "eval", "sklearn": "eval", "matplotlib": "eval",
    "openai": "judges", "pyarrow": "parquet", "smartcrop": "peers", "pyvips": "peers",
    "pillow_heif": "heif", "fastapi": "web", "uvicorn": "web", "multipart": "web",
    "fsspec": "batch", "ray": "ray",
}
_JUDGE_COMMANDS = ("judge", "judges", "store")
#: Commands whose second word is a subcommand (named in the message too).
_GROUP_NAMES = ("eval", "bench", "store", "judges", "saliency", "batch")


def missing_extra(exc: ModuleNotFoundError, args: list[str]) -> MissingExtraError | None:
    """The one-line error for a package an extra would install, or None if ``exc`` is not that."""
    top = (exc.name or "").split(".")[0]
    if top not in _EXTRA_OF:
        return None
    command = next((a for a in args if not a.startswith("-")), "")
    extra = "judges" if top == "pandas" and command in _JUDGE_COMMANDS else _EXTRA_OF[top]
    words = [a for a in args[:2] if not a.startswith("-")]
    where = " ".join(words if words and words[0] in _GROUP_NAMES else words[:1])
    return MissingExtraError.for_module(top, extra=extra, feature=f"`multicrop {where}`" if where else None)


def _version_callback(value: bool) -> None:
    if value:
        import multicrop

        typer.echo(f"multicrop {multicrop.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """multicrop command line."""


def _tolerant_streams() -> None:
    """File names with undecodable bytes (``\\udcff``) print escaped instead of failing the print."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # pragma: no cover - a closed or detached stream
                pass


def os_error_line(exc: OSError) -> str:
    """One line for an operating-system error the library let through (a name too long, a full disk...).

    Examples
    --------
    >>> os_error_line(OSError(36, "File name too long", "/tmp/" + "x" * 300))[:40]
    'File name too long: /tmp/xxxxxxxxxxxxxxx'

    A folder that could not be made because a file holds its name (``-o afile/out.csv``) says so:

    >>> import errno, tempfile
    >>> f = tempfile.NamedTemporaryFile()
    >>> os_error_line(FileExistsError(errno.EEXIST, "File exists", f.name)).endswith("is a file, not a folder")
    True
    """
    what = exc.strerror or type(exc).__name__
    name = exc.filename if exc.filename is not None else ""
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if isinstance(exc, (FileExistsError, NotADirectoryError)) and name:
        from ..io.save import nearest_existing  # an error path: the image stack may load now

        probe = nearest_existing(name)
        if probe.is_file():
            return f"cannot make a folder at {probe}: it is a file, not a folder"
    if name and len(str(name)) > 200:
        name = f"{str(name)[:120]}...{str(name)[-60:]} ({len(str(name))} characters)"
    return f"{what}: {name}" if name else what


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def _terminate_as_interrupt() -> None:
    """SIGTERM ends a command as Ctrl+C does: ``finally`` blocks run, worker pools are shut down and their
    semaphores released (no ``leaked semaphore`` warning, no child left), the manifest keeps what was done."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupted)


def run() -> int:
    """The ``multicrop`` script and ``python -m multicrop``: :func:`main` on the process's arguments, then exit.

    The process ends next, so the garbage collector is frozen as the command returns: the interpreter's last
    collection would walk every object the command made (about 25-35 ms of a 0.7 s ``multicrop crop``;
    docs/speed.md, "The exit").  Atexit handlers, module finalization and the streams' flush still run;
    only garbage in reference cycles is left to the operating system.  Programs call :func:`main`.
    """
    try:
        return main()
    finally:
        import gc

        gc.freeze()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; library errors become one line on stderr and exit code 1."""
    args = sys.argv[1:] if argv is None else list(argv)
    _tolerant_streams()
    set_command_line(["multicrop", *args])
    _terminate_as_interrupt()
    try:
        app(args=args, standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    except MulticropError as exc:
        typer.echo(f"multicrop: error: {exc}", err=True)
        return 1
    except OSError as exc:  # the system refused (name too long, disk full, permission): one line, no traceback
        typer.echo(f"multicrop: error: {os_error_line(exc)}", err=True)
        return 1
    except UnicodeError as exc:  # a file name whose bytes are not text in this locale
        typer.echo(f"multicrop: error: a file name or text is not valid in this encoding ({exc.reason})", err=True)
        return 1
    except ModuleNotFoundError as exc:  # an extra that is not installed: say which one
        err = missing_extra(exc, args)
        if err is None:
            raise
        typer.echo(f"multicrop: error: {err}", err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
