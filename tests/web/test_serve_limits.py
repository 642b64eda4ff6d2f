"""``multicrop serve``: the upload limit and the port are checked before the server starts."""

from __future__ import annotations

import math

import pytest

from multicrop.cli import main as cli_main
from multicrop.errors import InvalidParameterError


@pytest.fixture
def no_server(monkeypatch):
    """uvicorn.run replaced: a command that gets that far records its app and port instead of serving."""
    import uvicorn

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: seen.update(app=app, port=port))
    yield seen
    if "app" in seen:
        seen["app"].state.store.close()


@pytest.mark.parametrize("value", ["nan", "inf"])  # Click's range check lets both through (-1, -inf it refuses)
def test_max_upload_mb_that_is_not_finite_is_a_usage_error(no_server, capsys, value):
    rc = cli_main.main(["serve", "--no-faces", f"--max-upload-mb={value}"])
    err = capsys.readouterr().err
    assert rc == 2 and f"Invalid value for '--max-upload-mb': {value} is not a finite number of MB >= 0.01." in err
    assert "Traceback" not in err and no_server == {}  # refused before an app was built


def test_port_zero_is_refused_rather_than_printed_as_the_address(no_server, capsys):
    rc = cli_main.main(["serve", "--no-faces", "--port", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and "Invalid value for '--port': 0 is not in the range 1<=x<=65535" in err, err
    assert "http://127.0.0.1:0/" not in err and no_server == {}
    rc = cli_main.main(["serve", "--no-faces", "--saliency", "spectral", "--port", "1", "--max-upload-mb", "0.5"])
    assert rc == 0 and "open http://127.0.0.1:1/" in capsys.readouterr().err and no_server["port"] == 1


@pytest.mark.parametrize("value", [math.nan, math.inf, 0, -3.0, True, "50"])
def test_create_app_refuses_a_limit_that_is_not_a_positive_finite_number(value):
    from multicrop.web import create_app

    with pytest.raises(InvalidParameterError, match=r"^max_upload_mb must be a finite number of MB > 0, got "):
        create_app(max_upload_mb=value, check=False)
