"""Tool-argument validation against JSON Schema, with the reference's light coercion."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

_validators: dict[str, Any] = {}


class ArgumentValidationError(ValueError):
    """Arguments do not satisfy the tool's schema; the message is model-readable."""


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
    expected = schema.get("type")
    types = expected if isinstance(expected, list) else [expected]
    if isinstance(value, str):
        stripped = value.strip()
        if "integer" in types and stripped.lstrip("-").isdigit():
            return int(stripped)
        if "number" in types:
            try:
                return float(stripped) if "." in stripped or "e" in stripped.lower() else int(stripped)
            except ValueError:
                pass
        if "boolean" in types and stripped.lower() in ("true", "false"):
            return stripped.lower() == "true"
        if ("object" in types or "array" in types) and stripped[:1] in "{[":
            try:
                return json.loads(stripped)
            except (json.JSONDecodeError, RecursionError):  # stays a string: a type error below
                return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and types == ["string"]:
        return str(value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        return prepare_arguments(value, schema)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_coerce(item, schema["items"]) for item in value]
    return value


def prepare_arguments(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Drop null values of optional properties and coerce simple scalar types. Parts of the
    schema of the wrong shape (``properties`` not an object, ``required`` not a list) are
    ignored here; the validator reports what they make of the arguments."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    listed = schema.get("required")
    required = {name for name in listed if isinstance(name, str)} if isinstance(listed, list) else set()
    out: dict[str, Any] = {}
    for key, value in args.items():
        if (value is None or value == "null") and key not in required:
            continue
        sub = properties.get(key)
        out[key] = _coerce(value, sub) if isinstance(sub, dict) else value
    return out


def _missing_name(error: Any, pending: dict[int, Iterator[str]]) -> str | None:
    """The property a ``required`` error is about (errors come in the order of the schema's list)."""
    names = pending.get(id(error.schema))
    if names is None:
        instance = error.instance if isinstance(error.instance, dict) else {}
        listed = error.validator_value if isinstance(error.validator_value, list) else []
        names = iter([n for n in listed if isinstance(n, str) and n not in instance])
        pending[id(error.schema)] = names
    return next(names, None)


def validate_arguments(tool_name: str, args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Return the prepared arguments, or raise :class:`ArgumentValidationError` (also when the
    schema cannot be applied: a tool error for the model, never a failed run)."""
    from jsonschema import Draft202012Validator

    try:
        prepared = prepare_arguments(args, schema)
        key = json.dumps(schema, sort_keys=True)
        validator = _validators.get(key)
        if validator is None:
            validator = Draft202012Validator(schema)
            _validators[key] = validator
        errors = sorted(validator.iter_errors(prepared), key=lambda e: list(e.absolute_path))
    except RecursionError as exc:  # arguments (or a schema) nested deeper than Python follows
        raise ArgumentValidationError(
            f'Validation failed for tool "{tool_name}": its arguments are nested too deeply to check'
        ) from exc
    except Exception as exc:  # the schema itself: an unknown type, a bad pattern, a $ref to nowhere
        raise ArgumentValidationError(
            f'Validation failed for tool "{tool_name}": its parameter schema cannot be used '
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from exc
    if not errors:
        return prepared
    lines = []
    pending: dict[int, Iterator[str]] = {}
    for error in errors:
        path = "/".join(str(p) for p in error.absolute_path)
        if not path:
            # a missing top-level argument is reported under its own name, like the reference
            path = (_missing_name(error, pending) if error.validator == "required" else None) or "root"
        lines.append(f"  - {path}: {error.message}")
    received = json.dumps(args, indent=2, ensure_ascii=False)
    raise ArgumentValidationError(
        f'Validation failed for tool "{tool_name}":\n'
        + "\n".join(lines)
        + f"\n\nReceived arguments:\n{received}"
    )
