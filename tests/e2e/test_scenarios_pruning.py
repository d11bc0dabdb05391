"""Tool-output pruning before the threshold check (agent-behaviour §7.2), against the real process.

Default limits: the newest 40 000 estimated tokens of tool output and every ``read``
result are protected; older outputs are pruned when that saves at least 20 000 tokens.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from conftest import Workspace
from e2e.helpers import text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

OUTPUT_CHARS = 45_000  # about 11 250 estimated tokens per bash output, under the 50 KB tool limit


def _bash(call_id: str, fill: str) -> tuple[str, str, dict[str, Any]]:
    return (call_id, "bash", {"command": f"printf '%*s' {OUTPUT_CHARS} '' | tr ' ' {fill}"})


def _workspace_files(proj: Path) -> None:
    (proj / "notes.txt").write_text("".join(f"note {i:03d} " + "n" * 90 + "\n" for i in range(200)))
    (proj / "hay.txt").write_text("".join(f"needle {i:02d} " + "h" * 980 + "\n" for i in range(60)))


def _tool_texts(request_json: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: text_of(m) for m in request_json["messages"] if m["role"] == "tool"}


async def test_old_bash_and_grep_outputs_are_pruned_so_the_next_request_needs_no_compaction(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _workspace_files(workspace.proj)
    fake_llm.script(
        script.tool_calls(
            ("r1", "read", {"path": "notes.txt"}),
            ("g1", "grep", {"pattern": "needle", "path": "hay.txt", "limit": 48}),
            _bash("b1", "a"),
        ),
        script.tool_calls(_bash("b2", "b"), _bash("b3", "c"), _bash("b4", "d"), _bash("b5", "e")),
        # 110 010 context tokens pass the 108 800 threshold of the 128 000 window, but not once
        # the two pruned outputs (~23 000 tokens) are taken off
        script.text("done", usage=(110_000, 10)),
        script.text("next answer"),
    )
    args = ["--model", "fake/fake-model", "--tools", "read,grep,bash", "--session-dir", str(workspace.sess)]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        first = await client.prompt_and_wait("look around?", timeout=20)
        second = await client.prompt_and_wait("next?", timeout=20)
        messages = await client.get_messages()
        state = await client.get_state()

    outputs = {
        f["toolCallId"]: f["result"]["content"][0]["text"] for f in first if f["type"] == "tool_execution_end"
    }
    assert all(not f["isError"] for f in first if f["type"] == "tool_execution_end")
    assert len(outputs["b1"]) == OUTPUT_CHARS and len(outputs["g1"]) > 40_000
    notices = {k: f"[Output truncated - {math.ceil(len(outputs[k]) / 4)} tokens]" for k in ("g1", "b1")}

    assert not [f for f in first + second if f["type"].startswith("auto_compaction")]
    # the run's own requests still carried every output; pruning happened after it ended
    assert _tool_texts(fake_llm.requests[2].json) == outputs
    # the next prompt's request carries the notices instead of the two old outputs
    assert _tool_texts(fake_llm.requests[3].json) == {**outputs, **notices}
    assert text_of(messages[-1]) == "next answer"

    live = {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}
    assert {k for k, m in live.items() if "prunedAt" in m} == {"g1", "b1"}
    assert live["b1"]["content"] == [{"type": "text", "text": notices["b1"]}]
    lines = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    stored = {
        e["message"]["toolCallId"]: e["message"]
        for e in lines
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    }
    assert stored == live
