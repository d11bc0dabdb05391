"""GitHub Copilot's project instructions: ``.github/copilot-instructions.md``."""

from __future__ import annotations

from xcsh.coding.discovery.base import Found, LoadContext, context_file
from xcsh.coding.discovery.providers.base import Provider


class GithubProvider(Provider):
    id = "github"
    name = "GitHub Copilot"
    priority = 30
    description = ".github/copilot-instructions.md in cwd"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        item = context_file(
            self.id, self.name, ctx.cwd / ".github" / "copilot-instructions.md", "project", -1
        )
        if item is not None:
            found.context_files.append(item)
        return found
