"""What discovery contributes to a session, loaded once at start-up.

:func:`load_project_context` runs the discovery (docs/context.md) and sorts its findings
into what the system prompt shows (context files, SYSTEM.md customisation, skills, the
always-apply rules and the rule listing), what the TTSR feature watches (rules with a
``condition``), and the slash commands and prompt templates the command registry expands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from xcsh.coding.commands import FileCommand
from xcsh.coding.discovery import ContextFile, Discovered, LoadContext, discover
from xcsh.coding.discovery.base import UserTrust, read_text
from xcsh.coding.discovery.subdirs import nested_instruction_files
from xcsh.coding.environment import Environment, detect_environment
from xcsh.coding.skills import Skill, SkillSelection, select_skills


class ProjectContext(msgspec.Struct):
    """The discovered material a session uses (immutable once loaded)."""

    discovered: Discovered
    environment: Environment
    context_files: list[ContextFile] = msgspec.field(default_factory=list)
    customization: str | None = None
    """A SYSTEM.md customisation (added to the base prompt), when one was found."""
    system_md: str | None = None
    """SYSTEM.md that replaces the base prompt when ``--system-prompt`` is not given."""
    append_system_md: str | None = None
    """APPEND_SYSTEM.md appended when ``--append-system-prompt`` is not given."""
    skills: list[Skill] = msgspec.field(default_factory=list)
    always_rules: list[dict[str, Any]] = msgspec.field(default_factory=list)
    listed_rules: list[dict[str, Any]] = msgspec.field(default_factory=list)
    ttsr_rules: list[dict[str, Any]] = msgspec.field(default_factory=list)
    commands: list[FileCommand] = msgspec.field(default_factory=list)
    templates: list[FileCommand] = msgspec.field(default_factory=list)
    nested_files: list[str] = msgspec.field(default_factory=list)
    """Instruction files in sub-directories of cwd (relative paths), listed for the model."""


def _read(path: Path | None) -> str | None:
    return read_text(path) if path is not None else None


def skill_selection(settings_get: Any, *, no_skills: bool, include: list[str] | None) -> SkillSelection:
    """The ``skills.*`` settings combined with ``--no-skills`` / ``--skills``."""

    def strings(key: str) -> tuple[str, ...]:
        value = settings_get(key)
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    def switch(key: str, default: bool) -> bool:
        value = settings_get(f"skills.{key}")
        return value if isinstance(value, bool) else default

    disabled = {x[len("skill:") :] for x in strings("disabledExtensions") if x.startswith("skill:")}
    return SkillSelection(
        enabled=not no_skills and settings_get("skills.enabled") is not False,
        plugin_skills=switch("enableXcshPlugins", False),
        native_user=switch("enablePiUser", True),
        native_project=switch("enablePiProject", True),
        codex_user=switch("enableCodexUser", False),
        claude_user=switch("enableXcshUser", True),
        claude_project=switch("enableXcshProject", True),
        include=tuple(include) if include else strings("skills.includeSkills"),
        ignore=strings("skills.ignoredSkills"),
        custom_dirs=strings("skills.customDirectories"),
        disabled_names=frozenset(disabled),
    )


def load_project_context(
    *,
    cwd: Path,
    home: Path,
    agent_dir: Path,
    selection: SkillSelection,
    no_rules: bool = False,
    disabled_providers: Iterable[str] = (),
    plugin_dirs: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    trust: UserTrust | None = None,
) -> ProjectContext:
    """Discover everything for ``cwd`` and sort it for the session (``trust``: the user's trust of
    ``cwd``, which lets its files be read from folders other users control)."""
    ctx = LoadContext.create(cwd, home, agent_dir, plugin_dirs, trust)
    disabled = set(disabled_providers)
    found = discover(ctx, disabled=disabled)
    customization = found.system_prompt_customization
    commands = [FileCommand.parse(c, template=False) for c in found.commands]
    templates = [FileCommand.parse(p, template=True) for p in found.prompts]
    project = ProjectContext(
        discovered=found,
        environment=detect_environment(ctx.cwd, in_repo=ctx.repo_root is not None),
        context_files=list(found.context_files),
        customization=customization.content if customization is not None else None,
        system_md=_read(found.config_file("SYSTEM.md")),
        append_system_md=_read(found.config_file("APPEND_SYSTEM.md")),
        skills=select_skills(found.skills, selection, home=ctx.home),
        # /init, unless a user's or project's command or template of that name replaces it
        commands=commands + FileCommand.bundled_commands([*commands, *templates]),
        templates=templates,
        nested_files=nested_instruction_files(ctx.cwd) if "agents-md" not in disabled else [],
    )
    if not no_rules:
        for rule in found.rules:
            if rule.get("condition"):
                project.ttsr_rules.append(rule)
            elif rule.get("alwaysApply"):
                project.always_rules.append(rule)
            elif rule.get("description"):
                project.listed_rules.append(rule)
    return project
