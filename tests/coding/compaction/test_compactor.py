"""Automatic compaction outcomes in-process: failures, skips, abort, the pre-prompt check."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding.session_helpers import fake_session, record, run_prompt
from xcsh.coding.compaction.compactor import compactor_for, install_compaction
from xcsh.coding.session import AgentSession
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

BIG = (120000, 10)  # over the 108 800-token threshold of the 128 000 window


@pytest.fixture
def session(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[AgentSession]:
    built = fake_session(tmp_path, fake_llm.base_url, config="retry:\n  enabled: false\n")
    yield built
    built.shutdown()


def compaction_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"].startswith("auto_compaction")]


async def test_a_failed_threshold_summary_is_reported_and_nothing_continues(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    events = record(session)
    fake_llm.script(script.text("big answer", usage=BIG), script.http_error(400, "bad summary request"))
    await run_prompt(session, "work?")
    start, end = compaction_events(events)
    assert start == {"type": "auto_compaction_start", "reason": "threshold", "action": "context-full"}
    assert end == {
        "type": "auto_compaction_end",
        "action": "context-full",
        "aborted": False,
        "willRetry": False,
        "errorMessage": end["errorMessage"],
    }
    assert end["errorMessage"].startswith("Auto-compaction failed: Turn prefix summarization failed: 400")
    assert [e["type"] for e in events].count("agent_start") == 1
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert not any(e["type"] == "compaction" for e in session.store.entries)


async def test_a_failed_overflow_recovery_is_reported_with_its_own_prefix(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    session.settings.override("compaction.keepRecentTokens", 10)
    events = record(session)
    fake_llm.script(
        script.text("ok"),
        script.http_error(400, "prompt is too long: 150000 tokens > 128000 maximum"),
        script.http_error(400, "summariser down"),
    )
    await run_prompt(session, "question one?")
    await run_prompt(session, "y" * 40)
    end = compaction_events(events)[-1]
    assert end["errorMessage"].startswith("Context overflow recovery failed: Summarization failed: 400")
    assert (end["aborted"], end["willRetry"]) == (False, False)
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user"]  # the error is gone


async def test_threshold_with_nothing_before_the_cut_is_skipped(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    events = record(session)
    fake_llm.script(script.text("", usage=BIG))  # an empty reply: the kept region reaches back to the prompt
    await run_prompt(session, "work?")
    assert compaction_events(events)[-1] == {
        "type": "auto_compaction_end",
        "action": "context-full",
        "aborted": False,
        "willRetry": False,
        "skipped": True,
    }


async def test_abort_during_automatic_compaction_reports_aborted(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    events = record(session)
    gate = script.Gate()
    fake_llm.script(script.text("big answer", usage=BIG), script.hold("PREFIX", gate))
    started = asyncio.Event()
    session.subscribe(lambda e: started.set() if e["type"] == "auto_compaction_start" else None)
    task = session.start_prompt("work?")
    assert task is not None
    try:
        async with asyncio.timeout(5):
            await started.wait()
            await asyncio.to_thread(fake_llm.wait_for_requests, 2, 5)
            assert session.is_compacting is True
            await session.abort()
            await task
    finally:
        gate.release()
    assert compaction_events(events)[-1] == {
        "type": "auto_compaction_end",
        "action": "context-full",
        "aborted": True,
        "willRetry": False,
    }
    assert session.is_compacting is False and session.is_streaming is False
    assert not any(e["type"] == "compaction" for e in session.store.entries)


async def test_the_pre_prompt_check_compacts_a_full_context_before_the_run(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    session.settings.override("compaction.enabled", False)
    fake_llm.script(script.text("big answer", usage=BIG))
    await run_prompt(session, "work?")
    session.settings.override("compaction.enabled", True)
    events = record(session)
    fake_llm.script(script.text("PREFIX"), script.text("SHORT"), script.text("next answer"))
    await run_prompt(session, "next?")
    types = [e["type"] for e in events]
    assert types[:3] == ["auto_compaction_start", "auto_compaction_end", "agent_start"]
    assert events[1]["result"]["shortSummary"] == "SHORT" and events[1]["willRetry"] is False
    assert [m["role"] for m in session.messages] == ["compactionSummary", "assistant", "user", "assistant"]
    assert "PREFIX" in str(fake_llm.requests[-1].json["messages"])


async def test_without_auto_continue_the_next_prompt_does_not_compact_again(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    session.settings.override("compaction.autoContinue", False)
    events = record(session)
    fake_llm.script(script.text("big answer", usage=BIG), script.text("PREFIX"), script.text("SHORT"))
    await run_prompt(session, "work?")
    assert [e["type"] for e in compaction_events(events)] == ["auto_compaction_start", "auto_compaction_end"]
    assert [e["type"] for e in events].count("agent_start") == 1
    fake_llm.script(script.text("small"))
    await run_prompt(session, "more?")
    # the over-threshold reply predates the compaction, so it does not trigger another one
    assert len(compaction_events(events)) == 2


async def test_installing_again_replaces_the_compactor_in_every_hook(session: AgentSession) -> None:
    old = compactor_for(session)
    assert old is not None
    new = install_compaction(session)
    assert compactor_for(session) is new
    owners = [getattr(check, "__self__", None) for check in session.hooks.pre_prompt]
    assert new in owners and old not in owners
