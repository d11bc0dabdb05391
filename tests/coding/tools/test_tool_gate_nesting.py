"""Which writes a tool call's commit gate refuses once the call is over (in-process agent loop,
fake LLM on loopback, the real write tool): a thread it left behind, yes; a later run that a
task created inside the call starts, no, since that run is no part of the call (review 6 W1)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agent.test_agent_failures import fake_model, user
from xcsh.agent.agent import Agent
from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentEvent, AgentToolResult
from xcsh.coding.tools.write import create_write_tool
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


async def test_a_run_that_a_task_created_inside_an_ended_tool_call_starts_writes_files(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    release = asyncio.Event()
    jobs: list[asyncio.Future[Any]] = []
    agent: Agent

    async def start_job(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        async def job() -> None:
            await release.wait()
            await agent.prompt([user("the job finished: write the report")])

        jobs.append(asyncio.ensure_future(job()))  # the task's context is the call's
        return {"content": [{"type": "text", "text": "job started"}]}

    starter = AgentTool(
        name="start_job", description="", parameters={"type": "object", "properties": {}}, execute=start_job
    )
    fake_llm.script(
        script.tool_calls(("c1", "start_job", {})),
        script.text("The job runs."),
        script.tool_calls(("c2", "write", {"path": "report.txt", "content": "REPORT\n"})),
        script.text("Written."),
    )
    tools = [starter, create_write_tool(tmp_path)]
    agent = Agent(model=fake_model(fake_llm), tools=tools, get_api_key=lambda provider: "test-key")
    ends: list[AgentEvent] = []
    agent.subscribe(lambda event: ends.append(event) if event["type"] == "tool_execution_end" else None)
    async with asyncio.timeout(30):
        await agent.prompt([user("start the job")])  # the call, and its run, are over
        release.set()
        await jobs[0]
    assert [(e["result"]["content"][0]["text"], e["isError"]) for e in ends] == [
        ("job started", False),
        ("Successfully wrote 7 bytes to report.txt", False),
    ]
    assert (tmp_path / "report.txt").read_text() == "REPORT\n"
