"""Shared pieces of the host-tool scenario tests: the echo tool, spawning, host results, frame filters."""

from __future__ import annotations

import re
from typing import Any

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient

Frame = dict[str, Any]

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}
ECHO = {"name": "echo_host", "label": "Echo Host", "description": "Echo a value", "parameters": ECHO_SCHEMA}
HEX16 = re.compile(r"[0-9a-f]{16}")


def spawn(ws: Workspace, *extra: str) -> Any:
    return RpcClient.spawn(args=[*BASE_ARGS, *extra], cwd=ws.proj, env=ws.env)


def text_result(text: str, **extra: Any) -> Frame:
    return {"content": [{"type": "text", "text": text}], **extra}


def no_host_responses(frames: list[Frame]) -> bool:
    """No response frame was written for host_tool_update / host_tool_result lines."""
    return not [
        f
        for f in frames
        if f["type"] == "response" and f.get("command") in ("host_tool_result", "host_tool_update", "parse")
    ]
