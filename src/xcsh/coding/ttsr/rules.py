"""Rule files: discovery, YAML front matter and the ``Rule`` shape ``ttsr_triggered`` carries.

A rule is a ``*.md``/``*.mdc`` file; its name is the file name without extension and
the first definition of a name wins. Looked up, in this order: ``<project>/.xcsh/rules``,
``<agent dir>/rules``, then the project's ``.agent/rules``, ``.agents/rules``,
``.cursor/rules`` and ``.windsurf/rules``. A rule with a valid ``condition`` (legacy
``ttsr_trigger``/``ttsrTrigger``) is a TTSR rule (agent-behaviour §12.1).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import yaml

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


# (provider id, display name, directory relative to its root, level); roots: "project" = cwd,
# "agent" = the agent dir
_LOCATIONS: tuple[tuple[str, str, str, Path, Literal["user", "project"]], ...] = (
    ("native", "xcsh", "project", Path(".xcsh") / "rules", "project"),
    ("native", "xcsh", "agent", Path("rules"), "user"),
    ("agents", "Agents (standard)", "project", Path(".agent") / "rules", "project"),
    ("agents", "Agents (standard)", "project", Path(".agents") / "rules", "project"),
    ("cursor", "Cursor", "project", Path(".cursor") / "rules", "project"),
    ("windsurf", "Windsurf", "project", Path(".windsurf") / "rules", "project"),
)


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


def discover_rules(cwd: Path, agent_dir: Path) -> list[Rule]:
    """Every rule file in the known locations, first definition of a name winning."""
    rules: list[Rule] = []
    seen: set[str] = set()
    for provider, display, root, relative, level in _LOCATIONS:
        directory = (cwd if root == "project" else agent_dir) / relative
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir(), key=lambda p: p.name):
            if not path.is_file() or path.suffix not in (".md", ".mdc"):
                continue
            name = path.stem
            if name in seen:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                logger.warning("cannot read rule file %s", path)
                continue
            seen.add(name)
            source: RuleSource = {
                "provider": provider,
                "providerName": display,
                "path": str(path.resolve()),
                "level": level,
            }
            rules.append(build_rule(name, text, path.resolve(), source))
    return rules
