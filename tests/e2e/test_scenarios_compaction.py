"""Scenarios S45–S48 (compaction) against the real `xcsh --mode rpc` process."""

from __future__ import annotations

from typing import Any

from conftest import BASE_ARGS, Workspace
from e2e.helpers import kinds, text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

KEEP_10 = "compaction:\n  keepRecentTokens: 10\n"
Y40 = "y" * 40


def spawn(ws: Workspace) -> Any:
    return RpcClient.spawn(args=BASE_ARGS, cwd=ws.proj, env=ws.env)


def _prompt_text(request: Any) -> str:
    messages = request.json["messages"]
    return "\n".join(text_of(m) for m in messages if m["role"] == "user")


async def test_s45_compacting_a_tiny_session_fails_with_a_parse_error(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("hi"))
    async with spawn(workspace) as client:
        await client.prompt_and_wait("hello?")
        response = await client.request({"id": "k", "type": "compact"})
    assert response == {
        "type": "response",
        "command": "parse",
        "success": False,
        "error": "Failed to parse command: Nothing to compact (session too small)",
    }


async def test_s46_manual_compaction_summarises_older_messages_and_keeps_recent_ones(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config(KEEP_10)
    fake_llm.script(
        script.text("first answer"), script.text("ok"), script.text("SUMMARY-TEXT"), script.text("SHORT-TEXT")
    )
    async with spawn(workspace) as client:
        await client.prompt_and_wait("question one?")
        await client.prompt_and_wait(Y40)
        branch = await client.get_branch_messages()
        mark = client.mark()
        response = await client.request(
            {"id": "k", "type": "compact", "customInstructions": "focus on tests"}, timeout=10
        )
        messages = await client.get_messages()
        again = await client.request({"id": "k2", "type": "compact"})
        events = [f for f in client.frames[mark:] if f["type"] != "response"]
    e1, e2 = (b["entryId"] for b in branch)
    assert [b["text"] for b in branch] == ["question one?", Y40] and e1 != e2
    assert response == {
        "id": "k",
        "type": "response",
        "command": "compact",
        "success": True,
        "data": {
            "summary": "SUMMARY-TEXT",
            "shortSummary": "SHORT-TEXT",
            "firstKeptEntryId": e2,
            "tokensBefore": 2,
            "details": {"readFiles": [], "modifiedFiles": []},
            "preserveData": {},
        },
    }
    summary = messages[0]
    assert {k: summary[k] for k in ("role", "summary", "shortSummary", "tokensBefore")} == {
        "role": "compactionSummary",
        "summary": "SUMMARY-TEXT",
        "shortSummary": "SHORT-TEXT",
        "tokensBefore": 2,
    }
    assert [(m["role"], text_of(m)) for m in messages[1:]] == [("user", Y40), ("assistant", "ok")]
    assert not [e for e in events if e["type"].startswith("auto_compaction")]
    request = fake_llm.requests[2].json
    assert "tools" not in request
    assert request["messages"][0]["role"] == "system" and "summar" in request["messages"][0]["content"]
    assert [m["role"] for m in request["messages"][1:]] == ["user"]
    prompt = text_of(request["messages"][1])
    for part in ("<conversation>", "[User]: question one?", "[Assistant]: first answer"):
        assert part in prompt
    assert "Additional focus: focus on tests" in prompt
    assert again == {
        "type": "response",
        "command": "parse",
        "success": False,
        "error": "Failed to parse command: Already compacted",
    }


async def test_s47_threshold_compaction_summarises_and_continues(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        script.text("big answer", usage=(120000, 10)),
        script.text("PREFIX-SUMMARY"),
        script.text("SHORT"),
        script.text("continuing"),
    )
    async with spawn(workspace) as client:
        frames = await client.prompt_and_wait("work?")
        messages = await client.get_messages()
    types = kinds(frames)
    first_end = types.index("agent_end")
    assert types[first_end + 1 : first_end + 3] == ["auto_compaction_start", "auto_compaction_end"]
    start = frames[[f["type"] for f in frames].index("auto_compaction_start")]
    end = frames[[f["type"] for f in frames].index("auto_compaction_end")]
    assert start == {"type": "auto_compaction_start", "reason": "threshold", "action": "context-full"}
    assert (end["action"], end["aborted"], end["willRetry"]) == ("context-full", False, False)
    result = end["result"]
    assert result["summary"].startswith("No prior history.")
    assert "**Turn Context (split turn):**\n\nPREFIX-SUMMARY" in result["summary"]
    assert (result["shortSummary"], result["tokensBefore"]) == ("SHORT", 120010)
    rest = types[first_end + 3 :]
    assert rest[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    developer = [f for f in frames if f["type"] == "message_end"][2]["message"]
    assert developer["role"] == "developer"
    assert developer["content"] == [{"type": "text", "text": "Continue if you have next steps."}]
    assert rest[-1] == "agent_end" and text_of(messages[-1]) == "continuing"
    assert [m["role"] for m in messages] == ["compactionSummary", "assistant", "developer", "assistant"]
    continuation = fake_llm.requests[3].json["messages"]
    assert "PREFIX-SUMMARY" in text_of(continuation[1]) and text_of(continuation[2]) == "big answer"


async def test_s47_no_compaction_events_when_auto_compaction_is_off(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("big answer", usage=(120000, 10)))
    async with spawn(workspace) as client:
        await client.set_auto_compaction(False)
        frames = await client.prompt_and_wait("work?")
    assert not [f for f in frames if f["type"].startswith("auto_compaction")]


async def test_s48_overflow_error_is_compacted_away_and_the_request_retried(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config(KEEP_10)
    fake_llm.script(
        script.text("ok"),
        script.http_error(400, "prompt is too long: 150000 tokens > 128000 maximum"),
        script.text("SUM"),
        script.text("SHORT"),
        script.text("recovered"),
    )
    async with spawn(workspace) as client:
        await client.prompt_and_wait("question one?")
        frames = await client.prompt_and_wait(Y40)
        messages = await client.get_messages()
    types = kinds(frames)
    first_end = types.index("agent_end")
    error_end = [f for f in frames if f["type"] == "message_end"][1]["message"]
    assert error_end["stopReason"] == "error" and "prompt is too long" in error_end["errorMessage"]
    assert types[first_end + 1 : first_end + 3] == ["auto_compaction_start", "auto_compaction_end"]
    start, end = (f for f in frames if f["type"].startswith("auto_compaction"))
    assert start == {"type": "auto_compaction_start", "reason": "overflow", "action": "context-full"}
    assert (end["aborted"], end["willRetry"], end["result"]["summary"]) == (False, True, "SUM")
    assert types[first_end + 3 :] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert not [f for f in frames if f["type"].startswith("auto_retry")]
    assert [
        (m["role"], text_of(m) if m["role"] != "compactionSummary" else m["summary"]) for m in messages
    ] == [
        ("compactionSummary", "SUM"),
        ("user", Y40),
        ("assistant", "recovered"),
    ]
    retried = _prompt_text(fake_llm.requests[4])  # summary and kept user message (merged for the model)
    assert "<summary>\nSUM\n</summary>" in retried and retried.endswith(Y40)


async def test_compact_during_a_run_aborts_it_first_then_compacts(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config(KEEP_10)
    fake_llm.script(
        script.text("first answer"), script.hold("partial"), script.text("SUMMARY"), script.text("SHORT")
    )
    async with spawn(workspace) as client:
        await client.prompt_and_wait("question one?")
        mark = client.mark()
        await client.prompt(Y40)
        await client.wait_for_type("message_update", since=mark)
        result = await client.compact()
        state = await client.get_state()
        messages = await client.get_messages()
    aborted = [f for f in client.frames[mark:] if f["type"] == "message_end"][-1]["message"]
    assert aborted["stopReason"] == "aborted"
    assert result["summary"] == "SUMMARY" and result["shortSummary"] == "SHORT"
    assert (state["isStreaming"], state["isCompacting"]) == (False, False)
    assert [m["role"] for m in messages] == ["compactionSummary", "user", "assistant"]
    assert "[User]: question one?" in _prompt_text(fake_llm.requests[2])


async def test_a_400_with_an_empty_body_is_compacted_away_as_an_overflow_and_retried(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """Spec §7.5 counts "400 (no body)" as an overflow; it reads "… answered HTTP 400 (Bad Request)
    with an empty body" here, and recovery did not start (review 2 D5)."""
    workspace.config(KEEP_10)
    fake_llm.script(
        script.text("ok"),
        script.http_error(400, raw_body=b""),
        script.text("SUM"),
        script.text("SHORT"),
        script.text("recovered"),
    )
    async with spawn(workspace) as client:
        await client.prompt_and_wait("question one?")
        frames = await client.prompt_and_wait(Y40)
        messages = await client.get_messages()
    error_end = [f for f in frames if f["type"] == "message_end"][1]["message"]
    assert error_end["errorMessage"].endswith("answered HTTP 400 (Bad Request) with an empty body")
    starts = [f for f in frames if f["type"] == "auto_compaction_start"]
    assert [start["reason"] for start in starts] == ["overflow"]
    assert [m["role"] for m in messages] == ["compactionSummary", "user", "assistant"]
    assert text_of(messages[-1]) == "recovered"
