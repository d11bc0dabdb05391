"""OpenCode's files: ``~/.config/opencode/`` and the project's ``.opencode/``."""

from __future__ import annotations

from xcsh.coding.discovery.base import Found, LoadContext, command_files, context_file, scan_skills
from xcsh.coding.discovery.providers.base import Provider


class OpenCodeProvider(Provider):
    id = "opencode"
    name = "OpenCode"
    priority = 55
    description = "~/.config/opencode/AGENTS.md, skills and commands in ~/.config/opencode and .opencode/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / ".config" / "opencode"
        project = ctx.cwd / ".opencode"
        item = context_file(self.id, self.name, user / "AGENTS.md", "user", None)
        if item is not None:
            found.context_files.append(item)
        found.skills += scan_skills(self.id, self.name, user / "skills", "user")
        found.skills += scan_skills(self.id, self.name, project / "skills", "project")
        found.commands += command_files(self.id, self.name, user / "commands", "user", name_from_front=True)
        found.commands += command_files(
            self.id, self.name, project / "commands", "project", name_from_front=True
        )
        return found
