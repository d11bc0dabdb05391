"""Every command field is checked before any state changes (issue: the protocol contract).

A wrong type is the ``parse`` error of rpc-protocol §3 (no id); a well-typed value outside
the accepted set is ``success:false`` with the id. Both name the field and what it accepts,
and ``get_state`` afterwards shows the old value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient

CRASH_LINES = [
    b'{"type":{"a":1}}',
    b'{"type":[]}',
    b'{"type":["get_state"]}',
    b'{"id":"c1","type":{"a":1}}',
    b'{"type":1.5}',
    b'{"type":true}',
]


async def test_a_non_string_type_is_answered_as_unknown_and_the_process_keeps_serving(
    workspace: Workspace,
) -> None:
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        mark = client.mark()
        for line in CRASH_LINES:
            client.send_raw(line + b"\n")
        state = await client.request({"id": "after", "type": "get_state"})
        responses = [f for f in client.frames[mark:] if f["type"] == "response" and f.get("id") != "after"]
        assert client.process.returncode is None
    assert state["success"] is True
    assert len(responses) == len(CRASH_LINES)
    for line, frame in zip(CRASH_LINES, responses, strict=True):
        sent = json.loads(line)["type"]
        assert frame == {
            "type": "response",
            "command": sent,
            "success": False,
            "error": f"Unknown command: {json.dumps(sent)}",
        }


def _parse_error_naming(field: str, *accepted: str) -> Any:
    def check(frame: dict[str, Any]) -> bool:
        error = frame.get("error", "")
        return (
            frame.get("command") == "parse"
            and "id" not in frame
            and error.startswith(f"Failed to parse command: '{field}' must be ")
            and all(a in error for a in accepted)
        )

    return check


def _error_with_id(command: str, field: str, *accepted: str) -> Any:
    def check(frame: dict[str, Any]) -> bool:
        error = frame.get("error", "")
        return (
            frame.get("id") == "bad"
            and frame.get("command") == command
            and frame.get("success") is False
            and field in error
            and all(a in error for a in accepted)
        )

    return check


MODES = ('"all"', '"one-at-a-time"')
# (command, bad fields, how the answer looks, get_state key that must keep its old value)
SETTERS: list[tuple[str, dict[str, Any], Any, str | None]] = [
    ("set_follow_up_mode", {"mode": ["all"]}, _parse_error_naming("mode", *MODES), "followUpMode"),
    (
        "set_follow_up_mode",
        {"mode": "bogus"},
        _error_with_id("set_follow_up_mode", "'mode'", *MODES),
        "followUpMode",
    ),
    ("set_steering_mode", {"mode": 5}, _parse_error_naming("mode", *MODES), "steeringMode"),
    (
        "set_steering_mode",
        {},
        lambda f: f.get("command") == "parse" and "'mode' is required" in f["error"],
        "steeringMode",
    ),
    (
        "set_interrupt_mode",
        {"mode": None},
        _parse_error_naming("mode", '"immediate"', '"wait"'),
        "interruptMode",
    ),
    (
        "set_interrupt_mode",
        {"mode": "now"},
        _error_with_id("set_interrupt_mode", "'mode'", '"immediate"', '"wait"'),
        "interruptMode",
    ),
    (
        "set_thinking_level",
        {"level": ["high"]},
        _error_with_id("set_thinking_level", "thinking level", "xhigh"),
        "thinkingLevel",
    ),
    (
        "set_auto_compaction",
        {"enabled": "false"},
        _parse_error_naming("enabled", "true or false"),
        "autoCompactionEnabled",
    ),
    (
        "set_auto_compaction",
        {"enabled": 0},
        _parse_error_naming("enabled", "true or false"),
        "autoCompactionEnabled",
    ),
    ("set_auto_retry", {"enabled": "yes"}, _parse_error_naming("enabled", "true or false"), None),
    ("set_model", {"provider": "fake", "modelId": 7}, _parse_error_naming("modelId", "a string"), "model"),
    ("set_session_name", {"name": {"a": 1}}, _parse_error_naming("name", "a string"), "sessionName"),
    ("set_locale", {"locale": 3}, _parse_error_naming("locale", "a string"), None),
    (
        "set_todos",
        {"phases": [{"id": "p", "name": "P", "tasks": [{"id": "t", "content": "c", "status": "maybe"}]}]},
        _error_with_id("set_todos", "'phases[0].tasks[0].status'", '"pending"', '"abandoned"'),
        "todoPhases",
    ),
    (
        "set_todos",
        {"phases": "nope"},
        _parse_error_naming("phases", "an array of TodoPhaseInput"),
        "todoPhases",
    ),
    (
        "set_host_tools",
        {"tools": [{"name": "t", "description": "d", "parameters": {}, "hidden": "yes"}]},
        _parse_error_naming("tools[0].hidden", "true or false"),
        "dumpTools",
    ),
]


@pytest.mark.parametrize(
    ("command", "fields", "expected", "state_key"),
    SETTERS,
    ids=[f"{c}-{json.dumps(f)[:30]}" for c, f, _, _ in SETTERS],
)
async def test_a_setter_with_an_invalid_value_is_refused_and_the_state_keeps_the_old_value(
    workspace: Workspace, command: str, fields: dict[str, Any], expected: Any, state_key: str | None
) -> None:
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        before = await client.get_state()
        settings_before = _settings(workspace)
        response = await client.request({"id": "bad", "type": command, **fields})
        after = await client.get_state()
    assert response["success"] is False
    assert expected(response), response
    assert after == before
    if state_key is not None:
        assert after.get(state_key) == before.get(state_key)
    assert _settings(workspace) == settings_before  # nothing persisted either


def _settings(workspace: Workspace) -> str:
    files = sorted(Path(workspace.env["PI_CODING_AGENT_DIR"]).glob("*.yml"))
    return "\n".join(f"{p.name}:{p.read_text()}" for p in files)
