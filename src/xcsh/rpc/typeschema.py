"""JSON Schema (2020-12) of the wire ``TypedDict`` classes, read from their annotations.

msgspec validates single ``TypedDict`` shapes but cannot describe a union of several
(the message and content-block unions every event carries), so the schema is built
here from the same annotations: ``TypedDict`` → an object in ``$defs`` (title = class
name, description = docstring), ``Literal`` → ``enum``/``const``, unions → ``anyOf``,
``msgspec.Meta`` → ``description`` and constraints. Deterministic: same types, same output.
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin

from msgspec import Meta

JsonSchema = dict[str, Any]

_SCALARS: dict[Any, JsonSchema] = {
    str: {"type": "string"},
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    type(None): {"type": "null"},
    Any: {},
    object: {},
}

_META_KEYS = (
    ("gt", "exclusiveMinimum"),
    ("ge", "minimum"),
    ("lt", "exclusiveMaximum"),
    ("le", "maximum"),
    ("pattern", "pattern"),
    ("min_length", None),
    ("max_length", None),
    ("title", "title"),
    ("description", "description"),
    ("examples", "examples"),
)


def is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def unwrap(tp: Any) -> tuple[Any, list[Meta]]:
    """``tp`` without ``Annotated``/``NotRequired``/``Required``, and the ``Meta`` found on the way."""
    metas: list[Meta] = []
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            base, *extras = get_args(tp)
            metas.extend(m for m in extras if isinstance(m, Meta))
            tp = base
        elif origin in (NotRequired, Required):
            tp = get_args(tp)[0]
        else:
            return tp, metas


def fields(td: type) -> dict[str, Any]:
    """The annotations of a ``TypedDict`` (forward references resolved, extras kept)."""
    return typing.get_type_hints(td, include_extras=True)


def required_keys(td: type) -> frozenset[str]:
    """The keys a ``TypedDict`` requires, read from the resolved annotations.

    ``__required_keys__`` is wrong for classes declared under ``from __future__ import
    annotations`` on Python 3.11 (the string annotations hide ``NotRequired``).
    """
    total = getattr(td, "__total__", True)
    out = set()
    for key, annotation in typing.get_type_hints(td, include_extras=True).items():
        origin = get_origin(annotation)
        while origin is Annotated:
            annotation = get_args(annotation)[0]
            origin = get_origin(annotation)
        if origin is Required or (total and origin is not NotRequired):
            out.add(key)
    return frozenset(out)


def _apply_meta(schema: JsonSchema, metas: list[Meta], base: Any) -> JsonSchema:
    if not metas:
        return schema
    out = dict(schema)
    if "$ref" in out:
        out = {"allOf": [{"$ref": out.pop("$ref")}]}
    for meta in metas:
        for attr, key in _META_KEYS:
            value = getattr(meta, attr)
            if value is None:
                continue
            if key is None:  # min_length / max_length depend on the base type
                prefix = "min" if attr == "min_length" else "max"
                suffix = {str: "Length", list: "Items", dict: "Properties"}.get(get_origin(base) or base)
                if suffix:
                    out[f"{prefix}{suffix}"] = value
            else:
                out[key] = value
        if meta.extra_json_schema:
            out.update(meta.extra_json_schema)
    return out


class SchemaBuilder:
    """Collects ``$defs`` while converting types; one builder per schema document."""

    def __init__(self, ref_prefix: str = "#/$defs/") -> None:
        self.defs: dict[str, JsonSchema] = {}
        self._prefix = ref_prefix

    def of(self, tp: Any) -> JsonSchema:
        base, metas = unwrap(tp)
        return _apply_meta(self._plain(base), metas, base)

    def _plain(self, tp: Any) -> JsonSchema:
        if tp in _SCALARS:
            return dict(_SCALARS[tp])
        if is_typeddict(tp):
            self.define(tp)
            return {"$ref": f"{self._prefix}{tp.__name__}"}
        origin = get_origin(tp)
        args = get_args(tp)
        if origin is Literal:
            return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        if origin in (Union, types.UnionType):
            return self._union(args)
        if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
            item = args[0] if args else Any
            items = self.of(item)
            return {"type": "array", "items": items} if items else {"type": "array"}
        if origin is dict or tp is dict:
            value = args[1] if len(args) == 2 else Any
            schema: JsonSchema = {"type": "object"}
            extra = self.of(value)
            if extra:
                schema["additionalProperties"] = extra
            return schema
        raise TypeError(f"no JSON Schema rule for {tp!r}")

    def _union(self, args: tuple[Any, ...]) -> JsonSchema:
        parts: list[JsonSchema] = []
        literals: list[Any] = []
        for arg in args:
            base, metas = unwrap(arg)
            if get_origin(base) is Literal and not metas:
                literals.extend(get_args(base))
            else:
                parts.append(self.of(arg))
        if literals:
            parts.insert(0, {"enum": literals} if len(literals) > 1 else {"const": literals[0]})
        if any(p == {} for p in parts):
            return {}
        return parts[0] if len(parts) == 1 else {"anyOf": parts}

    def define(self, td: type) -> str:
        """Add ``td`` to ``$defs`` (once) and return its name."""
        name = td.__name__
        if name in self.defs:
            return name
        self.defs[name] = {}  # placeholder first: recursive shapes terminate
        properties: JsonSchema = {}
        for key, annotation in fields(td).items():
            properties[key] = self.of(annotation)
        schema: JsonSchema = {"title": name}
        doc = inspect.getdoc(td)
        if doc and not doc.startswith(name + "(") and doc != inspect.getdoc(dict):  # no docstring of its own
            schema["description"] = doc
        schema["type"] = "object"
        schema["properties"] = properties
        needed = required_keys(td)
        required = [key for key in properties if key in needed]
        if required:
            schema["required"] = required
        self.defs[name] = schema
        return name
