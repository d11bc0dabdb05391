"""Compatibility flags for OpenAI-compatible chat-completions servers.

Flags come from the model's ``compat`` object; anything not set there is detected from
the provider name and base URL. Keys (reference names):

- ``supportsDeveloperRole``: send the system prompt as ``developer`` (OpenAI) or ``system``;
- ``supportsReasoningEffort`` / ``reasoningEffortMap``: ``reasoning_effort`` and its values;
- ``thinkingFormat``: ``openai`` | ``openrouter`` | ``zai`` | ``qwen`` — how thinking is requested;
- ``maxTokensField``: ``max_completion_tokens`` | ``max_tokens``;
- ``supportsUsageInStreaming``: send ``stream_options.include_usage``;
- ``supportsToolChoice``: whether a forced tool choice may be sent;
- ``toolCallIdFormat``: ``default`` (sanitised, ≤ 40 chars) | ``mistral`` (9 alphanumerics);
- ``supportsStore``: send ``store: false``;
- ``constrainedToolCalls``: tools via JSON-schema constrained output (small local models);
- ``requiresReasoningContentForToolCalls`` / ``reasoningContentField``: a reasoning model's answer
  with tool calls sends its thinking back in that field (DeepSeek's thinking mode refuses the
  next request otherwise); off by default, since Groq and Cerebras refuse the field;
- ``requiresAssistantAfterToolResult``: a short assistant message goes between a tool result and
  a following user message (Mistral refuses ``tool`` then ``user``).
"""

from __future__ import annotations

import re
from typing import Any

from xcsh.ai.types import Model

_DEFAULTS: dict[str, Any] = {
    "supportsDeveloperRole": False,
    "supportsReasoningEffort": True,
    "reasoningEffortMap": {},
    "thinkingFormat": "openai",
    "maxTokensField": "max_tokens",
    "supportsUsageInStreaming": True,
    "supportsToolChoice": True,
    "toolCallIdFormat": "default",
    "supportsStore": False,
    "constrainedToolCalls": False,
    "requiresReasoningContentForToolCalls": False,
    "reasoningContentField": "reasoning_content",
    "requiresAssistantAfterToolResult": False,
}

# (needle in provider name or base URL, overrides)
_DETECTED: list[tuple[str, dict[str, Any]]] = [
    (
        "api.openai.com",
        {"supportsDeveloperRole": True, "maxTokensField": "max_completion_tokens", "supportsStore": True},
    ),
    ("openrouter", {"thinkingFormat": "openrouter"}),
    ("api.x.ai", {"supportsReasoningEffort": False}),
    ("xai", {"supportsReasoningEffort": False}),
    ("groq", {}),
    ("deepseek", {"supportsReasoningEffort": False, "requiresReasoningContentForToolCalls": True}),
    (
        "mistral",
        {
            "toolCallIdFormat": "mistral",
            "supportsReasoningEffort": False,
            "supportsUsageInStreaming": False,
            "requiresAssistantAfterToolResult": True,
        },
    ),
    ("cerebras", {"maxTokensField": "max_completion_tokens"}),
    ("z.ai", {"thinkingFormat": "zai", "supportsReasoningEffort": False}),
    ("zai", {"thinkingFormat": "zai", "supportsReasoningEffort": False}),
    ("dashscope", {"thinkingFormat": "qwen", "supportsReasoningEffort": False}),
]


def resolve_compat(model: Model) -> dict[str, Any]:
    """Effective compatibility flags for ``model`` (explicit ``compat`` wins over detection)."""
    flags = dict(_DEFAULTS)
    haystack = f"{model['provider']} {model.get('baseUrl', '')}".lower()
    for needle, overrides in _DETECTED:
        if needle in haystack:
            flags.update(overrides)
    if model["provider"] == "openai":
        flags.update(_DETECTED[0][1])
    flags.update(model.get("compat", {}))
    return flags


_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")


def tool_call_id_normalizer(flags: dict[str, Any]) -> Any:
    """A function mapping any tool-call id to one this server accepts."""
    if flags.get("toolCallIdFormat") == "mistral":

        def mistral(call_id: str) -> str:
            if re.fullmatch(r"[a-zA-Z0-9]{9}", call_id):
                return call_id
            import hashlib  # only for an id the server would refuse

            return hashlib.sha256(call_id.encode()).hexdigest()[:9]

        return mistral

    def default(call_id: str) -> str:
        clean = _UNSAFE_ID.sub("_", call_id)
        if len(clean) <= 40:
            return clean
        import hashlib  # only for an id too long for the server

        return clean[:31] + "_" + hashlib.sha256(call_id.encode()).hexdigest()[:8]

    return default
