"""YAML front matter of markdown files (rules, skills, commands, templates)."""

from __future__ import annotations

import logging
import re
from typing import Any

logger = logging.getLogger(__name__)


def _camel(key: str) -> str:
    return re.sub(r"-([a-z])", lambda m: m.group(1).upper(), key)


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split ``---``-delimited YAML front matter from the body (body trimmed, keys camel-cased).

    Invalid YAML falls back to plain ``key: value`` lines.
    """
    normalized = re.sub(r"<!--.*?-->", "", text.replace("\r\n", "\n").replace("\r", "\n"), flags=re.S)
    if not normalized.startswith("---"):
        return {}, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return {}, normalized
    metadata = normalized[4:end] if normalized[3:4] == "\n" else normalized[3:end]
    body = normalized[end + 4 :].strip()
    import yaml  # only for a file with front matter: not paid by every start-up

    try:
        loaded = yaml.safe_load(metadata.replace("\t", "  "))
    except yaml.YAMLError:
        logger.warning("invalid YAML front matter; reading plain key: value lines")
        loaded = {}
        for line in metadata.split("\n"):
            match = re.match(r"^([\w-]+):\s*(.*)$", line)
            if match:
                loaded[match.group(1)] = match.group(2).strip()
    if not isinstance(loaded, dict):
        loaded = {}
    return {_camel(str(k)): v for k, v in loaded.items()}, body
