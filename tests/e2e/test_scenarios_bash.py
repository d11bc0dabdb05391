"""Scenarios S42–S44 (user bash) and abort_bash against the real `xcsh --mode rpc` process."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from conftest import BASE_ARGS, Workspace
from e2e.helpers import text_of
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


def spawn(ws: Workspace) -> Any:
    return RpcClient.spawn(args=BASE_ARGS, cwd=ws.proj, env=ws.env)


async def test_s42_bash_result_is_recorded_and_reaches_the_model_with_the_next_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.text("It printed hello."))
    async with spawn(workspace) as client:
        response = await client.request({"id": "b", "type": "bash", "command": "echo hello"})
        assert response == {
            "id": "b",
            "type": "response",
            "command": "bash",
            "success": True,
            "data": {
                "output": "hello\n",
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "totalBytes": 6,
                "outputBytes": 6,
                "totalLines": 2,
                "outputLines": 2,
            },
        }
        last = (await client.get_messages())[-1]
        assert {k: last[k] for k in ("role", "command", "output", "exitCode", "cancelled", "truncated")} == {
            "role": "bashExecution",
            "command": "echo hello",
            "output": "hello\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
        frames = await client.prompt_and_wait("what was printed?")
        stats = await client.get_session_stats()
        mark = client.mark()
        await client.abort_bash()
        after_abort = client.frames[mark:]
    user_texts = [text_of(f["message"]) for f in frames if f["type"] == "message_start"]
    assert not any("Ran `echo hello`" in t for t in user_texts)  # no event for the bash message
    sent = fake_llm.requests[0].json["messages"]
    user_side = "\n".join(text_of(m) for m in sent if m["role"] == "user")
    assert user_side.startswith("Ran `echo hello`\n```\nhello\n```")
    assert stats["totalMessages"] == 3  # bashExecution, user, assistant
    assert [f["type"] for f in after_abort] == ["response"]


async def test_s43_exit_codes_are_results_and_shell_state_persists(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        failed = await client.bash("sh -c 'exit 3'")
        made = await client.bash("mkdir -p sub && cd sub")
        where = await client.bash("pwd")
        err = await client.bash("echo err 1>&2")
    assert (failed["exitCode"], failed["cancelled"]) == (3, False)
    assert made["exitCode"] == 0
    assert where["output"].endswith("/sub\n")
    assert err["output"] == "err\n"


async def test_s44_long_output_keeps_the_tail(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        result = await client.bash("yes abcdefghi | head -n 10000")
    assert result["truncated"] is True and result["totalBytes"] == 100000
    assert result["outputBytes"] <= 51200 and result["output"].endswith("abcdefghi\n")
    assert result["exitCode"] == 0


async def test_abort_bash_stops_a_running_bash_command_at_once(workspace: Workspace) -> None:
    fifo = workspace.proj / "started.fifo"
    os.mkfifo(fifo)
    # the command reports through the FIFO that it runs; opened non-blocking so the writer can proceed
    reader_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    loop = asyncio.get_running_loop()
    started = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(started), os.fdopen(reader_fd, "rb", buffering=0)
    )
    try:
        async with spawn(workspace) as client:
            command = {"type": "bash", "command": f"echo go > {fifo.name}; sleep 30"}
            pending = asyncio.ensure_future(client.request(command))
            async with asyncio.timeout(5):  # well before the 30 s the command would take
                assert await started.readline() == b"go\n"
                await client.abort_bash()
                response = await pending
            messages = await client.get_messages()
    finally:
        transport.close()
    assert response["success"] is True
    data = response["data"]
    assert data["cancelled"] is True and "exitCode" not in data
    assert data["output"].startswith("[Command cancelled]\n")
    assert messages[-1]["role"] == "bashExecution" and messages[-1]["cancelled"] is True


async def test_binary_and_huge_output_do_not_break_the_session(workspace: Workspace) -> None:
    async with spawn(workspace) as client:
        binary = await client.bash("printf 'a\\xff\\xfe\\x00b\\x1b[31mred\\x1b[0m\\n'")
        huge = await client.bash("head -c 10000000 /dev/zero | tr '\\0' 'x'; echo; echo end")
        state = await client.get_state()
    assert binary["exitCode"] == 0 and binary["output"] == "a\ufffd\ufffdbred\n"
    assert huge["truncated"] is True and huge["totalBytes"] > 10_000_000
    assert huge["output"].endswith("end\n") and huge["outputBytes"] <= 51200
    assert state["isStreaming"] is False
