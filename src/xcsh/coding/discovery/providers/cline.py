"""Cline's rules: the nearest ``.clinerules`` walking up from cwd (a file, or a folder of ``*.md``)."""

from __future__ import annotations

from xcsh.coding.discovery.base import Found, LoadContext, ancestors, rule_file, rule_files
from xcsh.coding.discovery.providers.base import Provider


class ClineProvider(Provider):
    id = "cline"
    name = "Cline"
    priority = 40
    description = "the nearest .clinerules file or folder above cwd"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        for directory, _ in ancestors(ctx.cwd, None):
            candidate = directory / ".clinerules"
            if candidate.is_dir():
                found.rules += rule_files(self.id, self.name, candidate, "project", (".md",))
                break
            if candidate.exists():
                rule = rule_file(self.id, self.name, candidate, "project", "clinerules")
                if rule is not None:
                    found.rules.append(rule)
                break
        return found
