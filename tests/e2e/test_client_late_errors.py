"""The typed client reports a prompt's late failure (rpc-protocol §3 case 3) in either frame order.

A `prompt` is acknowledged at once; when it fails later (busy, no API key, an abort before its
run) the server writes a second `success:false` response with the same id. Clients must not
depend on the order of the two frames. The client once dropped the second one: a refused
prompt looked like a success and `prompt_and_wait` returned another run's events (review 3 D3).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from conftest import BASE_ARGS, Workspace, user_texts
from xcsh.coding.errors import BUSY_TEXT
from xcsh.rpc.client import RpcClient, RpcError
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import Gate

# A scripted server: "refused" is answered the reference's way (the error before the
# acknowledgement); any other prompt is acknowledged, and its failure is written with the
# answer to the next get_state (so it surely arrives after the acknowledgement).
SCRIPTED_SERVER = """
import json, sys
def write(frame):
    sys.stdout.write(json.dumps(frame) + "\\n")
    sys.stdout.flush()
def answer(cid, command, **rest):
    write({"id": cid, "type": "response", "command": command, **rest})
write({"type": "ready", "version": "0"})
late = None
for line in sys.stdin:
    frame = json.loads(line)
    cid = frame.get("id")
    if frame["type"] == "prompt" and frame["message"] == "refused":
        answer(cid, "prompt", success=False, error="Agent is already processing.")
        answer(cid, "prompt", success=True)
    elif frame["type"] == "prompt":
        answer(cid, "prompt", success=True)
        late = cid
    elif frame["type"] == "get_state":
        answer(cid, "get_state", success=True, data={"isStreaming": True})
        if late is not None:
            answer(late, "prompt", success=False, error="No API key found for fake.")
            late = None
"""


def _scripted(tmp_path: Path) -> list[str]:
    server = tmp_path / "server.py"
    server.write_text(SCRIPTED_SERVER)
    return [sys.executable, str(server)]


async def test_a_prompt_refused_before_its_acknowledgement_raises_rpc_error(tmp_path: Path) -> None:
    async with RpcClient.spawn(command=_scripted(tmp_path), cwd=tmp_path) as client:
        with pytest.raises(RpcError) as refused:
            await client.prompt("refused")
    assert refused.value.response["error"] == "Agent is already processing."


async def test_wait_for_idle_raises_when_a_prompt_fails_after_its_acknowledgement(tmp_path: Path) -> None:
    async with RpcClient.spawn(command=_scripted(tmp_path), cwd=tmp_path) as client:
        start = client.mark()
        await client.prompt("fails later")  # acknowledged; its failure is not written yet
        waiting = asyncio.ensure_future(client.wait_for_idle(since=start, timeout=15))
        await client.get_state()  # the server writes the late failure with this answer
        with pytest.raises(RpcError) as failed:
            await waiting
    assert failed.value.response["error"] == "No API key found for fake."


async def test_a_prompt_refused_as_busy_raises_and_prompt_and_wait_returns_no_other_run(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    gate = Gate()
    fake_llm.script(script.hold("long running", gate))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        await client.prompt("first")
        await client.wait_for(lambda f: f.get("type") == "message_update", since=start)
        with pytest.raises(RpcError) as busy:
            await client.prompt("second")
        with pytest.raises(RpcError) as busy_too:
            await client.prompt_and_wait("third", timeout=30)
        gate.release()
        await client.wait_for_idle(since=start, timeout=30)
    assert busy.value.response["error"] == BUSY_TEXT
    assert busy_too.value.response["error"] == BUSY_TEXT
    assert [user_texts(r.json)[-1].rsplit("\n", 1)[-1] for r in fake_llm.requests] == ["first"]


async def test_prompt_and_wait_raises_when_its_prompt_is_aborted_before_its_run(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # the prompt waits for a threshold compaction; the host's stop button aborts it (review 3 D1:
    # prompt_and_wait waited for ever)
    summarising = Gate()
    fake_llm.script(script.text("big answer", usage=(120000, 10)), script.hold("SUMMARY", summarising))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        await client.prompt("work?")
        await client.wait_for_type("auto_compaction_start", since=start)
        asked = client.mark()

        async def stop_once_acknowledged() -> None:
            await client.wait_for(lambda f: f.get("command") == "prompt", since=asked)
            await client.abort()

        stopping = asyncio.ensure_future(stop_once_acknowledged())
        with pytest.raises(RpcError) as aborted:
            await client.prompt_and_wait("second question", timeout=30)
        await stopping
    assert aborted.value.response["error"] == "Prompt aborted before its run started"
