"""ExtensionRunner: loads extensions, dispatches events to them and applies what they return.

Handlers run in extension load order, then registration order. Session events are
dispatched in the order they happen, one at a time, on a background task (listeners
of the session are synchronous); ``tool_call``/``tool_result`` and the veto events are
awaited where they happen because their result matters. Whatever a handler raises is
reported through ``on_error`` and the session carries on: this module is the
boundary between xcsh and third-party extension code.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from xcsh.agent.commit_gate import outside_commit_gates
from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentMessage, AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.ai.types import ImageContent, ToolCall, UserContent
from xcsh.coding.errors import CommandError
from xcsh.coding.events import SessionEvent
from xcsh.coding.extensions.api import (
    CommandSpec,
    Extension,
    ExtensionAPI,
    ExtensionContext,
    ExtensionSetupError,
    ExtensionUI,
    HeadlessUI,
    ToolInvocation,
    ToolSpec,
)
from xcsh.coding.extensions.loader import ExtensionLoadError, import_extension
from xcsh.coding.extensions.values import as_tool_result, content_blocks, plain_json
from xcsh.coding.messages import custom_message

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession

logger = logging.getLogger(__name__)

VETO_EVENTS = frozenset({"session_before_switch", "session_before_branch"})


@dataclass(slots=True, frozen=True)
class ExtensionError:
    """A handler, command or load failure, as the ``extension_error`` frame reports it."""

    extension_path: str
    event: str
    error: str

    def frame(self) -> dict[str, Any]:
        return {
            "type": "extension_error",
            "extensionPath": self.extension_path,
            "event": self.event,
            "error": self.error,
        }


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _is_real_cancel() -> bool:
    """Whether the running task is being cancelled (the run was aborted or abandoned).

    A ``CancelledError`` raised by extension code while nobody cancels the task (an
    extension awaited one of its own tasks that it cancelled, or raised it by hand) is
    an ordinary failure of that extension, not a cancellation of the run.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _log_error(error: ExtensionError) -> None:
    logger.warning("extension %s failed in %s: %s", error.extension_path, error.event, error.error)


def _log_action_error(command: str, message: str) -> None:
    logger.warning("%s failed: %s", command, message)


class ExtensionRunner:
    """The loaded extensions of one session and the glue between them and the session."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.extensions: list[Extension] = []
        self.ui: ExtensionUI = HeadlessUI()
        # where failures go: the RPC mode writes frames, other modes log to stderr
        self.on_error: Callable[[ExtensionError], None] = _log_error
        self.on_action_error: Callable[[str, str], None] = _log_action_error
        self.shutdown_requested = False
        self.commands: dict[str, tuple[Extension, CommandSpec]] = {}
        self._load_errors: list[ExtensionError] = []
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._started = False
        self._shut_down = False

    # ---- loading -----------------------------------------------------------------------
    def load(self, paths: Sequence[Path]) -> None:
        """Import each extension and run its ``setup``; failures are kept for :meth:`start`."""
        for path in paths:
            extension = Extension(path=str(path))
            try:
                setup = import_extension(path)
                result = setup(ExtensionAPI(self, extension))
                if inspect.isawaitable(result):
                    if inspect.iscoroutine(result):
                        result.close()
                    raise ExtensionSetupError("setup(xcsh) must be a plain function, not a coroutine")
                self._commit(extension)
            except (ExtensionLoadError, ExtensionSetupError) as exc:
                self._load_errors.append(ExtensionError(str(path), "load", _describe(exc)))
            except (Exception, asyncio.CancelledError) as exc:  # extension boundary: third-party setup()
                self._load_errors.append(ExtensionError(str(path), "load", _describe(exc)))

    def _commit(self, extension: Extension) -> None:
        self.extensions.append(extension)
        session = self.session
        if extension.tools:
            active = [*session.active_tool_names, *(spec.name for spec in extension.tools if spec.active)]
            session.update_tools(
                add=[self._make_tool(extension, spec) for spec in extension.tools], active=active
            )
        for command in extension.commands:
            # a later extension's command of the same name wins
            self.commands[command.name] = (extension, command)

    def _make_tool(self, extension: Extension, spec: ToolSpec) -> AgentTool:
        runner = self

        async def execute(
            tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
        ) -> AgentToolResult:
            def update(partial: str | dict[str, Any]) -> None:
                on_update(cast(AgentToolResult, as_tool_result(partial)))

            invocation = ToolInvocation(
                tool_call_id=tool_call_id, signal=signal, update=update, context=runner.context()
            )
            try:
                value = spec.execute(args, invocation)
                if inspect.isawaitable(value):
                    value = await value
            except asyncio.CancelledError:
                if _is_real_cancel():
                    raise
                # the extension's own CancelledError: a failure of the call, not of the run
                raise RuntimeError(f"extension tool {spec.name} raised CancelledError") from None
            return cast(AgentToolResult, as_tool_result(value))

        return AgentTool(
            name=spec.name,
            description=spec.description,
            parameters=spec.parameters,
            execute=execute,
            label=spec.label or spec.name,
            concurrency=spec.concurrency,
            meta={"extensionPath": extension.path},
        )

    # ---- lifecycle -------------------------------------------------------------------
    def context(self) -> ExtensionContext:
        return ExtensionContext(self)

    def start(self) -> None:
        """Report load failures and send ``session_start`` (called once the host is ready)."""
        if self._started:
            return
        self._started = True
        for error in self._load_errors:
            self.on_error(error)
        self._load_errors = []
        self.post({"type": "session_start"})

    async def shutdown(self) -> None:
        """Send ``session_shutdown`` once, after the events already queued."""
        if self._shut_down:
            return
        self._shut_down = True
        await self.drain()
        await self.emit({"type": "session_shutdown"})

    def shutdown_now(self) -> None:
        """Send ``session_shutdown`` at process exit, when the event loop can no longer be awaited.

        Plain handlers run to completion; a coroutine handler runs until it first
        suspends and is then abandoned with a warning.
        """
        if self._shut_down:
            return
        self._shut_down = True
        event: dict[str, Any] = {"type": "session_shutdown"}
        ctx = self.context()
        for extension, handler in self._handlers("session_shutdown"):
            try:
                result = handler(event, ctx)
                if inspect.iscoroutine(result):
                    try:
                        result.send(None)
                    except StopIteration:
                        continue
                    result.close()
                    logger.warning(
                        "session_shutdown handler of %s did not finish before exit", extension.path
                    )
            except (Exception, asyncio.CancelledError) as exc:  # extension boundary
                self.on_error(ExtensionError(extension.path, "session_shutdown", _describe(exc)))

    # ---- dispatch --------------------------------------------------------------------
    def _handlers(self, event_type: str) -> list[tuple[Extension, Callable[..., Any]]]:
        return [(ext, h) for ext in self.extensions for h in ext.handlers.get(event_type, [])]

    def has_handlers(self, event_type: str) -> bool:
        return any(event_type in ext.handlers for ext in self.extensions)

    async def _call(self, extension: Extension, handler: Callable[..., Any], event: dict[str, Any]) -> Any:
        """Run one handler; a failure is reported and returned as the exception."""
        try:
            result = handler(event, self.context())
            if inspect.isawaitable(result):
                result = await result
            return result
        except asyncio.CancelledError as exc:
            if _is_real_cancel():
                raise
            # extension code raised it without the task being cancelled: an ordinary failure
            failure = RuntimeError(_describe(exc))
            self.on_error(ExtensionError(extension.path, str(event.get("type")), _describe(failure)))
            return failure
        except Exception as exc:  # extension boundary: report and carry on
            self.on_error(ExtensionError(extension.path, str(event.get("type")), _describe(exc)))
            return exc

    async def emit(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Run every handler of ``event`` now; for veto events return the first ``{"cancel": True}``."""
        for extension, handler in self._handlers(str(event.get("type"))):
            result = await self._call(extension, handler, event)
            if event.get("type") in VETO_EVENTS and isinstance(result, dict) and result.get("cancel"):
                return result
        return None

    def post(self, event: dict[str, Any]) -> None:
        """Queue ``event`` for its handlers, behind the events posted before it."""
        if not self.has_handlers(str(event.get("type"))):
            return
        self._queue.put_nowait(event)
        if self._worker is None or self._worker.done():
            with outside_commit_gates():  # posted from inside a tool call, say: not part of it
                self._worker = asyncio.get_running_loop().create_task(self._work())

    async def _work(self) -> None:
        while not self._queue.empty():
            event = self._queue.get_nowait()
            try:
                await self.emit(event)
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Wait until every posted event has been handled."""
        await self._queue.join()

    def on_session_event(self, event: SessionEvent) -> None:
        """Session listener: forward every event that some extension handles (handlers get plain dicts)."""
        self.post(cast(dict[str, Any], event))

    # ---- tool interception -------------------------------------------------------------
    async def before_tool_call(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        """``tool_call`` handlers; a ``{"block": True}`` result (or a failure) blocks the call."""
        event = {"type": "tool_call", "toolName": call["name"], "toolCallId": call["id"], "input": args}
        for extension, handler in self._handlers("tool_call"):
            result = await self._call(extension, handler, event)
            if isinstance(result, Exception):
                return f"Extension {extension.path} failed: {_describe(result)}"
            if isinstance(result, dict) and result.get("block"):
                reason = result.get("reason")
                return str(reason) if reason else "Tool execution was blocked by an extension"
        return None

    async def after_tool_call(
        self, call: ToolCall, result: AgentToolResult, is_error: bool
    ) -> AgentToolResult | None:
        """``tool_result`` handlers may replace ``content`` and ``details``; later ones see the change."""
        if not self.has_handlers("tool_result"):
            return None
        event: dict[str, Any] = {
            "type": "tool_result",
            "toolName": call["name"],
            "toolCallId": call["id"],
            "input": split_args(call),
            "content": result.get("content", []),
            "details": result.get("details"),
            "isError": is_error,
        }
        changed = False
        for extension, handler in self._handlers("tool_result"):
            answer = await self._call(extension, handler, event)
            if not isinstance(answer, dict):
                continue
            update: dict[str, Any] = {}
            try:
                if answer.get("content") is not None:
                    update["content"] = content_blocks(answer["content"], "tool_result content")
                if answer.get("details") is not None:
                    update["details"] = plain_json(answer["details"])
            except TypeError as exc:  # a malformed reply is reported and ignored as a whole
                self.on_error(ExtensionError(extension.path, "tool_result", str(exc)))
                continue
            event.update(update)
            changed = changed or bool(update)
        if not changed:
            return None
        replaced: dict[str, Any] = {"content": list(event["content"]), "details": event["details"]}
        return cast(AgentToolResult, replaced)

    # ---- session vetoes ----------------------------------------------------------------
    async def before_switch(self, reason: str, target: str | None) -> bool:
        event: dict[str, Any] = {"type": "session_before_switch", "reason": reason}
        if target is not None:
            event["targetSessionFile"] = target
        return await self.emit(event) is not None

    async def before_branch(self, reason: str, target: str | None) -> bool:
        event: dict[str, Any] = {"type": "session_before_branch"}
        if target is not None:
            event["entryId"] = target
        return await self.emit(event) is not None

    def on_session_change(self, reason: str) -> None:
        if reason == "branch":
            self.post({"type": "session_branch"})
        else:
            self.post({"type": "session_switch", "reason": reason})

    # ---- commands ----------------------------------------------------------------------
    async def run_command(self, text: str) -> None:
        """Run the extension command ``text`` names; a failure becomes ``command:<name>`` error."""
        name, args = command_parts(text)
        entry = self.commands.get(name)
        if entry is None:
            return
        try:
            result = entry[1].handler(args, self.context())
            if inspect.isawaitable(result):
                await result
        except asyncio.CancelledError as exc:
            if _is_real_cancel():
                raise
            self.on_error(ExtensionError(f"command:{name}", "command", _describe(exc)))
        except Exception as exc:  # extension boundary: report and carry on
            self.on_error(ExtensionError(f"command:{name}", "command", _describe(exc)))

    # ---- actions -----------------------------------------------------------------------
    def _spawn(self, coro: Any, command: str) -> None:
        async def guarded() -> None:
            try:
                await coro
            except Exception as exc:  # action boundary: reported as a response without id
                self.on_action_error(command, _describe(exc))

        with outside_commit_gates():  # an extension's action is no tool call's, even when one starts it
            task = asyncio.ensure_future(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def send_message(
        self,
        custom_type: str,
        content: str | list[dict[str, Any]],
        *,
        display: bool,
        details: Any,
        trigger_turn: bool,
        deliver_as: Literal["steer", "followUp", "nextTurn"] | None,
    ) -> None:
        # a list is checked here, so the extension's own call raises the TypeError
        body: str | list[UserContent] = (
            content
            if isinstance(content, str)
            else cast(list[UserContent], content_blocks(content, "send_message content"))
        )
        message: AgentMessage = custom_message(
            custom_type, body, display=display, details=plain_json(details)
        )
        session = self.session
        if session.is_streaming:
            if deliver_as == "nextTurn":
                session.queue_hidden_next_turn(message)
            elif deliver_as == "followUp":
                session.queue_follow_up(message)
            else:
                session.queue_steer(message)
            return
        if trigger_turn:
            self._spawn(session.run_chain_now([message]), "extension_send")
            return
        session.append_message(message)

    def send_user_message(
        self, content: str | list[UserContent], *, deliver_as: Literal["steer", "followUp"] | None
    ) -> None:
        text, images = split_content(content)
        session = self.session
        try:
            if session.is_streaming and deliver_as == "steer":
                session.steer(text, images)
                return
            if session.is_streaming and deliver_as == "followUp":
                session.follow_up(text, images)
                return
            with outside_commit_gates():  # the run is no tool call's (see _spawn)
                task = session.start_prompt(text, images, deliver_as)
        except (CommandError, ValueError) as exc:
            self.on_action_error("extension_send_user", _describe(exc))
            return
        if task is not None:
            self._spawn(task, "extension_send_user")


def command_parts(text: str) -> tuple[str, str]:
    """``"/name rest"`` → ``("name", "rest")``."""
    parts = text[1:].split(maxsplit=1)
    if not parts:
        return "", ""
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


def split_args(call: ToolCall) -> dict[str, Any]:
    """A tool call's arguments without the injected intent field."""
    return {k: v for k, v in (call.get("arguments") or {}).items() if k != "_i"}


def split_content(content: str | list[UserContent]) -> tuple[str, list[ImageContent] | None]:
    """Text and images of a user message's content (text blocks joined by newlines)."""
    if isinstance(content, str):
        return content, None
    blocks = cast(list[UserContent], content_blocks(content, "send_user_message content"))
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    images = [b for b in blocks if b["type"] == "image"]
    return "\n".join(texts), images or None
