"""``multicrop example`` and ``multicrop saliency list``: what ships with multicrop."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .lazy import plain_app
from .options import HELP_DEFAULTS

__all__ = ["register"]

saliency_app = plain_app(help="Saliency backends.", no_args_is_help=True)


@saliency_app.command("list")
def saliency_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the registered saliency methods."""
    from ..saliency import SALIENCY

    rows = [
        {"name": b.name, "version": b.version, "needs_weights": b.needs_weights, "description": b.description}
        for _, b in SALIENCY.items()
    ]
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    for r in rows:
        typer.echo(f"{r['name']:<10} {r['version']:<10} {r['description']}")


def example(
    path: Path = typer.Argument(Path("example.jpg"), help="Where to write the example photo."),
    width: int = typer.Option(HELP_DEFAULTS["example_width"], "--width", "-w", min=300, help="Width in pixels."),
    height: int = typer.Option(HELP_DEFAULTS["example_height"], "--height", "-H", min=100, help="Height in pixels."),
) -> None:
    """Write a multi-subject example photo built from scikit-image's sample images.

    An existing file is never replaced: one that holds this same example is left as it is, any other is refused.
    """
    import tempfile

    from ..datasets.examples import example_photo
    from ..errors import InvalidParameterError

    if path.is_dir():
        raise InvalidParameterError(f"{path} is a folder: give the photo's file name, e.g. {path / 'example.jpg'}")
    if path.exists() or path.is_symlink():
        with tempfile.TemporaryDirectory(prefix="multicrop-example-") as tmp:
            fresh = example_photo(Path(tmp) / f"example{path.suffix}", width=width, height=height)
            same = path.is_file() and path.read_bytes() == fresh.read_bytes()
        if not same:
            raise InvalidParameterError(f"{path} exists and is not this example photo; multicrop example never "
                                        "replaces a file: give another path or remove it first")
        typer.echo(str(path))
        return
    typer.echo(str(example_photo(path, width=width, height=height)))


def register(app: typer.Typer) -> None:
    """Add ``example`` and the ``saliency`` group to ``app``."""
    app.command("example")(example)
    app.add_typer(saliency_app, name="saliency")
