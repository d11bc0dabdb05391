"""OpenAI Codex's files: ``~/.codex/`` and the project's ``.codex/``."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.discovery.base import (
    AgentDir,
    Found,
    Level,
    LoadContext,
    command_files,
    context_file,
    scan_skills,
    source,
)
from xcsh.coding.discovery.providers.base import Provider

FOLDER = ".codex"


class CodexProvider(Provider):
    id = "codex"
    name = "OpenAI Codex"
    priority = 70
    description = "~/.codex/AGENTS.md, skills, commands and prompts in ~/.codex and .codex/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / FOLDER
        project = ctx.cwd / FOLDER
        item = context_file(self.id, self.name, user / "AGENTS.md", "user", None)
        if item is not None:
            found.context_files.append(item)
        found.skills += scan_skills(self.id, self.name, user / "skills", "user")
        found.skills += scan_skills(self.id, self.name, project / "skills", "project")
        for kind, bucket in (("commands", found.commands), ("prompts", found.prompts)):
            bucket += command_files(self.id, self.name, user / kind, "user", name_from_front=True)
            bucket += command_files(self.id, self.name, project / kind, "project", name_from_front=True)
        folders: tuple[tuple[Path, Level], ...] = ((project / "agents", "project"), (user / "agents", "user"))
        for directory, level in folders:
            if directory.is_dir():
                found.agent_dirs.append(
                    AgentDir(str(directory), level, source(self.id, self.name, directory, level))
                )
        return found
