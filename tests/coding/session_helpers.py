"""Shared pieces of the in-process session tests: a real session on the fake LLM, event recording, a bounded prompt.

Import as ``coding.session_helpers`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from conftest import Workspace, fake_models_yml
from xcsh.coding.factory import StartupOptions, create_session
from xcsh.coding.session import AgentSession


def fake_session(
    tmp_path: Path,
    base_url: str,
    *,
    config: str | None = None,
    extra_models: str = "",
    model: str = "fake/fake-model",
) -> AgentSession:
    """A tool-less, file-less session in ``tmp_path`` whose ``fake`` provider is the server at ``base_url``.

    ``config`` is written as the agent's ``config.yml``; ``extra_models`` extends the fake provider.
    """
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "models.yml").write_text(fake_models_yml(base_url, extra_models=extra_models))
    if config is not None:
        (agent_dir / "config.yml").write_text(config)
    return create_session(
        StartupOptions(cwd=tmp_path, agent_dir=agent_dir, env={}, model=model, no_tools=True, no_session=True)
    )


def workspace_session(ws: Workspace, **options: Any) -> AgentSession:
    """A session in the scenario workspace ``ws`` on ``fake/fake-model`` without a session file;
    ``options`` are further :class:`StartupOptions` fields."""
    return create_session(
        StartupOptions(
            cwd=ws.proj, agent_dir=ws.agent, env=ws.env, model="fake/fake-model", no_session=True, **options
        )
    )


def record(session: AgentSession) -> list[dict[str, Any]]:
    """Every session event from now on, in order."""
    events: list[dict[str, Any]] = []
    session.subscribe(events.append)
    return events


async def run_prompt(session: AgentSession, text: str) -> None:
    """Prompt and wait (at most 10 s) until the run and its retries/continuations are over."""
    task = session.start_prompt(text)
    assert task is not None
    async with asyncio.timeout(10):
        await task
