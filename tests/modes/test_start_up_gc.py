"""``xcsh --mode rpc`` runs no automatic garbage collection while it starts, and resumes it later.

The collector would walk the start-up's imports some 90 times before an immediate prompt's
request left, reclaiming almost nothing (docs/performance.md, "Fifth session: immediate
prompt"; ``xcsh.modes.rpc.gc_pause``). The process runs under ``python -v`` with a callback that
reports each collection on stderr, so the log shows, in order, the moment the CLI paused the
collector (``xcsh.modes.rpc.gc_pause`` imported) and every collection after it. Timing is
bench/'s business: these tests check only what ran when.
"""

from __future__ import annotations

import asyncio
import gc
import re
import sys
from pathlib import Path

import pytest

from conftest import Workspace, frame_containing
from xcsh.cli.entry import wants_rpc
from xcsh.cli.main import main
from xcsh.modes.rpc import gc_pause
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

REPORTING = """
import gc, os, sys
def report(phase, info):
    if phase == "stop":
        os.write(2, b"gc-collection generation=%d frozen=%d\\n" % (info["generation"], gc.get_freeze_count()))
gc.callbacks.append(report)
import runpy
sys.argv[0] = "xcsh"
runpy.run_module("xcsh", run_name="__main__")  # as python -m xcsh
"""
ARGV = [sys.executable, "-v", "-c", REPORTING, "--mode", "rpc", "--model", "fake/fake-model"]
PAUSED = "import 'xcsh.modes.rpc.gc_pause'"
COLLECTION = re.compile(r"gc-collection generation=(\d+) frozen=(\d+)")


async def _spawn(workspace: Workspace, log: Path, **env: str) -> asyncio.subprocess.Process:
    with log.open("wb") as stderr:
        return await asyncio.create_subprocess_exec(
            *ARGV,
            "--session-dir",
            str(workspace.sess),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=workspace.proj,
            env={**workspace.env, "XCSH_RPC_CHECK_FRAMES": "0", **env},
            limit=16 << 20,
        )


def _collections_after_the_pause(log: Path) -> list[tuple[int, int]]:
    text = log.read_text(errors="replace")
    assert PAUSED in text  # else the log proves nothing
    after = text[text.index(PAUSED) :]
    return [(int(g), int(f)) for g, f in COLLECTION.findall(after)]


async def test_an_immediate_prompt_reaches_its_first_token_without_a_garbage_collection(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.script(script.hold("first words"))
    log = tmp_path / "stderr.txt"
    # resumed only long after the first token, however slow the machine (the default is 1 s)
    process = await _spawn(workspace, log, XCSH_GC_RESUME_MS="600000")
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b'{"type":"prompt","message":"hi","id":"p1"}\n')  # before it is ready
        await process.stdin.drain()
        async with asyncio.timeout(60):
            delta = await frame_containing(process.stdout, b'"type":"text_delta"')
        assert delta["assistantMessageEvent"]["delta"] == "first words"  # type: ignore[index]
        assert _collections_after_the_pause(log) == []
        text = log.read_text(errors="replace")  # paused before the CLI's own imports, not after them
        assert text.index(PAUSED) < text.index("import 'xcsh.cli.main'")
    finally:
        process.kill()
        await process.wait()


async def test_collection_resumes_after_start_up_with_the_start_up_heap_frozen(workspace: Workspace) -> None:
    # resumed at once; the idle warm-up's imports after the first answer then allocate enough
    env = {**workspace.env, "XCSH_GC_RESUME_MS": "0", "XCSH_WARM_QUIET_MS": "0", "XCSH_RPC_CHECK_FRAMES": "0"}
    process = await asyncio.create_subprocess_exec(
        *ARGV,
        "--no-session",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workspace.proj,
        env=env,
        limit=16 << 20,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        process.stdin.write(b'{"type":"get_state","id":"s1"}\n')
        await process.stdin.drain()
        async with asyncio.timeout(60):  # stderr is read as it comes (python -v writes much)
            paused = False
            while True:
                line = (await process.stderr.readline()).decode(errors="replace")
                if not line:
                    raise ConnectionError("xcsh exited before a collection")
                paused = paused or PAUSED in line
                found = COLLECTION.search(line)
                if paused and found:
                    break
        assert int(found.group(2)) > 0  # the first collection after start-up skips the frozen heap
    finally:
        process.kill()
        await process.wait()


@pytest.mark.parametrize(
    ("argv", "rpc"),
    [
        (["--mode", "rpc"], True),
        (["--model", "a/b", "--mode", "rpc", "--no-session"], True),
        (["--mode=rpc"], False),  # the parser does not take this form either
        (["--mode", "json", "hi"], False),
        (["-p", "rpc"], False),
        (["conformance", "--mode", "rpc"], False),
        ([], False),
    ],
)
def test_the_entry_point_takes_only_an_rpc_mode_flag_for_rpc_mode(argv: list[str], rpc: bool) -> None:
    assert wants_rpc(argv) is rpc


def test_a_process_the_entry_point_took_for_rpc_gets_its_collector_back_once_the_flags_say_otherwise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        gc_pause.pause()  # what xcsh.cli.entry does at a glance
        assert not gc.isenabled()
        assert main(["--system-prompt", "--mode", "rpc", "--version"]) == 0  # the prompt is "--mode"
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0  # nothing frozen outside RPC mode
    finally:
        gc.enable()
