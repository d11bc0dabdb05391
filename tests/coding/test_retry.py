"""Auto-retry in-process: a real AgentSession against the fake LLM, with a recording sleep."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding.session_helpers import fake_session, record, run_prompt
from xcsh.ai.errors import is_transport_failure, retry_hint_ms
from xcsh.coding.retry import RetryHandler, backoff_delay_ms, install_retry
from xcsh.coding.session import AgentSession
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def three_transient_failures() -> list[Any]:
    """Fresh script steps: overloaded, rate limited with a 10 s hint, a cut stream (each retryable)."""
    return [
        script.http_error(529, "Overloaded", error_type="overloaded_error"),
        script.http_error(429, "Rate limited", retry_after=10),
        script.cut("partial"),
    ]


class RecordingSleep:
    """An injected clock: records each back-off and returns at once (or blocks when told)."""

    def __init__(self, *, block: bool = False) -> None:
        self.delays: list[float] = []
        self.block = block

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        if self.block:
            await asyncio.Event().wait()


@pytest.fixture
def session(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[AgentSession]:
    built = fake_session(tmp_path, fake_llm.base_url)
    yield built
    built.shutdown()


def retry_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"].startswith("auto_retry")]


def test_backoff_doubles_from_the_base_delay_and_longer_hints_win() -> None:
    assert [backoff_delay_ms(n, 2000, "overloaded") for n in (1, 2, 3)] == [2000, 4000, 8000]
    assert backoff_delay_ms(2, 2000, "429 Rate limited (retry-after: 10)") == 10000
    assert backoff_delay_ms(2, 2000, "429 Rate limited (retry-after: 1)") == 4000
    assert backoff_delay_ms(1, 50, "429 (retry-after-ms: 120)") == 120
    assert backoff_delay_ms(6, 2000, "overloaded", 16000) == 16000  # capped
    assert backoff_delay_ms(6, 2000, "429 (retry-after: 60)", 16000) == 60000  # a hint is honoured whole


def test_absolute_retry_hints_become_the_time_left() -> None:
    now = 1_796_194_200.0  # 2026-12-02T06:50:00Z
    assert retry_hint_ms("429 (retry-after: Wed, 02 Dec 2026 06:50:30 GMT)", now_s=now) == 30_000
    assert retry_hint_ms("429 (retry-after: Wed, 02 Dec 2026 06:49:00 GMT)", now_s=now) == 0  # already past
    assert retry_hint_ms("429 (x-ratelimit-reset: 1796194245)", now_s=now) == 45_000  # epoch seconds
    assert retry_hint_ms("429 (x-ratelimit-reset: 1796194212000)", now_s=now) == 12_000  # epoch ms
    assert retry_hint_ms("429 (x-ratelimit-reset-ms: 1796194201500)", now_s=now) == 1_500
    assert retry_hint_ms("429 (retry-after: Wed, 99 Foo 2026 99:99:99 GMT)", now_s=now) is None


def test_transport_failures_are_told_from_other_retryable_errors() -> None:
    transport = [
        "529 overloaded_error: Overloaded",
        "429 Rate limited (retry-after: 3)",
        "503 busy",
        "Connection error: fake closed the connection before the answer was complete",
        "acme answered HTTP 502 (Bad Gateway) with an empty body",
    ]
    other = ["400 503 service unavailable", "overloaded_error: Overloaded", "401 invalid api key"]
    assert [is_transport_failure(e) for e in transport] == [True] * len(transport)
    assert [is_transport_failure(e) for e in other] == [False] * len(other)


async def test_three_transient_failures_are_retried_with_backoff_until_success(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    sleep = RecordingSleep()
    install_retry(session, sleep=sleep)
    events = record(session)
    fake_llm.script(
        *three_transient_failures(),
        script.text("all good"),
    )
    await run_prompt(session, "hi?")

    starts = [e for e in events if e["type"] == "auto_retry_start"]
    assert [(e["attempt"], e["maxAttempts"], e["delayMs"]) for e in starts] == [
        (1, 8, 2000),  # failures the vendors' SDKs would retry get the transient budget
        (2, 8, 10000),  # the retry-after hint (10 s) is longer than 4 s
        (3, 8, 8000),
    ]
    assert "529" in starts[0]["errorMessage"] and "verloaded" in starts[0]["errorMessage"]
    assert "retry-after: 10" in starts[1]["errorMessage"]
    assert "onnection" in starts[2]["errorMessage"]  # the stream was cut mid-way
    assert sleep.delays == [2.0, 10.0, 8.0]
    success_end = next(i for i, e in enumerate(events) if e["type"] == "auto_retry_end")
    assert events[success_end] == {"type": "auto_retry_end", "success": True, "attempt": 3}
    before = events[success_end - 1]
    assert before["type"] == "message_end" and before["message"]["stopReason"] == "stop"
    assert [e["type"] for e in events].count("agent_start") == 4
    assert [(m["role"], m.get("stopReason")) for m in session.messages] == [
        ("user", None),
        ("assistant", "stop"),
    ]
    assert session.messages[-1]["content"] == [{"type": "text", "text": "all good"}]
    stored = [e["message"].get("stopReason") for e in session.store.entries if e["type"] == "message"]
    assert stored == [None, "error", "error", "error", "stop"]  # failures stay in the file
    assert len(fake_llm.requests) == 4
    assert session.is_streaming is False


async def test_a_fourth_failure_of_a_non_transport_kind_ends_the_chain_with_exhaustion(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    sleep = RecordingSleep()
    install_retry(session, sleep=sleep)
    events = record(session)
    fake_llm.script(*[script.http_error(400, "503 service unavailable") for _ in range(4)])
    await run_prompt(session, "hi?")

    retries = retry_events(events)
    assert [e["type"] for e in retries] == ["auto_retry_start"] * 3 + ["auto_retry_end"]
    assert [e["maxAttempts"] for e in retries[:3]] == [3, 3, 3]
    last_error = session.messages[-1]["errorMessage"]
    assert last_error.startswith("400 ") and "503" in last_error
    assert retries[-1] == {"type": "auto_retry_end", "success": False, "attempt": 3, "finalError": last_error}
    assert events[-1] == retries[-1] and events[-2]["type"] == "agent_end"
    assert sleep.delays == [2.0, 4.0, 8.0]
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert len(fake_llm.requests) == 4


async def test_six_overloaded_answers_then_success_end_in_the_answer(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    sleep = RecordingSleep()
    install_retry(session, sleep=sleep)
    events = record(session)
    fake_llm.script(*[script.http_error(529, "Overloaded") for _ in range(6)], script.text("made it"))
    await run_prompt(session, "hi?")

    starts = [e for e in retry_events(events) if e["type"] == "auto_retry_start"]
    assert [(e["attempt"], e["maxAttempts"]) for e in starts] == [(n, 8) for n in range(1, 7)]
    assert sleep.delays == [2.0, 4.0, 8.0, 16.0, 16.0, 16.0]  # doubling, capped at maxDelayMs
    assert retry_events(events)[-1] == {"type": "auto_retry_end", "success": True, "attempt": 6}
    assert session.messages[-1]["content"] == [{"type": "text", "text": "made it"}]


async def test_transient_failures_exhaust_the_transient_budget(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    sleep = RecordingSleep()
    install_retry(session, sleep=sleep)
    session.settings.override("retry.transientMaxRetries", 4)
    events = record(session)
    fake_llm.script(*[script.http_error(503, "busy") for _ in range(5)])
    await run_prompt(session, "hi?")

    retries = retry_events(events)
    assert [e["type"] for e in retries] == ["auto_retry_start"] * 4 + ["auto_retry_end"]
    assert retries[-1]["success"] is False and retries[-1]["attempt"] == 4
    assert len(fake_llm.requests) == 5


async def test_with_auto_retry_off_there_is_exactly_one_request(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    sleep = RecordingSleep()
    install_retry(session, sleep=sleep)
    session.settings.override("retry.enabled", False)
    events = record(session)
    fake_llm.script(script.http_error(529, "Overloaded", error_type="overloaded_error"))
    await run_prompt(session, "hi?")
    assert retry_events(events) == [] and sleep.delays == []
    assert len(fake_llm.requests) == 1
    assert session.messages[-1]["stopReason"] == "error"


async def test_abort_during_the_back_off_cancels_the_retry(session: AgentSession, fake_llm: FakeLLM) -> None:
    install_retry(session, sleep=RecordingSleep(block=True))
    events = record(session)
    started = asyncio.Event()
    session.subscribe(lambda e: started.set() if e["type"] == "auto_retry_start" else None)
    fake_llm.script(script.http_error(429, "rate limit exceeded"))
    task = session.start_prompt("hi?")
    assert task is not None
    async with asyncio.timeout(5):
        await started.wait()
        assert session.is_streaming is True
        await session.abort()
        await task
    assert retry_events(events)[-1] == {
        "type": "auto_retry_end",
        "success": False,
        "attempt": 1,
        "finalError": "Retry cancelled",
    }
    assert session.is_streaming is False and len(fake_llm.requests) == 1


async def test_abort_retry_only_cancels_a_pending_back_off(session: AgentSession, fake_llm: FakeLLM) -> None:
    handler = install_retry(session, sleep=RecordingSleep(block=True))
    assert handler.abort_retry() is False  # nothing pending: a no-op
    events = record(session)
    started = asyncio.Event()
    session.subscribe(lambda e: started.set() if e["type"] == "auto_retry_start" else None)
    fake_llm.script(script.http_error(503, "service unavailable"))
    task = session.start_prompt("hi?")
    assert task is not None
    async with asyncio.timeout(5):
        await started.wait()
        assert handler.abort_retry() is True
        await task
    assert retry_events(events)[-1]["finalError"] == "Retry cancelled"
    assert session.is_streaming is False


async def test_a_non_retryable_error_after_a_retry_closes_the_chain(
    session: AgentSession, fake_llm: FakeLLM
) -> None:
    install_retry(session, sleep=RecordingSleep())
    events = record(session)
    fake_llm.script(
        script.http_error(529, "Overloaded", error_type="overloaded_error"),
        script.http_error(401, "Incorrect API key provided", error_type="authentication_error"),
    )
    await run_prompt(session, "hi?")
    retries = retry_events(events)
    assert [e["type"] for e in retries] == ["auto_retry_start", "auto_retry_end"]
    assert retries[-1]["success"] is False and "Incorrect API key" in retries[-1]["finalError"]
    assert len(fake_llm.requests) == 2


async def test_installing_again_replaces_the_handler_in_place(session: AgentSession) -> None:
    first = [h for h in session.hooks.after_run_hooks() if isinstance(h, RetryHandler)]
    position = session.hooks.after_run_hooks().index(first[0])
    replacement = install_retry(session, sleep=RecordingSleep())
    handlers = [h for h in session.hooks.after_run_hooks() if isinstance(h, RetryHandler)]
    assert handlers == [replacement] and session.hooks.after_run_hooks().index(replacement) == position
