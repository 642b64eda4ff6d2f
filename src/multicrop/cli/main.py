"""The ``multicrop`` command: assembles the command groups.

Each group lives in its own module and exposes ``register(app)``, which adds
its commands to the Typer app it is given; this file only wires them
together and turns library errors into one clear line and a non-zero exit.
The group modules import the library inside their commands, so
``multicrop --help`` loads no image, model or judge code.
"""

from __future__ import annotations

import os
import sys

import typer

from ..errors import MissingExtraError, MulticropError
from . import batch, bench, crop, eval_carousel, eval_judges, judge, serve

app = typer.Typer(
    name="multicrop",
    help="Turn photos into carousels of distinct crops; evaluate crops and aesthetic judges.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
eval_app = typer.Typer(help="Evaluate cropping methods and aesthetic judges.", no_args_is_help=True)
bench_app = typer.Typer(help="Build benchmark datasets and run benchmarks (synth, subjects).", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
app.add_typer(bench_app, name="bench")

# (module, app it attaches to), in the order the commands are listed.
_GROUPS = [
    (crop, app),            # multicrop crop, multicrop saliency ...
    (judge, app),           # multicrop judge, multicrop judges ..., multicrop store ...
    (eval_carousel, eval_app),
    (bench, bench_app),
    (eval_judges, eval_app),
    (serve, app),           # multicrop serve
    (batch, app),           # multicrop batch crop|judge
]

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


for _module, _target in _GROUPS:
    _module.register(_target)


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
    """
    what = exc.strerror or type(exc).__name__
    name = exc.filename if exc.filename is not None else ""
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if name and len(str(name)) > 200:
        name = f"{str(name)[:120]}...{str(name)[-60:]} ({len(str(name))} characters)"
    return f"{what}: {name}" if name else what


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; library errors become one line on stderr and exit code 1."""
    args = sys.argv[1:] if argv is None else list(argv)
    _tolerant_streams()
    judge.set_command_line(["multicrop", *args])
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
    sys.exit(main())
