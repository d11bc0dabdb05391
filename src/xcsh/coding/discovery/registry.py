"""Merge what every provider found, as the reference does.

Providers are asked in priority order (higher first; equal priorities keep registration
order). Items with the same key keep the first definition:

- context files: one user-level file in all, and one project file per directory level
  (key ``project:<depth>``, depths below cwd count as 0); the survivors are ordered from
  the farthest directory to cwd, user files last, and a file whose content repeats a
  later one's is dropped;
- system-prompt files (SYSTEM.md customisations): one per level; the project's wins;
- skills, prompt templates, slash commands and rules: by name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from xcsh.coding.discovery.base import (
    AgentDir,
    CommandFile,
    ContextFile,
    Found,
    LoadContext,
    SkillFile,
    SystemPromptFile,
    project_file_refused,
    scoped,
)
from xcsh.coding.discovery.providers import PROVIDERS, Provider
from xcsh.coding.discovery.walk import kind_of

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Folders whose SYSTEM.md / APPEND_SYSTEM.md stand in for --system-prompt / --append-system-prompt,
# project before user (the reference's config-file lookup).
CONFIG_FILE_PROJECT_DIRS = (".xcsh", ".codex", ".gemini")
CONFIG_FILE_USER_DIRS = (".codex", ".gemini")  # after the agent dir


class Discovered(msgspec.Struct):
    """Everything found for one cwd, merged; lists are in precedence (or prompt) order."""

    context: LoadContext
    context_files: list[ContextFile] = msgspec.field(default_factory=list)
    system_prompts: list[SystemPromptFile] = msgspec.field(default_factory=list)
    skills: list[SkillFile] = msgspec.field(default_factory=list)
    prompts: list[CommandFile] = msgspec.field(default_factory=list)
    commands: list[CommandFile] = msgspec.field(default_factory=list)
    rules: list[dict[str, Any]] = msgspec.field(default_factory=list)
    agent_dirs: list[AgentDir] = msgspec.field(default_factory=list)
    providers: list[str] = msgspec.field(default_factory=list)
    """Ids of the providers that were asked, in order."""

    @property
    def system_prompt_customization(self) -> SystemPromptFile | None:
        """The SYSTEM.md customisation: the project's, else the user's."""
        for level in ("project", "user"):
            for item in self.system_prompts:
                if item.level == level:
                    return item
        return None

    def config_file(self, name: str) -> Path | None:
        """The first ``name`` (SYSTEM.md, APPEND_SYSTEM.md) in the project's ``.xcsh``/``.codex``/
        ``.gemini``, then the agent dir, ``~/.codex``, ``~/.gemini``."""
        ctx = self.context
        candidates = [ctx.cwd / d / name for d in CONFIG_FILE_PROJECT_DIRS]
        user = [ctx.agent_dir / name, *(ctx.home / d / name for d in CONFIG_FILE_USER_DIRS)]
        for candidate in (*candidates, *user):
            if kind_of(candidate) == "file":
                refused = project_file_refused(ctx, candidate) if candidate in candidates else None
                if refused is not None:
                    logger.warning("skipped %s: %s", candidate, refused)
                    continue
                return candidate
        return None


def ordered_providers(disabled: Iterable[str] = ()) -> list[Provider]:
    """Enabled providers, highest priority first (stable for equal priorities)."""
    off = set(disabled)
    return sorted((p for p in PROVIDERS if p.id not in off), key=lambda p: -p.priority)


def discover(ctx: LoadContext, *, disabled: Iterable[str] = ()) -> Discovered:
    """Ask every enabled provider and merge the answers (a failing provider is logged and skipped)."""
    result = Discovered(context=ctx)
    founds: list[Found] = []
    with scoped(ctx):
        for provider in ordered_providers(disabled):
            result.providers.append(provider.id)
            try:
                founds.append(provider.load(ctx))
            except Exception:  # a broken source must not stop the agent from starting
                logger.warning("discovery provider %s failed", provider.id, exc_info=True)
    result.context_files = _context_files([f for found in founds for f in found.context_files])
    result.system_prompts = _first_by(
        [p for found in founds for p in found.system_prompts], lambda p: p.level
    )
    result.skills = _first_by([s for found in founds for s in found.skills], lambda s: s.name)
    result.prompts = _first_by([p for found in founds for p in found.prompts], lambda p: p.name)
    result.commands = _first_by([c for found in founds for c in found.commands], lambda c: c.name)
    result.rules = _first_by([r for found in founds for r in found.rules], lambda r: str(r["name"]))
    result.agent_dirs = [d for found in founds for d in found.agent_dirs]
    return result


def _first_by(items: Sequence[T], key: Callable[[T], str]) -> list[T]:
    seen: set[str] = set()
    kept: list[T] = []
    for item in items:
        k = key(item)
        if k in seen:
            continue
        seen.add(k)
        kept.append(item)
    return kept


def _context_key(item: ContextFile) -> str:
    return "user" if item.level == "user" else f"project:{max(0, item.depth or 0)}"


def _context_files(items: list[ContextFile]) -> list[ContextFile]:
    kept = _first_by(items, _context_key)
    kept.sort(key=lambda f: -(f.depth if f.depth is not None else -1))
    last_index = {f.content: i for i, f in enumerate(kept)}
    return [f for i, f in enumerate(kept) if last_index[f.content] == i]
