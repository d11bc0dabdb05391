"""A burst of overload answers is survived, every retry announced; provider faults read as sentences."""

from __future__ import annotations

from conftest import BASE_ARGS, Workspace
from e2e.helpers import run_xcsh
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_six_529s_then_success_end_in_the_answer_with_six_retry_starts(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("retry:\n  baseDelayMs: 1\n")
    fake_llm.script(*[script.http_error(529, "Overloaded") for _ in range(6)], script.text("the answer"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        start = client.mark()
        await client.prompt("hi?")
        end = await client.wait_for(lambda f: f.get("type") == "auto_retry_end", since=start, timeout=60)
        frames = await client.wait_for_idle(since=start, timeout=60)
        answer = await client.get_last_assistant_text()
    starts = [f for f in frames if f["type"] == "auto_retry_start"]
    assert [(f["attempt"], f["maxAttempts"]) for f in starts] == [(n, 8) for n in range(1, 7)]
    assert all("529" in f["errorMessage"] for f in starts)
    assert end == {"type": "auto_retry_end", "success": True, "attempt": 6}
    assert answer == "the answer"
    assert len(fake_llm.requests) == 7


async def test_with_auto_retry_off_a_529_is_exactly_one_request(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.http_error(529, "Overloaded"))
    async with RpcClient.spawn(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env) as client:
        await client.set_auto_retry(False)
        frames = await client.prompt_and_wait("hi?")
        messages = await client.get_messages()
    assert not any(f["type"].startswith("auto_retry") for f in frames)
    assert messages[-1]["stopReason"] == "error"
    assert len(fake_llm.requests) == 1


def test_a_provider_body_that_is_not_utf8_is_reported_as_one_plain_sentence(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.config("retry:\n  enabled: false\n")
    fake_llm.script(script.http_error(400, raw_body=b"\xa5\xa5\xff"))
    result = run_xcsh(workspace, *BASE_ARGS, "-p", "hi?")
    assert result.returncode == 1
    assert (
        result.stderr.decode()
        .strip()
        .endswith("Error: fake answered HTTP 400 (Bad Request) with a body that is not UTF-8 text")
    )
