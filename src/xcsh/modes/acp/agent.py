"""The ACP agent: one xcsh session per ACP session, events streamed as ``session/update``.

- ``initialize`` advertises ``loadSession`` and image / embedded-context prompts;
- ``session/new`` builds a session for the given cwd (the command line's model, tools and
  flags apply); ``session/load`` reopens a stored session by id or id prefix and replays it.
  A loaded session is known by the id the client used (its updates carry that id); ids are
  never taken as file paths, and ``cwd`` must be an absolute path of an existing directory;
- ``session/prompt`` runs one prompt to the end of its run chain, streaming updates, and
  answers with the stop reason (``end_turn``, ``max_tokens``, ``cancelled``); a model error
  fails the request with the error text;
- ``session/cancel`` aborts the run (a pending approval is cancelled with it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import msgspec
from acp import PROTOCOL_VERSION, Client, RequestError
from acp.helpers import update_available_commands
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandInput,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    UnstructuredCommandInput,
)

from xcsh.ai.types import ImageContent
from xcsh.coding.approvals import approval_gate_for
from xcsh.coding.errors import BusyError, CommandError, PromptAborted
from xcsh.coding.extensions.feature import runner_for
from xcsh.coding.factory import StartupError, StartupOptions
from xcsh.coding.messages import last_assistant
from xcsh.coding.session import AgentSession
from xcsh.coding.sessions.listing import is_path_argument
from xcsh.modes.acp.ui import AcpUI
from xcsh.modes.acp.updates import from_event, from_history
from xcsh.version import __version__

logger = logging.getLogger(__name__)

Builder = Callable[[StartupOptions], AgentSession]


class _Live:
    """One open ACP session: the xcsh session and the pump that sends its events in order."""

    def __init__(self, session: AgentSession, session_id: str, client: Client) -> None:
        self.session = session
        self.session_id = session_id
        self.client = client
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.cancelled = False
        # the ACP translation reads events as plain dicts
        self.unsubscribe = session.subscribe(lambda event: self.queue.put_nowait(cast(dict[str, Any], event)))
        self.pump = asyncio.ensure_future(self._pump())
        self.background: asyncio.Future[None] | None = None

    async def _pump(self) -> None:
        while True:
            event = await self.queue.get()
            try:
                for update in from_event(event):
                    await self.client.session_update(session_id=self.session_id, update=update)
            except Exception:  # a failed notification must not stop later ones
                logger.debug("session_update failed", exc_info=True)
            finally:
                self.queue.task_done()

    async def close(self) -> None:
        """Stop forwarding events and shut the session down (a rewrite of its file in progress
        is waited for off the event loop)."""
        self.unsubscribe()
        self.pump.cancel()
        await self.session.shutdown_async()


def _checked_cwd(cwd: str) -> Path:
    """``cwd`` of ``session/new``/``session/load``: ACP requires an absolute path; it must
    also be an existing directory (every tool would fail in a missing one)."""
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"message": f"cwd must be an absolute path: {cwd!r}"})
    if not path.is_dir():
        raise RequestError.invalid_params({"message": f"cwd is not an existing directory: {cwd!r}"})
    return path


def _prompt_input(blocks: list[Any]) -> tuple[str, list[ImageContent] | None]:
    """Text (with embedded resources and links as context) and images of an ACP prompt."""
    parts: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            images.append({"type": "image", "data": block.data, "mimeType": block.mime_type})
        elif kind == "resource_link":
            parts.append(f"@{block.uri}")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(f'<context uri="{resource.uri}">\n{text}\n</context>')
    return "\n".join(parts), images or None


class XcshAcpAgent:
    """Implements the SDK's ``acp.Agent`` interface over xcsh sessions."""

    def __init__(self, base: StartupOptions, build: Builder) -> None:
        self.base = base
        self.build = build
        self.client: Client | None = None
        self.sessions: dict[str, _Live] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
            ),
            agent_info=Implementation(name="xcsh", title="xcsh", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def _open(self, cwd: str, session: str | None) -> _Live:
        """Build (``session`` None) or load the session; it is registered under the id the
        client will use: the new session's id, or for a load the ``sessionId`` as sent (an
        id prefix stays the prefix). Another open session on the same file is closed."""
        assert self.client is not None
        directory = _checked_cwd(cwd)
        if session is not None and (is_path_argument(session) or not session.strip()):
            raise RequestError.invalid_params({"message": f"Not a session id: {session!r}"})
        options = msgspec.structs.replace(self.base, cwd=directory, session=session, continue_session=False)
        try:
            built = self.build(options)
        except StartupError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from exc
        session_id = session if session is not None else built.store.session_id
        live = _Live(built, session_id, self.client)
        ui = AcpUI(self.client.request_permission, session_id)
        gate = approval_gate_for(built)
        if gate is not None:
            gate.ui = ui
        runner = runner_for(built)
        if runner is not None:
            runner.ui = ui
        full_id = built.store.session_id
        for key, previous in list(self.sessions.items()):
            if key == session_id or previous.session.store.session_id == full_id:
                del self.sessions[key]
                await previous.close()
        self.sessions[session_id] = live
        return live

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        live = await self._open(cwd, None)
        self._announce_commands(live)
        return NewSessionResponse(session_id=live.session_id)

    def _announce_commands(self, live: _Live) -> None:
        """Tell the editor the session's slash commands (sent just after the session exists)."""
        commands = [
            AvailableCommand(
                name=info.name,
                description=info.description or info.name,
                input=AvailableCommandInput(UnstructuredCommandInput(hint=info.argument_hint))
                if info.argument_hint
                else None,
            )
            for info in live.session.commands.list()
        ]
        if commands and self.client is not None:
            update = update_available_commands(commands)
            live.background = asyncio.ensure_future(
                self.client.session_update(session_id=live.session_id, update=update)
            )

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        live = await self._open(cwd, session_id)
        assert self.client is not None
        for update in from_history(live.session.messages):
            await self.client.session_update(session_id=live.session_id, update=update)
        self._announce_commands(live)
        return LoadSessionResponse()

    def _live(self, session_id: str) -> _Live:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"message": f"Unknown session: {session_id}"})
        return live

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        text, images = _prompt_input(prompt)
        live.cancelled = False
        before = len(live.session.messages)
        try:
            task = live.session.start_prompt(text, images)
        except BusyError as exc:
            raise RequestError.invalid_request({"message": str(exc)}) from exc
        except CommandError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from exc
        if task is not None:
            try:
                await task
            except PromptAborted:  # cancelled before its run started
                return PromptResponse(stop_reason="cancelled")
        await live.queue.join()
        if live.cancelled:
            return PromptResponse(stop_reason="cancelled")
        added = live.session.messages[before:]
        last = last_assistant(added)
        reason = last.get("stopReason") if last is not None else None
        if reason == "aborted":
            return PromptResponse(stop_reason="cancelled")
        if reason == "error" and last is not None:
            raise RequestError.internal_error({"message": str(last.get("errorMessage") or "model error")})
        return PromptResponse(stop_reason="max_tokens" if reason == "length" else "end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is None:
            return
        live.cancelled = True
        await live.session.abort()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close(self) -> None:
        """Shut every session down (at the end of input)."""
        for live in self.sessions.values():
            await live.close()
        self.sessions.clear()
