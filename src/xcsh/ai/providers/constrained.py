"""Schema-constrained tool calling for small local models (see issue "Embedded default model")."""

from __future__ import annotations

from typing import Any

from xcsh.ai.builder import MessageBuilder
from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Context, Model


async def run_constrained(
    model: Model, context: Context, options: StreamOptions, builder: MessageBuilder, flags: dict[str, Any]
) -> None:
    """Stream a constrained completion whose JSON output becomes text or tool calls."""
    raise NotImplementedError("constrained tool calling is not available yet")
