"""What extensions hand back, made safe for events, frames and the session file.

Extension values (tool results, ``tool_result`` replies, message contents, details,
``append_entry`` data) end up in wire frames and the session file. They are checked and
normalised here, at the boundary, so that one odd value cannot break the frame stream
or every later request of the session:

- :func:`plain_json` turns any value into plain JSON data;
- :func:`content_blocks` turns a content value into a list of well-formed text/image
  blocks (a bare string becomes one text block) or raises :class:`TypeError`;
- :func:`as_tool_result` turns an extension tool's return value into a tool result.
"""

from __future__ import annotations

from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def _convert(value: Any, seen: set[int]) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in seen:  # a cycle: the inner occurrence becomes its text
            return f"<cycle {type(value).__name__}>"
        seen.add(id(value))
        try:
            if isinstance(value, dict):
                return {str(k) if not isinstance(k, str) else k: _convert(v, seen) for k, v in value.items()}
            return [_convert(v, seen) for v in value]
        finally:
            seen.discard(id(value))
    return str(value)


def plain_json(value: Any) -> Any:
    """``value`` as plain JSON data: tuples and sets become lists, dict keys strings, any
    other non-JSON object its ``str()`` and a reference cycle is cut.

    Extension values end up in events and the session file; one odd object (a ``Path``)
    must not break the run or the frame stream.
    """
    import json

    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return _convert(value, set())
    return value


def _block(item: Any, what: str) -> dict[str, Any]:
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if isinstance(item, dict):
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            return dict(plain_json(item))
        if kind == "image" and isinstance(item.get("data"), str) and isinstance(item.get("mimeType"), str):
            return dict(plain_json(item))
    shown = repr(item)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    raise TypeError(
        f"{what}: a content block must be a string, {{'type': 'text', 'text': str}} or "
        f"{{'type': 'image', 'data': str, 'mimeType': str}}, not {shown}"
    )


def content_blocks(value: Any, what: str = "content") -> list[dict[str, Any]]:
    """``value`` as a list of text/image content blocks, as plain JSON.

    A string becomes one text block, and so does each string item of a list; any other
    shape raises :class:`TypeError` naming ``what``.
    """
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{what} must be a string or a list of content blocks, not {type(value).__name__}")
    return [_block(item, what) for item in value]


def as_tool_result(value: Any) -> dict[str, Any]:
    """An extension tool's return value (or update) as a tool result (plain JSON).

    A string is one text block, ``None`` no content; a dict with a ``content`` key is a
    tool result (its content normalised by :func:`content_blocks`, so a malformed one
    raises :class:`TypeError` and the call fails); any other value is its JSON text.
    """
    if isinstance(value, dict) and "content" in value:
        result = dict(plain_json(value))
        result["content"] = content_blocks(value["content"], "a tool result's content")
        return result
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}], "details": {}}
    if value is None:
        return {"content": [], "details": {}}
    import json

    return {"content": [{"type": "text", "text": json.dumps(plain_json(value))}], "details": {}}
