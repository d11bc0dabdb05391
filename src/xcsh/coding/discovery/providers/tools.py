"""Other coding tools' files: Claude Code, OpenAI Codex, Gemini CLI, OpenCode, GitHub Copilot,
Cursor, Cline and Windsurf, one provider class each.

They share one module (with the shared folder names as constants) because every session start
imports all of them: one module instead of eight spares seven imports on the way to the first
answer (docs/performance.md, "Sixth session: start-up").
"""

from __future__ import annotations

from pathlib import Path

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

# ---- Claude Code's files: ``~/.claude/`` and the project's ``.claude/``.

CLAUDE_FOLDER = ".claude"


class ClaudeProvider(Provider):
    id = "claude"
    name = "Claude Code"
    priority = 80
    description = "CLAUDE.md, SYSTEM.md, skills and commands in ~/.claude and .claude/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / CLAUDE_FOLDER
        project = ctx.cwd / CLAUDE_FOLDER
        for item in (
            context_file(self.id, self.name, user / "CLAUDE.md", "user", None),
            context_file(self.id, self.name, project / "CLAUDE.md", "project", 0),
        ):
            if item is not None:
                found.context_files.append(item)
        found.skills += scan_skills(self.id, self.name, user / "skills", "user")
        for directory, _ in ancestors(ctx.cwd, ctx.walk_stop):
            found.skills += scan_skills(self.id, self.name, directory / CLAUDE_FOLDER / "skills", "project")
        found.commands += command_files(self.id, self.name, user / "commands", "user")
        found.commands += command_files(self.id, self.name, project / "commands", "project")
        prompt = system_prompt_file(self.id, self.name, user / "SYSTEM.md", "user")
        if prompt is not None:
            found.system_prompts.append(prompt)
        return found


# ---- OpenAI Codex's files: ``~/.codex/`` and the project's ``.codex/``.

CODEX_FOLDER = ".codex"


class CodexProvider(Provider):
    id = "codex"
    name = "OpenAI Codex"
    priority = 70
    description = "~/.codex/AGENTS.md, skills, commands and prompts in ~/.codex and .codex/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / CODEX_FOLDER
        project = ctx.cwd / CODEX_FOLDER
        item = context_file(self.id, self.name, user / "AGENTS.md", "user", None)
        if item is not None:
            found.context_files.append(item)
        found.skills += scan_skills(self.id, self.name, user / "skills", "user")
        found.skills += scan_skills(self.id, self.name, project / "skills", "project")
        for kind, bucket in (("commands", found.commands), ("prompts", found.prompts)):
            bucket += command_files(self.id, self.name, user / kind, "user", name_from_front=True)
            bucket += command_files(self.id, self.name, project / kind, "project", name_from_front=True)
        folders: tuple[tuple[Path, Level], ...] = ((project / "agents", "project"), (user / "agents", "user"))
        for directory, level in folders:
            if directory.is_dir():
                found.agent_dirs.append(
                    AgentDir(str(directory), level, source(self.id, self.name, directory, level))
                )
        return found


# ---- Gemini CLI's files: ``~/.gemini/`` and the project's ``.gemini/``.

GEMINI_FOLDER = ".gemini"


class GeminiProvider(Provider):
    id = "gemini"
    name = "Gemini CLI"
    priority = 60
    description = "GEMINI.md and system.md in ~/.gemini and .gemini/"

    def load(self, ctx: LoadContext) -> Found:
        found = Found()
        user = ctx.home / GEMINI_FOLDER
        project = ctx.cwd / GEMINI_FOLDER
        for item in (
            context_file(self.id, self.name, user / "GEMINI.md", "user", None),
            context_file(self.id, self.name, project / "GEMINI.md", "project", -1),
        ):
            if item is not None:
                found.context_files.append(item)
        for prompt in (
            system_prompt_file(self.id, self.name, user / "system.md", "user"),
            system_prompt_file(self.id, self.name, project / "system.md", "project"),
        ):
            if prompt is not None:
                found.system_prompts.append(prompt)
        folders: tuple[tuple[Path, Level], ...] = ((project / "agents", "project"), (user / "agents", "user"))
        for directory, level in folders:
            if directory.is_dir():
                found.agent_dirs.append(
                    AgentDir(str(directory), level, source(self.id, self.name, directory, level))
                )
        return found


# ---- OpenCode's files: ``~/.config/opencode/`` and the project's ``.opencode/``.


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


# ---- GitHub Copilot's project instructions: ``.github/copilot-instructions.md``.


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


# ---- Cursor's rules: ``~/.cursor/rules`` and the project's ``.cursor/rules`` (``*.mdc``, ``*.md``).


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


# ---- Cline's rules: the nearest ``.clinerules`` walking up from cwd (a file, or a folder of ``*.md``).


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


# ---- Windsurf's rules: ``~/.codeium/windsurf/memories/global_rules.md`` and ``.windsurf/rules/*.md``.


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
