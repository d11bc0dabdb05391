"""Claude Code's files: ``~/.claude/`` and the project's ``.claude/``."""

from __future__ import annotations

from xcsh.coding.discovery.base import (
    Found,
    LoadContext,
    ancestors,
    command_files,
    context_file,
    scan_skills,
    system_prompt_file,
)
from xcsh.coding.discovery.providers.base import Provider

FOLDER = ".claude"


class ClaudeProvider(Provider):
    id = "claude"
    name = "Claude Code"
    priority = 80
    description = "CLAUDE.md, SYSTEM.md, skills and commands in ~/.claude and .claude/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / FOLDER
        project = ctx.cwd / FOLDER
        for item in (
            context_file(self.id, self.name, user / "CLAUDE.md", "user", None),
            context_file(self.id, self.name, project / "CLAUDE.md", "project", 0),
        ):
            if item is not None:
                found.context_files.append(item)
        found.skills += scan_skills(self.id, self.name, user / "skills", "user")
        for directory, _ in ancestors(ctx.cwd, ctx.walk_stop):
            found.skills += scan_skills(self.id, self.name, directory / FOLDER / "skills", "project")
        found.commands += command_files(self.id, self.name, user / "commands", "user")
        found.commands += command_files(self.id, self.name, project / "commands", "project")
        prompt = system_prompt_file(self.id, self.name, user / "SYSTEM.md", "user")
        if prompt is not None:
            found.system_prompts.append(prompt)
        return found
