"""Shared set-up of the small-model e2e tests: a model that is "small" by its catalogue entry
(``compat.promptProfile: small`` in models.yml, never by its name), one run, the tool results."""

from __future__ import annotations

from typing import Any

from conftest import Workspace, fake_models_yml
from xcsh.rpc.client import RpcClient
from xcsh.testing.fake_llm import FakeLLM

SMALL = """      - id: tiny-coder
        contextWindow: 128000
        maxTokens: 4096
        compat: { promptProfile: small }
"""


BUGGY = "def add(a, b):\n    return a - b\n"


NUDGE = "Your last edit call failed (the error is above)"


def small_model(workspace: Workspace, fake_llm: FakeLLM, edit_mode: str = "replace") -> list[str]:
    (workspace.agent / "models.yml").write_text(fake_models_yml(fake_llm.base_url, extra_models=SMALL))
    workspace.config(f"edit:\n  mode: {edit_mode}\n")
    return ["--model", "fake/tiny-coder", "--no-session", "--tools", "read,edit,bash,grep,find"]


async def run(workspace: Workspace, args: list[str], prompt: str) -> list[dict[str, Any]]:
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        return await client.prompt_and_wait(prompt)


def results(frames: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    return [
        (f["toolName"], f["isError"], "".join(b.get("text", "") for b in f["result"]["content"]))
        for f in frames
        if f["type"] == "tool_execution_end"
    ]
