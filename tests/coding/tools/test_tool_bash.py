"""The bash tool running real commands."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.types import AgentToolResult
from xcsh.ai.abort import AbortController, AbortSignal
from xcsh.coding.bash.capture import OutputCapture
from xcsh.coding.tools import ToolAbortedError, ToolError, create_bash_tool
from xcsh.coding.tools.bash import clamp_timeout
from xcsh.testing.processes import until_gone


async def _bash(
    session_cwd: Path,
    /,
    *,
    signal: AbortSignal | None = None,
    updates: list[AgentToolResult] | None = None,
    **args: Any,
) -> AgentToolResult:
    tool = create_bash_tool(session_cwd)
    sink = updates.append if updates is not None else (lambda _: None)
    async with asyncio.timeout(10):
        return await tool.execute("c1", args, signal, sink)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


async def test_command_output_is_returned(tmp_path: Path) -> None:
    assert _text(await _bash(tmp_path, command="echo hello")) == "hello"


async def test_stdout_and_stderr_are_merged_in_order(tmp_path: Path) -> None:
    assert _text(await _bash(tmp_path, command="echo a; echo b >&2; echo c")) == "a\nb\nc"


async def test_empty_output_says_no_output(tmp_path: Path) -> None:
    assert _text(await _bash(tmp_path, command="true")) == "(no output)"


async def test_non_zero_exit_raises_with_output_and_code(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        await _bash(tmp_path, command="echo oops; exit 3")
    assert str(info.value) == "oops\n\nCommand exited with code 3"


async def test_timeout_raises_with_timed_out_notice(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        await _bash(tmp_path, command="echo started; sleep 30", timeout=0.01)
    assert str(info.value) == "started\n\n[Command timed out after 1 seconds]"


async def test_abort_kills_the_process_group_and_raises(tmp_path: Path) -> None:
    controller = AbortController()
    updates: list[AgentToolResult] = []

    def on_update(result: AgentToolResult) -> None:
        updates.append(result)
        controller.abort()

    tool = create_bash_tool(tmp_path)
    with pytest.raises(ToolAbortedError) as info:
        async with asyncio.timeout(5):
            await tool.execute(
                "c1", {"command": "sleep 30 & echo child=$!; wait"}, controller.signal, on_update
            )
    message = str(info.value)
    assert message.startswith("child=") and message.endswith("\n\nCommand aborted")
    pid = int(message.split("child=")[1].split()[0])
    await until_gone(pid)
    assert _text(updates[0]).startswith("child=")


async def test_partial_output_is_streamed_as_updates(tmp_path: Path) -> None:
    updates: list[AgentToolResult] = []
    await _bash(tmp_path, updates=updates, command="echo first")
    assert updates and _text(updates[0]) == "first\n"


async def test_long_output_keeps_the_tail_and_names_the_full_output_file(tmp_path: Path) -> None:
    result = await _bash(tmp_path, command="seq 1 20000")
    text = _text(result)
    body, notice = text.rsplit("\n\n", 1)
    assert body.endswith("\n20000")
    assert len(body.encode()) <= 51_200
    full_path = result["details"]["fullOutputPath"]
    first_shown = int(body.split("\n")[0])
    assert notice == f"[Showing lines {first_shown}-20000 of 20000 (50.0KB limit). Full output: {full_path}]"
    assert Path(full_path).read_text().split("\n")[:2] == ["1", "2"]
    Path(full_path).unlink()


async def test_head_and_tail_filter_lines(tmp_path: Path) -> None:
    assert (
        _text(await _bash(tmp_path, command="seq 1 100", head=3))
        == "1\n2\n3\n\n[Showing lines 1-3 of 100 (head=3)]"
    )
    assert (
        _text(await _bash(tmp_path, command="seq 1 100", tail=2))
        == "99\n100\n\n[Showing lines 99-100 of 100 (tail=2)]"
    )
    assert _text(await _bash(tmp_path, command="seq 1 5", head=10)) == "1\n2\n3\n4\n5"


async def test_head_keeps_the_first_lines_that_fit_and_the_notice_names_them(tmp_path: Path) -> None:
    for command, head in (("seq 1 200000", 100_000), ("seq 1 100000", 200_000)):
        result = await _bash(tmp_path, command=command, head=head)
        body, notice = _text(result).rsplit("\n\n", 1)
        lines = body.split("\n")
        assert lines[:3] == ["1", "2", "3"] and len(body.encode()) <= 51_200
        assert lines == [str(n) for n in range(1, len(lines) + 1)]
        total = command.split()[-1]
        full = result["details"]["fullOutputPath"]
        assert notice == (
            f"[Showing lines 1-{len(lines)} of {total} (head={head}, 50.0KB limit). Full output: {full}]"
        )
    body, notice = _text(await _bash(tmp_path, command="seq 1 200000", head=150_000, tail=100)).rsplit(
        "\n\n", 1
    )
    assert body.split("\n")[0] == "149901" and body.endswith("\n150000")
    assert notice.startswith("[Showing lines 149901-150000 of 200000 (head=150000, tail=100). Full output: ")


async def test_a_spill_file_is_capped_with_a_line_saying_the_rest_was_not_saved() -> None:
    capture = OutputCapture(limit_bytes=100, spill_limit_bytes=1000)
    for _ in range(50):
        capture.feed(b"0123456789" * 5 + b"\n")
    capture.finish()
    assert capture.spill_capped and capture.spill_path is not None
    saved = Path(capture.spill_path).read_text()
    assert saved.endswith("\n[xcsh: output past 0.0MB was not saved]\n") and len(saved) < 1100
    assert capture.tail().endswith("0123456789\n")  # the tail returned is whole


async def test_cwd_and_env_arguments_apply(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result = await _bash(tmp_path, command='echo "$(pwd) $GREETING"', cwd="sub", env={"GREETING": "hi"})
    assert _text(result) == f"{tmp_path / 'sub'} hi"


async def test_missing_cwd_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="Working directory not found: nope"):
        await _bash(tmp_path, command="true", cwd="nope")


async def test_cd_does_not_persist_between_tool_calls(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    await _bash(tmp_path, command="cd sub")
    assert _text(await _bash(tmp_path, command="pwd")) == str(tmp_path)


async def test_ansi_sequences_are_stripped(tmp_path: Path) -> None:
    assert _text(await _bash(tmp_path, command="printf '\\033[1;31mred\\033[0m\\n'")) == "red"


async def test_child_output_never_reaches_our_stdout(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    await _bash(tmp_path, command="echo marker-out; echo marker-err >&2")
    captured = capfd.readouterr()
    assert "marker-out" not in captured.out and "marker-err" not in captured.err


def test_timeout_is_clamped_to_1_to_3600_seconds() -> None:
    assert clamp_timeout(None) == 300
    assert clamp_timeout(0) == 1
    assert clamp_timeout(99_999) == 3600
    with pytest.raises(ToolError):
        clamp_timeout("soon")


def test_bash_tool_is_exclusive_and_abortable(tmp_path: Path) -> None:
    tool = create_bash_tool(tmp_path)
    assert (tool.name, tool.concurrency, tool.abortable) == ("bash", "exclusive", True)
    assert tool.parameters["required"] == ["command"]
    assert tool.parameters["additionalProperties"] is False
