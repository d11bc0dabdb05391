"""Handlebars in slash-command and prompt-template bodies, as the reference renders them.

The reference renders every expanded body with Handlebars (no HTML escaping, missing values
empty) over ``{args, ARGUMENTS, arguments}`` and registers its own helpers: ``arg``, ``join``,
``list``, ``default``, ``pluralize``, ``when``, ``ifAny``, ``ifAll``, ``table``, ``codeblock``,
``xml``, ``escapeXml``, ``len``, ``add``, ``sub``, ``has``, ``includes``, ``not`` and
``jsonStringify``, next to the built-in ``if``, ``unless``, ``each``, ``with`` and ``lookup``.
So ``Fix issue {{arg 1}}``, ``{{join args ", "}}`` and ``{{#each args}}- {{this}}{{/each}}`` work.

The engine is ``dotpromptz-handlebars`` (Google's pure-Python Handlebars, which follows
Handlebars.js 4.7 semantics), imported only when a body holds ``{{``: about 15 ms, against
~0.7 s for pybars3 (docs/decisions.md). Text without ``{{`` renders as itself, so it is not
rendered at all.
"""

from __future__ import annotations

import json
import logging
import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from dotpromptz_handlebars import Handlebars, HelperOptions

logger = logging.getLogger(__name__)


class RenderError(ValueError):
    """The body is not a template the engine accepts (an unknown helper, an unclosed block)."""


def render(text: str, args: list[str], joined: str) -> str:
    """``text`` rendered over ``args`` and ``ARGUMENTS``/``arguments`` (``joined``); raises
    :class:`RenderError` when it cannot be rendered."""
    if "{{" not in text:
        return text
    context = {"args": list(args), "ARGUMENTS": joined, "arguments": joined}
    try:
        return str(_engine().compile(text)(context))
    except ImportError as exc:  # an install without the engine: the plain placeholders still work
        raise RenderError(f"the Handlebars engine is not installed: {exc}") from exc
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        raise RenderError(str(exc) or type(exc).__name__) from exc


def _scope(options: HelperOptions) -> Any:
    context = options.context
    return context() if callable(context) else context


def _text(value: Any) -> str:
    """A value as Handlebars.js prints it (lists comma-joined, booleans lower case)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _block(options: HelperOptions, chosen: bool) -> str:
    scope = _scope(options)
    return str(options.fn(scope) if chosen else options.inverse(scope))


def _arg(args: list[Any], options: HelperOptions) -> str:
    scope = _scope(options)
    values = scope.get("args") if isinstance(scope, dict) else None
    try:
        index = int(args[0])
    except (IndexError, TypeError, ValueError):
        return ""
    if not isinstance(values, list) or not 0 < index <= len(values):
        return ""
    return _text(values[index - 1])


def _join(args: list[Any], options: HelperOptions) -> str:
    values = args[0] if args else None
    separator = args[1] if len(args) > 1 and isinstance(args[1], str) else ", "
    return separator.join(_text(v) for v in values) if isinstance(values, list) else ""


def _list(args: list[Any], options: HelperOptions) -> str:
    values = args[0] if args else None
    if not isinstance(values, list) or not values:
        return ""
    prefix, suffix = str(options.hash.get("prefix", "")), str(options.hash.get("suffix", ""))
    separator = str(options.hash.get("join", "\\n")).replace("\\n", "\n").replace("\\t", "\t")
    return separator.join(f"{prefix}{options.fn(item)}{suffix}" for item in values)


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "===": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "!==": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}


def _when(args: list[Any], options: HelperOptions) -> str:
    lhs, operator, rhs = [*args, None, None, None][:3]
    compare = _COMPARE.get(str(operator))
    try:
        chosen = compare is not None and compare(lhs, rhs)
    except TypeError:
        chosen = False
    return _block(options, bool(chosen))


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness, which the reference's helpers use: an empty list is true."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value == value and value != 0  # NaN and zero are false
    return True


def _table(args: list[Any], options: HelperOptions) -> str:
    rows = args[0] if args else None
    if not isinstance(rows, list) or not rows:
        return ""
    headers = str(options.hash["headers"]).split("|") if options.hash.get("headers") else []
    head = ""
    if headers:
        head = f"| {' | '.join(headers)} |\n| {' | '.join('---' for _ in headers)} |\n"
    return head + "\n".join(f"| {str(options.fn(row)).strip()} |" for row in rows)


def _codeblock(args: list[Any], options: HelperOptions) -> str:
    body = str(options.fn(_scope(options))).strip()
    return f"```{options.hash.get('lang', '')}\n{body}\n```"


def _xml(args: list[Any], options: HelperOptions) -> str:
    body = str(options.fn(_scope(options))).strip()
    tag = _text(args[0]) if args else ""
    return f"<{tag}>\n{body}\n</{tag}>" if body else ""


def _escape_xml(args: list[Any], options: HelperOptions) -> str:
    value = args[0] if args else None
    if value is None:
        return ""
    text = _text(value)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _len(args: list[Any], options: HelperOptions) -> int:
    value = args[0] if args else None
    return len(value) if isinstance(value, list | str) else 0


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _contains(collection: Any, item: Any) -> bool:
    if isinstance(collection, list):
        return item in collection
    if isinstance(collection, dict):
        return isinstance(item, str | int) and str(item) in collection
    return False


def _helpers() -> dict[str, Callable[[list[Any], HelperOptions], Any]]:
    return {
        "arg": _arg,
        "join": _join,
        "list": _list,
        "default": lambda a, o: a[0] if a and _truthy(a[0]) else (a[1] if len(a) > 1 else None),
        "pluralize": lambda a, o: f"{_text(a[0])} {a[1] if a[0] == 1 else a[2]}" if len(a) > 2 else "",
        "when": _when,
        "ifAny": lambda a, o: _block(o, any(_truthy(v) for v in a)),
        "ifAll": lambda a, o: _block(o, all(_truthy(v) for v in a)),
        "table": _table,
        "codeblock": _codeblock,
        "xml": _xml,
        "escapeXml": _escape_xml,
        "len": _len,
        "add": lambda a, o: _number(a[0] if a else 0) + _number(a[1] if len(a) > 1 else 0),
        "sub": lambda a, o: _number(a[0] if a else 0) - _number(a[1] if len(a) > 1 else 0),
        "has": lambda a, o: _block(o, len(a) > 1 and _contains(a[0], a[1])),
        "includes": lambda a, o: len(a) > 1 and isinstance(a[0], list) and a[1] in a[0],
        "not": lambda a, o: not (_truthy(a[0]) if a else False),
        "jsonStringify": lambda a, o: json.dumps(a[0] if a else None, separators=(",", ":")),
    }


@cache
def _engine() -> Handlebars:
    from dotpromptz_handlebars import Handlebars

    engine = Handlebars(escape_html=False)
    for name, helper in _helpers().items():
        engine.register_helper(name, helper)
    return engine


UNRENDERED = re.compile(r"\{\{[\s\S]*?\}\}")
"""A ``{{…}}`` construct: left in a body the engine could not render."""
