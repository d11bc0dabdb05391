"""Best-effort parsing of a JSON object that is still streaming in."""

from __future__ import annotations

import json
from typing import Any


def _close(text: str) -> str:
    stack: list[str] = []
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    if in_string:
        if escaped:
            text = text[:-1]
        text += '"'
    return text + "".join(reversed(stack))


def parse_partial_json(text: str) -> dict[str, Any]:
    """Parse ``text`` as a JSON object, completing it if it is cut short.

    Returns ``{}`` when nothing sensible can be recovered or the value is not an object.
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else {}
    except json.JSONDecodeError:
        pass
    candidate = text.rstrip()
    for _ in range(8):
        try:
            value = json.loads(_close(candidate))
            return value if isinstance(value, dict) else {}
        except json.JSONDecodeError:
            pass
        # drop the trailing incomplete token (a dangling comma, colon, key or literal)
        cut = max(candidate.rfind(","), candidate.rfind(":"), candidate.rfind("{"), candidate.rfind("["))
        if cut <= 0:
            break
        candidate = candidate[:cut] if candidate[cut] in ",:" else candidate[: cut + 1]
        candidate = candidate.rstrip().rstrip(",:")
        if candidate.endswith('"') and candidate.count('"') % 2 == 1:
            candidate = candidate[: candidate.rfind('"', 0, len(candidate) - 1)].rstrip().rstrip(",")
    return {}
