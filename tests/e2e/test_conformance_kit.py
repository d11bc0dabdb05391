"""The conformance kit (``xcsh conformance``) run as a command, against our agent and a faulty one."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient

FAULTY_AGENT = """
import json, sys
print(json.dumps({"type": "ready", "version": "0"}), flush=True)
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        cmd = json.loads(line)
    except ValueError:
        continue
    # answers every command as a success and never echoes the id
    print(json.dumps({"type": "response", "command": cmd.get("type"), "success": True}), flush=True)
"""


def conformance(ws: Workspace, tmp_path: Path, agent_cmd: str, *extra: str) -> tuple[int, str, dict]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "xcsh",
            "conformance",
            "--agent-cmd",
            agent_cmd,
            "--report",
            str(report),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=ws.env,
        timeout=120,
    )
    return done.returncode, done.stdout, json.loads(report.read_text())


def test_xcsh_rpc_passes_every_conformance_scenario(workspace: Workspace, tmp_path: Path) -> None:
    agent_cmd = f"{shlex.quote(sys.executable)} -m xcsh --mode rpc"
    code, out, report = conformance(workspace, tmp_path, agent_cmd)
    assert code == 0, out
    assert report["passed"] is True and report["counts"] == {"passed": 8, "failed": 0}
    assert [s["name"] for s in report["scenarios"]][:2] == ["ready_and_state", "ids_and_unknown_commands"]
    assert "8 passed, 0 failed" in out


def test_a_faulty_agent_fails_with_the_frames_that_differed(workspace: Workspace, tmp_path: Path) -> None:
    script = tmp_path / "faulty_agent.py"
    script.write_text(FAULTY_AGENT)
    agent_cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    code, out, report = conformance(
        workspace, tmp_path, agent_cmd, "--scenario", "ids_and_unknown_commands", "--timeout", "5"
    )
    assert code == 1
    (scenario,) = report["scenarios"]
    assert scenario["passed"] is False
    first = scenario["differences"][0]
    assert first["step"] == "id echoed[0]"
    assert first["expected"] == {
        "id": "x-1",
        "type": "response",
        "command": "set_steering_mode",
        "success": True,
    }
    assert first["actual"] == {"type": "response", "command": "set_steering_mode", "success": True}
    unknown = next(d for d in scenario["differences"] if d["step"] == "unknown command[0]")
    assert unknown["expected"]["success"] is False and unknown["actual"]["success"] is True
    assert "FAIL  ids_and_unknown_commands" in out and "expected:" in out and "actual:" in out


async def test_fake_llm_command_gives_a_host_a_scripted_agent(workspace: Workspace, tmp_path: Path) -> None:
    steps = tmp_path / "steps.json"
    steps.write_text(
        json.dumps(
            [{"toolCalls": [{"id": "c1", "name": "echo_host", "arguments": {"m": 1}}]}, {"text": "Done."}]
        )
    )
    agent_dir, record = tmp_path / "scripted-agent", tmp_path / "requests.json"
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        *(
            "-m",
            "xcsh",
            "fake-llm",
            "--script",
            str(steps),
            "--agent-dir",
            str(agent_dir),
            "--record",
            str(record),
        ),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=workspace.env,
    )
    assert server.stdout is not None and server.stdin is not None
    async with asyncio.timeout(60):
        info = json.loads(await server.stdout.readline())
        env = {**workspace.env, "PI_CODING_AGENT_DIR": info["agentDir"]}
        tool = {"name": "echo_host", "description": "Echo", "parameters": {"type": "object"}}
        async with RpcClient.spawn(
            args=["--model", info["model"], "--no-session"], cwd=workspace.proj, env=env
        ) as client:
            await client.set_host_tools([tool])

            async def echo(arguments: dict[str, object], update: object) -> str:
                return "echoed"

            client.on_host_tool("echo_host", echo)
            await client.prompt_and_wait("go?")
            answer = await client.get_last_assistant_text()
        server.stdin.close()
        code = await server.wait()
    assert answer == "Done." and code == 0
    bodies = json.loads(record.read_text())
    assert len(bodies) == 2 and bodies[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "echoed",
    }
