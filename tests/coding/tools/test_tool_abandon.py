"""A writing tool call abandoned after an abort never changes a file, even when its thread runs
on afterwards (in-process agent loop, fake LLM on loopback, the real write and edit tools).

The call's thread is held in the middle of a file system operation by a Python audit hook
(``sys.addaudithook``: it runs inside ``os.open`` / ``os.replace`` before the system call), which
stands in for a slow or hung disk; it holds only files staged in the test's own folder. The
grace an aborted call gets is waited out by an injected sleep (the loop's ``sleep``), so the
call is abandoned while its thread is held; then the test lets the thread go on.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from agent.test_agent_failures import fake_model, user
from xcsh.agent.agent import Agent
from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentEvent, AgentToolResult
from xcsh.coding.tools.edit import create_edit_tool
from xcsh.coding.tools.errors import ToolAbortedError
from xcsh.coding.tools.file_write import write_file
from xcsh.coding.tools.write import create_write_tool
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM


class SlowDisk:
    """Holds the thread that reaches audit event ``event`` (``open``, or ``os.rename``: a commit)
    for a file in ``folder`` whose name ends with ``suffix`` (default: a staged file) until
    :meth:`go_on`."""

    def __init__(self, folder: Path, event: str, suffix: str = ".xcsh-tmp") -> None:
        self.folder = str(folder)
        self.event = event
        self.suffix = suffix
        self.loop = asyncio.get_running_loop()
        self.reached = asyncio.Event()
        self.release = threading.Event()

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event != self.event or not args or not isinstance(args[0], str):
            return
        if os.path.dirname(args[0]) == self.folder and args[0].endswith(self.suffix):
            self.loop.call_soon_threadsafe(self.reached.set)
            self.release.wait(30)

    def go_on(self) -> None:
        self.release.set()


_DISKS: list[SlowDisk] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    for disk in list(_DISKS):
        disk.hook(event, args)


sys.addaudithook(_audit)  # cannot be removed: it does nothing while no test has a SlowDisk


@pytest.fixture
async def executor() -> AsyncIterator[ThreadPoolExecutor]:
    """The loop's default executor, one worker: a job submitted after the held one runs after it."""
    pool = ThreadPoolExecutor(max_workers=1)
    asyncio.get_running_loop().set_default_executor(pool)
    yield pool
    pool.shutdown(wait=False)


async def _run_and_abort(
    fake_llm: FakeLLM, work: Path, disk: SlowDisk, call: tuple[str, dict[str, Any]], sleep: Any
) -> list[AgentEvent]:
    fake_llm.script(script.tool_calls(("c1", *call)))
    tools = [create_write_tool(work), create_edit_tool(work)]
    agent = Agent(
        model=fake_model(fake_llm), tools=tools, get_api_key=lambda provider: "test-key", sleep=sleep
    )
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    _DISKS.append(disk)
    try:
        run = asyncio.ensure_future(agent.prompt([user("change the notes")]))
        async with asyncio.timeout(30):
            await disk.reached.wait()
            agent.abort("aborted")
            await run
    finally:
        disk.go_on()
        _DISKS.remove(disk)
    return [e for e in events if e["type"] == "tool_execution_end"]


async def _no_grace(seconds: float) -> None:
    """The injected sleep: the grace after the abort is over at once."""


@pytest.mark.parametrize(
    "call",
    [
        ("write", {"path": "notes.txt", "content": "new\n"}),
        ("edit", {"edits": [{"path": "notes.txt", "old_text": "old", "new_text": "new"}]}),
    ],
)
async def test_a_write_abandoned_after_an_abort_leaves_the_file_as_it_was_when_its_thread_goes_on_later(
    fake_llm: FakeLLM, tmp_path: Path, executor: ThreadPoolExecutor, call: tuple[str, dict[str, Any]]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old\n")
    disk = SlowDisk(work, "open")  # held while staging, before anything is committed
    [end] = await _run_and_abort(fake_llm, work, disk, call, _no_grace)
    assert end["isError"] is True
    assert end["result"]["content"][0]["text"].endswith(
        "did not finish within 3 s of the abort and was abandoned."
    )
    async with asyncio.timeout(30):  # the held thread has gone on: its job ends before this one
        await asyncio.wrap_future(executor.submit(lambda: None))
    assert (work / "notes.txt").read_text() == "old\n"
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]  # nothing staged left behind


async def test_an_edit_of_a_file_written_in_place_abandoned_after_an_abort_leaves_it_as_it_was(
    fake_llm: FakeLLM, tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old\n")
    os.link(work / "notes.txt", tmp_path / "other-name.txt")  # two names: written in place, not replaced
    disk = SlowDisk(work, "open", suffix="/notes.txt")  # held while the edit reads the file
    call = ("edit", {"edits": [{"path": "notes.txt", "old_text": "old", "new_text": "new"}]})
    [end] = await _run_and_abort(fake_llm, work, disk, call, _no_grace)
    assert end["isError"] is True and end["result"]["content"][0]["text"].endswith("was abandoned.")
    async with asyncio.timeout(30):
        await asyncio.wrap_future(executor.submit(lambda: None))
    assert (work / "notes.txt").read_text() == "old\n" == (tmp_path / "other-name.txt").read_text()
    assert sorted(p.name for p in work.iterdir()) == ["notes.txt"]


async def test_a_write_already_committing_when_abandoned_gets_longer_and_reports_its_real_result(
    fake_llm: FakeLLM, tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old\n")
    disk = SlowDisk(work, "os.rename")  # held inside the commit, past the point of no return
    graces: list[float] = []

    async def sleep(seconds: float) -> None:
        graces.append(seconds)
        if len(graces) == 2:  # the second grace, given because the commit had begun
            disk.go_on()
            await asyncio.Event().wait()  # over only when the call has finished

    [end] = await _run_and_abort(
        fake_llm, work, disk, ("write", {"path": "notes.txt", "content": "new\n"}), sleep
    )
    assert graces == [3.0, 3.0]
    assert (end["isError"], end["result"]["content"][0]["text"]) == (
        False,
        "Successfully wrote 4 bytes to notes.txt",
    )
    assert (work / "notes.txt").read_text() == "new\n"


async def test_a_write_still_committing_after_the_second_grace_is_reported_as_maybe_changed(
    fake_llm: FakeLLM, tmp_path: Path, executor: ThreadPoolExecutor
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old\n")
    disk = SlowDisk(work, "os.rename")
    [end] = await _run_and_abort(
        fake_llm, work, disk, ("write", {"path": "notes.txt", "content": "new\n"}), _no_grace
    )
    assert end["isError"] is True
    assert end["result"]["content"][0]["text"].endswith(
        "was abandoned while it was writing its files: some of them may have changed."
    )
    async with asyncio.timeout(30):
        await asyncio.wrap_future(executor.submit(lambda: None))
    assert (work / "notes.txt").read_text() == "new\n"  # the rename it had begun went through


async def test_a_thread_a_tool_call_left_behind_changes_no_file_after_the_call_returned(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("old\n")
    release = threading.Event()
    left: list[asyncio.Future[None]] = []

    def late_write() -> None:
        release.wait(30)
        write_file(target, b"new\n", "notes.txt")

    async def hasty(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        left.append(asyncio.ensure_future(asyncio.to_thread(late_write)))  # not awaited: a tool's bug
        return {"content": [{"type": "text", "text": "done"}]}

    fake_llm.script(script.tool_calls(("c1", "hasty", {})), script.text("ok"))
    tool = AgentTool(
        name="hasty", description="", parameters={"type": "object", "properties": {}}, execute=hasty
    )
    agent = Agent(model=fake_model(fake_llm), tools=[tool], get_api_key=lambda provider: "test-key")
    async with asyncio.timeout(30):
        await agent.prompt([user("go")])
        release.set()
        with pytest.raises(ToolAbortedError):
            await left[0]
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
