"""One registry for every ``/name`` a session understands, and the expansion of file commands.

Three kinds share the registry: commands registered by extensions (they *run*, the
prompt ends there), markdown slash commands and prompt templates (they *expand* into the
prompt text, placeholders filled from the arguments) and skills (``/skill:<name>``).
:meth:`CommandRegistry.list` is the query hosts get (``get_commands``).

Placeholders, as in the reference: ``$1``, ``$2``… (positional), ``$@[2]`` / ``$@[2:3]``
(from the 2nd argument, optionally that many), ``$ARGUMENTS`` and ``$@`` (all arguments
joined by spaces). A body that uses the reference's Handlebars (its helpers ``{{arg 1}}``,
``{{join args ", "}}``, the blocks ``{{#each args}}``, ``{{#if ARGUMENTS}}`` …, or the values
``args``, ``ARGUMENTS``, ``arguments``: :mod:`xcsh.coding.command_render`) is rendered over those
values; the placeholders are filled after that, so the arguments are never template code. Arguments are
split on blanks; quotes group. A template without any placeholder gets the arguments appended
after a blank line.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import msgspec

from xcsh.ai.patterns import LazyPattern
from xcsh.coding.discovery import CommandFile, parse_front_matter
from xcsh.coding.skills import SKILL_COMMAND_PREFIX, Skill, skill_prompt

if TYPE_CHECKING:
    from xcsh.coding.hooks import SlashCommand

logger = logging.getLogger(__name__)

CommandSource = Literal["extension", "prompt", "skill"]
CommandLocation = Literal["user", "project", "path"]

DESCRIPTION_CHARS = 60
_INLINE_SHELL = LazyPattern(r"\$(?:ARGUMENTS|@(?:\[\d+(?::\d*)?\])?|\d+)")
_INLINE_TEMPLATE = LazyPattern(r"\{\{[\s\S]*?(?:\b(?:arguments|ARGUMENTS|args)\b|\barg\s+[^}]+)[\s\S]*?\}\}")


class CommandInfo(msgspec.Struct, frozen=True):
    """One entry of the command listing."""

    name: str
    description: str
    source: CommandSource
    location: CommandLocation | None = None
    path: str | None = None
    argument_hint: str | None = None

    def wire(self) -> dict[str, Any]:
        """The listing entry with the protocol's field names (absent fields left out)."""
        data: dict[str, Any] = {"name": self.name, "description": self.description, "source": self.source}
        if self.location is not None:
            data["location"] = self.location
        if self.path is not None:
            data["path"] = self.path
        if self.argument_hint is not None:
            data["argumentHint"] = self.argument_hint
        return data


@runtime_checkable
class ListsCommands(Protocol):
    """A runnable command hook that can describe its commands (extensions do)."""

    def command_infos(self) -> list[CommandInfo]: ...


class FileCommand(msgspec.Struct, frozen=True):
    """A markdown slash command or prompt template, parsed."""

    name: str
    description: str
    body: str
    path: str
    level: Literal["user", "project"]
    provider_name: str
    argument_hint: str | None = None
    template: bool = False
    """True for a prompt template (``prompts/``), False for a slash command (``commands/``)."""
    bundled: bool = False
    """Shipped with xcsh (:mod:`xcsh.coding.bundled_commands`): listed without location or path."""

    @classmethod
    def parse(cls, item: CommandFile, *, template: bool) -> FileCommand:
        front, body = parse_front_matter(item.content)
        description = front.get("description")
        text = description.strip() if isinstance(description, str) else ""
        if not text:
            first = next((line for line in body.splitlines() if line.strip()), "")
            text = first[:DESCRIPTION_CHARS] + ("..." if len(first) > DESCRIPTION_CHARS else "")
        hint = front.get("argumentHint")
        return cls(
            name=item.name,
            description=text,
            body=body,
            path=item.path,
            level=item.level,
            provider_name=item.source.provider_name,
            argument_hint=str(hint) if hint not in (None, "") else None,
            template=template,
        )

    @classmethod
    def bundled_commands(cls, after: Sequence[FileCommand]) -> list[FileCommand]:
        """The bundled commands no command or template of ``after`` (the discovered ones)
        already names: a user's own ``/init`` wins."""
        from xcsh.coding.bundled_commands import BUNDLED

        taken = {c.name for c in after}
        return [
            cls(
                name=n,
                description=d,
                body=b.strip(),
                path="",
                level="user",
                provider_name="xcsh",
                bundled=True,
            )
            for n, d, b in BUNDLED
            if n not in taken
        ]

    def info(self) -> CommandInfo:
        return CommandInfo(
            name=self.name,
            description=self.description,
            source="prompt",
            location=None if self.bundled else self.level,
            path=None if self.bundled else self.path,
            argument_hint=self.argument_hint,
        )


def split_command(text: str) -> tuple[str, str]:
    """``/name rest`` → (``name``, ``rest``); the name ends at the first space."""
    head, _, rest = text[1:].partition(" ")
    return head, rest


def parse_args(text: str) -> list[str]:
    """Arguments split on spaces and tabs; single or double quotes group (and are removed)."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in "\"'":
            quote = char
        elif char in " \t":
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


def _slice(match: re.Match[str], args: list[str], start: int = 1) -> str:
    first = int(match.group(start))
    if first < 1 or first > len(args):
        return ""
    length = match.group(start + 1)
    if length is None or length == "":
        return " ".join(args[first - 1 :])
    count = int(length)
    return " ".join(args[first - 1 : first - 1 + count]) if count > 0 else ""


_PLACEHOLDER = re.compile(r"\$(\d+)|\$@\[(\d+)(?::(\d*))?\]|\$ARGUMENTS|\$@")


def expand_template(body: str, arg_text: str, origin: str = "") -> str:
    """``body`` with its placeholders filled from ``arg_text`` (see the module docstring); a body
    that calls one of the reference's helpers or reads ``args``/``ARGUMENTS`` in a ``{{…}}`` is
    rendered as Handlebars (:mod:`xcsh.coding.command_render`), as the reference does. Any other
    ``{{…}}`` text (Jinja, Ansible, GitHub Actions) is sent as written.

    The arguments are never template code: a ``$`` placeholder is filled after rendering, so
    ``{{…}}`` the user typed reaches the model as typed (the reference renders it).

    A body the engine refuses (an unknown helper, an unclosed block, a Go-style ``{{ .Name }}``:
    ``origin`` names the file in the warning) keeps its ``{{…}}`` text as written, with only
    ``{{ARGUMENTS}}``, ``{{arguments}}`` and ``{{args}}`` filled; the arguments are then appended
    unless a ``$`` placeholder used them, so they never vanish. (The reference fails the prompt
    there.)"""
    args = parse_args(arg_text)
    joined = " ".join(args)
    held: list[str] = []
    mark = f"\ue000{os.urandom(4).hex()}-"  # where an argument goes once the body is rendered

    def hold(value: str) -> str:
        held.append(value)
        return f"{mark}{len(held) - 1}\ue001"

    def fill(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            index = int(match.group(1))
            return hold(args[index - 1] if 0 < index <= len(args) else "")
        if match.group(2) is not None:
            return hold(_slice(match, args, start=2))
        return hold(joined)

    inline = bool(_INLINE_SHELL.search(body))
    result = _PLACEHOLDER.sub(fill, body)
    if "{{" in body:
        from xcsh.coding.command_render import RenderError, render, uses_handlebars

        if uses_handlebars(body):
            try:
                result = render(result, args, joined)
                inline = inline or bool(_INLINE_TEMPLATE.search(body))
            except RenderError as exc:
                logger.warning(
                    "could not render the template %s (%s); its {{…}} text is sent as written", origin, exc
                )
                result = re.sub(r"\{\{\s*(?:ARGUMENTS|arguments)\s*\}\}", lambda _m: hold(joined), result)
                result = re.sub(r"\{\{\s*args\s*\}\}", lambda _m: hold(",".join(args)), result)
    result = re.sub(f"{mark}(\\d+)\ue001", lambda m: held[int(m.group(1))], result)
    if not joined or inline:
        return result
    return f"{result}\n\n{joined}" if result else joined


class CommandRegistry:
    """Every ``/name`` of a session: runnable hooks (shared with :class:`SessionHooks`) and
    the file commands, templates and skills found by discovery."""

    def __init__(self, runnable: list[SlashCommand]) -> None:
        self._runnable = runnable
        self._files: list[FileCommand] = []
        self._templates: list[FileCommand] = []
        self._skills: dict[str, Skill] = {}

    def set_sources(
        self, *, commands: Sequence[FileCommand], templates: Sequence[FileCommand], skills: Sequence[Skill]
    ) -> None:
        self._files = list(commands)
        self._templates = list(templates)
        self._skills = {s.name: s for s in skills}

    # ---- queries ---------------------------------------------------------------------
    def runnable_for(self, text: str) -> SlashCommand | None:
        """The hook that runs ``text`` (an extension command), or None."""
        if not text.startswith("/"):
            return None
        return next((c for c in self._runnable if c.matches(text)), None)

    def list(self) -> list[CommandInfo]:
        """Every command: extension commands, slash commands, templates, then skills."""
        infos: list[CommandInfo] = []
        for hook in self._runnable:
            if isinstance(hook, ListsCommands):
                infos += hook.command_infos()
        seen = {i.name for i in infos}
        for command in [*self._files, *self._templates]:
            if command.name not in seen:
                seen.add(command.name)
                infos.append(command.info())
        infos += [
            CommandInfo(
                name=f"{SKILL_COMMAND_PREFIX}{s.name}",
                description=s.description,
                source="skill",
                location="project" if s.source.endswith(":project") else "user",
                path=s.path,
            )
            for s in self._skills.values()
        ]
        return infos

    # ---- expansion -------------------------------------------------------------------
    def expand(self, text: str) -> str:
        """``text`` with a leading slash command, skill command or template expanded
        (unknown names and plain text come back unchanged)."""
        if not text.startswith("/"):
            return text
        name, rest = split_command(text)
        if name.startswith(SKILL_COMMAND_PREFIX):
            skill = self._skills.get(name[len(SKILL_COMMAND_PREFIX) :])
            if skill is not None:
                return skill_prompt(skill, rest.strip())
            return text
        command = next((c for c in self._files if c.name == name), None)
        if command is not None:
            text = expand_template(command.body, rest, command.path or f"/{command.name}")
            if not text.startswith("/"):
                return text
            name, rest = split_command(text)
        template = next((t for t in self._templates if t.name == name), None)
        return expand_template(template.body, rest, template.path) if template is not None else text
