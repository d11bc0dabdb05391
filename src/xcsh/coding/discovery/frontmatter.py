"""YAML front matter of markdown files (rules, skills, commands, templates)."""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xcsh.coding.yaml_cache import TextCache

logger = logging.getLogger(__name__)


# where front matter is parsed through while a session starts (see use_cache); a context
# variable, so sessions started at once on several threads each keep their own agent dir's cache
_current: ContextVar[TextCache | None] = ContextVar("xcsh_front_matter_cache", default=None)


def use_cache(cache: TextCache | None) -> None:
    """Parse front matter through ``cache`` from now on, in this thread or task (None: with
    PyYAML every time).

    :func:`xcsh.coding.factory.create_session` sets the agent dir's cache while it discovers,
    so a start that finds only known front matter does not import ``yaml``.
    """
    _current.set(cache)


class _InvalidYaml(Exception):
    pass


def _safe_load(text: str) -> Any:
    import yaml  # only for front matter not parsed before: not paid by every start-up

    from xcsh.coding.yaml_load import safe_load

    try:
        return safe_load(text)
    except yaml.YAMLError as exc:
        raise _InvalidYaml from exc


def _camel(key: str) -> str:
    return re.sub(r"-([a-z])", lambda m: m.group(1).upper(), key)


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split ``---``-delimited YAML front matter from the body (body trimmed, keys camel-cased).

    Invalid YAML falls back to plain ``key: value`` lines. A leading UTF-8 byte order mark is
    ignored.
    """
    text = text.removeprefix("\ufeff")
    normalized = re.sub(r"<!--.*?-->", "", text.replace("\r\n", "\n").replace("\r", "\n"), flags=re.S)
    if not normalized.startswith("---"):
        return {}, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return {}, normalized
    metadata = normalized[4:end] if normalized[3:4] == "\n" else normalized[3:end]
    body = normalized[end + 4 :].strip()
    source = metadata.replace("\t", "  ")
    cache = _current.get()
    try:
        loaded = cache.parse(source, _safe_load) if cache is not None else _safe_load(source)
    except _InvalidYaml:
        logger.warning("invalid YAML front matter; reading plain key: value lines")
        loaded = {}
        for line in metadata.split("\n"):
            match = re.match(r"^([\w-]+):\s*(.*)$", line)
            if match:
                loaded[match.group(1)] = match.group(2).strip()
    if not isinstance(loaded, dict):
        loaded = {}
    return {_camel(str(k)): v for k, v in loaded.items()}, body
