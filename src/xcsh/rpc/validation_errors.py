"""The wording of a command that failed validation (:mod:`xcsh.rpc.validation`): the field, what it
accepts and what was sent. Loaded with the first invalid command."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Union, get_args, get_origin

from xcsh.rpc.typeschema import fields, is_typeddict, required_keys, unwrap

_AT = re.compile(r" - at `(\$[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `([^`]+)`")
_WRONG_TYPE = re.compile(r"^Expected `[^`]+`, got `[^`]+`")
_STEP = re.compile(r"\.([A-Za-z_$][\w$]*)|\[(\d+)\]")


def explain(request: type, frame: Any, message: str) -> tuple[str, bool, str]:
    """Turn msgspec's ``message`` into the fields of an ``Invalid`` (:mod:`xcsh.rpc.validation`):
    the error text naming the field and its accepted values, whether the answer keeps the
    command's id, and the field's path."""
    steps: list[str | int] = []
    at = _AT.search(message)
    if at:
        steps = _steps(at.group(1))
    missing = _MISSING.match(message)
    if missing:
        steps.append(missing.group(1))
    path = _render(steps)
    accepted = describe(_type_at(request, steps))
    if missing:
        return f"'{path}' is required: {accepted}", False, path
    sent = _value_at(frame, steps)
    structural = bool(_WRONG_TYPE.match(message))
    return f"'{path}' must be {accepted}; got {_show(sent)}", not structural, path


def _steps(path: str) -> list[str | int]:
    return [name if name else int(index) for name, index in _STEP.findall(path)]


def _render(steps: list[str | int]) -> str:
    out = ""
    for step in steps:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out or "(frame)"


def _type_at(tp: Any, steps: list[str | int]) -> Any:
    for step in steps:
        tp = _strip_none(unwrap(tp)[0])
        if isinstance(step, int):
            args = get_args(tp)
            tp = args[0] if args else Any
        elif is_typeddict(tp):
            tp = fields(tp).get(step, Any)
        else:
            return Any
    return tp


def _strip_none(tp: Any) -> Any:
    if get_origin(tp) in (Union, _UnionType):
        rest = [a for a in get_args(tp) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return tp


_UnionType = type(int | str)


def _value_at(value: Any, steps: list[str | int]) -> Any:
    for step in steps:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _show(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


_NAMES: dict[Any, str] = {
    str: "a string",
    bool: "true or false",
    int: "an integer",
    float: "a number",
    type(None): "null",
}


def describe(tp: Any) -> str:
    """What a value of type ``tp`` looks like, in words (for error messages)."""
    base, metas = unwrap(tp)
    text = _describe_plain(base)
    for meta in metas:
        if meta.ge is not None:
            text += f" ≥ {meta.ge}"
        if meta.gt is not None:
            text += f" > {meta.gt}"
        if meta.min_length:
            text += f" (at least {meta.min_length} long)"
    return text


def _describe_plain(tp: Any) -> str:
    if tp in _NAMES:
        return _NAMES[tp]
    if tp is Any or tp is object:
        return "any JSON value"
    origin = get_origin(tp)
    if origin is Literal:
        values = ", ".join(json.dumps(v) for v in get_args(tp))
        return f"one of {values}" if len(get_args(tp)) > 1 else values
    if origin in (Union, _UnionType):
        return " or ".join(describe(a) for a in get_args(tp))
    if origin is list or tp is list:
        args = get_args(tp)
        return f"an array of {_plural(args[0])}" if args else "an array"
    if origin is dict or tp is dict:
        return "an object"
    if is_typeddict(tp):
        required = required_keys(tp)
        keys = ", ".join(k + ("" if k in required else "?") for k in fields(tp))
        return f"a {tp.__name__} object {{{keys}}}"
    return str(tp)


_PLURALS: dict[Any, str] = {str: "strings", bool: "booleans", int: "integers", float: "numbers"}


def _plural(tp: Any) -> str:
    base, _ = unwrap(tp)
    if base in _PLURALS:
        return _PLURALS[base]
    if is_typeddict(base):
        return describe(base).removeprefix("a ").replace(" object ", " objects ", 1)
    return f"items each {describe(tp)}"
