"""The fake LLM's record of requests can be cleared mid-script (bench/bench_probes.py does, so a
300-prompt run does not keep 300 ever larger bodies in the server's process)."""

from __future__ import annotations

from typing import Any

from xcsh.ai.options import StreamOptions
from xcsh.ai.registry import complete
from xcsh.testing import script
from xcsh.testing.fake_llm import running


async def test_clearing_the_recorded_requests_keeps_the_script_and_records_what_follows() -> None:
    with running() as fake:
        model: Any = {
            "id": "m",
            "name": "m",
            "api": "openai-completions",
            "provider": "fake",
            "baseUrl": fake.base_url + "/v1",
            "reasoning": False,
            "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 1000,
            "maxTokens": 100,
        }
        fake.script(script.text("one"), script.text("two"))
        for text, expected in (("first", "one"), ("second", "two")):
            context: Any = {"messages": [{"role": "user", "content": text, "timestamp": 0}]}
            message = await complete(model, context, StreamOptions(api_key="k"))
            assert [b.get("text") for b in message["content"]] == [expected], message.get("errorMessage")
            assert [r.json["messages"][-1]["content"] for r in fake.requests] == [text]
            fake.clear_requests()
        assert fake.requests == [] and fake.remaining == 0
        fake.assert_complete()
