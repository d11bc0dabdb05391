"""Plugin folders given with ``--plugin-dir``: their ``commands/``, ``skills/`` and ``agents/``.

A plugin's name is the ``name`` of its ``.xcsh-plugin/plugin.json`` (or
``.claude-plugin/plugin.json``), else the folder's name; its commands and skills are named
``<plugin>:<name>``. As in the reference, plugin skills are only offered when the
``skills.enableXcshPlugins`` setting is true (see :mod:`xcsh.coding.project_context`).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from xcsh.coding.discovery.base import AgentDir, Found, LoadContext, command_files, scan_skills, source
from xcsh.coding.discovery.providers.base import Provider
from xcsh.coding.discovery.walk import kind_of

MANIFESTS = (Path(".xcsh-plugin") / "plugin.json", Path(".claude-plugin") / "plugin.json")


def plugin_name(root: Path) -> str:
    """The manifest's ``name``, else the folder name."""
    import json  # only for --plugin-dir folders

    for manifest in MANIFESTS:
        try:
            data = json.loads((root / manifest).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # RecursionError: nested ~1,000 levels
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str) and data["name"].strip():
            return str(data["name"]).strip()
    return root.name


class PluginsProvider(Provider):
    id = "xcsh-plugins"
    name = "Plugins"
    priority = 70
    description = "commands, skills and agents of the folders given with --plugin-dir"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        for root in ctx.plugin_dirs:
            plugin = plugin_name(root)
            found.commands += [
                msgspec.structs.replace(c, name=f"{plugin}:{c.name}")
                for c in command_files(self.id, self.name, root / "commands", "user")
            ]
            found.skills += [
                msgspec.structs.replace(s, name=f"{plugin}:{s.name}")
                for s in scan_skills(self.id, self.name, root / "skills", "user")
            ]
            agents = root / "agents"
            if kind_of(agents) == "dir":
                found.agent_dirs.append(
                    AgentDir(str(agents), "user", source(self.id, self.name, agents, "user"))
                )
        return found
