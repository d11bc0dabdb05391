"""Gemini CLI's files: ``~/.gemini/`` and the project's ``.gemini/``."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.discovery.base import (
    AgentDir,
    Found,
    Level,
    LoadContext,
    context_file,
    source,
    system_prompt_file,
)
from xcsh.coding.discovery.providers.base import Provider

FOLDER = ".gemini"


class GeminiProvider(Provider):
    id = "gemini"
    name = "Gemini CLI"
    priority = 60
    description = "GEMINI.md and system.md in ~/.gemini and .gemini/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / FOLDER
        project = ctx.cwd / FOLDER
        for item in (
            context_file(self.id, self.name, user / "GEMINI.md", "user", None),
            context_file(self.id, self.name, project / "GEMINI.md", "project", -1),
        ):
            if item is not None:
                found.context_files.append(item)
        for prompt in (
            system_prompt_file(self.id, self.name, user / "system.md", "user"),
            system_prompt_file(self.id, self.name, project / "system.md", "project"),
        ):
            if prompt is not None:
                found.system_prompts.append(prompt)
        folders: tuple[tuple[Path, Level], ...] = ((project / "agents", "project"), (user / "agents", "user"))
        for directory, level in folders:
            if directory.is_dir():
                found.agent_dirs.append(
                    AgentDir(str(directory), level, source(self.id, self.name, directory, level))
                )
        return found
