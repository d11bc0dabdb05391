"""Scenarios S22–S27 (scenarios.md) against the real process: new sessions, names, models, thinking levels, modes."""

from __future__ import annotations

import pytest

from conftest import Workspace
from e2e.helpers import MODEL_KEYS, spawn_client
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Every scenario here runs on two wires: OpenAI Chat Completions and Anthropic Messages.
pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)


async def test_s22_new_session_resets_state_without_events(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.script(script.text("Hello there."))
    async with spawn_client(workspace) as client:
        await client.prompt_and_wait("Say hello?")
        before = await client.get_state()
        mark = client.mark()
        response = await client.request({"id": "n", "type": "new_session"})
        quiet = [f for f in client.frames[mark:] if f["type"] != "response"]
        state = await client.get_state()
    assert response == {
        "id": "n",
        "type": "response",
        "command": "new_session",
        "success": True,
        "data": {"cancelled": False},
    }
    assert quiet == []
    assert (state["messageCount"], state["queuedMessageCount"], state["todoPhases"]) == (0, 0, [])
    assert state["sessionId"] != before["sessionId"]


async def test_s23_session_names_are_sanitised_and_empty_names_refused(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        empty = await client.request({"id": "e", "type": "set_session_name", "name": "   "})
        control = await client.request({"id": "c", "type": "set_session_name", "name": "\u0007\t"})
        ok = await client.request({"id": "ok", "type": "set_session_name", "name": "  My\tName\u0007 x "})
        state = await client.get_state()
    assert empty == {
        "id": "e",
        "type": "response",
        "command": "set_session_name",
        "success": False,
        "error": "Session name cannot be empty",
    }
    assert control["success"] is False and control["error"] == "Session name cannot be empty"
    assert ok == {"id": "ok", "type": "response", "command": "set_session_name", "success": True}
    assert state["sessionName"] == "My Name x"


async def test_s24_models_can_be_listed_set_and_cycled(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        models = await client.get_available_models()
        missing = await client.request(
            {"id": "m1", "type": "set_model", "provider": "fake", "modelId": "nope"}
        )
        chosen = await client.set_model("fake", "fake-reasoner")
        first = await client.cycle_model()
        second = await client.cycle_model()
    assert [(m["provider"], m["id"]) for m in models] == [("fake", "fake-model"), ("fake", "fake-reasoner")]
    assert models[1]["reasoning"] is True
    assert models[1]["thinking"] == {"minLevel": "minimal", "maxLevel": "high", "mode": "effort"}
    assert all(set(m) >= MODEL_KEYS for m in models)
    assert missing == {
        "id": "m1",
        "type": "response",
        "command": "set_model",
        "success": False,
        "error": "Model not found: fake/nope",
    }
    assert chosen["id"] == "fake-reasoner" and chosen["reasoning"] is True and set(chosen) >= MODEL_KEYS
    assert first is not None and first["model"]["id"] == "fake-model" and first["isScoped"] is False
    assert second is not None and second["model"]["id"] == "fake-reasoner" and second["isScoped"] is False


async def test_s24_cycle_model_with_a_single_model_returns_null(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.agent / "models.yml").write_text(
        f"providers:\n  fake:\n    baseUrl: {fake_llm.base_url}/v1\n    apiKey: k\n    api: openai-completions\n"
        "    models:\n      - id: fake-model\n"
    )
    async with spawn_client(workspace) as client:
        response = await client.request({"id": "c", "type": "cycle_model"})
    assert response["success"] is True and response["data"] is None


async def test_s25_thinking_level_on_a_non_reasoning_model_stays_off(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        cycled = await client.request({"id": "c", "type": "cycle_thinking_level"})
        high = await client.request({"id": "h", "type": "set_thinking_level", "level": "high"})
        after_high = (await client.get_state())["thinkingLevel"]
        off = await client.request({"id": "o", "type": "set_thinking_level", "level": "off"})
        after_off = (await client.get_state())["thinkingLevel"]
    assert cycled["data"] is None and cycled["success"] is True
    assert high == {"id": "h", "type": "response", "command": "set_thinking_level", "success": True}
    assert after_high == "off" and off["success"] is True and after_off == "off"


async def test_s26_thinking_level_on_a_reasoning_model_clamps_and_cycles(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    args = ["--model", "fake/fake-reasoner", "--no-tools", "--no-session"]
    fake_llm.script(script.text("thought"))
    async with spawn_client(workspace, args=args) as client:
        initial = (await client.get_state())["thinkingLevel"]
        cycles = [(await client.cycle_thinking_level()) for _ in range(3)]
        await client.set_thinking_level("xhigh")
        clamped = (await client.get_state())["thinkingLevel"]
        bogus = await client.request({"id": "b", "type": "set_thinking_level", "level": "bogus"})
        kept = (await client.get_state())["thinkingLevel"]
        wrapped = await client.cycle_thinking_level()
        await client.set_thinking_level("medium")
        await client.prompt_and_wait("think?")
    assert initial == "high"
    assert cycles == [{"level": "off"}, {"level": "minimal"}, {"level": "low"}]
    assert clamped == "high"
    assert bogus["success"] is False and bogus["id"] == "b"
    assert bogus["error"].startswith("Invalid thinking level: bogus. ")
    assert kept == "high" and wrapped == {"level": "off"}
    body = fake_llm.requests[0].json
    if workspace.api == "openai-completions":
        assert body["reasoning_effort"] == "medium"
    else:
        # medium asks for 8192 budget tokens; it is capped to fit under the model's 4096 max output
        assert (
            body["thinking"]["type"] == "enabled"
            and 0 < body["thinking"]["budget_tokens"] < body["max_tokens"]
        )


async def test_s26_thinking_flag_sets_the_initial_level(workspace: Workspace) -> None:
    args = ["--model", "fake/fake-reasoner", "--thinking", "low", "--no-tools", "--no-session"]
    async with spawn_client(workspace, args=args) as client:
        assert (await client.get_state())["thinkingLevel"] == "low"


async def test_s27_queue_mode_setters_and_auto_compaction_toggle(workspace: Workspace) -> None:
    async with spawn_client(workspace) as client:
        await client.set_steering_mode("all")
        await client.set_follow_up_mode("all")
        await client.set_interrupt_mode("immediate")
        await client.set_auto_compaction(False)
        await client.set_auto_retry(False)
        state = await client.get_state()
        await client.set_auto_compaction(True)
        again = await client.get_state()
    assert (state["steeringMode"], state["followUpMode"], state["interruptMode"]) == (
        "all",
        "all",
        "immediate",
    )
    assert state["autoCompactionEnabled"] is False and again["autoCompactionEnabled"] is True
    assert not any("retry" in key.lower() for key in state)
