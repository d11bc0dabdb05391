"""Plain user and assistant messages for the session-store tests.

Import as ``coding.sessions.messages`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

from typing import Any


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "x",
        "provider": "fake",
        "model": "m",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }
