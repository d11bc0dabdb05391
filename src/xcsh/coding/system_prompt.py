"""System prompt assembly: base prompt (default or replaced), tools, context files, date, cwd."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from xcsh.agent.types import AgentTool

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")

DEFAULT_PROMPT = """You are xcsh, an expert coding agent working in the user's project.
You help by reading code, running commands, editing files and writing new ones.

Guidelines:
- Look before you change: read the relevant files and search the codebase first.
- Make focused, minimal edits that fit the surrounding code's style.
- After changing code, run it or its tests when you can, and report what happened.
- Prefer the dedicated tools for files (read, edit, write, grep, find) over shell equivalents.
- When a task has several steps, keep a todo list with todo_write and update it as you go.
- Be concise. Say plainly what you did, what you verified and what is left."""


def read_text_or_file(value: str) -> str:
    """The reference's rule: text with a newline is literal; otherwise a readable file path, else literal."""
    if "\n" in value:
        return value
    path = Path(value).expanduser()
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        pass
    return value


def find_context_files(cwd: Path, agent_dir: Path | None) -> list[Path]:
    """AGENTS.md / CLAUDE.md from the agent dir, then from the filesystem root down to cwd."""
    found: list[Path] = []
    if agent_dir is not None:
        for name in CONTEXT_FILE_NAMES:
            candidate = agent_dir / name
            if candidate.is_file():
                found.append(candidate)
                break
    chain = [cwd, *cwd.parents]
    for directory in reversed(chain):
        for name in CONTEXT_FILE_NAMES:
            candidate = directory / name
            if candidate.is_file():
                found.append(candidate)
                break
    return found


def build_system_prompt(
    *,
    cwd: Path,
    tools: Sequence[AgentTool],
    custom_prompt: str | None = None,
    append_prompt: str | None = None,
    context_files: Sequence[Path] = (),
    today: _dt.date | None = None,
) -> str:
    """Assemble the full system prompt."""
    parts = [custom_prompt if custom_prompt is not None else DEFAULT_PROMPT]
    if custom_prompt is None:
        visible = [t for t in tools if not t.hidden]
        if visible:
            lines = "\n".join(f"- {t.name}: {t.description.strip().splitlines()[0]}" for t in visible)
            parts.append(f"Available tools:\n{lines}")
    if append_prompt:
        parts.append(append_prompt)
    for path in context_files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        parts.append(f'<context-file path="{path}">\n{text.strip()}\n</context-file>')
    date = (today or _dt.date.today()).isoformat()
    parts.append(f"Current date: {date}\nCurrent working directory: {cwd}")
    return "\n\n".join(parts)
