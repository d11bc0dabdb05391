"""BashSession (user bash, rpc-protocol §5.8 / agent-behaviour §10) on real processes."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from xcsh.ai.abort import AbortController
from xcsh.coding.bash.capture import OUTPUT_LIMIT_BYTES, OutputCapture, sanitize_output
from xcsh.coding.bash.process import BashLaunchError
from xcsh.coding.bash.session import BashSession
from xcsh.coding.bash.wire import bash_execution_message, bash_result_wire
from xcsh.coding.messages import bash_execution_text as bash_execution_to_text
from xcsh.testing.processes import until_gone


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[BashSession]:
    shell = BashSession(tmp_path)
    yield shell
    shell.close()


def _abort_when(controller: AbortController, marker: str) -> tuple[list[str], Callable[[str], None]]:
    seen: list[str] = []

    def on_output(chunk: str) -> None:
        seen.append(chunk)
        if marker in "".join(seen):
            controller.abort()

    return seen, on_output


async def test_echo_hello_gives_the_s42_bash_result(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run("echo hello")
    assert bash_result_wire(result) == {
        "output": "hello\n",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "totalBytes": 6,
        "outputBytes": 6,
        "totalLines": 2,
        "outputLines": 2,
    }


async def test_non_zero_exit_status_is_reported_not_raised(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run("sh -c 'exit 3'")
    wire = bash_result_wire(result)
    assert wire["exitCode"] == 3
    assert wire["cancelled"] is False
    assert wire["totalLines"] == 0 and wire["output"] == ""


async def test_cd_persists_between_commands(session: BashSession, tmp_path: Path) -> None:
    async with asyncio.timeout(5):
        first = await session.run("mkdir -p sub && cd sub")
        second = await session.run("pwd")
    assert first.exit_code == 0
    assert bash_result_wire(first)["newCwd"] == str(tmp_path / "sub")
    assert second.output.endswith("/sub\n")
    assert session.cwd == tmp_path / "sub"
    assert "newCwd" not in bash_result_wire(second)


async def test_exported_variables_persist_and_unset_sticks(session: BashSession) -> None:
    async with asyncio.timeout(5):
        await session.run("export XCSH_TEST_VAR=persisted")
        seen = await session.run('echo "$XCSH_TEST_VAR"')
        await session.run("unset XCSH_TEST_VAR")
        gone = await session.run('echo "${XCSH_TEST_VAR-unset}"')
    assert seen.output == "persisted\n"
    assert gone.output == "unset\n"


async def test_exit_builtin_still_saves_shell_state(session: BashSession, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    async with asyncio.timeout(5):
        result = await session.run("cd d; exit 4")
        where = await session.run("pwd")
    assert result.exit_code == 4
    assert where.output == f"{tmp_path / 'd'}\n"


async def test_stderr_is_merged_into_output(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run("echo err 1>&2")
    assert result.output == "err\n"


async def test_stdout_and_stderr_keep_arrival_order(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run("echo one; echo two >&2; echo three")
    assert result.output == "one\ntwo\nthree\n"


async def test_large_output_keeps_only_the_tail_and_spills_the_rest_to_a_file(session: BashSession) -> None:
    async with asyncio.timeout(10):
        result = await session.run("yes abcdefghi | head -n 10000")
    wire = bash_result_wire(result)
    assert wire["truncated"] is True
    assert wire["totalBytes"] == 100_000
    assert wire["outputBytes"] <= OUTPUT_LIMIT_BYTES
    assert wire["output"].endswith("abcdefghi\n")
    assert wire["output"].startswith("abcdefghi\n")
    assert wire["exitCode"] == 0
    assert wire["totalLines"] == 10_001
    assert result.full_output_path is not None
    assert Path(result.full_output_path).read_text(encoding="utf-8") == "abcdefghi\n" * 10_000
    Path(result.full_output_path).unlink()


async def test_ten_megabytes_of_output_is_counted_and_tail_limited(session: BashSession) -> None:
    async with asyncio.timeout(30):
        result = await session.run("head -c 10000000 /dev/zero | tr '\\0' 'x'; echo; echo END")
        tail_only = await session.run("head -c 10000000 /dev/zero | tr '\\0' 'y'")
    assert result.exit_code == 0
    assert result.total_bytes == 10_000_000 + 1 + 4
    # The retained window starts at a line boundary, so the cut 10 MB line is dropped.
    assert result.output == "END\n"
    assert tail_only.output == "y" * OUTPUT_LIMIT_BYTES  # one huge line: its last bytes are kept
    for path in (result.full_output_path, tail_only.full_output_path):
        assert path is not None
        assert Path(path).stat().st_size >= 10_000_000
        Path(path).unlink()


async def test_binary_and_invalid_utf8_bytes_are_replaced_or_removed(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run(
            "printf 'a\\xff\\xfeb\\000\\001c\\n'; head -c 4096 /dev/urandom >/dev/null"
        )
    assert result.output == "a\ufffd\ufffdbc\n"
    assert result.exit_code == 0


async def test_random_binary_output_does_not_break_the_run(session: BashSession) -> None:
    async with asyncio.timeout(10):
        result = await session.run("head -c 200000 /dev/urandom")
    assert result.exit_code == 0
    assert result.output_bytes <= OUTPUT_LIMIT_BYTES
    result.output.encode("utf-8")  # always valid text
    assert "\x1b" not in result.output and "\x00" not in result.output
    if result.full_output_path:
        Path(result.full_output_path).unlink()


async def test_ansi_colour_and_carriage_returns_are_stripped(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run("printf '\\033[31mred\\033[0m\\r\\n\\033]0;title\\007plain\\n'")
    assert result.output == "red\nplain\n"


async def test_abort_kills_a_sleeping_command_and_reports_cancelled(session: BashSession) -> None:
    controller = AbortController()
    _, on_output = _abort_when(controller, "ready")
    async with asyncio.timeout(5):
        result = await session.run("echo ready; sleep 30", signal=controller.signal, on_output=on_output)
    wire = bash_result_wire(result)
    assert wire["cancelled"] is True
    assert "exitCode" not in wire
    assert wire["output"].startswith("[Command cancelled]\nready\n")


async def test_abort_also_kills_background_children_of_the_command(
    session: BashSession, tmp_path: Path
) -> None:
    controller = AbortController()
    _, on_output = _abort_when(controller, "child=")
    async with asyncio.timeout(5):
        result = await session.run(
            "sleep 30 & echo child=$!; wait", signal=controller.signal, on_output=on_output
        )
        pid = int(result.output.split("child=")[1].split()[0])
        await until_gone(pid)
    assert result.cancelled is True


# GNU timeout puts itself and its command in a process group of their own (same session); the
# command reports its pid once it has (field 5 of /proc/PID/stat is the group)
ESCAPING = (
    "timeout 30 sleep 30 & c=$!; "
    'for _ in $(seq 100000); do read -r _ _ _ _ g _ < /proc/$c/stat; [ "$g" = "$c" ] && break; done; '
    "echo child=$c; wait"
)
needs_pkill = pytest.mark.skipif(shutil.which("pkill") is None, reason="the session is reached with pkill -s")


@needs_pkill
async def test_abort_also_ends_a_process_that_moved_to_another_group_of_the_command_s_session(
    session: BashSession,
) -> None:
    controller = AbortController()
    _, on_output = _abort_when(controller, "child=")
    async with asyncio.timeout(10):
        result = await session.run(ESCAPING, signal=controller.signal, on_output=on_output)
        pid = int(result.output.split("child=")[1].split()[0])
        await until_gone(pid)
    assert result.cancelled is True


@needs_pkill
async def test_a_timed_out_command_s_escaped_process_ends_too(session: BashSession) -> None:
    async with asyncio.timeout(10):
        result = await session.run(ESCAPING, timeout_s=0.5)
        pid = int(result.output.split("child=")[1].split()[0])
        await until_gone(pid)
    assert result.timed_out is True


async def test_timeout_cancels_with_a_timed_out_notice(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run("sleep 30", timeout_s=0.2)
    assert result.cancelled is True and result.timed_out is True
    assert result.exit_code is None
    assert result.output.startswith("[Command timed out after 0.2 seconds]\n")


async def test_an_already_aborted_signal_runs_nothing(session: BashSession, tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort()
    async with asyncio.timeout(5):
        result = await session.run("touch ran", signal=controller.signal)
    assert result.cancelled is True
    assert not (tmp_path / "ran").exists()


async def test_the_shell_environment_is_non_interactive(session: BashSession) -> None:
    async with asyncio.timeout(5):
        result = await session.run('echo "$PAGER $GIT_PAGER $TERM"; read -r line; echo "read=$?"')
    assert result.output == "cat cat dumb\nread=1\n"


async def test_configured_environment_is_visible_to_commands(tmp_path: Path) -> None:
    shell = BashSession(tmp_path, environment={"XCSH_CONFIGURED": "yes"})
    try:
        async with asyncio.timeout(5):
            result = await shell.run('echo "$XCSH_CONFIGURED"')
    finally:
        shell.close()
    assert result.output == "yes\n"


async def test_child_output_never_reaches_our_stdout(
    session: BashSession, capfd: pytest.CaptureFixture[str]
) -> None:
    async with asyncio.timeout(5):
        result = await session.run("echo to-out; echo to-err >&2")
    captured = capfd.readouterr()
    assert result.output == "to-out\nto-err\n"
    assert "to-out" not in captured.out and "to-err" not in captured.err


async def test_on_output_receives_the_streamed_text(session: BashSession) -> None:
    chunks: list[str] = []
    async with asyncio.timeout(5):
        await session.run("echo a; echo b", on_output=chunks.append)
    assert "".join(chunks) == "a\nb\n"


async def test_missing_session_directory_is_a_launch_error(tmp_path: Path) -> None:
    shell = BashSession(tmp_path / "missing")
    with pytest.raises(BashLaunchError):
        async with asyncio.timeout(5):
            await shell.run("true")
    shell.close()


def test_sanitize_output_keeps_tabs_and_newlines_only() -> None:
    assert sanitize_output("a\tb\x07c\x1b[1;32md\x1b[0m\r\n\x7fe") == "a\tbcd\ne"


def test_output_capture_handles_escape_sequences_split_across_reads() -> None:
    capture = OutputCapture()
    capture.feed(b"x\x1b[3")
    capture.feed(b"1my\n\xe2\x82")
    capture.feed(b"\xac\n")
    capture.finish()
    assert capture.tail() == "xy\n€\n"
    assert capture.total_bytes == len("xy\n€\n".encode())


def test_bash_execution_to_text_wraps_output_in_a_fence() -> None:
    message = {"role": "bashExecution", "command": "echo hello", "output": "hello\n", "exitCode": 0,
               "cancelled": False, "truncated": False}  # fmt: skip
    assert bash_execution_to_text(message) == "Ran `echo hello`\n```\nhello\n```"


def test_bash_execution_to_text_reports_no_output_exit_code_and_cancel() -> None:
    base = {"role": "bashExecution", "command": "false", "output": "", "cancelled": False, "truncated": False}
    assert (
        bash_execution_to_text({**base, "exitCode": 1})
        == "Ran `false`\n(no output)\n\nCommand exited with code 1"
    )
    cancelled = bash_execution_to_text({**base, "output": "[Command cancelled]\n", "cancelled": True})
    assert cancelled == "Ran `false`\n```\n[Command cancelled]\n```\n\n(command cancelled)"


async def test_truncated_bash_execution_message_carries_meta_and_text_notice(session: BashSession) -> None:
    async with asyncio.timeout(10):
        result = await session.run("seq 1 20000")
    message = bash_execution_message("seq 1 20000", result, timestamp_ms=5)
    truncation = message["meta"]["truncation"]
    assert truncation["direction"] == "tail" and truncation["totalLines"] == 20_001
    assert truncation["shownRange"]["end"] == 20_001
    assert message["timestamp"] == 5 and message["exitCode"] == 0 and message["truncated"] is True
    text = bash_execution_to_text(message)
    start = truncation["shownRange"]["start"]
    assert text.endswith(f"\n\n[Showing lines {start}-20001 of 20001 (50.0KB limit)]")
    assert result.full_output_path is not None
    Path(result.full_output_path).unlink()
