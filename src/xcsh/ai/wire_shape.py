"""Reading the fields of a provider's decoded stream events, with a plain error for a wrong shape.

A provider's stream is JSON the vendor promises a shape for; a server that breaks the promise
(a string where an object belongs, a number where text belongs, a token count of ``1e308``)
must end the answer with a sentence saying what was wrong, not with the Python error the
first ``.get`` or ``+`` on the wrong type raises. Providers read each field they use through
these helpers, on the slow path only (the common case is one ``type(x) is str`` check in
the provider): a missing field or ``null`` is "not sent" and reads as empty; any other wrong
type raises :class:`MalformedStreamError`, which :func:`xcsh.ai.errors.describe_error`
turns into ``Malformed response from <provider> (<wire> stream): <detail>``.

Objects and fields the message model does not use are never read, so extra fields, unknown
event types and unknown block types stay ignored, as the vendors' SDKs ignore them.
"""

from __future__ import annotations

import math
from typing import Any

# a token count past this is no count a model produces (2**53: JavaScript's exact integers)
MAX_COUNT = 2**53


class MalformedStreamError(ValueError):
    """A stream event with the wrong shape; the message says where and what (no wire, no provider).

    Not retryable by the spec's patterns: the same server would send the same answer again.
    """


def kind_of(value: Any) -> str:
    """The JSON kind of ``value`` as a reader says it ("a string", "an array" …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def wrong(where: str, value: Any, expected: str) -> MalformedStreamError:
    """The error for ``where`` holding ``value`` instead of ``expected``."""
    return MalformedStreamError(f"{where} is {kind_of(value)}, expected {expected}")


def text(value: Any, where: str) -> str:
    """``value`` as text: a string as it is, missing/``null`` as ``""``; anything else raises."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise wrong(where, value, "a string")


def obj(value: Any, where: str) -> dict[str, Any]:
    """``value`` as an object: missing/``null`` as ``{}``; anything else not an object raises."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    raise wrong(where, value, "an object")


def items(value: Any, where: str) -> list[Any]:
    """``value`` as an array: missing/``null`` as ``[]``; anything else not an array raises."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    raise wrong(where, value, "an array")


def objects(value: Any, where: str) -> list[dict[str, Any]]:
    """``value`` as an array of objects (see :func:`items`); an element not an object raises."""
    out = items(value, where)
    for index, element in enumerate(out):
        if not isinstance(element, dict):
            raise wrong(f"{where}[{index}]", element, "an object")
    return out


def count(value: Any, where: str) -> int | None:
    """``value`` as a token count: missing/``null`` as None; a whole number 0 … 2**53 as an int.

    Anything else (text, a negative or fractional number, ``1e308``, a boolean) raises:
    a count that cannot be a count makes the answer's usage and cost meaningless.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong(where, value, "a token count")
    # the value itself stays out of the text: digits such as 500 would read as a retryable error
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise MalformedStreamError(f"{where} is not a whole number, expected a token count")
        value = int(value)
    if value < 0:
        raise MalformedStreamError(f"{where} is negative, expected a token count")
    if value > MAX_COUNT:
        raise MalformedStreamError(f"{where} is larger than any token count")
    return int(value)


def label(value: Any, where: str) -> str | None:
    """A stop/finish reason: a string, or None when missing/``null``/empty; anything else raises."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    raise wrong(where, value, "a string")
