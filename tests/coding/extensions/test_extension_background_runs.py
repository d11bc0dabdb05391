"""A run an extension starts from a background task (``send_message(trigger_turn=True)``, the
documented way for a job to wake the agent) writes files like any other run, although the task
was created inside one of its tool calls, whose commit gate closed when that call ended
(review 6 W1)."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

from coding.session_helpers import run_prompt, workspace_session
from conftest import Workspace
from xcsh.coding.extensions.feature import runner_for
from xcsh.coding.extensions.runner import ExtensionError
from xcsh.coding.session import AgentSession
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

JOB = """
import asyncio

def setup(xcsh):
    release = asyncio.Event()
    jobs = set()
    xcsh.register_command("finish", lambda args, ctx: release.set())

    async def start_job(args, call):
        async def job():
            await release.wait()
            xcsh.send_message("job", "The job finished: write the report.", trigger_turn=True)

        task = asyncio.get_running_loop().create_task(job())  # created inside this tool call
        jobs.add(task)
        return "job started"

    xcsh.register_tool("start_job", "Start a background job.", {"type": "object", "properties": {}}, start_job)
"""


def next_agent_end(session: AgentSession) -> asyncio.Future[None]:
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def listener(event: Any) -> None:
        if event["type"] == "agent_end" and not future.done():
            future.set_result(None)

    session.subscribe(listener)
    return future


async def test_a_run_an_extension_job_starts_after_its_tool_call_ended_writes_files(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(JOB))
    session = workspace_session(workspace, tools="write", extensions=[str(path)], no_extensions=True)
    runner = runner_for(session)
    assert runner is not None
    errors: list[ExtensionError] = []
    runner.on_error = errors.append
    fake_llm.script(
        script.tool_calls(("c1", "start_job", {})),
        script.text("The job runs."),
        script.tool_calls(("c2", "write", {"path": "report.txt", "content": "REPORT\n"})),
        script.text("Written."),
    )
    await run_prompt(session, "start the job")  # the start_job call, and its run, are over
    ended = next_agent_end(session)
    await run_prompt(session, "/finish")  # the job wakes up and starts a run
    async with asyncio.timeout(10):
        await ended
    results = [(m["content"][0]["text"], m["isError"]) for m in session.messages if m["role"] == "toolResult"]
    assert results == [("job started", False), ("Successfully wrote 7 bytes to report.txt", False)]
    assert (workspace.proj / "report.txt").read_text() == "REPORT\n"
    assert errors == []
