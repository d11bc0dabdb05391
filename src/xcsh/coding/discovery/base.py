"""What discovery finds and the small file-system helpers every provider shares.

A *provider* is one source of configuration (xcsh's own directories, Claude's,
Codex's…). Each provider answers for the *capabilities* it knows (context files,
system prompts, skills, prompt templates, slash commands, rules, subagent folders);
:mod:`xcsh.coding.discovery.registry` merges their answers by priority.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import msgspec

from xcsh.coding.discovery.frontmatter import parse_front_matter
from xcsh.coding.discovery.walk import ancestors as ancestors
from xcsh.coding.discovery.walk import find_repo_root as find_repo_root
from xcsh.coding.discovery.walk import is_repository, kind_of
from xcsh.coding.private_fs import Foreign, foreign_status, writers_within

logger = logging.getLogger(__name__)

Level = Literal["user", "project"]


class UserTrust(msgspec.Struct, frozen=True):
    """What the user said about trusting cwd: this run's ``--trust`` (``grant``) and their own
    ``trust.projects`` (``dirs``). With a ``--trust`` recorded earlier (``<agent dir>/trust.json``)
    it decides whether cwd's files are read from folders other users control
    (:func:`xcsh.coding.trust.named_by_user`, asked only when such a folder is met)."""

    grant: bool = False
    dirs: tuple[str, ...] = ()


class LoadContext(msgspec.Struct, frozen=True):
    """Where to look: the project's cwd, the user's home, xcsh's agent dir and the repo root."""

    cwd: Path
    home: Path
    agent_dir: Path
    repo_root: Path | None
    plugin_dirs: tuple[Path, ...] = ()
    """Plugin roots given with ``--plugin-dir`` (absolute)."""
    trust: UserTrust = msgspec.field(default_factory=UserTrust)
    """The user's word on trusting cwd: a trusted project's files are read even where its folders
    are another user's (:meth:`_Scope.foreign_reason`)."""

    @classmethod
    def create(
        cls,
        cwd: Path,
        home: Path,
        agent_dir: Path,
        plugin_dirs: Sequence[Path] = (),
        trust: UserTrust | None = None,
    ) -> LoadContext:
        cwd = Path(os.path.abspath(cwd))
        return cls(
            cwd=cwd,
            home=Path(os.path.abspath(home)),
            agent_dir=agent_dir,
            repo_root=find_repo_root(cwd),
            plugin_dirs=tuple(Path(os.path.abspath(p)) for p in plugin_dirs),
            trust=trust if trust is not None else UserTrust(),
        )

    def trust_root(self) -> Path:
        """The top of what a trust of cwd covers: its repository's root, else cwd itself.

        The root counts only when its ``.git`` is a repository (:func:`is_repository`: an empty
        ``.git`` folder is not) and no one beyond cwd's own writers controls a folder from cwd up
        to it (:func:`~xcsh.coding.private_fs.writers_within`): else the owner of the folder above
        a trusted folder could stretch the trust over their own files by planting ``.git`` there.
        """
        root = self.repo_root
        if root is None or root == self.cwd or not is_repository(root):
            return self.cwd
        for folder in self.cwd.parents:
            if not writers_within(folder, self.cwd):
                return self.cwd
            if folder == root:
                break
        return root

    @property
    def walk_stop(self) -> Path:
        """Where project walk-ups stop: the repository root, else the home directory."""
        return self.repo_root if self.repo_root is not None else self.home


class Source(msgspec.Struct, frozen=True):
    """Which provider found an item, in which file, at which level."""

    provider: str
    provider_name: str
    path: str
    level: Level

    def wire(self) -> dict[str, str]:
        """The ``_source`` shape of the reference's wire items."""
        return {
            "provider": self.provider,
            "providerName": self.provider_name,
            "path": self.path,
            "level": self.level,
        }


class ContextFile(msgspec.Struct, frozen=True):
    """An instructions file for every task (XCSH.md, AGENTS.md, CLAUDE.md, GEMINI.md…)."""

    path: str
    content: str
    level: Level
    source: Source
    depth: int | None = None
    """Directory levels between cwd and the file's project directory (0 = cwd); None for user files."""


class SystemPromptFile(msgspec.Struct, frozen=True):
    """A SYSTEM.md that customises the system prompt."""

    path: str
    content: str
    level: Level
    source: Source


class SkillFile(msgspec.Struct, frozen=True):
    """A ``<name>/SKILL.md``; ``body`` is the text after the front matter."""

    name: str
    path: str
    body: str
    front: dict[str, Any]
    level: Level
    source: Source

    @property
    def description(self) -> str:
        value = self.front.get("description")
        return value.strip() if isinstance(value, str) else ""


class CommandFile(msgspec.Struct, frozen=True):
    """A markdown prompt template or slash command; ``content`` is the whole file."""

    name: str
    path: str
    content: str
    level: Level
    source: Source
    group: str = ""
    """Sub-directory of a nested prompt template (``frontend:forms``), empty otherwise."""


class AgentDir(msgspec.Struct, frozen=True):
    """A folder of subagent definitions (``*.md``), highest precedence first in listings."""

    path: str
    level: Level
    source: Source


class Found(msgspec.Struct):
    """Everything one provider found (lists in the provider's own order)."""

    context_files: list[ContextFile] = msgspec.field(default_factory=list)
    system_prompts: list[SystemPromptFile] = msgspec.field(default_factory=list)
    skills: list[SkillFile] = msgspec.field(default_factory=list)
    prompts: list[CommandFile] = msgspec.field(default_factory=list)
    commands: list[CommandFile] = msgspec.field(default_factory=list)
    rules: list[dict[str, Any]] = msgspec.field(default_factory=list)
    agent_dirs: list[AgentDir] = msgspec.field(default_factory=list)


# ---------------------------------------------------------------------------- file system


MAX_FILE_BYTES = 256 * 1024
"""The largest discovered file read (context files, SYSTEM.md, skills, commands, templates,
rules); a larger one is skipped with a warning: its text would go into every request."""


class _Scope(msgspec.Struct):
    """The discovery in progress (see :func:`scoped`): its context and what it skipped."""

    ctx: LoadContext
    outside: list[str] = msgspec.field(default_factory=list)
    foreign: list[str] = msgspec.field(default_factory=list)
    trust_would_help: bool = False
    """A skipped file would have been read had the user trusted cwd (the warning says how)."""
    verdicts: dict[str, Foreign | None] = msgspec.field(default_factory=dict)
    """Directory → why it is foreign (None: the user's own), so each is examined once."""
    granted: bool | None = None
    """The user's trust of cwd, once asked (:class:`UserTrust`)."""
    reach: Path | None = None
    """:meth:`LoadContext.trust_root`, once needed."""

    def foreign_reason(self, path: Path) -> str | None:
        """Why a directory between the project base and ``path`` is someone else's, or None.

        The user's trust of cwd covers what lies at or below :meth:`LoadContext.trust_root`: a
        foreign folder there is passed, unless it is a shared drop folder (``/tmp``: writable by
        every user, sticky), which no trust covers; so is a foreign folder above it when ``path``
        itself lies there (the trusted project's own files, in a folder someone else planted a
        ``.git`` above). A file in a folder above it is never read from a foreign folder.
        """
        base = project_base(self.ctx, path)
        directory = Path(os.path.abspath(path)).parent
        inside = self._within_reach(directory)
        chain = [directory]
        while directory != base and directory.parent != directory:
            directory = directory.parent
            chain.append(directory)
        for folder in chain:
            key = os.fspath(folder)
            if key not in self.verdicts:
                self.verdicts[key] = foreign_status(folder)
            verdict = self.verdicts[key]
            if verdict is None:
                continue
            within = self._within_reach(folder)
            if (within and not verdict.shared) or (inside and not within):
                if self._trusted():
                    if within:
                        continue
                    return None  # above the trusted project, which holds the file
                self.trust_would_help = True
            return f"{key} is {verdict.reason}"
        return None

    def _within_reach(self, folder: Path) -> bool:
        """Whether ``folder`` lies at or below :meth:`LoadContext.trust_root`."""
        if self.reach is None:
            self.reach = self.ctx.trust_root()
        root = self.reach
        return folder == root or root in folder.parents

    def _trusted(self) -> bool:
        if self.granted is None:
            from xcsh.coding.trust import named_by_user

            ctx = self.ctx
            self.granted = named_by_user(
                ctx.cwd, ctx.agent_dir, grant=ctx.trust.grant, trusted_dirs=ctx.trust.dirs
            )
        return self.granted

    def remedy(self) -> str:
        """How to have the skipped files read: trust cwd (the flag and the setting, named)."""
        from xcsh.coding.trust import remedy

        return remedy(self.ctx.cwd, self.ctx.agent_dir)


_scope: ContextVar[_Scope | None] = ContextVar("xcsh_discovery_scope", default=None)


@contextlib.contextmanager
def scoped(ctx: LoadContext) -> Iterator[None]:
    """Check project-level files against ``ctx`` while discovering (see :func:`read_text`), and
    name the ones skipped for linking out of the project in one warning at the end."""
    scope = _Scope(ctx=ctx)
    token = _scope.set(scope)
    try:
        yield
    finally:
        _scope.reset(token)
        if scope.outside:
            logger.warning(
                "skipped project files that link outside the project (%s): %s",
                project_base(ctx, ctx.cwd),
                ", ".join(scope.outside),
            )
        if scope.foreign:
            logger.warning(
                "skipped project files in directories other users control: %s%s",
                "; ".join(scope.foreign),
                f"; {scope.remedy()}" if scope.trust_would_help else "",
            )


def project_base(ctx: LoadContext, path: Path) -> Path:
    """The directory a project-level ``path`` must stay inside once links are resolved: the
    repository root when the path lies in it, else the deepest directory it shares with cwd
    (the walk-up directory it was found in)."""
    absolute = os.path.abspath(path)
    root = ctx.repo_root
    if root is not None and (absolute + os.sep).startswith(os.fspath(root).rstrip(os.sep) + os.sep):
        return root
    return Path(os.path.commonpath([absolute, os.fspath(ctx.cwd)]))


def leaves_project(ctx: LoadContext, path: Path) -> bool:
    """Whether ``path``, with every symlink resolved, lies outside :func:`project_base`."""
    base = os.path.realpath(project_base(ctx, path))
    real = os.path.realpath(path)
    return not (real + os.sep).startswith(base.rstrip(os.sep) + os.sep)


def project_file_refused(ctx: LoadContext, path: Path) -> str | None:
    """Why the project-level file ``path`` is not read (it links out of the project, or lies in
    a directory another user controls), or None."""
    if leaves_project(ctx, path):
        return f"it links outside the project ({project_base(ctx, path)})"
    scope = _Scope(ctx=ctx)
    reason = scope.foreign_reason(path)
    if reason is None:
        return None
    return f"{reason}, not yours" + (f"; {scope.remedy()}" if scope.trust_would_help else "")


def read_text(path: Path, level: Level = "user") -> str | None:
    """The file's text (without a leading UTF-8 byte order mark), or None when it is missing, not a regular file,
    larger than :data:`MAX_FILE_BYTES` or unreadable (logged).

    While :func:`scoped` is active, a ``project``-level file whose real path leaves the project
    (a symlink to ``~/.aws/credentials``), or that lies in a directory another user controls
    (:func:`xcsh.coding.private_fs.foreign_directory`: ``/tmp``, ``/``'s world-writable
    children, another user's folder; unless the user trusted cwd: :meth:`_Scope.foreign_reason`)
    is not read either and is named in the scope's warning;
    user-level files (the agent dir, ``~/.claude`` …) are the user's own choice and may link anywhere.
    """
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None
        scope = _scope.get()
        if level == "project" and scope is not None:
            if leaves_project(scope.ctx, path):
                scope.outside.append(str(path))
                return None
            foreign = scope.foreign_reason(path)
            if foreign is not None:
                scope.foreign.append(f"{path} ({foreign})")
                return None
        if info.st_size > MAX_FILE_BYTES:
            logger.warning("skipped %s: larger than %d KiB", path, MAX_FILE_BYTES // 1024)
            return None
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        logger.warning("cannot read %s: %s", path, exc)
        return None
    return text.removeprefix("\ufeff")  # a UTF-8 byte order mark (Windows editors) is not text


def non_empty_dir(path: Path) -> bool:
    try:
        return path.is_dir() and any(path.iterdir())
    except OSError:
        return False


def files_in(directory: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Visible files of ``directory`` (not recursive) ending in one of ``suffixes``, sorted by name;
    an entry that cannot be examined is skipped alone (:func:`~xcsh.coding.discovery.walk.kind_of`)."""
    try:
        entries = sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    return [
        p
        for p in entries
        if not p.name.startswith(".") and p.name.endswith(suffixes) and kind_of(p) == "file"
    ]


def source(provider: str, name: str, path: Path, level: Level) -> Source:
    return Source(provider=provider, provider_name=name, path=str(Path(os.path.abspath(path))), level=level)


def depth_of(ctx: LoadContext, project_dir: Path) -> int:
    """Directory levels from ``project_dir`` down to cwd (negative when below cwd)."""
    return len(ctx.cwd.parts) - len(Path(os.path.abspath(project_dir)).parts)


# ---------------------------------------------------------------------------- item builders


def context_file(provider: str, name: str, path: Path, level: Level, depth: int | None) -> ContextFile | None:
    text = read_text(path, level)
    if not text:
        return None
    where = source(provider, name, path, level)
    return ContextFile(path=where.path, content=text, level=level, source=where, depth=depth)


def system_prompt_file(provider: str, name: str, path: Path, level: Level) -> SystemPromptFile | None:
    text = read_text(path, level)
    if not text:
        return None
    where = source(provider, name, path, level)
    return SystemPromptFile(path=where.path, content=text, level=level, source=where)


def scan_skills(
    provider: str, name: str, directory: Path, level: Level, *, require_description: bool = False
) -> list[SkillFile]:
    """Skills in ``directory``: every visible ``<folder>/SKILL.md``; the name is the front
    matter's ``name`` or the folder's. ``enabled: false`` skips a skill."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    folders = [p for p in entries if not p.name.startswith(".") and kind_of(p) == "dir"]
    skills: list[SkillFile] = []
    for folder in folders:
        path = folder / "SKILL.md"
        text = read_text(path, level)
        if text is None:
            continue
        front, body = parse_front_matter(text)
        if front.get("enabled") is False:
            continue
        if require_description and not front.get("description"):
            continue
        raw_name = front.get("name")
        skill_name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else folder.name
        where = source(provider, name, path, level)
        skills.append(
            SkillFile(name=skill_name, path=where.path, body=body, front=front, level=level, source=where)
        )
    skills.sort(key=lambda s: (s.name.lower(), s.name, s.path))
    return skills


def command_files(
    provider: str, name: str, directory: Path, level: Level, *, name_from_front: bool = False
) -> list[CommandFile]:
    """``*.md`` files of ``directory`` as commands named after the file (or the front matter's
    ``name`` when ``name_from_front``)."""
    found: list[CommandFile] = []
    for path in files_in(directory, (".md",)):
        text = read_text(path, level)
        if text is None:
            continue
        command = path.name.removesuffix(".md")
        if name_from_front:
            front, _ = parse_front_matter(text)
            if isinstance(front.get("name"), str) and front["name"].strip():
                command = front["name"].strip()
        where = source(provider, name, path, level)
        found.append(CommandFile(name=command, path=where.path, content=text, level=level, source=where))
    return found


def rule_files(
    provider: str, name: str, directory: Path, level: Level, suffixes: tuple[str, ...] = (".md", ".mdc")
) -> list[dict[str, Any]]:
    """Rule files of ``directory`` as wire ``Rule`` shapes (name = file name without extension)."""
    rules: list[dict[str, Any]] = []
    for path in files_in(directory, suffixes):
        rule = rule_file(provider, name, path, level, path.name.rsplit(".", 1)[0])
        if rule is not None:
            rules.append(rule)
    return rules


def rule_file(provider: str, name: str, path: Path, level: Level, rule_name: str) -> dict[str, Any] | None:
    """One rule file as a wire ``Rule``, or None when unreadable.

    The rule code (:mod:`xcsh.coding.ttsr.rules`) is imported only for a file that exists:
    providers ask for fixed paths (Windsurf's global rules) that most machines do not have.
    """
    text = read_text(path, level)
    if text is None:
        return None
    from xcsh.coding.ttsr.rules import build_rule

    where = source(provider, name, path, level)
    built = build_rule(rule_name, text, Path(where.path), where.wire())  # type: ignore[arg-type]
    return dict(built)
