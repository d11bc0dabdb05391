"""A provider answering garbage, seen from a host: a plain error, retries as the spec says, the
process goes on serving and the session file stays valid (tests/ai/test_stream_shapes.py has
the table of shapes on every wire; this is the end-to-end view on the real process)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

WRONG_SHAPE = b'data: {"id": "c1", "choices": "oops"}\n\n'


async def test_a_wrongly_shaped_answer_ends_in_a_plain_error_without_retry_and_a_cut_one_is_retried(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("retry:\n  baseDelayMs: 1\n")
    args = ["--model", "fake/fake-model", "--no-tools", "--session-dir", str(workspace.sess)]
    fake_llm.script(
        script.garbage(WRONG_SHAPE),
        script.cut("half an ans"),
        script.text("the answer"),
        script.text("still here"),
    )
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        first = await client.prompt_and_wait("one?", timeout=60)
        second = await client.prompt_and_wait("two?", timeout=60)
        third = await client.prompt_and_wait("three?", timeout=60)
        state = await client.get_state()
        messages = await client.get_messages()
    failed = [
        f["message"] for f in first if f["type"] == "message_end" and f["message"]["role"] == "assistant"
    ]
    assert [m["stopReason"] for m in failed] == ["error"]
    assert failed[0]["errorMessage"] == (
        "Malformed response from fake (OpenAI chat completions stream): choices is a string, expected an array"
    )
    assert not any(f["type"].startswith("auto_retry") for f in first)  # malformed: not transient
    retries = [f for f in second if f["type"] == "auto_retry_start"]
    assert len(retries) == 1 and retries[0]["errorMessage"].startswith("Connection error: fake closed")
    assert next(f for f in second if f["type"] == "auto_retry_end")["success"] is True
    assert messages[-1]["content"] == [{"type": "text", "text": "still here"}]
    assert not any(f["type"] == "response" and f.get("success") is False for f in [*first, *second, *third])

    session = Path(state["sessionFile"])
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    errors = [e for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "error"]
    assert [e["message"]["errorMessage"] for e in errors] == [
        failed[0]["errorMessage"],
        retries[0]["errorMessage"],
    ]
    # the file reopens in a new process, which goes on from it
    fake_llm.script(script.text("reopened"))
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        switched = await client.switch_session(str(session))
        await client.prompt_and_wait("four?", timeout=60)
        reopened = await client.get_messages()
    assert switched["cancelled"] is False
    prompts = [m["content"] for m in reopened if m["role"] == "user"]
    assert prompts == [[{"type": "text", "text": t}] for t in ("one?", "two?", "three?", "four?")]
    assert reopened[-1]["content"] == [{"type": "text", "text": "reopened"}]
