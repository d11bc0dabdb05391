"""System prompt assembly.

Sections, in order (each only when it has something to say):

1. the base prompt — xcsh's default, or the replacement (``--system-prompt``, else a
   SYSTEM.md found in ``.xcsh``/``.codex``/``.gemini`` or the agent dir), with a SYSTEM.md
   customisation from other sources next to it;
2. the tools (default base prompt only);
3. the environment: OS, shell, working directory, date and a git snapshot;
4. the language to answer in (``set_locale``, ``prompt.locale``, ``$XCSH_LOCALE``, ``$LANG``);
5. the context files (project and user instructions), and the sub-directories of cwd that
   have instruction files of their own (listed, read on demand);
6. the skills: name, description and SKILL.md path, read on demand (needs the ``read`` tool);
7. the rules: always-apply rules in full (unless the prompt already holds their text), then
   the listing of rules by area;
8. the appended text (``--append-system-prompt``, else APPEND_SYSTEM.md).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.agent.tool import AgentTool
from xcsh.coding.locale import display_name, supported

if TYPE_CHECKING:
    from xcsh.coding.environment import Environment
    from xcsh.coding.project_context import ProjectContext

DEFAULT_PROMPT = """You are xcsh, an expert coding agent working in the user's project.
You help by reading code, running commands, editing files and writing new ones.

Guidelines:
- Look before you change: read the relevant files and search the codebase first.
- Make focused, minimal edits that fit the surrounding code's style.
- After changing code, run it or its tests when you can, and report what happened.
- Prefer the dedicated tools for files (read, edit, write, grep, find) over shell equivalents.
- When a task has several steps, keep a todo list with todo_write and update it as you go.
- Be concise. Say plainly what you did, what you verified and what is left."""


def read_text_or_file(value: str) -> str:
    """The reference's rule: text with a newline is literal; otherwise a readable file path, else literal."""
    if "\n" in value:
        return value
    path = Path(value).expanduser()
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        pass
    return value


def _tools_section(tools: Sequence[AgentTool]) -> str | None:
    visible = [t for t in tools if not t.hidden]
    if not visible:
        return None
    lines = "\n".join(f"- {t.name}: {(t.description.strip().splitlines() or [''])[0]}" for t in visible)
    return f"Available tools:\n{lines}"


def _environment_section(cwd: Path, date: str, environment: Environment | None) -> str:
    lines = ["# Environment"]
    if environment is not None:
        lines += [f"- Operating system: {environment.os_name}", f"- Shell: {environment.shell}"]
    lines += [f"Current date: {date}", f"Current working directory: {cwd}"]
    git = environment.git if environment is not None else None
    if git is not None:
        lines += ["", "Git repository (a snapshot from the start of the session; it does not update):"]
        lines.append(f"- Current branch: {git.branch}")
        if git.main_branch:
            lines.append(f"- Main branch: {git.main_branch}")
        lines.append("- Working tree: " + ("clean" if not git.status else f"changes\n{git.status}"))
        if git.commits:
            lines.append(f"- Recent commits:\n{git.commits}")
    return "\n".join(lines)


def _language_section(locale: str | None) -> str | None:
    name = display_name(locale)
    if name is None or locale is None:
        return None
    code = supported(locale) or locale
    return (
        "# Language\n"
        f"The user reads {name} ({code}). Write your answers in {name} unless the user asks for "
        "another language. Code, commands, file names, identifiers and technical terms stay as "
        "they are; only the prose is translated."
    )


def _context_section(project: ProjectContext) -> str | None:
    parts: list[str] = []
    if project.context_files:
        blocks = [
            f'<context-file path="{f.path}">\n{f.content.strip()}\n</context-file>'
            for f in project.context_files
        ]
        parts.append(
            "Follow the instructions in these files in every task; a file from a deeper directory "
            "takes precedence over one from a directory above it.\n" + "\n".join(blocks)
        )
    if project.nested_files:
        listing = "\n".join(f"- {path}" for path in project.nested_files)
        parts.append(
            "These sub-directories have instructions of their own, which take precedence there. "
            f"Read the file before changing anything in its directory:\n{listing}"
        )
    return "# Project and user instructions\n" + "\n\n".join(parts) if parts else None


def _skills_section(project: ProjectContext, tools: Sequence[AgentTool]) -> str | None:
    if not project.skills or not any(t.name == "read" for t in tools):
        return None
    blocks = [f'<skill name="{s.name}" path="{s.path}">\n{s.description}\n</skill>' for s in project.skills]
    return (
        "# Skills\n"
        "Skills are instructions for particular kinds of work. When a task is in a skill's domain, "
        "read its SKILL.md (the path below) before you start; relative paths inside a skill are "
        "relative to its folder.\n" + "\n".join(blocks)
    )


def _rule_block(rule: dict[str, Any]) -> str:
    globs = rule.get("globs") or []
    applies = f' applies-to="{", ".join(globs)}"' if globs else ""
    return (
        f'<rule name="{rule["name"]}" path="{rule["path"]}"{applies}>\n{rule.get("description", "")}\n</rule>'
    )


def _rules_section(project: ProjectContext, already: Sequence[str | None]) -> str | None:
    parts: list[str] = []
    for rule in project.always_rules:
        content = str(rule.get("content", "")).strip()
        if content and not any(_contains(text, content) for text in already):
            parts.append(content)
    if project.listed_rules:
        parts.append(
            "Rules for particular areas of the project. Before working in a rule's area (see its "
            "description and the files it applies to), read the rule's file:\n"
            + "\n".join(_rule_block(r) for r in project.listed_rules)
        )
    return "# Rules\n" + "\n\n".join(parts) if parts else None


def _contains(haystack: str | None, needle: str) -> bool:
    return bool(haystack) and needle.strip() in (haystack or "")


def build_system_prompt(
    *,
    cwd: Path,
    tools: Sequence[AgentTool],
    custom_prompt: str | None = None,
    append_prompt: str | None = None,
    project: ProjectContext | None = None,
    locale: str | None = None,
    today: _dt.date | None = None,
) -> str:
    """Assemble the full system prompt (sections in the module docstring's order)."""
    parts: list[str | None] = []
    customization = project.customization if project is not None else None
    if customization and (_contains(custom_prompt, customization) or _contains(append_prompt, customization)):
        customization = None
    if custom_prompt is not None:
        parts += [customization, custom_prompt]
    else:
        parts += [DEFAULT_PROMPT, customization, _tools_section(tools)]
    date = (today or _dt.date.today()).isoformat()
    parts.append(_environment_section(cwd, date, project.environment if project is not None else None))
    parts.append(_language_section(locale))
    if project is not None:
        shown = (customization, custom_prompt, append_prompt)
        parts += [_context_section(project), _skills_section(project, tools), _rules_section(project, shown)]
    parts.append(append_prompt)
    return "\n\n".join(p.strip("\n") for p in parts if p and p.strip())
