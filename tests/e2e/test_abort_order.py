"""An `abort` stops what was written before it, also while that waits behind a blocking command.

Control frames act at once (rpc-protocol §2.4 project decision), so an `abort` read while a
`bash` runs takes effect before the commands queued behind that `bash`. A `prompt` written
before the abort must still not run after it (review 3 D2): it is answered, then reported
with the late error of spec §3 case 3; a prompt written after the abort runs normally.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import BASE_ARGS, Workspace, user_texts
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]


def _line(frame: Frame) -> bytes:
    return json.dumps(frame).encode() + b"\n"


def _responses(frames: list[Frame], cid: str) -> list[Frame]:
    return [f for f in frames if f["type"] == "response" and f.get("id") == cid]


async def test_an_abort_written_after_a_prompt_queued_behind_bash_stops_that_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("answer to the prompt written after the abort"))
    go = workspace.proj / "go"  # the bash waits for it, so the prompt stays queued behind it
    wait = f"while [ ! -e {go} ]; do sleep 0.02; done"
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        client.send_raw(
            _line({"id": "sh", "type": "bash", "command": wait})
            + _line({"id": "before", "type": "prompt", "message": "written before the abort"})
            + _line({"id": "stop", "type": "abort"})
            + _line({"id": "after", "type": "prompt", "message": "written after the abort"})
        )
        await client.wait_for(lambda f: f.get("id") == "stop", since=start, timeout=30)
        go.touch()
        await client.wait_for(
            lambda f: f.get("id") == "before" and f.get("success") is False, since=start, timeout=30
        )
        await client.wait_for_idle(since=start, timeout=30)
        frames = client.frames[start:]
    assert [r["success"] for r in _responses(frames, "before")] == [True, False]
    assert _responses(frames, "before")[1]["error"] == "Prompt aborted before its run started"
    assert [r["success"] for r in _responses(frames, "after")] == [True]
    assert [user_texts(r.json)[-1].rsplit("\n", 1)[-1] for r in fake_llm.requests] == [
        "written after the abort"
    ]


async def test_an_abort_written_after_an_abort_and_prompt_queued_behind_bash_stops_its_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    go = workspace.proj / "go"
    wait = f"while [ ! -e {go} ]; do sleep 0.02; done"
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        client.send_raw(
            _line({"id": "sh", "type": "bash", "command": wait})
            + _line({"id": "ap", "type": "abort_and_prompt", "message": "written before the abort"})
            + _line({"id": "stop", "type": "abort"})
        )
        await client.wait_for(lambda f: f.get("id") == "stop", since=start, timeout=30)
        go.touch()
        await client.wait_for(
            lambda f: f.get("id") == "ap" and f.get("success") is False, since=start, timeout=30
        )
        state = await client.get_state()
        frames = client.frames[start:]
    assert [r["success"] for r in _responses(frames, "ap")] == [True, False]
    assert not any(f["type"] == "agent_start" for f in frames)
    assert state["isStreaming"] is False
    assert fake_llm.requests == []
