"""A project's subagent definition cannot choose the model or thinking level in a project the
user has not trusted, as its ``config.yml`` cannot (docs/decisions.md, "Model settings of a
project"), against the real ``xcsh --mode rpc`` process."""

from __future__ import annotations

import asyncio

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

SCOUT = (
    "---\nname: scout\ndescription: Looks around\nmodel: fake/fake-reasoner\nthinkingLevel: high\n---\n"
    "You only look.\n"
)
TASK = (
    "t1",
    "task",
    {"agent": "scout", "tasks": [{"id": "A", "description": "look", "assignment": "Look."}]},
)


async def _child_request(
    workspace: Workspace, fake_llm: FakeLLM, *extra: str
) -> tuple[dict[str, object], str]:
    """The subagent's request to the model, and xcsh's stderr."""
    fake_llm.script(script.tool_calls(TASK), script.text("looked"), script.text("done"))
    client = await RpcClient.start(
        args=["--model", "fake/fake-model", "--no-session", "--tools", "task,read", *extra],
        cwd=workspace.proj,
        env=workspace.env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        await client.prompt_and_wait("delegate", timeout=60)
    finally:
        await client.close()
    assert client.process.stderr is not None
    stderr = (await asyncio.wait_for(client.process.stderr.read(), 30)).decode()
    child = fake_llm.requests[-2].json
    assert "You only look." in child["messages"][0]["content"]
    return child, stderr


async def test_an_untrusted_projects_agent_runs_on_the_sessions_model_and_a_trusted_ones_on_its_own(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    agents = workspace.proj / ".xcsh" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text(SCOUT)
    child, stderr = await _child_request(workspace, fake_llm)
    assert child["model"] == "fake-model" and "reasoning_effort" not in child
    [line] = [line for line in stderr.splitlines() if "project agent scout" in line]
    assert "ignored model, thinkingLevel" in line and str(agents / "scout.md") in line
    assert "--trust" in line and "trust.projects" in line

    child, stderr = await _child_request(workspace, fake_llm, "--trust")
    assert child["model"] == "fake-reasoner" and child.get("reasoning_effort") == "high"
    assert "project agent scout" not in stderr
