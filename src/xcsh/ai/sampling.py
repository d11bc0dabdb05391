"""Sampling settings for one call: the model's tuned defaults under the call's own options.

Each provider maps the resolved settings to the fields its API names, and leaves out what its
API does not accept (see ``ModelSampling``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Model


class Sampling(msgspec.Struct, frozen=True, kw_only=True):
    """Resolved sampling settings; None means "the server's default" (the field is not sent).

    A ``msgspec.Struct`` rather than a dataclass: a dataclass is built when its module is
    imported (~0.8 ms), and this module loads with the first request (docs/performance.md,
    "Fifth session: immediate prompt").
    """

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    repeat_penalty: float | None = None


def resolve_sampling(model: Model, options: StreamOptions) -> Sampling:
    """The settings for a call of ``model``: ``options.temperature`` first, then the model's entry."""
    tuned = model.get("sampling") or {}
    temperature = options.temperature if options.temperature is not None else tuned.get("temperature")
    return Sampling(
        temperature=temperature,
        top_p=tuned.get("topP"),
        top_k=tuned.get("topK"),
        min_p=tuned.get("minP"),
        repeat_penalty=tuned.get("repeatPenalty"),
    )


def chat_completions_fields(sampling: Sampling) -> dict[str, Any]:
    """Body fields for the OpenAI chat-completions wire (the last three are llama.cpp/vLLM/Ollama's)."""
    fields = {
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "top_k": sampling.top_k,
        "min_p": sampling.min_p,
        "repeat_penalty": sampling.repeat_penalty,
    }
    return {key: value for key, value in fields.items() if value is not None}
