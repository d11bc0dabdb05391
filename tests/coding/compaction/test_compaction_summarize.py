"""Summariser prompts and serialisation (pure), and its model calls against the fake LLM."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import fake_model
from xcsh.ai.abort import AbortController
from xcsh.coding.compaction.prepare import CompactionError, CompactionPreparation, FileOperations
from xcsh.coding.compaction.summarize import (
    SUMMARIZER_SYSTEM_PROMPT,
    CompactionCancelledError,
    Summarizer,
    build_summary_prompt,
    serialize_conversation,
    with_file_operations,
)
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }


def prompt_of(request: dict[str, Any]) -> str:
    content = request["messages"][1]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def test_conversation_is_serialised_as_labelled_plain_text() -> None:
    messages = [
        user("please read"),
        assistant(
            [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "reading"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt", "limit": 5}},
            ]
        ),
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x" * 2500}],
            "isError": False,
            "timestamp": 3,
        },
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a.txt\n",
            "cancelled": False,
            "truncated": False,
        },
    ]
    text = serialize_conversation(messages)
    parts = text.split("\n\n")
    assert parts[0] == "[User]: please read"
    assert parts[1] == "[Assistant thinking]: hmm"
    assert parts[2] == "[Assistant]: reading"
    assert parts[3] == '[Assistant tool calls]: read(path="a.txt", limit=5)'
    assert parts[4] == "[Tool result]: " + "x" * 2000 + "\n[... 500 more characters truncated]"
    assert text.endswith("[User]: Ran `ls`\n```\na.txt\n```")


def test_summary_prompt_wraps_the_transcript_and_appends_the_focus() -> None:
    prompt = build_summary_prompt(
        [user("hi")], instructions="INSTRUCTIONS", previous_summary="OLD", custom_instructions="tests"
    )
    assert prompt == (
        "<conversation>\n[User]: hi\n</conversation>\n\n"
        "<previous-summary>\nOLD\n</previous-summary>\n\n"
        "INSTRUCTIONS\n\nAdditional focus: tests"
    )


def test_file_operation_blocks_are_appended_and_replaced() -> None:
    summary = with_file_operations("S", ["b.txt", "a.txt"][::-1], ["c.py"])
    assert (
        summary
        == "S\n\n<read-files>\na.txt\nb.txt\n</read-files>\n\n<modified-files>\nc.py\n</modified-files>"
    )
    assert with_file_operations(summary, [], ["d.py"]) == "S\n\n<modified-files>\nd.py\n</modified-files>"
    assert with_file_operations("S", [], []) == "S"


def test_long_file_lists_are_capped_at_twenty() -> None:
    paths = [f"f{i:02}.txt" for i in range(25)]
    block = with_file_operations("S", paths, [])
    lines = block.split("\n")
    assert lines[3:23] == paths[:20] and lines[23] == "… (5 more files omitted)"


def preparation(**overrides: Any) -> CompactionPreparation:
    values: dict[str, Any] = {
        "first_kept_entry_id": "e2",
        "messages_to_summarize": [user("old question"), assistant([{"type": "text", "text": "old answer"}])],
        "turn_prefix_messages": [],
        "recent_messages": [user("recent")],
        "is_split_turn": False,
        "tokens_before": 42,
        "keep_recent_tokens": 10,
        "file_ops": FileOperations(read={"r.txt"}, edited={"w.txt"}),
    }
    values.update(overrides)
    return CompactionPreparation(**values)


async def test_summary_calls_run_in_order_with_the_summariser_prompt(fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("HISTORY"), script.text("PREFIX"), script.text("SHORT"))
    summarizer = Summarizer(model=fake_model(fake_llm), api_key="k", reserve_tokens=1000)
    prep = preparation(is_split_turn=True, turn_prefix_messages=[user("turn start")])
    result = await summarizer.summarize(prep, "focus")
    assert result == {
        "summary": "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX"
        "\n\n<read-files>\nr.txt\n</read-files>\n\n<modified-files>\nw.txt\n</modified-files>",
        "shortSummary": "SHORT",
        "firstKeptEntryId": "e2",
        "tokensBefore": 42,
        "details": {"readFiles": ["r.txt"], "modifiedFiles": ["w.txt"]},
        "preserveData": {},
    }
    history, prefix, short = (r.json for r in fake_llm.requests)
    for request in (history, prefix, short):
        assert request["messages"][0] == {"role": "system", "content": SUMMARIZER_SYSTEM_PROMPT}
        assert len(request["messages"]) == 2 and "tools" not in request
    assert "[User]: old question" in prompt_of(history)
    assert "Additional focus: focus" in prompt_of(history)
    assert "[User]: turn start" in prompt_of(prefix)
    assert "[User]: recent" in prompt_of(short)
    assert [r["max_tokens"] for r in (history, prefix, short)] == [800, 500, 200]


async def test_a_previous_summary_switches_to_the_update_prompt(fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("MERGED"), script.text("SHORT"))
    summarizer = Summarizer(model=fake_model(fake_llm), api_key="k", reserve_tokens=16384)
    result = await summarizer.summarize(preparation(previous_summary="EARLIER", file_ops=FileOperations()))
    prompt = prompt_of(fake_llm.requests[0].json)
    assert "<previous-summary>\nEARLIER\n</previous-summary>" in prompt and "NEW messages" in prompt
    assert result["summary"] == "MERGED"


async def test_a_failed_summary_call_raises_the_protocol_message(fake_llm: FakeLLM) -> None:
    fake_llm.script(script.http_error(400, "bad request"))
    summarizer = Summarizer(model=fake_model(fake_llm), api_key="k", reserve_tokens=1000)
    with pytest.raises(CompactionError, match=r"^Summarization failed: 400 .*bad request"):
        await summarizer.summarize(preparation())


async def test_an_aborted_summary_call_is_a_cancelled_compaction(fake_llm: FakeLLM) -> None:
    controller = AbortController()
    controller.abort()
    summarizer = Summarizer(
        model=fake_model(fake_llm), api_key="k", reserve_tokens=1000, signal=controller.signal
    )
    with pytest.raises(CompactionCancelledError, match=r"^Compaction cancelled$"):
        await summarizer.summarize(preparation())
    assert fake_llm.requests == []
