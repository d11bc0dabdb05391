"""Keeping the credentials xcsh reads out of tool processes and out of frames.

* **Tool processes** (the ``bash`` tool, user ``bash``, anything else a tool launches)
  get :func:`tool_environment`: the process environment without the provider
  credentials xcsh itself reads — every built-in provider's key variables
  (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, …) and the variables ``models.yml``
  names as an ``apiKey``. The user setting ``tools.passProviderKeys: true`` passes
  them through (a project's ``.xcsh/config.yml`` cannot turn it on).
* **Frames** never carry the values of ``models.yml`` ``headers`` (they often hold
  tokens): :func:`public_model` is the copy of a model that hosts are shown.

The withheld names are process-wide (one process serves one session; the
environment is process-wide too). :func:`configure` is called at start-up.
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from xcsh.ai.catalog import builtin_providers

if TYPE_CHECKING:
    from xcsh.ai.types import Model

REDACTED = "[redacted]"
PASS_SETTING = "tools.passProviderKeys"

_lock = threading.Lock()
_extra_names: set[str] = set()
_pass_through = False


def builtin_key_names() -> frozenset[str]:
    """Every environment variable a built-in provider reads its key from."""
    return frozenset(name for info in builtin_providers() for name in info.env_vars)


def configure(*, names: Iterable[str] = (), pass_through: bool = False) -> None:
    """Withhold ``names`` too (``models.yml`` key variables), or pass every credential through."""
    global _pass_through
    with _lock:
        _extra_names.update(names)
        _pass_through = pass_through


def withheld_names() -> frozenset[str]:
    """The variable names tool processes do not get (empty when passing through)."""
    with _lock:
        if _pass_through:
            return frozenset()
        return builtin_key_names() | _extra_names


def tool_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) without the withheld credentials."""
    source = os.environ if base is None else base
    hidden = withheld_names()
    return {name: value for name, value in source.items() if name not in hidden}


def public_model(model: Model) -> Model:
    """A copy of ``model`` for frames and listings: header values and a password in
    ``baseUrl`` (``https://user:secret@host``) replaced by ``[redacted]``."""
    headers = model.get("headers")
    url = model.get("baseUrl", "")
    url_shown = _redact_url(url)
    if not headers and url_shown == url:
        return model
    shown = copy.copy(model)
    if headers:
        shown["headers"] = dict.fromkeys(headers, REDACTED)
    shown["baseUrl"] = url_shown
    return shown


@functools.lru_cache(maxsize=64)
def _redact_url(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:{REDACTED}@{host}"))
