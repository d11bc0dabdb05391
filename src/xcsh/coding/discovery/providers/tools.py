"""Other coding tools' files: Claude Code, OpenAI Codex, Gemini CLI, OpenCode, GitHub Copilot,
Cursor, Cline and Windsurf.

Each tool is one :class:`ToolProvider` built from a table of :class:`Place` rows: which kind of
file it keeps where, at which level. Items of one kind are found in the order of their rows.
They share one module because every session start imports all of them: one module instead of
eight spares seven imports on the way to the first answer (docs/performance.md, "Sixth
session: start-up").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import msgspec

from xcsh.coding.discovery.base import (
    AgentDir,
    Found,
    Level,
    LoadContext,
    ancestors,
    command_files,
    context_file,
    rule_file,
    rule_files,
    scan_skills,
    source,
    system_prompt_file,
)
from xcsh.coding.discovery.providers.base import Provider
from xcsh.coding.discovery.walk import kind_of

Kind = Literal["context", "system_prompt", "skills", "commands", "agents", "rules", "rule", "nearest_rules"]


class Place(msgspec.Struct, frozen=True):
    """One place where a tool keeps one kind of file.

    ``path`` is below the home directory for ``user`` level, below cwd for ``project``. Kinds:
    ``context`` (a context file reported at ``depth``), ``system_prompt``, ``skills`` (a folder
    of ``<name>/SKILL.md``; with ``walk_up`` the folder below every directory from cwd up to the
    walk stop), ``commands`` (a folder of ``*.md``; ``named_in_front``: the front matter's ``name``
    wins over the file name), ``agents`` (an agent-definition folder that
    exists), ``rules`` (a folder of rule files with ``suffixes``), ``rule`` (one rule file named
    ``name``) and ``nearest_rules`` (``path`` in the nearest directory above cwd that has it: a
    ``rules`` folder, else a ``rule`` file).
    """

    kind: Kind
    level: Level
    path: str
    depth: int | None = None
    walk_up: bool = False
    named_in_front: bool = False
    suffixes: tuple[str, ...] = (".md", ".mdc")
    name: str = ""


class ToolProvider(Provider):
    """Reads one tool's :class:`Place` rows."""

    def __init__(self, id: str, name: str, priority: int, description: str, places: Sequence[Place]) -> None:
        self.id = id
        self.name = name
        self.priority = priority
        self.description = description
        self.places = tuple(places)

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        for place in self.places:
            self._read(place, ctx, found)
        return found

    def _read(self, place: Place, ctx: LoadContext, found: Found) -> None:
        level = place.level
        path = (ctx.home if level == "user" else ctx.cwd) / place.path
        kind = place.kind
        if kind == "context":
            item = context_file(self.id, self.name, path, level, place.depth)
            if item is not None:
                found.context_files.append(item)
        elif kind == "system_prompt":
            prompt = system_prompt_file(self.id, self.name, path, level)
            if prompt is not None:
                found.system_prompts.append(prompt)
        elif kind == "skills" and place.walk_up:
            for directory, _ in ancestors(ctx.cwd, ctx.walk_stop):
                found.skills += scan_skills(self.id, self.name, directory / place.path, level)
        elif kind == "skills":
            found.skills += scan_skills(self.id, self.name, path, level)
        elif kind == "commands":
            found.commands += command_files(
                self.id, self.name, path, level, name_from_front=place.named_in_front
            )
        elif kind == "agents":
            if kind_of(path) == "dir":
                found.agent_dirs.append(AgentDir(str(path), level, source(self.id, self.name, path, level)))
        elif kind == "rules":
            found.rules += rule_files(self.id, self.name, path, level, place.suffixes)
        elif kind == "rule":
            self._rule(path, place, found)
        else:  # nearest_rules
            for directory, _ in ancestors(ctx.cwd, None):
                candidate = directory / place.path
                what = kind_of(candidate)
                if what == "dir":
                    found.rules += rule_files(self.id, self.name, candidate, level, place.suffixes)
                    break
                if what == "file":
                    self._rule(candidate, place, found)
                    break

    def _rule(self, path: Path, place: Place, found: Found) -> None:
        rule = rule_file(self.id, self.name, path, place.level, place.name)
        if rule is not None:
            found.rules.append(rule)


CLAUDE = ToolProvider(
    "claude",
    "Claude Code",
    80,
    "CLAUDE.md, SYSTEM.md, skills and commands in ~/.claude and .claude/",
    (
        Place("context", "user", ".claude/CLAUDE.md"),
        Place("context", "project", ".claude/CLAUDE.md", depth=0),
        Place("skills", "user", ".claude/skills"),
        Place("skills", "project", ".claude/skills", walk_up=True),
        Place("commands", "user", ".claude/commands"),
        Place("commands", "project", ".claude/commands"),
        Place("system_prompt", "user", ".claude/SYSTEM.md"),
    ),
)

CODEX = ToolProvider(
    "codex",
    "OpenAI Codex",
    70,
    "~/.codex/AGENTS.md, skills and commands in ~/.codex and .codex/",
    (
        Place("context", "user", ".codex/AGENTS.md"),
        Place("skills", "user", ".codex/skills"),
        Place("skills", "project", ".codex/skills"),
        Place("commands", "user", ".codex/commands", named_in_front=True),
        Place("commands", "project", ".codex/commands", named_in_front=True),
        Place("agents", "project", ".codex/agents"),
        Place("agents", "user", ".codex/agents"),
    ),
)

GEMINI = ToolProvider(
    "gemini",
    "Gemini CLI",
    60,
    "GEMINI.md and system.md in ~/.gemini and .gemini/",
    (
        Place("context", "user", ".gemini/GEMINI.md"),
        Place("context", "project", ".gemini/GEMINI.md", depth=-1),
        Place("system_prompt", "user", ".gemini/system.md"),
        Place("system_prompt", "project", ".gemini/system.md"),
        Place("agents", "project", ".gemini/agents"),
        Place("agents", "user", ".gemini/agents"),
    ),
)

OPENCODE = ToolProvider(
    "opencode",
    "OpenCode",
    55,
    "~/.config/opencode/AGENTS.md, skills and commands in ~/.config/opencode and .opencode/",
    (
        Place("context", "user", ".config/opencode/AGENTS.md"),
        Place("skills", "user", ".config/opencode/skills"),
        Place("skills", "project", ".opencode/skills"),
        Place("commands", "user", ".config/opencode/commands", named_in_front=True),
        Place("commands", "project", ".opencode/commands", named_in_front=True),
    ),
)

GITHUB = ToolProvider(
    "github",
    "GitHub Copilot",
    30,
    ".github/copilot-instructions.md in cwd",
    (Place("context", "project", ".github/copilot-instructions.md", depth=-1),),
)

CURSOR = ToolProvider(
    "cursor",
    "Cursor",
    50,
    "rules in ~/.cursor/rules and .cursor/rules",
    (Place("rules", "user", ".cursor/rules"), Place("rules", "project", ".cursor/rules")),
)

CLINE = ToolProvider(
    "cline",
    "Cline",
    40,
    "the nearest .clinerules file or folder above cwd",
    (Place("nearest_rules", "project", ".clinerules", suffixes=(".md",), name="clinerules"),),
)

WINDSURF = ToolProvider(
    "windsurf",
    "Windsurf",
    50,
    "~/.codeium/windsurf/memories/global_rules.md and .windsurf/rules",
    (
        Place("rule", "user", ".codeium/windsurf/memories/global_rules.md", name="global_rules"),
        Place("rules", "project", ".windsurf/rules", suffixes=(".md",)),
    ),
)
