"""The published JSON Schema: generated from the wire types, valid 2020-12, complete, committed fresh."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from xcsh.rpc.schema import FrameChecker, protocol_schema

DOCS = Path(__file__).resolve().parents[2] / "docs"

# The catalogue of shared/spec/rpc-protocol.md: §5 command index, §6.1 events, §8.1 UI methods.
SPEC_COMMANDS = {
    "prompt", "steer", "follow_up", "abort", "abort_and_prompt", "new_session",
    "get_state", "set_todos", "set_host_tools", "get_integrations", "set_locale",
    "set_model", "cycle_model", "get_available_models",
    "set_thinking_level", "cycle_thinking_level",
    "set_steering_mode", "set_follow_up_mode", "set_interrupt_mode",
    "compact", "set_auto_compaction", "set_auto_retry", "abort_retry", "bash", "abort_bash",
    "get_session_stats", "export_html", "switch_session", "branch", "get_branch_messages",
    "get_last_assistant_text", "set_session_name", "get_messages",
}  # fmt: skip
SPEC_EVENTS = {
    "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
    "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
    "auto_compaction_start", "auto_compaction_end", "auto_retry_start", "auto_retry_end",
    "retry_fallback_applied", "retry_fallback_succeeded", "ttsr_triggered", "todo_reminder",
    "todo_auto_clear",
}  # fmt: skip
SPEC_UI_METHODS = {
    "select", "confirm", "input", "editor", "cancel", "notify", "setStatus", "setWidget",
    "setTitle", "set_editor_text",
}  # fmt: skip


@pytest.fixture(scope="module")
def printed() -> str:
    result = subprocess.run(
        [sys.executable, "-m", "xcsh", "rpc-schema"], capture_output=True, text=True, check=True, timeout=60
    )
    return result.stdout


def test_rpc_schema_prints_a_valid_json_schema_2020_12(printed: str) -> None:
    schema = json.loads(printed)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_the_committed_schema_in_docs_is_the_generated_one(printed: str) -> None:
    committed = (DOCS / "rpc-schema.json").read_text(encoding="utf-8")
    assert committed == printed, "docs/rpc-schema.json is stale: run `xcsh rpc-schema > docs/rpc-schema.json`"


def test_the_schema_covers_every_command_event_and_ui_method_of_the_spec() -> None:
    schema = protocol_schema()
    assert set(schema["x-commands"]) >= SPEC_COMMANDS
    assert set(schema["x-events"]) >= SPEC_EVENTS
    assert set(schema["x-ui-methods"]) >= SPEC_UI_METHODS
    defs = schema["$defs"]
    for name, entry in schema["x-commands"].items():
        request = defs[entry["request"].rsplit("/", 1)[1]]
        assert request["properties"]["type"] == {"const": name}
        assert request.get("description"), f"{name} has no description"
        assert entry["response"].rsplit("/", 1)[1] in defs
    for definition in defs.values():
        for key, prop in definition.get("properties", {}).items():
            assert isinstance(prop, dict), key


VALID_INBOUND: list[dict[str, Any]] = [
    {"type": "get_state"},
    {"id": "1", "type": "prompt", "message": "hi", "streamingBehavior": "followUp"},
    {
        "type": "prompt",
        "message": "hi",
        "images": [{"type": "image", "data": "AA==", "mimeType": "image/png"}],
    },
    {"type": "set_steering_mode", "mode": "all"},
    {"type": "set_host_tools", "tools": [{"name": "echo", "description": "d", "parameters": {}}]},
    {"type": "host_tool_result", "id": "h", "result": {"content": [{"type": "text", "text": "ok"}]}},
    {"type": "extension_ui_response", "id": "u", "cancelled": True},
]
INVALID_INBOUND: list[dict[str, Any]] = [
    {"type": "set_steering_mode", "mode": "bogus"},
    {"type": "set_follow_up_mode", "mode": ["all"]},
    {"type": "prompt"},
    {"type": "prompt", "message": 5},
    {"type": "set_auto_retry", "enabled": "yes"},
    {"type": "no_such_command"},
]


@pytest.mark.parametrize("frame", VALID_INBOUND)
def test_spec_examples_of_inbound_frames_match_the_schema(frame: dict[str, Any]) -> None:
    inbound = {"$ref": "#/$defs/InboundFrame", "$defs": protocol_schema()["$defs"]}
    assert list(Draft202012Validator(inbound).iter_errors(frame)) == []


@pytest.mark.parametrize("frame", INVALID_INBOUND)
def test_invalid_inbound_frames_do_not_match_the_schema(frame: dict[str, Any]) -> None:
    inbound = {"$ref": "#/$defs/InboundFrame", "$defs": protocol_schema()["$defs"]}
    assert not Draft202012Validator(inbound).is_valid(frame)


def test_the_frame_checker_accepts_spec_frames_and_names_what_is_wrong() -> None:
    checker = FrameChecker()
    assert checker.violations({"type": "ready", "version": "0.1.0"}) == []
    assert (
        checker.violations({"id": "s", "type": "response", "command": "set_steering_mode", "success": True})
        == []
    )
    assert checker.violations({"type": "response", "command": "parse", "success": False, "error": "x"}) == []
    assert (
        checker.violations({"type": "response", "command": "cycle_model", "success": True, "data": None})
        == []
    )
    assert (
        checker.violations({"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "e"})
        == []
    )
    ui = {"type": "extension_ui_request", "id": "u", "method": "notify", "message": "m", "notifyType": "info"}
    assert checker.violations(ui) == []
    assert checker.violations({"type": "response", "command": "get_state", "success": True}) == [
        "GetStateResponse at /: 'data' is a required property"
    ]
    assert checker.violations({"type": "response", "command": "abort", "success": True, "data": 1}) != []
    assert checker.violations({"type": "auto_retry_end", "success": "no", "attempt": 1}) != []
    assert checker.violations({"type": "mystery"}) == [
        "no outbound frame of type 'mystery' exists in the protocol"
    ]


def test_the_frame_checker_accepts_a_frame_carrying_a_lone_surrogate_the_server_can_write() -> None:
    # a prompt's text may hold a lone surrogate (valid JSON escape "\\ud800"); the server echoes
    # it in message_start/get_messages, escaped as JSON.stringify writes it: a valid frame
    message = {"role": "user", "content": [{"type": "text", "text": "a\ud800b"}], "timestamp": 1}
    assert FrameChecker().violations({"type": "message_start", "message": message}) == []


def test_the_frame_checker_does_not_raise_on_a_tree_deeper_than_it_can_follow() -> None:
    # get_tree of a long linear session nests one level per entry; the checker runs inside the
    # frame writer (XCSH_RPC_CHECK_FRAMES), so raising there would lose the response
    for depth in (400, 3000):  # json.loads reads the first, not the second; jsonschema follows neither
        node: dict[str, Any] = {
            "id": "e0",
            "parentId": None,
            "type": "message",
            "timestamp": "t",
            "children": [],
        }
        root = node
        for i in range(1, depth):
            child = {
                "id": f"e{i}",
                "parentId": node["id"],
                "type": "message",
                "timestamp": "t",
                "children": [],
            }
            node["children"].append(child)
            node = child
        frame = {"id": "t", "type": "response", "command": "get_tree", "success": True}
        frame["data"] = {"tree": [root], "leafId": node["id"], "path": []}
        assert FrameChecker().violations(frame) == []


def test_the_committed_protocol_page_is_generated_from_the_schema() -> None:
    from xcsh.rpc.docs import render

    committed = (DOCS / "protocol.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "docs/protocol.md is stale: run `python -m xcsh.rpc.docs > docs/protocol.md`"
    )


def test_the_protocol_page_documents_every_command_event_and_field() -> None:
    page = (DOCS / "protocol.md").read_text(encoding="utf-8")
    schema = protocol_schema()
    for name, entry in schema["x-commands"].items():
        assert f"\n### {name}\n" in page and f"client.{name}(" in page
        request = schema["$defs"][entry["request"].rsplit("/", 1)[1]]
        for field in request["properties"]:
            if field != "type":
                assert f"| `{field}` |" in page
    for name in [*schema["x-events"], *schema["x-ui-methods"]]:
        assert f"\n### {name}\n" in page
