"""Two tool calls with the same id in one answer (docs/decisions.md, "Duplicate tool-call ids").

Both run, as the model asked for two calls, but the second gets a fresh id (``<id>_2``) as it
starts streaming: every event, host call and result names one call only, and the next request
answers each call once, which the vendors require (a repeated ``tool_use`` id is refused).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Workspace, tool_results
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

pytestmark = pytest.mark.parametrize(
    "workspace", ["openai-completions", "anthropic-messages", "openai-responses"], indirect=True
)


async def test_two_tool_calls_sharing_an_id_both_run_under_distinct_ids(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "a.txt").write_text("alpha\n")
    (workspace.proj / "b.txt").write_text("beta\n")
    fake_llm.script(
        script.tool_calls(("dup", "read", {"path": "a.txt"}), ("dup", "read", {"path": "b.txt"})),
        script.text("read both"),
    )
    args = ["--model", "fake/fake-model", "--tools", "read", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        frames = await client.prompt_and_wait("read a and b?", timeout=60)
        state = await client.get_state()
    calls = next(
        f["message"]["content"]
        for f in frames
        if f["type"] == "message_end" and f["message"]["role"] == "assistant"
    )
    ids = [block["id"] for block in calls if block["type"] == "toolCall"]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert ids[1] == (
        f"{ids[0].split('|')[0]}_2|{ids[0].split('|')[1]}_2" if "|" in ids[0] else f"{ids[0]}_2"
    )
    starts = [f["toolCallId"] for f in frames if f["type"] == "tool_execution_start"]
    ends = {
        f["toolCallId"]: f["result"]["content"][0]["text"]
        for f in frames
        if f["type"] == "tool_execution_end"
    }
    assert sorted(starts) == sorted(ids)  # shared calls run side by side
    assert "alpha" in ends[ids[0]] and "beta" in ends[ids[1]]
    answered = tool_results(fake_llm.requests[1].json)
    if workspace.api == "openai-responses":
        outputs = [i for i in fake_llm.requests[1].json["input"] if i.get("type") == "function_call_output"]
        answered = {i["call_id"]: i["output"] for i in outputs}
    assert len(answered) == 2
    assert sorted("alpha" in v for v in answered.values()) == [False, True]
    session = Path(state["sessionFile"])
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    results = [
        e["message"]["toolCallId"] for e in entries if e.get("message", {}).get("role") == "toolResult"
    ]
    assert sorted(results) == sorted(ids)  # in completion order (spec §3.3)
