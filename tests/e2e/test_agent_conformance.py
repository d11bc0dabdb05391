"""Agent semantics under the wire (agent-behaviour §3, §4, §9), checked against the real process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Workspace
from e2e.helpers import text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

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
    return RpcClient.spawn(args=list(args), cwd=ws.proj, env=ws.env)


def of_call(kind: str, call_id: str) -> Any:
    return lambda f: f.get("type") == kind and f.get("toolCallId") == call_id


def entries(path: str) -> list[Frame]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]


# ---- §4.3: immediate interrupts --------------------------------------------------------------------


async def test_a_call_skipped_before_it_started_reports_is_warning_false(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """Every executed-path tool result carries a boolean isWarning, the never-started skipped one too."""
    fake_llm.script(
        script.tool_calls(
            ("c1", "echo_host", {"message": "a"}), ("c2", "write", {"path": "x.txt", "content": "x"})
        ),
        script.text("done"),
    )
    async with spawn(workspace, "--model", "fake/fake-model", "--no-session", "--tools", "write") as client:
        await client.set_interrupt_mode("immediate")
        await client.set_host_tools([ECHO])
        start = client.mark()
        await client.prompt("go?")
        call = await client.wait_for(lambda f: f.get("type") == "host_tool_call", since=start)
        await client.steer("stop after this")
        client.send_raw(
            {
                "type": "host_tool_result",
                "id": call["id"],
                "result": {"content": [{"type": "text", "text": "a"}]},
            }
        )
        frames = await client.wait_for_idle(since=start)
    end = next(f for f in frames if of_call("tool_execution_end", "c2")(f))
    assert end["isError"] is True and text_of(end["result"]) == "Skipped due to queued user message."
    assert end["isWarning"] is False
    result = next(
        f["message"] for f in frames if f["type"] == "message_end" and f["message"].get("toolCallId") == "c2"
    )
    assert result["isWarning"] is False
    assert not (workspace.proj / "x.txt").exists()


# ---- §3.3: validation -----------------------------------------------------------------------------


async def test_a_missing_required_argument_is_reported_under_its_own_name(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """`Validation failed …:\\n  - <path>: <message>`: a missing property's path is the property."""
    fake_llm.script(script.tool_calls(("c1", "echo_host", {"note": "n"})), script.text("ok"))
    async with spawn(workspace, "--model", "fake/fake-model", "--no-tools", "--no-session") as client:
        await client.set_host_tools([ECHO])
        frames = await client.prompt_and_wait("go?")
    end = next(f for f in frames if of_call("tool_execution_end", "c1")(f))
    lines = text_of(end["result"]).split("\n")
    assert end["isError"] is True and lines[0] == 'Validation failed for tool "echo_host":'
    assert lines[1].startswith("  - message: ") and "message" in lines[1].removeprefix("  - message: ")
    assert lines[2:4] == ["", "Received arguments:"]
    assert json.loads("\n".join(lines[4:])) == {"note": "n"}
