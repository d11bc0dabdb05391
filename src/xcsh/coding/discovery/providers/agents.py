"""The ``.agent/`` and ``.agents/`` folders (a cross-agent standard), project walk-up and home."""

from __future__ import annotations

import os
from pathlib import Path

from xcsh.coding.discovery.base import (
    Found,
    Level,
    LoadContext,
    ancestors,
    command_files,
    context_file,
    rule_files,
    scan_skills,
    system_prompt_file,
)
from xcsh.coding.discovery.providers.base import Provider

FOLDERS = (".agent", ".agents")


class AgentsProvider(Provider):
    """Skills, rules, commands, AGENTS.md and SYSTEM.md of ``.agent(s)/``. Their ``prompts/`` are
    not prompt templates: the reference registers them but never expands them, so a
    repository's ``.agents/prompts/review.md`` must not take over ``/review``."""

    id = "agents"
    name = "Agents (standard)"
    priority = 70
    description = ".agent/ and .agents/ folders: walking up from cwd, then in the home directory"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        bases: list[tuple[Path, Level, int | None]] = [
            (directory / folder, "project", depth)
            for directory, depth in ancestors(ctx.cwd, ctx.walk_stop)
            for folder in FOLDERS
        ]
        bases += [(ctx.home / folder, "user", None) for folder in FOLDERS]
        for base, level, depth in bases:
            if not os.path.isdir(base):  # any stat error is "no folder", as for each probe below
                continue  # nothing below a missing folder: one stat instead of six probes
            found.skills += scan_skills(self.id, self.name, base / "skills", level)
            found.rules += rule_files(self.id, self.name, base / "rules", level)
            found.commands += command_files(self.id, self.name, base / "commands", level)
            item = context_file(self.id, self.name, base / "AGENTS.md", level, depth)
            if item is not None:
                found.context_files.append(item)
            prompt = system_prompt_file(self.id, self.name, base / "SYSTEM.md", level)
            if prompt is not None:
                found.system_prompts.append(prompt)
        return found
