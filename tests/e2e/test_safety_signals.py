"""SIGTERM/SIGHUP/SIGINT stop xcsh cleanly: no command of the agent survives it, the session is flushed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# the shell starts a background child, prints its pid (= its process group) and waits on a foreground
# child: when the pid is printed the group already holds the shell and one sleep
COMMAND = "sleep 300 & echo pgid=$$; sleep 301"
PRINT_ARGS = [
    "--model",
    "fake/fake-model",
    "--tools",
    "bash",
    "--no-session",
    "--mode",
    "json",
    "-p",
    "run it",
]


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


async def _start_bash_tool(ws: Workspace, fake_llm: FakeLLM) -> tuple[RpcClient, int, Path]:
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": COMMAND})), script.text("never reached"))
    args = ["--model", "fake/fake-model", "--tools", "bash", "--session-dir", str(ws.sess)]
    client = await RpcClient.start(args=args, cwd=ws.proj, env=ws.env)
    session_file = Path((await client.get_state())["sessionFile"])
    mark = client.mark()
    await client.prompt("run the long command")
    update = await client.wait_for(
        lambda f: (
            f.get("type") == "tool_execution_update" and "pgid=" in json.dumps(f.get("partialResult", {}))
        ),
        since=mark,
        timeout=30,
    )
    text = update["partialResult"]["content"][0]["text"]
    pgid = int(text.split("pgid=")[1].split()[0])
    assert len(group_members(pgid)) >= 2  # the shell and its sleeps are running
    return client, pgid, session_file


async def test_sigterm_during_a_bash_tool_leaves_no_process_of_its_group_alive(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    client, pgid, session_file = await _start_bash_tool(workspace, fake_llm)
    client.process.send_signal(signal.SIGTERM)
    code = await client.close(timeout=20)
    assert code == 143
    assert group_members(pgid) == []
    # the aborted run was flushed: the bash call has its (aborted) result on disk
    lines = [json.loads(line) for line in session_file.read_text().splitlines()]
    results = [e["message"] for e in lines if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert [r["toolCallId"] for r in results] == ["b1"]
    fake_llm.reset()  # the second step was never requested


def test_sigint_stops_print_mode_with_status_130_and_kills_the_command(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": COMMAND})), script.text("never reached"))
    process = subprocess.Popen(
        [sys.executable, "-m", "xcsh", *PRINT_ARGS],
        cwd=workspace.proj,
        env=workspace.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        pgid = 0
        for line in process.stdout:  # bounded by the 300 s command: it prints first
            frame = json.loads(line)
            if frame.get("type") == "tool_execution_update":
                text = frame["partialResult"]["content"][0]["text"]
                if "pgid=" in text:
                    pgid = int(text.split("pgid=")[1].split()[0])
                    break
        assert pgid and group_members(pgid)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130
        assert group_members(pgid) == []
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
    fake_llm.reset()
