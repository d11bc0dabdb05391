"""Bad input gets the spec's error answer and the process keeps serving (rpc-protocol §3–§4)."""

from __future__ import annotations

import json
from typing import Any

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient

UNDEFINED = {"type": "response", "success": False, "error": "Unknown command: undefined"}


def _parse_error(frame: dict[str, Any]) -> bool:
    return (
        frame.get("command") == "parse"
        and frame.get("success") is False
        and frame.get("error", "").startswith("Failed to parse command: ")
        and "id" not in frame
    )


JUNK: list[tuple[bytes, Any]] = [
    (b'{"type": "get_state"', _parse_error),
    (b"not json at all", _parse_error),
    (b"42", UNDEFINED),
    (b'"a string"', UNDEFINED),
    (b"null", _parse_error),
    (b"{}", UNDEFINED),
    (b"[]", UNDEFINED),
    (b"true", UNDEFINED),
    (
        b'{"id": "x", "type": "no_such_command"}',
        {
            "type": "response",
            "command": "no_such_command",
            "success": False,
            "error": "Unknown command: no_such_command",
        },
    ),
    (b'{"id": "y", "type": "prompt", "message": 5}', _parse_error),
    (b'{"id": "z", "type": "set_model", "provider": null, "modelId": []}', _parse_error),
    (b'{"id": "w", "type": "set_session_name", "name": {"a": 1}}', _parse_error),
    (
        b'{"id": "t", "type": "set_thinking_level", "level": 5}',
        lambda f: (
            f.get("id") == "t"
            and f.get("success") is False
            and f["error"].startswith("Invalid thinking level: 5.")
        ),
    ),
    (b"\xff\xfe\xfd invalid utf-8 \xc3\x28", _parse_error),
    (
        b'{"type": "host_tool_result", "id": "h", "result": {"text": "no content"}}',
        {
            "type": "response",
            "command": "host_tool_result",
            "success": False,
            "error": "Unknown command: host_tool_result",
        },
    ),
    (
        b'{"type": "host_tool_update", "id": 5, "partialResult": {"content": []}}',
        {
            "type": "response",
            "command": "host_tool_update",
            "success": False,
            "error": "Unknown command: host_tool_update",
        },
    ),
    (b"\x00\x01\x02\x03 binary", _parse_error),
    (b'{"type": "steer", "message": null}', _parse_error),
    (b'{"type": "prompt", "message": "x", "images": "not a list"}', _parse_error),
    (b"{" * 5000, _parse_error),
]


def _matches(expected: Any, frame: dict[str, Any]) -> bool:
    return expected(frame) if callable(expected) else frame == expected


async def test_a_thousand_junk_lines_each_get_an_error_and_the_process_still_answers(
    workspace: Workspace,
) -> None:
    lines: list[tuple[bytes, Any]] = [JUNK[i % len(JUNK)] for i in range(999)]
    lines.append((b"x" * (5 * 1024 * 1024), _parse_error))  # a 5 MB line of junk
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env, timeout=120) as client:
        mark = client.mark()
        for raw, _ in lines:
            client.send_raw(raw + b"\n")
        assert client.process.stdin is not None
        await client.process.stdin.drain()

        def answered(_: dict[str, Any]) -> bool:
            return sum(1 for f in client.frames[mark:] if f["type"] == "response") >= len(lines)

        await client.wait_for(answered, since=mark, timeout=120)
        responses = [f for f in client.frames[mark:] if f["type"] == "response"]
        state = await client.request({"id": "final", "type": "get_state"}, timeout=30)
        assert client.process.returncode is None
    assert state["success"] is True and state["data"]["isStreaming"] is False
    assert len(responses) == len(lines)
    for (raw, expected), frame in zip(lines, responses, strict=True):
        assert _matches(expected, frame), (raw[:80], frame)


async def test_a_final_line_without_newline_is_still_processed_before_exit(workspace: Workspace) -> None:
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    client.send_raw(json.dumps({"id": "last", "type": "get_state"}).encode())
    code = await client.close()
    assert code == 0
    assert any(f.get("id") == "last" and f.get("success") for f in client.frames)


async def test_crlf_line_endings_and_unicode_separators_inside_strings_are_accepted(
    workspace: Workspace,
) -> None:
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        mark = client.mark()
        client.send_raw(b'{"id": "crlf", "type": "get_state"}\r\n')
        client.send_raw('{"id": "sep", "type": "set_session_name", "name": "a\u2028b\u2029c"}\n'.encode())
        await client.wait_for(lambda f: f.get("id") == "sep", since=mark)
        crlf = next(f for f in client.frames[mark:] if f.get("id") == "crlf")
        state = await client.get_state()
    assert crlf["success"] is True
    assert state["sessionName"] == "a\u2028b\u2029c"
