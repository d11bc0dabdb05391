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
