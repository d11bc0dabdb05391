"""Where a URL holds credentials (a ``models.yml`` ``baseUrl``), so they can be redacted.

Only :mod:`re`: frames that show a model import this for a URL that has a ``@`` or a ``?``.
"""

from __future__ import annotations

import re

_KEY_LIKE = re.compile(r"key|token|secret|passw|auth|sig|credential|session", re.IGNORECASE)


def url_secrets(url: str) -> list[tuple[int, int]]:
    """Spans of ``url`` that hold credentials: the userinfo password (``https://u:PASS@host``)
    and the values of query parameters whose name looks like a key (``?api-key=…``,
    ``&access_token=…``, ``sig``, ``secret``, ``password``, ``auth`` …)."""
    spans: list[tuple[int, int]] = []
    scheme_end = url.find("://")
    if scheme_end >= 0:
        start = scheme_end + 3
        end = len(url)
        for mark in "/?#":
            at = url.find(mark, start)
            if at >= 0:
                end = min(end, at)
        at_sign = url.rfind("@", start, end)
        colon = url.find(":", start, at_sign) if at_sign >= 0 else -1
        if colon >= 0:
            spans.append((colon + 1, at_sign))
    query = url.find("?")
    if query >= 0:
        fragment = url.find("#", query)
        stop = fragment if fragment >= 0 else len(url)
        position = query + 1
        for part in url[query + 1 : stop].split("&"):
            name, equals, _ = part.partition("=")
            if equals and _KEY_LIKE.search(name) and len(part) > len(name) + 1:
                spans.append((position + len(name) + 1, position + len(part)))
            position += len(part) + 1
    return spans


def redact_url(url: str) -> str:
    """``url`` with every :func:`url_secrets` span replaced by ``[redacted]``."""
    for start, end in sorted(url_secrets(url), reverse=True):
        url = url[:start] + "[redacted]" + url[end:]
    return url
