"""A SIGKILLed xcsh leaves nothing it started running: the watchdog ends every process group.

Each test spawns the real ``xcsh --mode rpc``, has it start a long-lived process (a shell
command's background child, a running command, the python kernel and a child of it), kills
xcsh with SIGKILL and waits — bounded, on pidfds — for those processes to be gone. The watchdog is
found by its command line (``xcsh-watchdog <xcsh pid>``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from conftest import BASE_ARGS, Workspace
from xcsh.rpc.client import RpcClient
from xcsh.testing import processes, script
from xcsh.testing.fake_llm import FakeLLM
from xcsh.testing.processes import alive

GONE_WITHIN_S = 15.0
WATCHDOG_MARK = "xcsh-watchdog"


async def wait_gone(pids: list[int], within: float = GONE_WITHIN_S) -> list[int]:
    """Wait (pidfds, bounded) until none of ``pids`` is alive; the survivors."""
    return await asyncio.to_thread(processes.wait_gone, pids, within)


def read_pids(path: Path, count: int) -> list[int]:
    """The first ``count`` pids written to ``path`` (one line). Read once the event that follows
    the write has been seen (the command's answer, its "started" output, the cell's end)."""
    text = path.read_text()
    assert text.endswith("\n") and len(text.split()) >= count, text
    return [int(x) for x in text.split()[:count]]


def watchdogs_of(xcsh_pid: int) -> list[int]:
    """Pids of the live watchdog processes serving xcsh process ``xcsh_pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if WATCHDOG_MARK.encode() in args and str(xcsh_pid).encode() in args and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def kill_leftovers(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def sigkill(client: RpcClient) -> None:
    """SIGKILL xcsh. Its exit is awaited with a bound: asyncio's ``wait()`` also waits for the
    stdout/stderr pipes to close, which a surviving grandchild holding them would prevent."""
    client.process.kill()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(client.process.wait(), GONE_WITHIN_S)
    await client.close(timeout=GONE_WITHIN_S)


pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")


async def test_a_background_child_of_a_finished_bash_command_dies_when_xcsh_is_sigkilled(
    workspace: Workspace,
) -> None:
    pidfile = workspace.proj / "pids"
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    assert watchdogs_of(client.process.pid) == []  # started lazily, not at start-up
    command = f"sleep 1000 >/dev/null 2>&1 & echo $! > {pidfile}; echo started"
    response = await client.request({"type": "bash", "command": command})
    assert response["success"] and response["data"]["output"] == "started\n"
    (child,) = read_pids(pidfile, 1)
    try:
        assert alive(child)
        assert len(watchdogs_of(client.process.pid)) == 1
        await sigkill(client)
        assert await wait_gone([child]) == []
    finally:
        kill_leftovers([child])


def open_files(pid: int) -> dict[int, str]:
    """fd → what it points at (``pipe:[inode]``, a path …) for process ``pid``."""
    found = {}
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            found[int(fd.name)] = os.readlink(fd)
    return found


def holders(target: str) -> set[int]:
    """Pids of the processes with an fd on ``target`` (those we may inspect)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if target in open_files(int(entry.name)).values():
                    found.add(int(entry.name))
    return found


async def test_only_xcsh_holds_the_watchdog_s_pipe_and_the_watchdog_has_nothing_else_open(
    workspace: Workspace,
) -> None:
    pidfile = workspace.proj / "pids"
    # this test lists xcsh's own fds: a non-dumpable xcsh's /proc/<pid>/fd is root's to read
    env = {**workspace.env, "XCSH_DUMPABLE": "1"}
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=env)
    command = f"sleep 1000 >/dev/null 2>&1 & echo $! > {pidfile}"
    assert (await client.request({"type": "bash", "command": command}))["success"]
    (child,) = read_pids(pidfile, 1)
    try:
        (dog,) = watchdogs_of(client.process.pid)
        files = open_files(dog)
        pipe = files[0]
        assert pipe.startswith("pipe:")
        assert {fd: target for fd, target in files.items() if fd != 0} == {1: "/dev/null", 2: "/dev/null"}
        assert os.readlink(f"/proc/{dog}/cwd") == "/"
        # the write end is in xcsh alone: not in the command's processes, not in the protocol's pipes
        assert holders(pipe) == {client.process.pid, dog}
        assert pipe not in open_files(child).values()
        assert await client.close(timeout=20) == 0
    finally:
        kill_leftovers([child])


async def test_a_running_bash_tool_command_and_its_children_die_when_xcsh_is_sigkilled(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    pidfile = workspace.proj / "pids"
    # `timeout` moves itself and its sleep to a process group of their own (same session)
    escaping = "timeout 1000 sleep 1002 >/dev/null 2>&1 &" if shutil.which("pkill") else "sleep 1002 &"
    command = (
        f"sleep 1000 >/dev/null 2>&1 & b=$!; {escaping} echo $$ $b $! > {pidfile}; echo started; sleep 1001"
    )
    fake_llm.script(script.tool_calls(("b1", "bash", {"command": command})), script.text("never reached"))
    args = ["--model", "fake/fake-model", "--tools", "bash", "--no-session"]
    client = await RpcClient.start(args=args, cwd=workspace.proj, env=workspace.env)
    mark = client.mark()
    await client.prompt("run it")
    await client.wait_for(
        lambda f: f.get("type") == "tool_execution_update" and "started" in json.dumps(f["partialResult"]),
        since=mark,
        timeout=30,
    )
    pids = read_pids(pidfile, 3)
    fake_llm.reset()  # the second step is never asked for
    try:
        assert all(alive(p) for p in pids)
        await sigkill(client)
        assert await wait_gone(pids) == []
    finally:
        kill_leftovers(pids)


async def test_the_python_kernel_and_a_process_it_started_die_when_xcsh_is_sigkilled(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    pytest.importorskip("ipykernel")
    pidfile = workspace.proj / "pids"
    code = (
        "import os, subprocess\n"
        "p = subprocess.Popen(['sleep', '1000'])\n"
        f"open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}} {{p.pid}}\\n')\n"
        "print('started')"
    )
    fake_llm.script(script.tool_calls(("p1", "python", {"cells": [{"code": code}]})), script.text("done"))
    args = ["--model", "fake/fake-model", "--tools", "python", "--no-session"]
    client = await RpcClient.start(args=args, cwd=workspace.proj, env=workspace.env)
    await client.prompt_and_wait("start a process from python")
    kernel, child = read_pids(pidfile, 2)
    try:
        assert alive(kernel) and alive(child)
        await sigkill(client)
        assert await wait_gone([kernel, child]) == []
    finally:
        kill_leftovers([kernel, child])


async def test_a_normal_exit_ends_background_children_and_leaves_no_watchdog(workspace: Workspace) -> None:
    pidfile = workspace.proj / "pids"
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    for command in ("echo one", "true", f"sleep 1000 >/dev/null 2>&1 & echo $! > {pidfile}"):
        response = await client.request({"type": "bash", "command": command})
        assert response["success"]
    (child,) = read_pids(pidfile, 1)
    try:
        watchdogs = watchdogs_of(client.process.pid)
        assert len(watchdogs) == 1  # one per xcsh, however many commands ran
        assert await client.close(timeout=20) == 0
        assert await wait_gone([child, *watchdogs]) == []
    finally:
        kill_leftovers([child])


async def test_after_commands_that_finish_a_normal_exit_leaves_no_watchdog(workspace: Workspace) -> None:
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    for _ in range(3):
        response = await client.request({"type": "bash", "command": "echo done"})
        assert response["data"]["output"] == "done\n"
    watchdogs = watchdogs_of(client.process.pid)
    assert len(watchdogs) == 1
    assert await client.close(timeout=20) == 0
    assert await wait_gone(watchdogs) == []


async def test_the_watchdog_of_a_sigkilled_xcsh_exits_too(workspace: Workspace) -> None:
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    response = await client.request({"type": "bash", "command": "echo done"})
    assert response["success"]
    watchdogs = watchdogs_of(client.process.pid)
    assert len(watchdogs) == 1
    await sigkill(client)
    assert await wait_gone(watchdogs) == []


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
async def test_sigkill_of_xcsh_s_whole_process_group_does_not_reach_the_watchdog(
    workspace: Workspace,
) -> None:
    # xcsh leads its own group here (as under a supervisor), so the test can kill that group
    pidfile = workspace.proj / "pids"
    command = ["setsid", sys.executable, "-m", "xcsh"]
    client = await RpcClient.start(command=command, args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    xcsh = client.process.pid
    assert os.getpgid(xcsh) == xcsh
    response = await client.request(
        {"type": "bash", "command": f"sleep 1000 >/dev/null 2>&1 & echo $! > {pidfile}"}
    )
    assert response["success"]
    (child,) = read_pids(pidfile, 1)
    try:
        (dog,) = watchdogs_of(xcsh)
        os.killpg(xcsh, signal.SIGKILL)  # `kill -9 -<pgid>`
        assert await wait_gone([child, dog]) == []
        assert await client.close(timeout=GONE_WITHIN_S) == -signal.SIGKILL
    finally:
        kill_leftovers([child])


async def test_sigterm_ends_the_background_child_of_a_finished_command_too(workspace: Workspace) -> None:
    pidfile = workspace.proj / "pids"
    client = await RpcClient.start(args=BASE_ARGS, cwd=workspace.proj, env=workspace.env)
    response = await client.request(
        {"type": "bash", "command": f"sleep 1000 >/dev/null 2>&1 & echo $! > {pidfile}"}
    )
    assert response["success"]
    (child,) = read_pids(pidfile, 1)
    try:
        client.process.send_signal(signal.SIGTERM)
        assert await client.close(timeout=20) == 143
        assert await wait_gone([child]) == []
    finally:
        kill_leftovers([child])
