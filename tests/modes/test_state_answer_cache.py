"""The cached ``get_state`` payload equals a fresh one after every kind of change to the session.

A real session (tools, a session file, the fake LLM) is changed through each of the session
core's named operations in turn; after each one the cached encoding must equal the payload
built from scratch, and must differ from the answer before wherever the operation changed
something ``get_state`` reports.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from conftest import fake_models_yml
from xcsh.agent.tool import AgentTool
from xcsh.coding.factory import StartupOptions, create_session
from xcsh.coding.session import AgentSession
from xcsh.coding.todos import set_todos
from xcsh.modes.rpc.shapes import encoded_state, state_payload
from xcsh.rpc.jsonl import encode_json
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def _cached(session: AgentSession, mode: str = "full") -> dict[str, Any]:
    result: dict[str, Any] = json.loads(bytes(encoded_state(session, mode)))
    return result


def _fresh(session: AgentSession, mode: str = "full") -> dict[str, Any]:
    result: dict[str, Any] = json.loads(encode_json({**state_payload(session), "messageUpdates": mode}))
    return result


def _session(tmp_path: Path, base_url: str) -> AgentSession:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "models.yml").write_text(fake_models_yml(base_url))
    return create_session(
        StartupOptions(
            cwd=tmp_path,
            agent_dir=agent_dir,
            env={},
            model="fake/fake-model",
            session_dir=tmp_path / "sessions",
        )
    )


def _tool(name: str) -> AgentTool:
    async def execute(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not called")

    return AgentTool(name=name, description=f"{name} things", parameters={}, execute=execute)


async def test_the_cached_state_answer_equals_a_fresh_one_after_every_kind_of_change(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    gate = script.Gate()
    fake_llm.script(script.hold("busy", gate), script.text("after the steer"))
    session = _session(tmp_path, fake_llm.base_url)
    first_file = session.snapshot().session_file
    seen: list[tuple[str, dict[str, Any]]] = [("start", _cached(session))]

    async def step(label: str, change: Callable[[], Awaitable[Any] | Any], *, same: bool = False) -> None:
        result = change()
        if asyncio.iscoroutine(result):
            await result
        cached, fresh = _cached(session), _fresh(session)
        assert cached == fresh, label
        assert (cached == seen[-1][1]) is same, label
        seen.append((label, cached))

    await step("nothing", lambda: None, same=True)
    await step("model", lambda: session.set_model("fake", "fake-reasoner"))
    await step("thinking level", lambda: session.apply_thinking_level("high"))
    await step("thinking level cycled", session.cycle_thinking_level)
    await step("steering mode", lambda: session.set_steering_mode("all"))
    await step("follow-up mode", lambda: session.set_follow_up_mode("all"))
    await step("interrupt mode", lambda: session.set_interrupt_mode("immediate"))
    await step("auto compaction off", lambda: session.set_auto_compaction(False))
    await step("auto compaction on", lambda: session.set_auto_compaction(True))
    await step("strategy off (settings)", lambda: session.settings.override("compaction.strategy", "off"))
    await step("session name", lambda: session.set_session_name("renamed"))
    await step("active tools", lambda: session.set_active_tools(["read"]))
    await step("tool added", lambda: session.update_tools(add=[_tool("deploy")], active=["read", "deploy"]))
    await step("locale (system prompt)", lambda: session.set_locale("de"))
    await step("todos", lambda: set_todos(session, [{"id": "p", "name": "P", "tasks": []}]))
    await step("message appended", lambda: session.record_bash_message(_bash_message()))

    def compacting() -> None:
        with session.compacting():
            cached, fresh = _cached(session), _fresh(session)
            assert cached == fresh and cached["isCompacting"] is True
            seen.append(("compacting", cached))

    await step("compaction over", compacting)

    task = session.start_prompt("work")
    assert task is not None
    async with asyncio.timeout(10):
        while not session.is_streaming or not fake_llm.requests:
            await asyncio.sleep(0.01)
    await step("streaming", lambda: None)  # the run started before this step
    assert seen[-1][1]["isStreaming"] is True and seen[-2][1]["isStreaming"] is False
    await step("steer queued", lambda: session.steer("also this"))
    assert seen[-1][1]["queuedMessageCount"] == 1
    gate.release()
    async with asyncio.timeout(10):
        await task
        await session.wait_for_idle()
    await step("idle", lambda: None)
    assert seen[-1][1]["isStreaming"] is False and seen[-1][1]["queuedMessageCount"] == 0
    await step("delta mode", lambda: None, same=True)
    assert _cached(session, "delta") == _fresh(session, "delta") and _cached(session, "delta") != _cached(
        session
    )
    assert _cached(session) == _fresh(session)
    await step("new session", lambda: session.new_session(None))
    assert seen[-1][1]["messageCount"] == 0
    assert first_file is not None
    await step("switched back", lambda: session.switch_session(first_file))
    assert seen[-1][1]["sessionFile"] == first_file
    session.shutdown()


def _bash_message() -> Any:
    return {
        "role": "bashExecution",
        "command": "true",
        "output": "",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 1,
    }
