"""JSON nested deeper than a recursive parser follows, decoded without recursion (ijson).

A ``get_tree`` answer nests two levels per entry of a linear stretch of the session, so a long
session's answer is tens of thousands of levels deep. ``json`` and msgspec stop at the
interpreter's recursion limit (~1,000); ijson's builder keeps its own stack of containers, so
the client reads such a line as well, only slower (~1 s per 40,000 levels). Imported only
when a line needs it.
"""

from __future__ import annotations

from typing import Any


def decode_deep(text: str) -> Any:
    """The JSON value of ``text`` at any depth (floats as ``float``); raises ``ValueError`` when
    it is not one JSON value."""
    import ijson

    try:
        values = ijson.items(text.encode("utf-8"), "", use_float=True, multiple_values=False)
        value = next(values)
        for _extra in values:  # the parser reports trailing text when asked for more
            raise ValueError("not a JSON value: more than one value")
    except (ijson.JSONError, ijson.IncompleteJSONError, StopIteration, UnicodeEncodeError) as exc:
        raise ValueError(f"not a JSON value: {exc}") from exc
    return value
