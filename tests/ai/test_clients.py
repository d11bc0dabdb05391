"""HTTP clients: loopback servers are reached directly even when proxy variables are set."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import wire_model
from xcsh.ai.clients import is_loopback_url
from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import complete
from xcsh.ai.types import Model
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def test_loopback_urls_are_recognised() -> None:
    assert is_loopback_url("http://127.0.0.1:8080/v1")
    assert is_loopback_url("http://localhost:11434/v1")
    assert is_loopback_url("http://[::1]:1234")
    assert not is_loopback_url("https://api.openai.com/v1")
    assert not is_loopback_url("")


@pytest.mark.parametrize("api", ["openai-completions", "anthropic-messages", "openai-responses"])
async def test_a_loopback_provider_ignores_proxy_variables(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, api: str
) -> None:
    # a proxy that does not exist: going through it would fail the request
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    model: Model = wire_model(fake_llm.base_url, api)
    fake_llm.script(script.text("direct"))
    message = await complete(
        model, {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}, StreamOptions(api_key="k")
    )
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert [block.get("text") for block in message["content"]] == ["direct"]


@pytest.mark.parametrize(
    "api", ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"]
)
def test_a_loop_that_shuts_down_closes_the_connections_its_pooled_clients_kept(
    fake_llm: FakeLLM, api: str
) -> None:
    """Clients are pooled per event loop; a process that runs loops one after another (a test
    suite, a host embedding the agent) must not keep every finished loop's connection open."""
    import asyncio

    if api == "google-generative-ai":
        pytest.importorskip("google.genai")
    model: Model = wire_model(fake_llm.base_url, api)
    fake_llm.script(script.text("one"), script.text("two"))
    context: Any = {"messages": [{"role": "user", "content": "hi", "timestamp": 0}]}

    async def ask() -> str:
        message = await complete(model, context, StreamOptions(api_key="k"))
        assert message["stopReason"] == "stop", message.get("errorMessage")
        return "".join(block.get("text", "") for block in message["content"])

    for expected in ("one", "two"):
        assert asyncio.run(ask()) == expected
        assert fake_llm.wait_for_no_open_connection(10), "the finished loop's connection is still open"
