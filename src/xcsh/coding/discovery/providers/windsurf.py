"""Windsurf's rules: ``~/.codeium/windsurf/memories/global_rules.md`` and ``.windsurf/rules/*.md``."""

from __future__ import annotations

from xcsh.coding.discovery.base import Found, LoadContext, rule_file, rule_files
from xcsh.coding.discovery.providers.base import Provider


class WindsurfProvider(Provider):
    id = "windsurf"
    name = "Windsurf"
    priority = 50
    description = "~/.codeium/windsurf/memories/global_rules.md and .windsurf/rules"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        global_rules = ctx.home / ".codeium" / "windsurf" / "memories" / "global_rules.md"
        rule = rule_file(self.id, self.name, global_rules, "user", "global_rules")
        if rule is not None:
            found.rules.append(rule)
        found.rules += rule_files(self.id, self.name, ctx.cwd / ".windsurf" / "rules", "project", (".md",))
        return found
