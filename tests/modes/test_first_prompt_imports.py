"""A prompt written at once reaches its first token without loading what only later work needs.

For a process that gets its first prompt right after it is spawned, everything imported before
the request goes out is time before the first token (docs/performance.md, "Fourth session:
first prompt"), so what it imports is the structural guard; timing is bench/'s business. The
process runs under ``python -v`` with the prompt written before it is ready; the
fake LLM sends one delta and then holds the answer open, so once the first ``text_delta``
(and the answer to a ``get_state`` sent after it) has arrived the process sits idle with the
run still in flight, and the modules named in its stderr are exactly those imported up to then.
The warm-up is set to start at the first quiet moment (``XCSH_WARM_QUIET_MS=0``): it must wait
for the run instead of importing beside it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from conftest import Workspace, frame_containing
from xcsh.coding.tools import IMPLEMENTATIONS
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

# Never needed before the first token of a plain text answer.
LATER = (
    *IMPLEMENTATIONS,  # the built-in tools' code: on a tool's first call (or the idle warm-up)
    "xcsh.coding.tools.python",
    "xcsh.coding.tools.kernel",
    "xcsh.coding.subagents.child",
    "xcsh.ai.errors",  # error classification: on an error
    "xcsh.rpc.validation_errors",  # the wording of an invalid command: on the first one
    "xcsh.rpc.typeschema",
    "xcsh.rpc.commands",  # the other commands' TypedDicts: the prompt's are in rpc/commands_prompt
    "xcsh.coding.file_mentions",  # only for a prompt with an @
    "xcsh.agent.tool_calls",  # tool execution: once an answer is in
    "xcsh.agent.validation",
    "xcsh.ai.partial_json",  # partial JSON of streamed tool arguments: on the first tool call
    "jiter",
    "xcsh.coding.compaction.prune",  # compaction's checks: once the answer is over
    "xcsh.coding.compaction.tokens",
    "xcsh.coding.bash.session",  # the host's bash command
    "xcsh.coding.extensions.runner",  # only for a session with extensions
    "xcsh.coding.extensions.ui",  # the extension UI bridge: with extensions or approvals on
    "xcsh.modes.rpc.extension_ui",
    "xcsh.coding.sessions.loading",  # reading a session file: only to open an existing one
    "xcsh.coding.sessions.listing",
    "xcsh.coding.host_ops",  # the host commands' code
    "xcsh.coding.small_guards",
    "xcsh.rpc.results",
    "difflib",
)
# What the first token does need: the parse must find these, or finding nothing proves nothing.
NEEDED = ("xcsh.agent.loop", "xcsh.ai.transport", "xcsh.ai.registry")
PROVIDER = {
    "openai-completions": "xcsh.ai.providers.openai_completions",
    "anthropic-messages": "xcsh.ai.providers.anthropic_messages",
}


def _imported(verbose: str) -> set[str]:
    """Module names in ``python -v`` output (``import 'name' # loader``).

    Not ``-X importtime``: it leaves out modules loaded with ``importlib.import_module`` (the
    providers, the warm-up's imports), which ``-v`` names like every other.
    """
    # searched anywhere in a line: the warm-up thread's messages can interleave with the main one's
    return set(re.findall(r"import '([\w.]+)' #", verbose))


async def _imported_by_the_first_token(workspace: Workspace, log: Path) -> set[str]:
    env = {**workspace.env, "XCSH_WARM_QUIET_MS": "0", "XCSH_RPC_CHECK_FRAMES": "0"}
    argv = [sys.executable, "-v", "-m", "xcsh", "--mode", "rpc", "--model", "fake/fake-model"]
    with log.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *argv,
            "--session-dir",
            str(workspace.sess),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=workspace.proj,
            env=env,
            limit=16 << 20,
        )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b'{"type":"prompt","message":"hi","id":"p1"}\n')  # before it is ready
        await process.stdin.drain()
        async with asyncio.timeout(60):
            delta = await frame_containing(process.stdout, b'"type":"text_delta"')
            process.stdin.write(b'{"type":"get_state","id":"s1"}\n')
            await process.stdin.drain()
            state = await frame_containing(process.stdout, b'"id":"s1"')
        assert delta["assistantMessageEvent"]["delta"] == "first words"  # type: ignore[index]
        assert state["data"]["isStreaming"] is True  # type: ignore[index]  # the answer is still held open
        return _imported(log.read_text())
    finally:
        process.kill()
        await process.wait()


@pytest.mark.parametrize("workspace", ["openai-completions", "anthropic-messages"], indirect=True)
async def test_an_immediate_prompt_reaches_its_first_token_without_loading_what_only_later_work_needs(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.script(script.hold("first words"))
    names = await _imported_by_the_first_token(workspace, tmp_path / "imports.txt")
    assert {*NEEDED, PROVIDER[workspace.api]} <= names, sorted({*NEEDED, PROVIDER[workspace.api]} - names)
    assert sorted(name for name in names if name in LATER) == []


@pytest.mark.parametrize("module", LATER)
def test_every_module_the_first_prompt_guard_names_exists(module: str) -> None:
    # a misspelt name would never be imported and so always "pass" the guard above
    assert importlib.util.find_spec(module) is not None
