"""Warming a provider imports its SDK in the background and leaves the interpreter as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest

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
