"""A prompt that mentions a file (`@path`) brings the file's content to the model; one without `@`
brings none (and the mention code is not even loaded for it: tests/modes/test_first_prompt_imports.py)."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

pytestmark = pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)


def _request_text(request_json: dict[str, Any]) -> str:
    """Every text the request carries for the model, whatever the wire's message shapes."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(request_json.get("messages", []))
    return "\n".join(parts)


async def test_a_prompt_mentioning_a_file_sends_the_file_and_one_without_an_at_sign_sends_none(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.proj / "notes.txt").write_text("the secret word is parsnip\n")
    fake_llm.script(script.text("noted"), script.text("plain"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        frames = await client.prompt_and_wait("summarise @notes.txt")
        await client.prompt_and_wait("and the weather (notes.txt)?")
    requests = fake_llm.requests
    assert len(requests) == 2
    assert "the secret word is parsnip" in _request_text(requests[0].json)
    ended = [f["message"] for f in frames if f["type"] == "message_end"]
    assert any(m.get("role") == "fileMention" for m in ended)
    second = _request_text(requests[1].json)
    assert second.count("the secret word is parsnip") == 1  # only the first prompt's mention
