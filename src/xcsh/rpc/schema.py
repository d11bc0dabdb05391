"""The protocol's JSON Schema (2020-12), generated from the wire types; and outbound frame checking.

``xcsh rpc-schema`` prints :func:`protocol_schema`; ``docs/rpc-schema.json`` is that output
(a test fails when it is stale). Top-level ``x-commands``, ``x-events`` and
``x-ui-methods`` list the catalogue for tools (the client-coverage test, the docs).

:class:`FrameChecker` validates frames the server writes (the ``XCSH_RPC_CHECK_FRAMES``
debug switch, docs/protocol.md); it needs ``jsonschema`` and is never on the hot path
unless switched on.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from xcsh.rpc.frames import EVENTS, OTHER_FRAMES, UI_REQUESTS, ErrorResponse
from xcsh.rpc.protocol import SPECS, CommandSpec, NoData, answer_types
from xcsh.rpc.typeschema import JsonSchema, SchemaBuilder

SCHEMA_ID = "urn:xcsh:rpc-protocol"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def response_name(command: str) -> str:
    """``get_state`` → ``GetStateResponse`` (the ``$defs`` name of its success response)."""
    return "".join(part.capitalize() for part in command.split("_")) + "Response"


def _ref(name: str) -> JsonSchema:
    return {"$ref": f"#/$defs/{name}"}


def _success_response(builder: SchemaBuilder, spec: CommandSpec) -> JsonSchema:
    properties: JsonSchema = {
        "id": {"description": "The request's id, echoed when it had one."},
        "type": {"const": "response"},
        "command": {"const": spec.name},
        "success": {"const": True},
    }
    required = ["type", "command", "success"]
    schema: JsonSchema = {
        "title": response_name(spec.name),
        "description": f"Success response of `{spec.name}`.",
        "type": "object",
        "properties": properties,
    }
    if spec.data is NoData:
        schema["description"] += " It carries no `data`."
        schema["not"] = {"required": ["data"]}
    else:
        properties["data"] = builder.of(spec.data_type())
        required.append("data")
    schema["required"] = required
    return schema


@cache
def _document() -> str:
    builder = SchemaBuilder()
    commands: JsonSchema = {}
    for spec in SPECS.values():
        request = builder.define(spec.request)
        response = response_name(spec.name)
        builder.defs[response] = _success_response(builder, spec)
        commands[spec.name] = {
            "request": f"#/$defs/{request}",
            "response": f"#/$defs/{response}",
            "control": spec.control,
            "blocking": spec.blocking,
        }
    answers = [builder.define(t) for t in answer_types().values()]
    events = {name: builder.define(t) for name, t in EVENTS.items()}
    ui = {method: builder.define(t) for method, t in UI_REQUESTS.items()}
    others = {name: builder.define(t) for name, t in OTHER_FRAMES.items()}
    builder.define(ErrorResponse)
    defs = builder.defs
    defs["Command"] = {
        "description": "Any command (the `type` names it).",
        "oneOf": [
            _ref(defs_name[len("#/$defs/") :]) for defs_name in (c["request"] for c in commands.values())
        ],
    }
    defs["InboundFrame"] = {
        "description": "Any line a host writes to stdin.",
        "anyOf": [_ref("Command"), *(_ref(a) for a in answers)],
    }
    defs["Response"] = {
        "description": "The answer to a command: its success response, or an error.",
        "anyOf": [*(_ref(response_name(name)) for name in commands), _ref("ErrorResponse")],
    }
    defs["Event"] = {"description": "A session event.", "oneOf": [_ref(n) for n in events.values()]}
    defs["ExtensionUiRequest"] = {
        "description": "A UI request from an extension (the `method` names it).",
        "oneOf": [_ref(n) for n in ui.values()],
    }
    defs["OutboundFrame"] = {
        "description": "Any line the server writes to stdout.",
        "anyOf": [
            _ref("Response"),
            _ref("Event"),
            _ref("ExtensionUiRequest"),
            *(_ref(name) for name in others.values()),
        ],
    }
    document: JsonSchema = {
        "$schema": DIALECT,
        "$id": SCHEMA_ID,
        "title": "xcsh RPC protocol",
        "description": "Every JSON-lines frame of `xcsh --mode rpc`: one JSON object per line in each "
        "direction. Generated from xcsh.rpc (commands, results, frames); do not edit.",
        "anyOf": [_ref("InboundFrame"), _ref("OutboundFrame")],
        "x-commands": commands,
        "x-events": events,
        "x-ui-methods": ui,
        "x-other-frames": others,
        "$defs": dict(sorted(defs.items())),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def protocol_schema() -> JsonSchema:
    """The whole protocol's JSON Schema document (a fresh copy)."""
    schema: JsonSchema = json.loads(_document())
    return schema


def protocol_schema_text() -> str:
    """:func:`protocol_schema` as the text committed in ``docs/rpc-schema.json``."""
    return _document()


def outbound_def(frame: Any) -> str | None:
    """The ``$defs`` name an outbound ``frame`` must match (None: no frame has this shape)."""
    if not isinstance(frame, dict):
        return None
    kind = frame.get("type")
    if kind == "response":
        command = frame.get("command")
        if frame.get("success") is True and isinstance(command, str) and command in SPECS:
            return response_name(command)
        return "ErrorResponse"
    if kind == "extension_ui_request":
        method = frame.get("method")
        return UI_REQUESTS[method].__name__ if isinstance(method, str) and method in UI_REQUESTS else None
    if isinstance(kind, str) and kind in EVENTS:
        return EVENTS[kind].__name__
    if isinstance(kind, str) and kind in OTHER_FRAMES:
        return OTHER_FRAMES[kind].__name__
    return None


class FrameChecker:
    """Validates outbound frames against the schema (one compiled validator per frame kind)."""

    def __init__(self) -> None:
        from jsonschema import Draft202012Validator

        self._schema = protocol_schema()
        self._validator_type = Draft202012Validator
        self._validators: dict[str, Any] = {}

    def violations(self, frame: Any) -> list[str]:
        """Why ``frame`` does not match the protocol (empty when it does).

        The frame is checked as it is written: encoded as the server encodes it (pre-encoded
        ``msgspec.Raw`` parts included) and decoded again. A frame nested deeper than the
        validator's recursion can follow is not checked (empty answer); this never raises.
        """
        from xcsh.rpc.jsonl import decode_frame, encode_json

        try:
            # decoded as a host's JSON parser reads it: a lone surrogate (escaped, as
            # JSON.stringify writes it) is valid JSON that msgspec alone refuses
            frame = decode_frame(encode_json(frame).decode("utf-8"))
        except RecursionError:
            return []  # nested deeper than a recursive check follows (the writer encodes it without)
        except (TypeError, ValueError) as exc:
            return [f"frame cannot be written as JSON: {exc}"]
        name = outbound_def(frame)
        if name is None:
            kind = frame.get("type") if isinstance(frame, dict) else type(frame).__name__
            return [f"no outbound frame of type {kind!r} exists in the protocol"]
        validator = self._validators.get(name)
        if validator is None:
            root = {"$ref": f"#/$defs/{name}", "$defs": self._schema["$defs"]}
            validator = self._validator_type(root)
            self._validators[name] = validator
        try:
            return [
                f"{name} at /{'/'.join(str(p) for p in error.absolute_path)}: {error.message}"
                for error in validator.iter_errors(frame)
            ]
        except RecursionError:
            # nested deeper than the validator can follow (a long session's get_tree, every
            # entry a level): not checked, never an error for the writer that asked
            return []
