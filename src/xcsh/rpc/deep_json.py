"""JSON nested deeper than a recursive parser follows, decoded without recursion (ijson).

A ``get_tree`` answer nests two levels per entry of a linear stretch of the session, so a long
session's answer is tens of thousands of levels deep. ``json`` and msgspec stop at the
interpreter's recursion limit (~1,000); ijson's builder keeps its own stack of containers, so
the client reads such a line as well, only slower (~1 s per 40,000 levels). Imported only
when a line needs it.

ijson's C backend (yajl) refuses numbers outside 64-bit integers and doubles ("integer
overflow") and turns a lone surrogate escape (``"\\ud800"``, which the server echoes when a
host sent one) into ``?``; such a line is read with ijson's pure-Python backend instead, which
has neither limit: its values are what ``json.loads`` gives (an ``int`` of any size; a
``float``, ``inf`` or ``0.0`` for an exponent out of range; the lone surrogate).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def decode_deep(text: str) -> Any:
    """The JSON value of ``text`` at any depth, numbers as ``json.loads`` reads them; raises
    ``ValueError`` when it is not one JSON value."""
    import ijson

    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"not a JSON value: {exc}") from exc
    if _SURROGATE_ESCAPE.search(text) is None:
        try:
            return _one_value(ijson.items(data, "", use_float=True, multiple_values=False))
        except ijson.JSONError as exc:
            if "overflow" not in str(exc):
                raise ValueError(f"not a JSON value: {exc}") from exc
    from ijson.backends import python as pure

    try:  # numbers as Decimal: the pure backend refuses a float beyond a double's range otherwise
        value = _one_value(pure.items(data, "", use_float=False, multiple_values=False))
    except ijson.JSONError as exc:
        raise ValueError(f"not a JSON value: {exc}") from exc
    return _floats(value)


def _one_value(values: Any) -> Any:
    try:
        value = next(values)
    except StopIteration as exc:
        raise ValueError("not a JSON value: nothing") from exc
    for _extra in values:  # the parser reports trailing text when asked for more
        raise ValueError("not a JSON value: more than one value")
    return value


def _floats(value: Any) -> Any:
    """``value`` with every ``Decimal`` turned into a ``float``, in place, without recursion."""
    if isinstance(value, Decimal):
        return float(value)
    stack = [value]
    while stack:
        node = stack.pop()
        keys = node.keys() if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else ()
        for key in keys:
            item = node[key]
            if isinstance(item, Decimal):
                node[key] = float(item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return value
