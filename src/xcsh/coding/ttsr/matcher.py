"""Matching streamed output against TTSR rules (agent-behaviour §12.2). Pure: no session, no I/O.

Each delta is appended to a buffer per stream (text, thinking, or one per tool call)
and every eligible rule's conditions are searched in the whole buffer. A rule is
eligible when its scope admits the stream, its ``globs`` admit the tool call's paths,
and the repeat policy lets it fire again.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from xcsh.coding.globs import glob_to_regex as compile_glob
from xcsh.coding.ttsr.rules import Rule

logger = logging.getLogger(__name__)

Source = Literal["text", "thinking", "tool"]
_TOOL_SCOPE = re.compile(
    r"^(?:(?P<prefix>tool)(?::(?P<tool>[a-z0-9_-]+))?|(?P<bare>[a-z0-9_-]+))(?:\((?P<path>[^)]+)\))?$", re.I
)


def compile_condition(pattern: str) -> re.Pattern[str]:
    """A JavaScript-style regex as a Python one (named groups ``(?<n>…)`` → ``(?P<n>…)``)."""
    return re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", pattern))


@dataclass(slots=True)
class _ToolScope:
    tool: str | None
    glob: re.Pattern[str] | None


@dataclass(slots=True)
class _Scope:
    text: bool = False
    thinking: bool = False
    any_tool: bool = False
    tools: list[_ToolScope] = field(default_factory=list)

    @property
    def reachable(self) -> bool:
        return self.text or self.thinking or self.any_tool or bool(self.tools)


def _scope_of(rule: Rule) -> _Scope:
    tokens = rule.get("scope") or []
    if not tokens:
        return _Scope(text=True, any_tool=True)
    scope = _Scope()
    for raw in tokens:
        token = raw.strip()
        lowered = token.lower()
        if not token:
            continue
        if lowered == "text":
            scope.text = True
        elif lowered == "thinking":
            scope.thinking = True
        elif lowered in ("tool", "toolcall"):
            scope.any_tool = True
        else:
            match = _TOOL_SCOPE.match(token)
            if match is None:
                logger.warning("TTSR rule %s: invalid scope token %r ignored", rule["name"], raw)
                continue
            tool = match.group("tool") or (None if match.group("prefix") else match.group("bare"))
            path = (match.group("path") or "").strip()
            if tool is None and not path:
                scope.any_tool = True
                continue
            scope.tools.append(
                _ToolScope(tool.lower() if tool else None, compile_glob(path) if path else None)
            )
    return scope


def _glob_matches(glob: re.Pattern[str], paths: list[str]) -> bool:
    for path in paths:
        normalized = path.replace("\\", "/")
        if glob.match(normalized):
            return True
        base = normalized.rsplit("/", 1)[-1]
        if base != normalized and glob.match(base):
            return True
    return False


@dataclass(slots=True, kw_only=True)
class MatchContext:
    """Where a delta comes from: its stream kind, and for tool calls the tool and its paths."""

    source: Source
    tool_name: str | None = None
    file_paths: list[str] = field(default_factory=list)
    stream_key: str | None = None

    @property
    def buffer_key(self) -> str:
        if self.stream_key:
            return self.stream_key
        if self.source != "tool":
            return self.source
        return f"tool:{self.tool_name.lower()}" if self.tool_name else "tool"


@dataclass(slots=True)
class _Entry:
    rule: Rule
    conditions: list[re.Pattern[str]]
    scope: _Scope
    globs: list[re.Pattern[str]]


class TtsrMatcher:
    """Rules, stream buffers and injection records of one session.

    ``repeat_mode`` ``once``: an injected rule never fires again; ``after-gap``: it may
    fire again once ``repeat_gap`` more turns have ended (see :meth:`count_turn`).
    """

    def __init__(self, rules: list[Rule], *, repeat_mode: str = "once", repeat_gap: int = 10) -> None:
        self.repeat_mode = repeat_mode
        self.repeat_gap = repeat_gap
        self._entries: dict[str, _Entry] = {}
        self._buffers: dict[str, str] = {}
        self._injected: dict[str, int] = {}
        self.turns = 0
        for rule in rules:
            self._add(rule)

    def _add(self, rule: Rule) -> None:
        if rule["name"] in self._entries:
            return
        conditions = []
        for pattern in rule.get("condition") or []:
            try:
                conditions.append(compile_condition(pattern))
            except re.error as exc:
                logger.warning("TTSR rule %s: invalid condition %r skipped (%s)", rule["name"], pattern, exc)
        if not conditions:
            return
        scope = _scope_of(rule)
        if not scope.reachable:
            logger.warning("TTSR rule %s: its scope excludes every stream", rule["name"])
            return
        globs = [compile_glob(g.strip()) for g in rule.get("globs") or [] if g.strip()]
        self._entries[rule["name"]] = _Entry(rule, conditions, scope, globs)

    @property
    def has_rules(self) -> bool:
        return bool(self._entries)

    @property
    def rules(self) -> list[Rule]:
        return [entry.rule for entry in self._entries.values()]

    def can_trigger(self, name: str) -> bool:
        if name not in self._injected:
            return True
        if self.repeat_mode == "once":
            return False
        return self.turns - self._injected[name] >= self.repeat_gap

    def check(self, delta: str, context: MatchContext) -> list[Rule]:
        """Append ``delta`` to its stream's buffer; return the rules whose conditions now match."""
        key = context.buffer_key
        buffer = self._buffers.get(key, "") + delta
        self._buffers[key] = buffer
        return [
            entry.rule
            for name, entry in self._entries.items()
            if self.can_trigger(name)
            and self._in_scope(entry, context)
            and (not entry.globs or any(_glob_matches(g, context.file_paths) for g in entry.globs))
            and any(c.search(buffer) for c in entry.conditions)
        ]

    @staticmethod
    def _in_scope(entry: _Entry, context: MatchContext) -> bool:
        if context.source == "text":
            return entry.scope.text
        if context.source == "thinking":
            return entry.scope.thinking
        if entry.scope.any_tool:
            return True
        tool = (context.tool_name or "").strip().lower()
        return any(
            (scope.tool is None or scope.tool == tool)
            and (scope.glob is None or _glob_matches(scope.glob, context.file_paths))
            for scope in entry.scope.tools
        )

    def reset_buffers(self) -> None:
        self._buffers.clear()

    def count_turn(self) -> None:
        self.turns += 1

    def mark_injected(self, names: list[str]) -> None:
        for name in names:
            if name.strip():
                self._injected[name.strip()] = self.turns

    def restore_injected(self, names: list[str]) -> None:
        """Rules injected earlier in the session (from ``ttsr_injection`` entries)."""
        for name in names:
            self._injected[name] = 0

    def forget_injections(self) -> None:
        self._injected.clear()


def should_interrupt(rules: list[Rule], source: Source, default_mode: str) -> bool:
    """Whether any matched rule's interrupt mode (or the default) applies to ``source``."""
    for rule in rules:
        mode = rule.get("interruptMode") or default_mode
        if mode == "always":
            return True
        if mode == "prose-only" and source in ("text", "thinking"):
            return True
        if mode == "tool-only" and source == "tool":
            return True
    return False


def path_candidates(args: Any, cwd: str) -> list[str]:
    """Relative and absolute forms of every ``path``/``*path``/``paths``/``*paths`` argument."""
    if not isinstance(args, dict):
        return []
    raw: list[str] = []
    for key, value in args.items():
        lowered = str(key).lower()
        if isinstance(value, str) and lowered.endswith("path"):
            raw.append(value)
        elif isinstance(value, list) and lowered.endswith("paths"):
            raw.extend(v for v in value if isinstance(v, str))
    out: list[str] = []
    for value in raw:
        trimmed = value.strip()
        if not trimmed:
            continue
        normalized = trimmed.replace("\\", "/")
        candidates = [normalized]
        if normalized.startswith("./"):
            candidates.append(normalized[2:])
        absolute = os.path.normpath(trimmed if os.path.isabs(trimmed) else os.path.join(cwd, trimmed))
        candidates.append(absolute.replace("\\", "/"))
        relative = PurePosixPath(os.path.relpath(absolute, cwd).replace("\\", "/")).as_posix()
        if relative not in (".", "..") and not relative.startswith("../"):
            candidates.append(relative)
        out.extend(c for c in candidates if c not in out)
    return out
