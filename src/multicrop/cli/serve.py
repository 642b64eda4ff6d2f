"""``multicrop serve``: the web page for making carousels and labelling them (``web`` extra)."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from ..ratios import DEFAULT_RATIOS

__all__ = ["register", "serve"]

#: The smallest ``--max-upload-mb`` (MB); the largest is any finite number.
MIN_UPLOAD_MB = 0.01


def _finite_mb(value: float) -> float:
    """``--max-upload-mb``: refuse NaN and infinity, which pass Click's range check.

    Examples
    --------
    >>> _finite_mb(2.5)
    2.5
    """
    if not math.isfinite(value):
        raise typer.BadParameter(f"{value:g} is not a finite number of MB >= {MIN_UPLOAD_MB:g}.")
    return value


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback unless you say otherwise)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    label: Path | None = typer.Option(
        None, "--label", help="Label mode: a folder of photos (or a Carousel root with dataset/) to label."),
    label_ratios: str = typer.Option(DEFAULT_RATIOS, "--label-ratios", help="Ratios label mode allows."),
    ratios: str = typer.Option(
        "instagram", "--ratios", "-r",
        help="The ratio setting the page starts with: a preset (instagram: one of 4:5, 1:1, 1.91:1 for all "
             "slides; carousel; square; ...) or ratios such as 4:5 or 2:3,3:2."),
    max_upload_mb: float = typer.Option(50.0, "--max-upload-mb", min=MIN_UPLOAD_MB, callback=_finite_mb,
                                        help="Largest upload accepted, in MB."),
    saliency: str | None = typer.Option(None, "--saliency", help="Saliency backend (default: CropConfig's)."),
    faces: bool = typer.Option(True, "--faces/--no-faces", help="Detect faces and keep them whole."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="Threads for the saliency model."),
    panel: Path | None = typer.Option(
        None, "--panel", help="Judge panel TOML for the page's Judge scores (default: the offline measured judge)."),
) -> None:
    """Serve the carousel page (and, with --label, the label page) until interrupted."""
    from ..crop.config import CropConfig
    from ..errors import InvalidParameterError
    from ..ratios import parse_ratio_spec
    from ..web import create_app

    try:
        parse_ratio_spec(ratios)
    except InvalidParameterError as exc:
        raise typer.BadParameter(str(exc), param_hint="--ratios") from None

    try:
        import uvicorn
    except ImportError:
        from ..errors import MissingExtraError

        raise MissingExtraError.for_module("uvicorn", extra="web", feature="`multicrop serve`") from None
    from ..judges.panel import load_panel

    judges = load_panel(panel) if panel is not None else None
    base = CropConfig(faces=faces, **({"saliency": saliency} if saliency else {}))
    app = create_app(config=base, ratios=ratios, label_dir=label, label_ratios=label_ratios,
                     max_upload_mb=max_upload_mb, threads=threads, panel=judges)
    skipped = app.state.labels.skipped if app.state.labels is not None else {}
    for name, why in skipped.items():
        typer.echo(f"multicrop serve: warning: {name!r} is not offered for labelling: {why}", err=True)
    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    typer.echo(f"multicrop serve: {'label mode on ' + str(label) + ', ' if label else ''}open {where} "
               "(Ctrl+C to stop)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the root ``app``."""
    app.command("serve")(serve)
