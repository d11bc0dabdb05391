"""Agent definitions for ``task``: the bundled set plus ``*.md`` files of discovered ``agents/`` folders.

A definition file is Markdown with front matter: ``name``, ``description``,
``tools`` (comma list or YAML list; absent = the default tool set), ``spawns``
(agents it may start with ``task``; ``*`` = any; absent = none), ``model`` (one or
more patterns), ``thinkingLevel``/``thinking-level``; the body is the agent's
system prompt addition. Discovered folders come highest precedence first (project
before user), and the first definition of a name wins over later ones and over
the bundled one. ``task.disabledAgents`` hides agents by name.

A project's definition may choose its model and thinking level only in a project the user
trusted by name (:class:`ProjectModels`), as the project's ``config.yml`` may set
``task.agentModelOverrides`` only then (docs/decisions.md, "Model settings of a project").
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from xcsh.coding.discovery import Discovered, LoadContext, discover, ordered_providers, parse_front_matter
from xcsh.coding.discovery.base import UserTrust, project_file_refused, read_text

logger = logging.getLogger(__name__)

AgentSource = Literal["bundled", "user", "project"]


class AgentDefinition(msgspec.Struct, frozen=True):
    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    spawns: tuple[str, ...] | Literal["*"] = ()
    models: tuple[str, ...] = ()
    thinking_level: str | None = None
    source: AgentSource = "bundled"
    path: str | None = None

    def may_spawn(self, name: str) -> bool:
        return self.spawns == "*" or name in self.spawns


_READ_ONLY = ("read", "grep", "find", "ast_grep")
_GENERAL = (
    "You are a subagent started by another agent through its `task` tool. You get one assignment and work "
    "on it alone, with your own tools and context; the agent that started you sees only your final answer. "
    "Finish the assignment completely, verify what you changed, and end with a concise report: what you did, "
    "what you found, the files you touched, and anything left open. Do not ask questions; make reasonable "
    "assumptions and state them."
)
BUNDLED: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        name="task",
        description="General-purpose subagent with every tool, for delegated multi-step work",
        prompt=_GENERAL,
        spawns="*",
        thinking_level="medium",
    ),
    AgentDefinition(
        name="quick_task",
        description="Low-effort subagent for strictly mechanical edits or data gathering",
        prompt=_GENERAL,
        thinking_level="minimal",
    ),
    AgentDefinition(
        name="explore",
        description="Fast read-only scout of the codebase; returns condensed findings for a hand-off",
        prompt=(
            "You are a read-only scout. Search and read the code to answer the assignment; never modify "
            "files. Report the relevant files, symbols and line ranges with a short explanation of each, as "
            "compactly as possible, so another agent can act on it without re-reading everything."
        ),
        tools=_READ_ONLY,
        thinking_level="medium",
    ),
    AgentDefinition(
        name="plan",
        description="Architect for complex multi-file changes; produces a step-by-step plan, edits nothing",
        prompt=(
            "You are a software architect. Study the code (read-only; bash only for inspection) and produce "
            "a concrete, ordered implementation plan: the files to change, the changes in each, risks, and how "
            "to verify the result. Do not edit files."
        ),
        tools=(*_READ_ONLY, "bash"),
        spawns=("explore",),
        thinking_level="high",
    ),
    AgentDefinition(
        name="reviewer",
        description="Code reviewer for correctness, security and quality issues",
        prompt=(
            "You are a code reviewer. Inspect the changes or code named in the assignment and report concrete "
            "findings: each with file, line range, severity, and why it matters. Say clearly when the code "
            "looks correct. Do not edit files."
        ),
        tools=(*_READ_ONLY, "bash"),
        spawns=("explore",),
        thinking_level="high",
    ),
    AgentDefinition(
        name="librarian",
        description="Researches libraries and APIs by reading their source; answers with verified facts",
        prompt=(
            "You research how a library or API behaves by reading its installed source, documentation and "
            "tests (bash may locate them). Answer with facts you verified, citing the files you read."
        ),
        tools=(*_READ_ONLY, "bash"),
        thinking_level="minimal",
    ),
    AgentDefinition(
        name="designer",
        description="UI and UX specialist for implementing and refining interfaces",
        prompt=(
            "You implement and refine user interfaces: layout, styling, accessibility and interaction. Follow "
            "the project's existing design conventions and verify your changes."
        ),
    ),
)


def _names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    return tuple(str(item).strip() for item in items if str(item).strip())


def parse_agent(text: str, source: AgentSource, path: str | None = None) -> AgentDefinition | None:
    """A definition from a Markdown file's text; None (logged) when it has no name or description."""
    meta, body = parse_front_matter(text)
    name = str(meta.get("name") or (Path(path).stem if path else "")).strip()
    description = str(meta.get("description") or "").strip()
    if not name or not description:
        logger.warning("agent definition %s ignored: it needs a name and a description", path or name)
        return None
    spawns_raw = meta.get("spawns")
    spawns: tuple[str, ...] | Literal["*"] = (
        "*" if isinstance(spawns_raw, str) and spawns_raw.strip() == "*" else (_names(spawns_raw) or ())
    )
    thinking = meta.get("thinkingLevel") or meta.get("thinking-level") or meta.get("thinking")
    level = {"med": "medium"}.get(str(thinking).strip(), str(thinking).strip()) if thinking else None
    return AgentDefinition(
        name=name,
        description=description,
        prompt=body.strip(),
        tools=_names(meta.get("tools")),
        spawns=spawns,
        models=_names(meta.get("model")) or (),
        thinking_level=level,
        source=source,
        path=path,
    )


def usable_models(patterns: Sequence[str]) -> list[str]:
    """The ``model`` patterns a child can use: ``provider/id`` ones (another agent's bare
    ``sonnet`` or the reference's ``pi/…`` roles name nothing here)."""
    return [p for p in patterns if "/" in p and not p.startswith("pi/")]


def _every_provider() -> list[str]:
    return [p.id for p in ordered_providers()]


def load_agents(
    cwd: Path,
    home: Path,
    agent_dir: Path,
    disabled: list[str] | None = None,
    *,
    plugin_dirs: Sequence[Path] = (),
    known: Discovered | None = None,
    trust: UserTrust | None = None,
) -> list[AgentDefinition]:
    """Discovered definitions (highest precedence first) then the bundled ones, one per name.

    ``plugin_dirs``: the ``--plugin-dir`` folders, whose ``agents/`` are searched too.
    ``trust``: the user's trust of ``cwd`` (its definitions are read from folders other users control).

    ``known``: a discovery just made by the caller (the session's project context). Its agent
    folders are used when it was made for this same context with every provider asked — the
    walk would find the same folders — so a session's start walks the tree once, not twice.
    """
    found: dict[str, AgentDefinition] = {}
    try:
        context = LoadContext.create(cwd, home, agent_dir, plugin_dirs, trust)
        if known is not None and known.context == context and known.providers == _every_provider():
            dirs = known.agent_dirs
        else:
            dirs = discover(context).agent_dirs
    except Exception:  # discovery problems must not take the task tool down
        logger.warning("agent folder discovery failed", exc_info=True)
        dirs = []
    for folder in dirs:
        directory = Path(folder.path)
        if not directory.is_dir():
            continue
        for file in sorted(directory.glob("*.md")):
            # a project's definitions: none linking out of the project or in another user's folder
            refused = project_file_refused(context, file) if folder.level == "project" else None
            if refused is not None:
                logger.warning("skipped %s: %s", file, refused)
                continue
            text = read_text(file)  # regular files only, size-capped, BOM dropped
            if text is None:
                continue
            definition = parse_agent(text, folder.level, str(file))
            if definition is not None and definition.name not in found:
                found[definition.name] = definition
    for definition in BUNDLED:
        found.setdefault(definition.name, definition)
    blocked = set(disabled or [])
    return [d for d in found.values() if d.name not in blocked]


class ProjectModels:
    """Whether project definitions may choose their model and thinking level, and the
    definitions that asked when they may not (warned about once each, on stderr).

    ``trusted`` is asked once, when a project definition first sets either; untrusted, the
    definition keeps everything else and runs on the parent's model and level.
    """

    def __init__(self, trusted: Callable[[], bool], how_to_trust: str) -> None:
        self._trusted = trusted
        self._answer: bool | None = None
        self._how = how_to_trust
        self._warned: set[str] = set()

    def apply(self, definitions: list[AgentDefinition]) -> list[AgentDefinition]:
        """``definitions`` with a project definition's ``model`` and thinking level dropped
        unless the project is trusted."""
        kept: list[AgentDefinition] = []
        for definition in definitions:
            if definition.source == "project" and (
                usable_models(definition.models) or definition.thinking_level
            ):
                if self._answer is None:
                    self._answer = self._trusted()
                if not self._answer:
                    self._warn(definition)
                    definition = msgspec.structs.replace(definition, models=(), thinking_level=None)
            kept.append(definition)
        return kept

    def _warn(self, definition: AgentDefinition) -> None:
        where = definition.path or definition.name
        if where in self._warned:
            return
        self._warned.add(where)
        fields = ", ".join(
            name
            for name, value in (
                ("model", usable_models(definition.models)),
                ("thinkingLevel", definition.thinking_level),
            )
            if value
        )
        sys.stderr.write(
            f"xcsh: ignored {fields} of project agent {definition.name} ({where}): not a trusted "
            f"project; it runs on the session's model. {self._how}\n"
        )
