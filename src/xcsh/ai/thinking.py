"""Thinking levels against a model: supported efforts, clamping, cycling (agent-behaviour §9.3).

A model's supported efforts are its ``thinking.minLevel..maxLevel`` range intersected with
the rules known for its family (GPT-5.2+, Gemini 3, Claude 4.6+). A reasoning model
without ``thinking`` metadata gets a range inferred from its family or, failing that,
from its wire API.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xcsh.ai.patterns import LazyPattern

if TYPE_CHECKING:  # only annotations name the wire types (docs/performance.md, "Sixth session: start-up")
    from xcsh.ai.types import Model, ModelThinking, ThinkingLevel

THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")
EFFORT_LEVELS: tuple[ThinkingLevel, ...] = ("minimal", "low", "medium", "high", "xhigh")

_MINIMAL_TO_HIGH: tuple[ThinkingLevel, ...] = ("minimal", "low", "medium", "high")
_MINIMAL_TO_XHIGH: tuple[ThinkingLevel, ...] = ("minimal", "low", "medium", "high", "xhigh")
_LOW_TO_HIGH: tuple[ThinkingLevel, ...] = ("low", "medium", "high")
_LOW_TO_XHIGH: tuple[ThinkingLevel, ...] = ("low", "medium", "high", "xhigh")

_GEMINI_RE = LazyPattern(r"gemini-(\d+(?:\.\d+){0,2})-(pro|flash)\b")
_CLAUDE_RE = LazyPattern(r"claude-(opus|sonnet)-(\d{1,2}(?:[.-]\d{1,2}){0,2})\b")
_GPT_RE = LazyPattern(
    r"gpt-(\d+(?:\.\d+){0,2})(?:-(codex-spark|codex-mini|codex-max|codex|mini|max|nano))?\b"
)
_GOOGLE_APIS = ("google-generative-ai", "google-gemini-cli", "google-vertex")
_ANTHROPIC_APIS = ("anthropic-messages", "bedrock-converse-stream")


def parse_level(value: object) -> ThinkingLevel | None:
    """``value`` as a thinking level when it is one of the six names, else None."""
    if isinstance(value, str) and value in THINKING_LEVELS:
        return value
    return None


def _version(text: str) -> tuple[int, int]:
    parts = [int(p) for p in re.split(r"[.-]", text)[:2]]
    return (parts[0], parts[1] if len(parts) > 1 else 0)


def _canonical_id(model: Model) -> str:
    return model["id"].rsplit("/", 1)[-1].lower()


def _family_efforts(model: Model) -> tuple[ThinkingLevel, ...] | None:
    """Efforts a known model family accepts, or None when no family rule applies."""
    model_id = _canonical_id(model)
    gemini = _GEMINI_RE.search(model_id.removesuffix("-preview"))
    if gemini:
        if _version(gemini.group(1)) < (3, 0):
            return _MINIMAL_TO_HIGH
        return ("low", "high") if gemini.group(2) == "pro" else _MINIMAL_TO_HIGH
    claude = _CLAUDE_RE.search(model_id)
    if claude:
        version = _version(claude.group(2))
        if model["api"] not in _ANTHROPIC_APIS or version < (4, 6):
            return None
        # Opus 4.6+ and Sonnet 5+ accept xhigh; Sonnet 4.6 stops at high.
        return _MINIMAL_TO_XHIGH if claude.group(1) == "opus" or version >= (5, 0) else _MINIMAL_TO_HIGH
    gpt = _GPT_RE.search(model_id)
    if gpt:
        version = _version(gpt.group(1))
        if gpt.group(2) == "codex-mini" and version == (5, 1):
            return ("medium", "high")
        return _LOW_TO_XHIGH if version >= (5, 2) else _MINIMAL_TO_HIGH
    return None


def _api_efforts(model: Model) -> tuple[ThinkingLevel, ...]:
    """The range assumed for a reasoning model nothing else is known about."""
    api = model["api"]
    if api in ("openai-responses", "openai-codex-responses", "azure-openai-responses"):
        return _MINIMAL_TO_XHIGH
    if api == "openai-completions":
        from xcsh.ai.providers.openai_compat import resolve_compat

        flags = resolve_compat(model)
        # §9.3: OpenAI-compatible servers get xhigh only when they take reasoning_effort in OpenAI format
        if flags["thinkingFormat"] == "openai" and flags["supportsReasoningEffort"]:
            return _MINIMAL_TO_XHIGH
        return _MINIMAL_TO_HIGH
    if api in _GOOGLE_APIS:
        return _LOW_TO_HIGH
    return _MINIMAL_TO_HIGH


def _configured_range(thinking: ModelThinking) -> tuple[ThinkingLevel, ...]:
    low, high = thinking.get("minLevel"), thinking.get("maxLevel")
    if low not in EFFORT_LEVELS or high not in EFFORT_LEVELS:
        return ()
    start, end = EFFORT_LEVELS.index(low), EFFORT_LEVELS.index(high)
    return EFFORT_LEVELS[start : end + 1]


def supported_efforts(model: Model) -> list[ThinkingLevel]:
    """Effort levels ``model`` accepts, lowest first; ``[]`` for a non-reasoning model."""
    if not model.get("reasoning"):
        return []
    family = _family_efforts(model)
    thinking = model.get("thinking")
    configured = _configured_range(thinking) if thinking else ()
    if not configured:
        return list(_inferred_efforts(model))
    if family is None:
        return list(configured)
    return [level for level in configured if level in family]


def _inferred_efforts(model: Model) -> tuple[ThinkingLevel, ...]:
    family = _family_efforts(model)
    return family if family is not None else _api_efforts(model)


def infer_thinking(model: Model) -> ModelThinking | None:
    """``thinking`` metadata for a reasoning model that lacks it (None for non-reasoning models)."""
    if not model.get("reasoning"):
        return None
    efforts = _inferred_efforts(model)
    return {"minLevel": efforts[0], "maxLevel": efforts[-1], "mode": _infer_mode(model)}


def _infer_mode(model: Model) -> str:
    api = model["api"]
    model_id = _canonical_id(model)
    if api in _GOOGLE_APIS:
        gemini = _GEMINI_RE.search(model_id.removesuffix("-preview"))
        return "google-level" if gemini and _version(gemini.group(1))[0] == 3 else "budget"
    claude = _CLAUDE_RE.search(model_id)
    if api in _ANTHROPIC_APIS and claude:
        version = _version(claude.group(2))
        if version >= (4, 6) and (api == "anthropic-messages" or claude.group(1) == "opus"):
            return "anthropic-adaptive"
        if version >= (4, 5):
            return "anthropic-budget-effort"
    if api in _ANTHROPIC_APIS:
        return "budget"
    return "effort"


def resolve_level(model: Model, level: str | None) -> ThinkingLevel | None:
    """The effective level for a requested ``level`` on ``model`` (§9.3 table).

    Unset stays unset; ``off`` stays ``off``; an unknown string or any effort on a
    non-reasoning model becomes unset; an effort on a reasoning model is kept when
    supported, else lowered to the highest supported level below it, else raised to
    the lowest supported level.
    """
    parsed = parse_level(level)
    if parsed is None:
        return None
    if parsed == "off":
        return "off"
    supported = supported_efforts(model)
    if not supported:
        return None
    if parsed in supported:
        return parsed
    rank = THINKING_LEVELS.index(parsed)
    lower = [s for s in supported if THINKING_LEVELS.index(s) <= rank]
    return lower[-1] if lower else supported[0]


def next_level(model: Model, current: str | None) -> ThinkingLevel | None:
    """The level after ``current`` in ``off, *supported_efforts`` (wrapping), or None without reasoning.

    An unset or unlisted current level cycles to ``off``; ``inherit`` counts as ``off``.
    """
    if not model.get("reasoning"):
        return None
    cycle: list[ThinkingLevel] = ["off", *supported_efforts(model)]
    position: dict[str, int] = {level: index for index, level in enumerate(cycle)}
    index = position.get("off" if current == "inherit" else str(current))
    if index is None:
        return "off"
    return cycle[(index + 1) % len(cycle)]
