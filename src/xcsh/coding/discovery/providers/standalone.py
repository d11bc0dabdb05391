"""Instruction files at project directory roots: ``XCSH.md``, ``AGENTS.md``, ``CLAUDE.md``.

Walks up from cwd to the repository root (or the home directory, or the file-system
root when cwd is in neither). The reference reads only ``XCSH.md`` here; ``AGENTS.md``
(the cross-agent convention) and ``CLAUDE.md`` are read as xcsh did before, one file
per directory, in that order of preference.
"""

from __future__ import annotations

from xcsh.coding.discovery.base import Found, LoadContext, ancestors, context_file
from xcsh.coding.discovery.providers.base import Provider

FILE_NAMES = ("XCSH.md", "AGENTS.md", "CLAUDE.md")


class StandaloneProvider(Provider):
    id = "agents-md"
    name = "XCSH.md"
    priority = 10
    description = "XCSH.md / AGENTS.md / CLAUDE.md at the project's directory roots, walking up from cwd"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        stop = ctx.walk_stop if ctx.walk_stop in (ctx.cwd, *ctx.cwd.parents) else None
        for directory, depth in ancestors(ctx.cwd, stop):
            if directory.name.startswith("."):
                continue
            for file_name in FILE_NAMES:
                item = context_file(self.id, self.name, directory / file_name, "project", depth)
                if item is not None:
                    found.context_files.append(item)
                    break
        return found
