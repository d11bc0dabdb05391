"""Warming a provider imports its HTTP stack in the background and leaves the interpreter as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import Workspace

PROGRAM = """
import sys
from xcsh.ai import clients
from xcsh.ai.warm import warm_in_background
interval = sys.getswitchinterval()
assert "httpx2" not in sys.modules
thread = warm_in_background("{api}", "{url}")
assert warm_in_background("{api}") is None  # once per api
thread.join(60)
sdks = sorted(name for name in sys.modules if name.split(".")[0] in ("openai", "anthropic"))
print("httpx2" in sys.modules, "{provider}" in sys.modules, sys.getswitchinterval() == interval)
print(len(sdks), len(clients._ssl_contexts))
"""


@pytest.mark.parametrize(
    ("api", "provider"),
    [
        ("openai-completions", "xcsh.ai.providers.openai_completions"),
        ("openai-responses", "xcsh.ai.providers.openai_responses"),
        ("anthropic-messages", "xcsh.ai.providers.anthropic_messages"),
    ],
)
@pytest.mark.parametrize(
    ("url", "contexts"), [("http://127.0.0.1:9/v1", "0"), ("https://example.invalid/v1", "1")]
)
def test_warming_imports_the_transport_not_the_sdk_in_a_thread_and_restores_the_switch_interval(
    api: str, provider: str, url: str, contexts: str
) -> None:
    # the TLS context is built for an https URL only (no connection is made either way)
    program = PROGRAM.format(api=api, provider=provider, url=url)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["True", "True", "True", "0", contexts]


def test_an_api_without_a_warmer_starts_nothing() -> None:
    from xcsh.ai.warm import warm_in_background

    assert warm_in_background("local-llamacpp") is None
    assert warm_in_background("no-such-api") is None


QUIET_PROGRAM = """
import asyncio, sys, threading
from pathlib import Path
import xcsh

def warming() -> bool:
    return "httpx2" in sys.modules or any(t.name.startswith("warm-") for t in threading.enumerate())

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
            if "h11" in sys.modules:  # the warm-up's last import
                break
            await asyncio.sleep(0.05)
        print(any(busy), "h11" in sys.modules)

asyncio.run(main())
"""


def test_warming_waits_until_the_host_has_stopped_sending_commands(workspace: Workspace) -> None:
    env = {**workspace.env, "XCSH_WARM_QUIET_MS": "1500"}
    program = QUIET_PROGRAM.format(proj=str(workspace.proj), agent=str(workspace.agent), env=env)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env, check=True
    )
    assert done.stdout.split() == ["False", "True"]
