"""A model's tuned sampling settings reach each wire as that API names them."""

from __future__ import annotations

from typing import Any

from ai import providers_helpers
from ai.providers_helpers import model_from, sent_body, user
from xcsh.ai.options import StreamOptions
from xcsh.ai.types import Context, Model
from xcsh.testing.fake_llm import FakeLLM

fake = providers_helpers.fake

TUNED = {"temperature": 0.3, "topP": 0.9, "topK": 20, "minP": 0.05, "repeatPenalty": 1.1}
HI: Context = {"messages": [user("hi")]}


def model(fake: FakeLLM, api: str, **overrides: Any) -> Model:
    fields = {
        "id": "m",
        "name": "M",
        "api": api,
        "provider": "p",
        "baseUrl": f"{fake.base_url}/v1" if api.startswith("openai") else fake.base_url,
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
        "contextWindow": 16384,
        "maxTokens": 2048,
    }
    return model_from(fields, **overrides)


def sampling_fields(body: dict[str, Any]) -> dict[str, Any]:
    names = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty")
    return {key: body[key] for key in names if key in body}


async def test_chat_completions_request_carries_every_tuned_setting(fake: FakeLLM) -> None:
    body = await sent_body(
        fake, model(fake, "openai-completions", sampling=TUNED), HI, StreamOptions(api_key="k")
    )
    assert sampling_fields(body) == {
        "temperature": 0.3,
        "top_p": 0.9,
        "top_k": 20,
        "min_p": 0.05,
        "repeat_penalty": 1.1,
    }


async def test_a_calls_own_temperature_wins_over_the_models_tuned_one(fake: FakeLLM) -> None:
    tuned = model(fake, "openai-completions", sampling={"temperature": 0.3, "topP": 0.9})
    body = await sent_body(fake, tuned, HI, StreamOptions(api_key="k", temperature=0.0))
    assert sampling_fields(body) == {"temperature": 0.0, "top_p": 0.9}


async def test_a_model_without_sampling_sends_no_sampling_field(fake: FakeLLM) -> None:
    body = await sent_body(fake, model(fake, "openai-completions"), HI, StreamOptions(api_key="k"))
    assert sampling_fields(body) == {}


async def test_constrained_small_model_request_carries_the_tuned_settings(fake: FakeLLM) -> None:
    small = model(
        fake,
        "openai-completions",
        compat={"constrainedToolCalls": True, "promptProfile": "small"},
        sampling={"temperature": 0.2, "topK": 20, "repeatPenalty": 1.05},
    )
    read = {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
    context: Context = {"messages": [user("hi")], "tools": [read]}  # type: ignore[list-item]
    body = await sent_body(fake, small, context, StreamOptions(api_key="k"))
    assert "response_format" in body
    assert sampling_fields(body) == {"temperature": 0.2, "top_k": 20, "repeat_penalty": 1.05}


async def test_anthropic_gets_temperature_top_p_and_top_k_but_none_with_thinking_on(fake: FakeLLM) -> None:
    plain = model(fake, "anthropic-messages", sampling=TUNED)
    body = await sent_body(fake, plain, HI, StreamOptions(api_key="k"))
    assert sampling_fields(body) == {"temperature": 0.3, "top_p": 0.9, "top_k": 20}
    thinking = model(fake, "anthropic-messages", sampling=TUNED, reasoning=True, id="claude-fake")
    body = await sent_body(fake, thinking, HI, StreamOptions(api_key="k", reasoning="medium"))
    assert "thinking" in body
    assert sampling_fields(body) == {}


async def test_openai_responses_gets_only_temperature_and_top_p(fake: FakeLLM) -> None:
    body = await sent_body(
        fake, model(fake, "openai-responses", sampling=TUNED), HI, StreamOptions(api_key="k")
    )
    assert sampling_fields(body) == {"temperature": 0.3, "top_p": 0.9}
