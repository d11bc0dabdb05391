"""Skills: which discovered skills a session offers, and ``/skill:<name> args``.

The model sees each skill's name, description and path in the system prompt and reads
the SKILL.md when a task is in its domain. ``/skill:<name> args`` sends the skill's
instructions as the prompt, followed by its path and the user's words.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from xcsh.coding.discovery import SkillFile, parse_front_matter
from xcsh.coding.discovery.base import scan_skills
from xcsh.coding.errors import CommandError

SKILL_COMMAND_PREFIX = "skill:"
PLUGIN_PROVIDER = "xcsh-plugins"


class Skill(msgspec.Struct, frozen=True):
    name: str
    description: str
    path: str
    source: str
    """``<provider>:<level>``, e.g. ``native:project``."""

    @property
    def base_dir(self) -> str:
        return str(Path(self.path).parent)


class SkillSelection(msgspec.Struct, frozen=True):
    """How to filter skills: ``include``/``ignore`` are name globs; ``enabled`` False drops all."""

    enabled: bool = True
    include: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    custom_dirs: tuple[str, ...] = ()
    disabled_names: frozenset[str] = frozenset()
    plugin_skills: bool = False
    """Offer skills of ``--plugin-dir`` plugins (the reference's ``skills.enableXcshPlugins``)."""
    native_user: bool = True
    """The agent dir's skills (the reference's ``skills.enablePiUser``, default on)."""
    native_project: bool = True
    """The project's ``.xcsh/skills`` (``skills.enablePiProject``, default on)."""
    codex_user: bool = False
    """``~/.codex/skills`` (``skills.enableCodexUser``: off unless the user opts in, as in the reference)."""
    claude_user: bool = True
    """``~/.claude/skills`` (``skills.enableXcshUser``; on by default in xcsh, see docs/decisions.md)."""
    claude_project: bool = True
    """``.claude/skills`` (``skills.enableXcshProject``; on by default in xcsh)."""

    def offers(self, provider: str, level: str) -> bool:
        """Whether skills of this source are offered (the reference's ``isSourceEnabled``): the
        sources above by their switch, plugins by :attr:`plugin_skills`, any other source while
        at least one of the built-in sources is on."""
        switch = {
            ("native", "user"): self.native_user,
            ("native", "project"): self.native_project,
            ("codex", "user"): self.codex_user,
            ("claude", "user"): self.claude_user,
            ("claude", "project"): self.claude_project,
        }.get((provider, level))
        if switch is not None:
            return switch
        if provider == PLUGIN_PROVIDER:
            return self.plugin_skills
        return (
            self.native_user
            or self.native_project
            or self.codex_user
            or self.claude_user
            or self.claude_project
        )


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def select_skills(found: Sequence[SkillFile], selection: SkillSelection, *, home: Path) -> list[Skill]:
    """The session's skills: discovered ones, then custom directories, filtered and de-duplicated
    (by name, and by real path so a symlinked skill counts once), sorted by name."""
    if not selection.enabled:
        return []
    candidates = list(found)
    for directory in selection.custom_dirs:
        root = home / directory[2:] if directory.startswith("~/") else Path(directory)
        candidates += scan_skills("custom", "Custom", root, "user", require_description=True)
    chosen: dict[str, Skill] = {}
    real_paths: set[str] = set()
    for item in candidates:
        if item.source.provider != "custom" and not selection.offers(item.source.provider, item.level):
            continue
        if item.name in selection.disabled_names or _matches(item.name, selection.ignore):
            continue
        if selection.include and not _matches(item.name, selection.include):
            continue
        real = os.path.realpath(item.path)
        if real in real_paths or item.name in chosen:
            continue
        real_paths.add(real)
        chosen[item.name] = Skill(
            name=item.name,
            description=item.description,
            path=item.path,
            source=f"{item.source.provider}:{item.level}",
        )
    return sorted(chosen.values(), key=lambda s: (s.name.lower(), s.name, s.path))


def skill_prompt(skill: Skill, args: str) -> str:
    """The prompt text ``/skill:<name> args`` sends: the SKILL.md body, then its path and the args."""
    try:
        text = Path(skill.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError(f"Failed to load skill {skill.name}: {exc}") from None
    _, body = parse_front_matter(text)
    meta = [f"Skill: {skill.path}"]
    if args:
        meta.append(f"User: {args}")
    return f"{body.strip()}\n\n---\n\n" + "\n".join(meta)
