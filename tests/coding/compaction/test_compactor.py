"""Automatic compaction outcomes in-process: failures, skips, abort, the pre-prompt check."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding.session_helpers import fake_session, record, run_prompt
from xcsh.coding.compaction.compactor import compact_now, compactor_for, install_compaction
from xcsh.coding.messages import user_message
from xcsh.coding.session import AgentSession
from xcsh.coding.sessions.store import SessionStore
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM, RecordedRequest

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
    owners = [getattr(check, "__self__", None) for check in session.hooks.pre_prompt_checks()]
    assert new in owners and old not in owners
    assert new in session.hooks.after_run_hooks() and old not in session.hooks.after_run_hooks()


# ---------------------------------------------------------------------------- summary calls retry


@pytest.fixture
def retrying(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[tuple[AgentSession, list[float]]]:
    """A session with retries on (1 s base back-off) whose compactor records its sleeps instead of waiting."""
    built = fake_session(tmp_path, fake_llm.base_url, config="retry:\n  baseDelayMs: 1000\n")
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    install_compaction(built, sleep=sleep)
    yield built, slept
    built.shutdown()


async def test_a_transient_failure_of_a_summary_call_is_retried_after_the_back_off(
    retrying: tuple[AgentSession, list[float]], fake_llm: FakeLLM
) -> None:
    session, slept = retrying
    events = record(session)
    fake_llm.script(
        script.text("big answer", usage=BIG),
        script.http_error(529, "Overloaded"),
        script.http_error(503, "upstream unavailable"),
        script.text("PREFIX"),
        script.text("SHORT"),
    )
    session.settings.override("compaction.autoContinue", False)
    await run_prompt(session, "work?")
    end = compaction_events(events)[-1]
    assert "errorMessage" not in end and end["result"]["shortSummary"] == "SHORT"
    assert slept == [1.0, 2.0]  # the run's back-off: base x 2^(attempt-1)
    assert len(fake_llm.requests) == 5
    assert not any(e["type"].startswith("auto_retry") for e in events)  # summary calls are silent
    assert any(e["type"] == "compaction" for e in session.store.entries)


async def test_a_summary_call_failing_past_the_retry_budget_fails_the_compaction(
    retrying: tuple[AgentSession, list[float]], fake_llm: FakeLLM
) -> None:
    session, slept = retrying
    session.settings.override("retry.transientMaxRetries", 3)
    events = record(session)
    fake_llm.script(script.text("big answer", usage=BIG), *[script.http_error(529, "Overloaded")] * 4)
    await run_prompt(session, "work?")
    end = compaction_events(events)[-1]
    assert end["errorMessage"].startswith("Auto-compaction failed: Turn prefix summarization failed: 529")
    assert slept == [1.0, 2.0, 4.0] and len(fake_llm.requests) == 5


async def test_a_summary_call_is_not_retried_when_the_wait_asked_for_is_past_thirty_seconds(
    retrying: tuple[AgentSession, list[float]], fake_llm: FakeLLM
) -> None:
    session, slept = retrying
    events = record(session)
    fake_llm.script(script.text("big answer", usage=BIG), script.http_error(429, "slow down", retry_after=31))
    await run_prompt(session, "work?")
    assert compaction_events(events)[-1]["errorMessage"].startswith("Auto-compaction failed:")
    assert slept == [] and len(fake_llm.requests) == 2


async def test_a_summary_call_is_not_retried_with_auto_retry_off(
    retrying: tuple[AgentSession, list[float]], fake_llm: FakeLLM
) -> None:
    session, slept = retrying
    session.settings.override("retry.enabled", False)
    fake_llm.script(script.text("big answer", usage=BIG), script.http_error(529, "Overloaded"))
    await run_prompt(session, "work?")
    assert slept == [] and len(fake_llm.requests) == 2


async def test_abort_during_a_summary_back_off_reports_the_compaction_aborted(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    session = fake_session(tmp_path, fake_llm.base_url, config="retry:\n  baseDelayMs: 1000\n")
    waiting = asyncio.Event()

    async def sleep(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()  # until cancelled

    install_compaction(session, sleep=sleep)
    events = record(session)
    fake_llm.script(script.text("big answer", usage=BIG), script.http_error(529, "Overloaded"))
    try:
        task = session.start_prompt("work?")
        assert task is not None
        async with asyncio.timeout(5):
            await waiting.wait()
            await session.abort()
            await task
        assert compaction_events(events)[-1] == {
            "type": "auto_compaction_end",
            "action": "context-full",
            "aborted": True,
            "willRetry": False,
        }
        assert session.is_compacting is False and len(fake_llm.requests) == 2
    finally:
        session.shutdown()


async def test_a_manual_compact_retries_a_transient_failure_too(
    retrying: tuple[AgentSession, list[float]], fake_llm: FakeLLM
) -> None:
    session, slept = retrying
    session.settings.override("compaction.enabled", False)
    session.settings.override("compaction.keepRecentTokens", 10)
    fake_llm.script(script.text("first answer"), script.text("second answer"))
    await run_prompt(session, "work?")
    await run_prompt(session, "more work?")
    fake_llm.script(script.cut("partial"), script.text("SUMMARY"), script.text("SHORT"))
    async with asyncio.timeout(10):
        result = await compact_now(session, None)
    assert "SUMMARY" in result["summary"] and slept == [1.0]


# ---------------------------------------------------------------------------- pruning and review fixes

SMALL_PRUNE = {
    "compaction.pruneProtectTokens": 1000,
    "compaction.pruneMinimumSavings": 500,
    "compaction.thresholdTokens": 5000,
}
OVERFLOW = "prompt is too long: 150000 tokens > 128000 maximum"


def _assistant(content: list[dict[str, Any]], stop: str = "stop", **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": stop,
        "timestamp": 1,
        **extra,
    }


def seed(session: AgentSession, messages: list[dict[str, Any]]) -> None:
    """Put earlier conversation into the live context and the store (as a resumed session would)."""
    for message in messages:
        session.append_message(message)


def seed_tool_outputs(session: AgentSession, *tokens: int) -> None:
    """An earlier turn whose bash calls returned outputs of ``tokens`` estimated tokens (oldest first).

    The turn ends in a failed reply, so the pre-prompt check has no usage to check (and prunes nothing).
    """
    calls = [{"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {}} for i in range(len(tokens))]
    results = [
        {
            "role": "toolResult",
            "toolCallId": f"c{i}",
            "toolName": "bash",
            "content": [{"type": "text", "text": f"{i}" * (size * 4)}],
            "isError": False,
            "timestamp": 1,
        }
        for i, size in enumerate(tokens)
    ]
    failed = _assistant([], "error", errorMessage="network error")
    seed(session, [user_message("look around"), _assistant(calls, "toolUse"), *results, failed])


def sent_tool_texts(request: RecordedRequest) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "tool"]


async def test_pruning_old_tool_outputs_before_the_threshold_check_makes_compaction_unnecessary(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    for key, value in SMALL_PRUNE.items():
        session.settings.override(key, value)
    seed_tool_outputs(session, 800, 800, 1200)
    events = record(session)
    # 5 410 context tokens pass the 5 000 threshold, but pruning saves 2 × 792 of them
    fake_llm.script(script.text("over the threshold", usage=(5400, 10)), script.text("next"))
    await run_prompt(session, "more?")
    notice = "[Output truncated - 800 tokens]"
    results = [m for m in session.messages if m["role"] == "toolResult"]
    assert [r["content"][0]["text"] for r in results[:2]] == [notice, notice]
    assert all(isinstance(r["prunedAt"], int) for r in results[:2])
    assert "prunedAt" not in results[2] and results[2]["content"][0]["text"] == "2" * 4800
    stored = [e["message"] for e in session.store.entries if e.get("message", {}).get("role") == "toolResult"]
    assert stored == results
    assert sent_tool_texts(fake_llm.requests[0])[0] == "0" * 3200  # pruned only after that run
    await run_prompt(session, "and now?")  # the pre-prompt check subtracts the same savings
    assert sent_tool_texts(fake_llm.requests[1]) == [notice, notice, "2" * 4800]
    assert compaction_events(events) == []


async def test_when_pruning_saves_too_little_the_threshold_compaction_still_runs(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    for key, value in SMALL_PRUNE.items():
        session.settings.override(key, value)
    session.settings.override("compaction.keepRecentTokens", 10)
    seed_tool_outputs(session, 800, 800, 1200)
    events = record(session)
    fake_llm.script(script.text("far over", usage=(7000, 10)), script.http_error(400, "no summary"))
    await run_prompt(session, "more?")
    start, end = compaction_events(events)
    assert start["reason"] == "threshold" and end["errorMessage"].startswith("Auto-compaction failed: ")
    pruned = [m for m in session.messages if m["role"] == "toolResult" and "prunedAt" in m]
    assert len(pruned) == 2


async def test_the_default_pruning_limits_leave_a_small_context_alone(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    seed_tool_outputs(session, 800, 800, 1200)
    fake_llm.script(script.text("fine"))
    await run_prompt(session, "more?")
    assert not [m for m in session.messages if "prunedAt" in m]


async def test_a_failed_reply_prunes_nothing(session: AgentSession, fake_llm: FakeLLM) -> None:
    for key, value in SMALL_PRUNE.items():
        session.settings.override(key, value)
    seed_tool_outputs(session, 800, 800, 1200)
    fake_llm.script(script.http_error(400, "bad request"))
    await run_prompt(session, "more?")
    assert session.messages[-1]["stopReason"] == "error"
    assert not [m for m in session.messages if "prunedAt" in m]


async def test_an_overflow_leaves_the_live_context_even_with_auto_compaction_off(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    session.settings.override("compaction.enabled", False)
    events = record(session)
    fake_llm.script(script.http_error(400, OVERFLOW))
    await run_prompt(session, "question?")
    assert [m["role"] for m in session.messages] == ["user"]
    stored = [e["message"] for e in session.store.entries if e["type"] == "message"]
    assert [m["role"] for m in stored] == ["user", "assistant"] and stored[1]["stopReason"] == "error"
    assert compaction_events(events) == []


async def test_an_overflow_found_before_a_prompt_is_compacted_with_will_retry(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    session.settings.override("compaction.keepRecentTokens", 10)
    failed = _assistant([], "error", errorMessage=OVERFLOW, timestamp=3)
    seed(session, [user_message("question one?"), _assistant([{"type": "text", "text": "ok"}])])
    seed(session, [user_message("y" * 40), failed])
    events = record(session)
    fake_llm.script(script.text("SUM"), script.text("SHORT"), script.text("fine"))
    await run_prompt(session, "again?")
    start, end = compaction_events(events)
    assert start == {"type": "auto_compaction_start", "reason": "overflow", "action": "context-full"}
    assert (end["aborted"], end["willRetry"], end["result"]["summary"]) == (False, True, "SUM")
    assert failed not in session.messages
    assert [e["type"] for e in events].count("agent_start") == 1  # the prompt's own run, no extra one


async def test_a_session_file_that_cannot_be_written_fails_the_compaction_with_an_end_event(
    session: AgentSession, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    for key, value in {**SMALL_PRUNE, "compaction.keepRecentTokens": 10}.items():
        session.settings.override(key, value)
    session.adopt_store(SessionStore.create(tmp_path / "sessions", tmp_path), "new")
    seed_tool_outputs(session, 800, 800, 1200)
    path = session.store.path
    assert path is not None and session.store.is_flushed
    path.unlink()
    path.mkdir()  # the open append descriptor still works; the atomic rewrites fail
    events = record(session)
    fake_llm.script(
        script.text("far over", usage=(7000, 10)), *(script.text(t) for t in ("SUM", "PREFIX", "SHORT"))
    )
    await run_prompt(session, "more?")
    start, end = compaction_events(events)
    assert start["reason"] == "threshold"
    assert end["errorMessage"].startswith(f"Auto-compaction failed: Session file {path} is not writable")
    assert (end["aborted"], end["willRetry"], "result" in end) == (False, False, False)
    # pruning went ahead in memory even though the file could not be rewritten
    assert len([m for m in session.messages if "prunedAt" in m]) == 2
    session.store.close()


SMALL_MODEL = "      - id: fake-small\n        reasoning: false\n        contextWindow: 70000\n        maxTokens: 4096\n"


@pytest.mark.parametrize("change", ["nothing", "threshold setting", "model", "reply replaced"])
async def test_a_quiet_check_after_a_run_is_reused_before_the_next_prompt_only_while_nothing_it_reads_changed(
    tmp_path: Path, fake_llm: FakeLLM, change: str
) -> None:
    """The after-run check found nothing to do; the pre-prompt check of the same reply is skipped
    only while the context, the settings and the model are what that check saw (any change makes
    it run, and here compact)."""
    session = fake_session(tmp_path, fake_llm.base_url, extra_models=SMALL_MODEL)
    try:
        events = record(session)
        fake_llm.script(script.text("first", usage=(60000, 10)))  # under the threshold of 128 000
        await run_prompt(session, "work?")
        assert compaction_events(events) == []
        if change == "threshold setting":
            session.settings.override("compaction.thresholdTokens", 50000)
        elif change == "model":
            session.set_model("fake", "fake-small")  # 60 000 is over this window's threshold
        elif change == "reply replaced":
            index = len(session.messages) - 1
            reply = session.messages[index]
            usage = {**reply["usage"], "input": BIG[0], "totalTokens": sum(BIG)}
            session.replace_messages({index: {**reply, "usage": usage}})
        del events[:]
        if change == "nothing":
            fake_llm.script(script.text("next answer"))
        else:
            fake_llm.script(script.text("PREFIX"), script.text("SHORT"), script.text("next answer"))
        await run_prompt(session, "next?")
        types = [e["type"] for e in events]
        if change == "nothing":
            assert compaction_events(events) == [] and types[0] == "agent_start"
        else:
            assert types[:3] == ["auto_compaction_start", "auto_compaction_end", "agent_start"], change
            assert events[1]["result"]["shortSummary"] == "SHORT"
        assert fake_llm.remaining == 0
    finally:
        session.shutdown()
