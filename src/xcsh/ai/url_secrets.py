"""Where a URL holds credentials (a ``models.yml`` ``baseUrl``), so they can be redacted.

Plain string work (no import): frames that show a model import this for a URL that has a
``@`` or a ``?``.

What counts (docs/security.md): the whole userinfo (``https://USER@host``, ``https://USER:PASS@host``
— a token is often given as the user name alone), and the value of every query parameter
(``?code=…``, ``&sig=…``, a bare ``?TOKEN``) except those named in :data:`HARMLESS_QUERY_NAMES`,
which select an API rather than prove who calls it. Names are compared without case, ``-`` or ``_``.
"""

from __future__ import annotations

HARMLESS_QUERY_NAMES = frozenset({"apiversion", "version", "alt", "beta"})
"""Query parameter names whose values are shown (``api-version``, ``api_version``, ``apiVersion``,
``version``, ``alt``, ``beta``), normalised: lower case without ``-`` and ``_``."""


def _harmless(name: str) -> bool:
    return name.lower().replace("-", "").replace("_", "") in HARMLESS_QUERY_NAMES


def url_secrets(url: str) -> list[tuple[int, int]]:
    """Spans of ``url`` that may hold credentials: the whole userinfo before the host's ``@``,
    and every non-empty query value (a bare part ``?TOKEN`` as a whole) whose parameter name is
    not in :data:`HARMLESS_QUERY_NAMES`."""
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
        if at_sign > start:
            spans.append((start, at_sign))
    query = url.find("?")
    if query >= 0:
        fragment = url.find("#", query)
        stop = fragment if fragment >= 0 else len(url)
        position = query + 1
        for part in url[query + 1 : stop].split("&"):
            name, equals, value = part.partition("=")
            if not equals:
                if part:
                    spans.append((position, position + len(part)))  # a bare value: may be a token
            elif value and not _harmless(name):
                spans.append((position + len(name) + 1, position + len(part)))
            position += len(part) + 1
    return spans


def redact_url(url: str) -> str:
    """``url`` with every :func:`url_secrets` span replaced by ``[redacted]``."""
    for start, end in sorted(url_secrets(url), reverse=True):
        url = url[:start] + "[redacted]" + url[end:]
    return url
