"""The extension API: what ``setup(xcsh)`` receives and what handlers are called with.

An extension registers event handlers, tools and ``/commands`` through
:class:`ExtensionAPI`. Handlers are called as ``handler(event, ctx)`` — ``event`` is
the wire-shaped event dict, ``ctx`` an :class:`ExtensionContext` — and may be plain
functions or coroutines. The UI (``ctx.ui`` / ``xcsh.ui``) follows :class:`ExtensionUI`;
in RPC mode each call becomes an ``extension_ui_request`` frame, elsewhere dialogs
resolve to their defaults at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from xcsh.ai.abort import AbortSignal
from xcsh.ai.types import UserContent
from xcsh.coding.extensions.ui import Dialog as Dialog  # re-exported: the UI types' old home
from xcsh.coding.extensions.ui import DialogUI as DialogUI
from xcsh.coding.extensions.ui import ExtensionUI as ExtensionUI
from xcsh.coding.extensions.ui import HeadlessUI as HeadlessUI
from xcsh.coding.extensions.ui import NotifyType as NotifyType
from xcsh.coding.extensions.ui import WidgetPlacement as WidgetPlacement
from xcsh.coding.extensions.values import as_tool_result as as_tool_result
from xcsh.coding.extensions.values import content_blocks as content_blocks
from xcsh.coding.extensions.values import plain_json

if TYPE_CHECKING:
    from xcsh.ai.types import Model
    from xcsh.coding.session import AgentSession

Handler = Callable[[dict[str, Any], "ExtensionContext"], Any]
CommandHandler = Callable[[str, "ExtensionContext"], Any]
ToolFunction = Callable[[dict[str, Any], "ToolInvocation"], Any]


class ExtensionSetupError(Exception):
    """An extension registered something invalid (a duplicate tool name, a bad command name)."""


class ExtensionHost(Protocol):
    """What the API objects use of the extension runner (:class:`~xcsh.coding.extensions.runner.ExtensionRunner`).

    Declared here so this module does not import the runner (no import cycle).
    """

    session: AgentSession
    ui: ExtensionUI
    shutdown_requested: bool

    def send_message(
        self,
        custom_type: str,
        content: str | list[dict[str, Any]],
        *,
        display: bool,
        details: Any,
        trigger_turn: bool,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None,
    ) -> None: ...

    def send_user_message(
        self, content: str | list[UserContent], *, deliver_as: Literal["steer", "followUp"] | None
    ) -> None: ...


class ExtensionContext:
    """What a handler, command or tool sees of the running session.

    ``session`` is the full :class:`AgentSession` for advanced uses; its API is not
    part of the stable extension contract.
    """

    def __init__(self, runner: ExtensionHost) -> None:
        self._runner = runner

    @property
    def ui(self) -> ExtensionUI:
        return self._runner.ui

    @property
    def has_ui(self) -> bool:
        return self._runner.ui.has_ui

    @property
    def cwd(self) -> Path:
        return self._runner.session.cwd

    @property
    def session(self) -> AgentSession:
        return self._runner.session

    @property
    def model(self) -> Model:
        return self._runner.session.model

    @property
    def signal(self) -> AbortSignal | None:
        """The abort signal of the current run (None while idle); pass it to dialogs."""
        return self._runner.session.run_signal

    def is_idle(self) -> bool:
        return not self._runner.session.is_streaming

    async def abort(self) -> None:
        """Abort the current run (like the ``abort`` command) and wait until idle."""
        await self._runner.session.abort()

    def shutdown(self) -> None:
        """Ask the process to exit after the next command response (RPC mode)."""
        self._runner.shutdown_requested = True


@dataclass(slots=True, kw_only=True)
class ToolInvocation:
    """One call of an extension tool: its id, abort signal, progress callback and context."""

    tool_call_id: str
    signal: AbortSignal | None
    update: Callable[[str | dict[str, Any]], None]
    context: ExtensionContext


@dataclass(slots=True, kw_only=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    execute: ToolFunction
    label: str = ""
    concurrency: Literal["shared", "exclusive"] = "shared"
    active: bool = True


@dataclass(slots=True, kw_only=True)
class CommandSpec:
    name: str
    handler: CommandHandler
    description: str = ""


@dataclass(slots=True, kw_only=True)
class Extension:
    """What one extension registered during ``setup``."""

    path: str
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: list[ToolSpec] = field(default_factory=list)
    commands: list[CommandSpec] = field(default_factory=list)


class ExtensionAPI:
    """Passed to an extension's ``setup(xcsh)``; the registrations take effect once setup returns."""

    def __init__(self, runner: ExtensionHost, extension: Extension) -> None:
        self._runner = runner
        self._extension = extension

    @property
    def path(self) -> str:
        """Where this extension was loaded from."""
        return self._extension.path

    @property
    def ui(self) -> ExtensionUI:
        return self._runner.ui

    @property
    def cwd(self) -> Path:
        return self._runner.session.cwd

    def on(self, event: str, handler: Handler | None = None) -> Any:
        """Call ``handler(event, ctx)`` for every session event of type ``event``.

        Usable directly (``xcsh.on("turn_end", fn)``) or as a decorator (``@xcsh.on("turn_end")``).
        """
        if handler is None:

            def decorate(fn: Handler) -> Handler:
                self._extension.handlers.setdefault(event, []).append(fn)
                return fn

            return decorate
        self._extension.handlers.setdefault(event, []).append(handler)
        return handler

    def register_tool(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        execute: ToolFunction,
        *,
        label: str = "",
        concurrency: Literal["shared", "exclusive"] = "shared",
        active: bool = True,
    ) -> None:
        """Add a tool the model can call: ``execute(args, invocation)`` returns text or a tool result.

        A string becomes one text block; a dict with ``content`` is used as is; raising
        makes the call an error result. Names must not clash with existing tools.
        """
        taken = {t.name for t in self._extension.tools}
        if not name or self._runner.session.has_tool(name) or name in taken:
            raise ExtensionSetupError(f'Tool "{name}" conflicts with an existing tool')
        self._extension.tools.append(
            ToolSpec(
                name=name,
                description=description,
                parameters=parameters,
                execute=execute,
                label=label,
                concurrency=concurrency,
                active=active,
            )
        )

    def register_command(self, name: str, handler: CommandHandler, description: str = "") -> None:
        """Run ``handler(args, ctx)`` when a prompt is ``/name`` or ``/name args`` (even while streaming)."""
        name = name.lstrip("/")
        if not name or any(c.isspace() for c in name):
            raise ExtensionSetupError(f"Invalid command name {name!r}")
        self._extension.commands.append(CommandSpec(name=name, handler=handler, description=description))

    def send_message(
        self,
        custom_type: str,
        content: str | list[dict[str, Any]],
        *,
        display: bool = True,
        details: Any = None,
        trigger_turn: bool = False,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None,
    ) -> None:
        """Add a ``custom`` message to the conversation (see docs/extensions.md for delivery rules)."""
        self._runner.send_message(
            custom_type,
            content,
            display=display,
            details=details,
            trigger_turn=trigger_turn,
            deliver_as=deliver_as,
        )

    def send_user_message(
        self,
        content: str | list[UserContent],
        *,
        deliver_as: Literal["steer", "followUp"] | None = None,
    ) -> None:
        """Send a user message: starts a run when idle, else queued as ``deliver_as``."""
        self._runner.send_user_message(content, deliver_as=deliver_as)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        """Persist extension state as a ``custom`` session entry (not sent to the model)."""
        self._runner.session.store.append_custom(custom_type, plain_json(data))

    def get_active_tools(self) -> list[str]:
        return list(self._runner.session.active_tool_names)

    def set_active_tools(self, names: list[str]) -> None:
        """Choose which registered tools the model sees (unknown names are ignored)."""
        self._runner.session.set_active_tools(names)

    def shutdown(self) -> None:
        """Ask the process to exit after the next command response (RPC mode)."""
        self._runner.shutdown_requested = True
