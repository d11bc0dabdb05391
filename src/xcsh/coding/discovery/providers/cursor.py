"""Cursor's rules: ``~/.cursor/rules`` and the project's ``.cursor/rules`` (``*.mdc``, ``*.md``)."""

from __future__ import annotations

from xcsh.coding.discovery.base import Found, LoadContext, rule_files
from xcsh.coding.discovery.providers.base import Provider


class CursorProvider(Provider):
    id = "cursor"
    name = "Cursor"
    priority = 50
    description = "rules in ~/.cursor/rules and .cursor/rules"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        found.rules += rule_files(self.id, self.name, ctx.home / ".cursor" / "rules", "user")
        found.rules += rule_files(self.id, self.name, ctx.cwd / ".cursor" / "rules", "project")
        return found
