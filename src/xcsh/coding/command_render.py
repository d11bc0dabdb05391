"""Handlebars in slash-command and prompt-template bodies, as the reference renders them.

The reference renders every expanded body with Handlebars (no HTML escaping, missing values
empty) over ``{args, ARGUMENTS, arguments}`` and registers its own helpers: ``arg``, ``join``,
``list``, ``default``, ``pluralize``, ``when``, ``ifAny``, ``ifAll``, ``table``, ``codeblock``,
``xml``, ``escapeXml``, ``len``, ``add``, ``sub``, ``has``, ``includes``, ``not`` and
``jsonStringify``, next to the built-in ``if``, ``unless``, ``each``, ``with`` and ``lookup``.
So ``Fix issue {{arg 1}}``, ``{{join args ", "}}`` and ``{{#each args}}- {{this}}{{/each}}`` work.
xcsh renders only a body that uses them (:func:`uses_handlebars`); other ``{{…}}`` text belongs
to another tool's templates and is kept.

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


_TAG = re.compile(r"\{\{([\s\S]*?)\}\}")
"""A ``{{…}}`` tag and its inside (a comment's inside starts with ``!``)."""
_QUOTED = re.compile(r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')")
_SEPARATOR = re.compile(r"([\s()=]+)")
_LEAD = re.compile(r"^[{~#^/&>*]+|^else\s")
_DOT_NAME = re.compile(r"(?:^|[\s(=])\.(?![\s=~}/.)|]|$)")
"""A path that starts with ``.`` and a name (Go's and Helm's ``{{ .Values.tag }}``): Handlebars.js
refuses it; the engine would print nothing for it."""
_LENGTH = re.compile(r"^(?P<path>[^\s()=\"']+?)(?:[./]length|[./]?\[length\])$")
_WORD = re.compile(r"([{~#^/&]*)([\s\S]*?)(~?)")
_BUILTINS = frozenset({"if", "unless", "each", "with", "lookup", "log"})
_VALUES = frozenset({"args", "ARGUMENTS", "arguments"})


def _code_parts(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is template code, part): the inside of every ``{{…}}`` that is not a
    comment is code, except its quoted strings."""
    parts: list[tuple[bool, str]] = []
    end = 0
    for tag in _TAG.finditer(text):
        inside = tag.group(1)
        parts.append((False, text[end : tag.start(1)]))
        if inside.lstrip("{~").startswith("!"):
            parts.append((False, inside))
        else:
            parts.extend((i % 2 == 0, piece) for i, piece in enumerate(_QUOTED.split(inside)))
        end = tag.end(1)
    parts.append((False, text[end:]))
    return parts


def _names(code: str) -> list[str]:
    """The first path segment of every word of ``code`` (``../args.length`` → ``args``)."""
    names = []
    for word in _SEPARATOR.split(_LEAD.sub("", code.strip())):
        word = _LEAD.sub("", word).rstrip("~}")
        while word.startswith(("../", "./", "this.", "this/", "@root.")):
            word = (
                word.split(".", 1)[1] if word.startswith(("this.", "@root.")) else word[word.index("/") + 1 :]
            )
        names.append(re.split(r"[./\[]", word, maxsplit=1)[0])
    return names


def uses_handlebars(text: str) -> bool:
    """Whether ``text`` calls one of the reference's helpers (or ``if``, ``each`` …) or reads
    ``args``/``ARGUMENTS``/``arguments`` in a ``{{…}}``: only such a body is rendered. Other
    ``{{…}}`` text (Jinja's ``{{ user.name }}``, Ansible's ``{{ item }}``, GitHub Actions'
    ``${{ secrets.TOKEN }}``) is somebody else's template and is kept as written."""
    if "{{" not in text:
        return False
    known = _VALUES | _BUILTINS | _helpers().keys()
    return any(code and not known.isdisjoint(_names(part)) for code, part in _code_parts(text))


def _prepared(text: str) -> str:
    """``text`` with ``x.length`` read through the ``length`` helper (the engine has no
    JavaScript ``length``); raises :class:`RenderError` on a path Handlebars.js refuses."""
    out = []
    for code, part in _code_parts(text):
        if not code:
            out.append(part)
            continue
        if _DOT_NAME.search(part):
            raise RenderError("a path starts with '.' and a name, which Handlebars refuses")
        pieces = _SEPARATOR.split(part)
        for i in range(0, len(pieces), 2):
            word = _WORD.fullmatch(pieces[i])
            assert word is not None  # every string matches
            head, bare, tail = word.groups()
            before_hash = i + 1 < len(pieces) and pieces[i + 1].lstrip().startswith("=")
            if before_hash or head.lstrip("{~&") != "":
                continue  # a hash key, or a block's name
            if bare == "length":
                pieces[i] = f"{head}(length this){tail}"
            elif match := _LENGTH.match(bare):
                pieces[i] = f"{head}(length {match.group('path')}){tail}"
        out.append("".join(pieces))
    return "".join(out)


def render(text: str, args: list[str], joined: str) -> str:
    """``text`` rendered over ``args`` and ``ARGUMENTS``/``arguments`` (``joined``); raises
    :class:`RenderError` when it cannot be rendered, and for text Handlebars.js refuses that
    the engine would accept (a path that starts with ``.``, as Go templates write)."""
    if "{{" not in text:
        return text
    context = {"args": list(args), "ARGUMENTS": joined, "arguments": joined}
    source = _prepared(text)
    try:
        return str(_engine().compile(source)(context))
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


def _length(args: list[Any], options: HelperOptions) -> Any:
    """``value.length`` as JavaScript reads it: a list's or string's length, an object's
    ``length`` key, else nothing."""
    value = args[0] if args else None
    if isinstance(value, list | str):
        return len(value)
    return value.get("length") if isinstance(value, dict) else None


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
        # the engine's own ``log`` prints to stdout, which belongs to the protocol (review 7 D2)
        "log": _log,
    }


def _engine_helpers() -> dict[str, Callable[[list[Any], HelperOptions], Any]]:
    """The reference's helpers and ``length``, which :func:`_prepared` writes for ``x.length``."""
    return {**_helpers(), "length": _length}


def _log(args: list[Any], options: HelperOptions) -> str:
    logger.debug("{{log}} in a command body: %s", " ".join(_text(v) for v in args))
    return ""


@cache
def _engine() -> Handlebars:
    from dotpromptz_handlebars import Handlebars

    engine = Handlebars(escape_html=False)
    for name, helper in _engine_helpers().items():
        engine.register_helper(name, helper)
    return engine


UNRENDERED = re.compile(r"\{\{[\s\S]*?\}\}")
"""A ``{{…}}`` construct: left in a body the engine could not render."""
