"""A tool whose parameter schema cannot be applied fails the call with a tool error, not the run."""

from __future__ import annotations

from typing import Any

import pytest

from xcsh.agent.validation import ArgumentValidationError, validate_arguments


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "banana"},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}},
        {"type": "object", "properties": {"a": {"$ref": "#/definitions/nope"}}},
    ],
)
def test_a_schema_that_cannot_be_applied_is_a_validation_error_naming_the_tool(schema: Any) -> None:
    with pytest.raises(ArgumentValidationError) as info:
        validate_arguments("weird_tool", {"a": "x"}, schema)
    assert str(info.value).startswith(
        'Validation failed for tool "weird_tool": its parameter schema cannot be used'
    )


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": 5},
        {"type": "object", "properties": {}, "required": 5},
        {"type": "object", "properties": {"a": {"type": "object", "properties": [1]}}},
    ],
)
def test_properties_or_required_of_another_shape_at_any_depth_are_a_validation_error(schema: Any) -> None:
    with pytest.raises(ArgumentValidationError) as info:
        validate_arguments("odd_tool", {"a": {"b": 1}}, schema)
    assert str(info.value).startswith('Validation failed for tool "odd_tool"')


def test_an_argument_string_nested_deeper_than_the_parser_follows_is_a_validation_error() -> None:
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(ArgumentValidationError) as info:
        validate_arguments("t", {"a": deep}, {"type": "object", "properties": {"a": {"type": "array"}}})
    assert str(info.value).startswith('Validation failed for tool "t"')


def test_arguments_nested_deeper_than_python_follows_are_a_validation_error() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = {"a": deep}
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    node = schema
    for _ in range(5000):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"]["a"] = child
        node = child
    with pytest.raises(ArgumentValidationError) as info:
        validate_arguments("t", deep, schema)
    assert "nested too deeply" in str(info.value)
