"""A long conversation on a small context window: repeated automatic compaction, in-process.

The fake model reports usage equal to our estimate of the context it was sent, so
the threshold is crossed every dozen turns or so; each compaction is followed by the
"continue" prompt. After each compaction the model must see the summary and the
kept messages, and nothing older.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding.session_helpers import fake_session
from xcsh.coding.compaction.tokens import ThresholdSettings, compaction_threshold, estimate_messages_tokens
from xcsh.coding.session import AgentSession
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM, RecordedRequest

SMALL_MODEL = """      - id: fake-small
        reasoning: false
        contextWindow: 4000
        maxTokens: 1000
"""
TURNS = 200
REPLY_TOKENS = 100
CONTINUE = "Continue if you have next steps."


@pytest.fixture
def session(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[AgentSession]:
    built = fake_session(
        tmp_path,
        fake_llm.base_url,
        config="compaction:\n  reserveTokens: 1000\n  keepRecentTokens: 150\n",
        extra_models=SMALL_MODEL,
        model="fake/fake-small",
    )
    yield built
    built.shutdown()


def sent_text(request: RecordedRequest) -> str:
    """Everything the model was sent, as one string."""
    parts = []
    for message in request.json["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(b.get("text", "") for b in content)
    return "\n".join(parts)


def prompt(i: int) -> str:
    return f"question {i}: " + "q" * (400 - len(f"question {i}: "))


def reply(i: int) -> str:
    return f"answer {i}: " + "a" * (400 - len(f"answer {i}: "))


async def test_two_hundred_turns_compact_repeatedly_and_the_model_keeps_the_summary_and_recent_turns(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    threshold = compaction_threshold(4000, ThresholdSettings(reserve_tokens=1000))
    assert threshold == 3000
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    compactions = 0
    last_summary: str | None = None
    for turn in range(TURNS):
        prompt_tokens = estimate_messages_tokens(session.messages) + 100
        fake_llm.script(script.text(reply(turn), usage=(prompt_tokens, REPLY_TOKENS)))
        will_compact = prompt_tokens + REPLY_TOKENS > threshold
        if will_compact:
            compactions += 1
            fake_llm.script(
                script.text(f"SUMMARY-{compactions}"),
                script.text(f"SHORT-{compactions}"),
                script.text(f"continued {compactions}", usage=(300, 5)),
            )
        before = len(fake_llm.requests)
        task = session.start_prompt(prompt(turn))
        assert task is not None
        async with asyncio.timeout(10):
            await task
        requests = fake_llm.requests[before:]
        turn_request = sent_text(requests[0])
        assert prompt(turn) in turn_request
        if last_summary is not None:
            assert f"<summary>\n{last_summary}\n</summary>" in turn_request
        if not will_compact:
            assert len(requests) == 1
            continue
        history, short, continuation = (sent_text(r) for r in requests[1:])
        assert f"[User]: {prompt(turn - 1)}" in history  # the older turns are summarised
        if last_summary is not None:
            assert f"<previous-summary>\n{last_summary}\n</previous-summary>" in history
        assert f"[User]: {prompt(turn)}" in short  # the short summary covers the kept turn
        last_summary = f"SUMMARY-{compactions}"
        # the request after the compaction: the summary, then the kept turn, then the continue prompt
        assert f"<summary>\n{last_summary}\n</summary>" in continuation
        assert prompt(turn) in continuation and reply(turn) in continuation
        assert prompt(turn - 1) not in continuation and reply(turn - 1) not in continuation
        assert continuation.rstrip().endswith(CONTINUE)
        assert session.messages[0]["role"] == "compactionSummary"
        assert session.messages[0]["summary"] == last_summary

    ends = [e for e in events if e["type"] == "auto_compaction_end"]
    assert compactions >= 5 and len(ends) == compactions
    assert all(e["result"]["summary"].startswith("SUMMARY-") and not e["willRetry"] for e in ends)
    assert sum(1 for e in session.store.entries if e["type"] == "compaction") == compactions
    assert session.is_streaming is False and session.is_compacting is False
    fake_llm.assert_complete()
