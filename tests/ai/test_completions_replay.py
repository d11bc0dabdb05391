"""What the openai-completions provider sends back of earlier answers (review 2 of the provider layer).

Each answer is streamed from the fake server first, so the history holds what the provider really
built, and the next request's recorded body is checked.
"""

from __future__ import annotations

from typing import Any

from ai import providers_helpers
from ai.providers_helpers import model_from, run_stream, sent_body, user
from xcsh.ai.types import AssistantMessage, Message, Model
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.script import thinking

fake = providers_helpers.fake


def make_model(fake: FakeLLM, **overrides: Any) -> Model:
    fields = {
        "id": "fake-reasoner",
        "name": "Fake reasoner",
        "api": "openai-completions",
        "provider": "fake",
        "baseUrl": f"{fake.base_url}/v1",
        "reasoning": True,
        "input": ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 128000,
        "maxTokens": 4096,
    }
    return model_from(fields, **overrides)


async def answer(fake: FakeLLM, model: Model, messages: list[Message]) -> AssistantMessage:
    """The answer the provider builds from the next scripted step."""
    _, message = await run_stream(model, {"messages": messages})
    assert message["stopReason"] in ("stop", "toolUse", "length"), message.get("errorMessage")
    return message


def assistants(body: Any) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


# ---- D3: an answer of thinking only ----------------------------------------------------
async def test_an_answer_of_thinking_only_is_not_replayed_as_an_assistant_without_content(
    fake: FakeLLM,
) -> None:
    model = make_model(fake)
    fake.script(thinking("Let me think about this at length"))
    first = await answer(fake, model, [user("hi")])
    assert [b["type"] for b in first["content"]] == ["thinking"]
    body = await sent_body(fake, model, {"messages": [user("hi"), first, user("and?")]})
    assert assistants(body) == []
    assert body["messages"] == [{"role": "user", "content": "hi"}, {"role": "user", "content": "and?"}]
