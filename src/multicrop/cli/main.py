"""The ``multicrop`` command: assembles the command groups.

Each group lives in its own module and exposes ``register(app)``, which adds
its commands to the Typer app it is given; this file only wires them
together and turns library errors into one clear line and a non-zero exit.
The group modules import the library inside their commands, so
``multicrop --help`` loads no image, model or judge code.
"""

from __future__ import annotations

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
bench_app = typer.Typer(help="Build benchmark datasets.", no_args_is_help=True)
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


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; library errors become one line on stderr and exit code 1."""
    args = sys.argv[1:] if argv is None else list(argv)
    judge.set_command_line(["multicrop", *args])
    try:
        app(args=args, standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    except MulticropError as exc:
        typer.echo(f"multicrop: error: {exc}", err=True)
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
