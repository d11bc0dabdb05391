"""Warming a provider imports its SDK in the background and leaves the interpreter as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import Workspace

PROGRAM = """
import sys
from xcsh.ai.warm import warm_in_background
interval = sys.getswitchinterval()
assert "{sdk}" not in sys.modules
thread = warm_in_background("{api}", "http://127.0.0.1:9/v1")
assert warm_in_background("{api}") is None  # once per api
thread.join(60)
print("{sdk}" in sys.modules, "{types}" in sys.modules, sys.getswitchinterval() == interval)
"""


@pytest.mark.parametrize(
    ("api", "sdk", "types"),
    [
        ("openai-completions", "openai", "openai.types.chat"),
        ("anthropic-messages", "anthropic", "anthropic.types"),
    ],
)
def test_warming_imports_the_sdk_in_a_thread_and_restores_the_switch_interval(
    api: str, sdk: str, types: str
) -> None:
    program = PROGRAM.format(api=api, sdk=sdk, types=types)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["True", "True", "True"]


def test_an_api_without_a_warmer_starts_nothing() -> None:
    from xcsh.ai.warm import warm_in_background

    assert warm_in_background("local-llamacpp") is None
    assert warm_in_background("no-such-api") is None


QUIET_PROGRAM = """
import asyncio, sys, threading
from pathlib import Path
import xcsh

def warming() -> bool:
    return "openai" in sys.modules or any(t.name.startswith("warm-") for t in threading.enumerate())

async def main() -> None:
    async with xcsh.open_session(
        cwd=Path({proj!r}), args=["--model", "fake/fake-model", "--no-session", "--no-tools"],
        agent_dir=Path({agent!r}), env={env!r},
    ) as session:
        busy = []
        for _ in range(300):  # a burst of commands, well within the quiet period
            await session.get_state()
            busy.append(warming())
        for _ in range(1200):  # then quiet: warming starts (bounded wait, 60 s)
            if "openai.types.chat" in sys.modules:
                break
            await asyncio.sleep(0.05)
        print(any(busy), "openai.types.chat" in sys.modules)

asyncio.run(main())
"""


def test_warming_waits_until_the_host_has_stopped_sending_commands(workspace: Workspace) -> None:
    env = {**workspace.env, "XCSH_WARM_QUIET_MS": "1500"}
    program = QUIET_PROGRAM.format(proj=str(workspace.proj), agent=str(workspace.agent), env=env)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env, check=True
    )
    assert done.stdout.split() == ["False", "True"]
