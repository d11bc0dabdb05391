"""SSE framing helpers shared by the wire renderers."""

from __future__ import annotations

import json
from typing import Any


def data(obj: Any) -> bytes:
    """``data: <json>\\n\\n``."""
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def event(name: str, obj: Any) -> bytes:
    """``event: <name>\\ndata: <json>\\n\\n`` (Anthropic, OpenAI Responses)."""
    return f"event: {name}\n".encode() + data(obj)


def split(frames: list[bytes], first_content: int) -> tuple[list[bytes], list[bytes]]:
    """Split at the first content frame (inclusive in head)."""
    cut = min(len(frames), first_content + 1)
    return frames[:cut], frames[cut:]
