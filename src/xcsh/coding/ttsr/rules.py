"""Rule files: the ``Rule`` shape ``ttsr_triggered`` carries, built from a rule file's text.

A rule is a ``*.md``/``*.mdc`` file; its name is the file name without extension and
the first definition of a name wins. Where rules are looked up is the discovery's
business (:mod:`xcsh.coding.discovery`, docs/context.md). A rule with a valid
``condition`` (legacy ``ttsr_trigger``/``ttsrTrigger``) is a TTSR rule (agent-behaviour §12.1).
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes several times as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

import logging
import re
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from xcsh.coding.discovery.frontmatter import parse_front_matter

__all__ = ["Rule", "RuleSource", "build_rule", "parse_front_matter"]

logger = logging.getLogger(__name__)

INTERRUPT_MODES = ("never", "prose-only", "tool-only", "always")
# condition tokens that look like file globs become edit/write scopes
GLOB_SCOPE_TOOLS = ("edit", "write")


class RuleSource(TypedDict):
    provider: str
    providerName: str
    path: str
    level: Literal["user", "project", "native"]


class Rule(TypedDict):
    """A rule as emitted in ``ttsr_triggered`` (rpc-protocol §6.1)."""

    name: str
    path: str
    content: str
    globs: NotRequired[list[str]]
    alwaysApply: bool
    description: NotRequired[str]
    condition: NotRequired[list[str]]
    scope: NotRequired[list[str]]
    interruptMode: NotRequired[str]
    _source: RuleSource


def _tokens(value: Any) -> list[str] | None:
    """A string or list of strings, trimmed, without empties or duplicates."""
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, list):
        items = [v for v in value if isinstance(v, str)]
    else:
        return None
    out: list[str] = []
    for item in (v.strip() for v in items):
        if item and item not in out:
            out.append(item)
    return out or None


def _split_scope(value: str) -> list[str]:
    """Split a scope string on commas that are not inside (), [], {} or quotes."""
    tokens: list[str] = []
    current = ""
    depth = 0
    quote: str | None = None
    for char in value:
        if quote:
            current += char
            if char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            if current.strip():
                tokens.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        tokens.append(current.strip())
    return tokens


def looks_like_glob(token: str) -> bool:
    """A condition token such as ``*.rs`` or ``src/**/*.ts`` (a file glob, not a regex)."""
    token = token.strip()
    if not token or re.search(r"[\\^$+|()]", token) or not re.search(r"[?*\[\]{}]", token):
        return False
    return "/" in token or re.fullmatch(r"\*\.[^\s/]+", token) is not None


def parse_condition_and_scope(front: dict[str, Any]) -> tuple[list[str] | None, list[str] | None]:
    """The rule's regex conditions and scope tokens; glob-like conditions become tool scopes."""
    raw = front.get("condition")
    if raw is None:
        raw = front.get("ttsr_trigger", front.get("ttsrTrigger"))
    scope_tokens = _tokens(front.get("scope")) or []
    scope = [t for token in scope_tokens for t in _split_scope(token)]
    conditions: list[str] = []
    inferred: list[str] = []
    for token in _tokens(raw) or []:
        if looks_like_glob(token):
            inferred += [f"tool:{tool}({token})" for tool in GLOB_SCOPE_TOOLS]
        else:
            conditions.append(token)
    if not conditions and inferred:
        conditions.append(".*")
    scope += inferred
    return list(dict.fromkeys(conditions)) or None, list(dict.fromkeys(scope)) or None


def build_rule(name: str, text: str, path: Path, source: RuleSource) -> Rule:
    """The :class:`Rule` for a rule file's ``text`` (``name`` without extension)."""
    front, body = parse_front_matter(text)
    condition, scope = parse_condition_and_scope(front)
    rule: dict[str, Any] = {"name": name, "path": str(path), "content": body}
    globs = front.get("globs")
    if isinstance(globs, list):
        rule["globs"] = [g for g in globs if isinstance(g, str)]
    elif isinstance(globs, str):
        rule["globs"] = [globs]
    rule["alwaysApply"] = front.get("alwaysApply") is True
    if isinstance(front.get("description"), str):
        rule["description"] = front["description"]
    if condition:
        rule["condition"] = condition
    if scope:
        rule["scope"] = scope
    if front.get("interruptMode") in INTERRUPT_MODES:
        rule["interruptMode"] = front["interruptMode"]
    rule["_source"] = source
    return rule  # type: ignore[return-value]  # built key by key in the wire order
