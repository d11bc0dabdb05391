"""Shared pieces of the agent-conformance tests: a host tool with an optional field, spawning, session entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Workspace
from xcsh.rpc.client import RpcClient

Frame = dict[str, Any]

ECHO = {
    "name": "echo_host",
    "label": "Echo Host",
    "description": "Echo a value",
    "parameters": {
        "type": "object",
        "properties": {"message": {"type": "string"}, "note": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": False,
    },
}


def spawn(ws: Workspace, *args: str) -> Any:
    """The real process in ``ws`` run with exactly ``args``."""
    return RpcClient.spawn(args=list(args), cwd=ws.proj, env=ws.env)


def entries(path: str) -> list[Frame]:
    """The entries of the session file at ``path`` (without its header)."""
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
