"""Provider-neutral wire types: content blocks, messages, usage, models, tools.

These are the shapes the protocol and the session files carry, so they keep the
TypeScript field names (``toolCallId``, ``stopReason`` …). This module imports
nothing from xcsh.
"""

# No ``from __future__ import annotations`` here: a TypedDict turns each string annotation into a
# compiled ForwardRef, which made this module's classes ~2× as slow to create at start-up
# (docs/performance.md, "Fifth session: start-up").

from typing import Any, Literal, NotRequired, TypedDict

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]


class RedactedThinkingContent(TypedDict):
    type: Literal["redactedThinking"]
    data: str


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: NotRequired[str]
    intent: NotRequired[str]
    partialJson: NotRequired[str]


AssistantContent = TextContent | ThinkingContent | RedactedThinkingContent | ToolCall
UserContent = TextContent | ImageContent


class Cost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int
    cost: Cost
    premiumRequests: NotRequired[int]


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserContent]
    timestamp: int
    attribution: NotRequired[Literal["user", "agent"]]
    synthetic: NotRequired[bool]


class DeveloperMessage(TypedDict):
    role: Literal["developer"]
    content: str | list[UserContent]
    timestamp: int
    attribution: NotRequired[Literal["user", "agent"]]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: StopReason
    timestamp: int
    errorMessage: NotRequired[str]
    responseId: NotRequired[str]
    duration: NotRequired[int]
    ttft: NotRequired[int]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[UserContent]
    isError: bool
    timestamp: int
    details: NotRequired[Any]
    isWarning: NotRequired[bool]
    prunedAt: NotRequired[int]


Message = UserMessage | DeveloperMessage | AssistantMessage | ToolResultMessage


class Tool(TypedDict):
    """A tool as the model sees it: name, description and a JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class Context(TypedDict):
    """Everything one model call needs besides the model and options."""

    systemPrompt: NotRequired[str]
    messages: list[Message]
    tools: NotRequired[list[Tool]]


class ModelCost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float


class ModelThinking(TypedDict):
    minLevel: ThinkingLevel
    maxLevel: ThinkingLevel
    mode: str


class ModelSampling(TypedDict, total=False):
    """A model's tuned sampling defaults (``sampling`` in its catalogue or models.yml entry).

    ``temperature`` and ``topP`` are understood by every API; ``topK`` by Anthropic, Google and
    OpenAI-compatible local servers; ``minP`` and ``repeatPenalty`` by llama.cpp, vLLM and Ollama
    (OpenAI chat-completions wire only). A call's own ``temperature`` option wins.
    """

    temperature: float
    topP: float
    topK: int
    minP: float
    repeatPenalty: float


class Model(TypedDict):
    """A model of the registry, in the reference's wire shape."""

    id: str
    name: str
    api: str
    provider: str
    baseUrl: str
    reasoning: bool
    input: list[Literal["text", "image"]]
    cost: ModelCost
    contextWindow: int
    maxTokens: int
    headers: NotRequired[dict[str, str]]
    thinking: NotRequired[ModelThinking]
    compat: NotRequired[dict[str, Any]]
    sampling: NotRequired[ModelSampling]
    contextPromotionTarget: NotRequired[str]
    priority: NotRequired[int]


def zero_usage() -> Usage:
    """A fresh all-zero usage record."""
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
