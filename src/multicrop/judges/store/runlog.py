"""The run log: one ``runs`` row per ``multicrop judge`` (or library) run.

A run records the tool version, the command line, the panel (with any
credentials removed from endpoint URLs), who ran it, when it started and
ended, and its counts and spend; every call it made points to it.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...serialize import Serializable

__all__ = ["RunInfo", "RUN_COLUMNS", "new_owner", "owner_is_gone", "strip_userinfo", "redact"]

#: Columns of the ``runs`` table, in :class:`RunInfo` field order.
RUN_COLUMNS = ("id", "tool_version", "command", "panel_json", "owner", "started_utc", "ended_utc", "status",
               "planned", "already_done", "performed", "parse_failures", "failed", "skipped", "cost_usd")


@dataclass(frozen=True)
class RunInfo(Serializable):
    """One row of the ``runs`` table (``status``: running, finished, failed, interrupted)."""

    id: int
    tool_version: str
    command: str
    panel_json: str
    owner: str
    started_utc: str
    ended_utc: str | None
    status: str
    planned: int | None
    already_done: int | None
    performed: int | None
    parse_failures: int | None
    failed: int | None
    skipped: int | None
    cost_usd: float | None


def new_owner() -> str:
    """A name for this process in claims and runs: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def owner_is_gone(owner: str) -> bool:
    """True when ``owner`` is a process of this host that no longer exists.

    Owners on other hosts (or in an unknown form) are never declared gone:
    their claims are taken over only when they expire.
    """
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (keys and logs never hold secrets).

    Examples
    --------
    >>> strip_userinfo("http://user:secret@host:8000/v1")
    'http://host:8000/v1'
    >>> strip_userinfo("https://api.openai.com/v1")
    'https://api.openai.com/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def redact(value: Any) -> Any:
    """``value`` with user-info removed from every string that looks like a URL (nested dicts and lists)."""
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    if isinstance(value, str) and "://" in value and "@" in value:
        head, eq, url = value.partition("=")  # --base-url=http://user:secret@host
        if eq and "://" in url and "://" not in head:
            return head + eq + strip_userinfo(url)
        return strip_userinfo(value)
    return value
