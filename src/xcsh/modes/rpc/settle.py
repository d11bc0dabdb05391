"""Opt-in ``settled`` frames (``--protocol-fixes``): one per prompt, steer and follow-up id.

``{"type":"settled","id":…,"command":"prompt"|"steer"|"follow_up"|"abort_and_prompt",
"outcome":"completed"|"aborted"|"error"|"cleared"[,"error":…]}`` is written once the run
chain that carried the message has ended (after its last ``agent_end``):

- a prompt that starts a run settles when its run chain ends; one refused at once (busy,
  no API key) settles ``error`` right after its error response;
- a steer, a follow-up, or a prompt queued with ``streamingBehavior`` settles when the chain
  started by a prompt command that consumed it ends (a steer sent while idle waits for the
  next prompt); one dropped by ``clear_queue`` settles ``cleared``.

The outcome is that of the chain's last assistant message: ``aborted`` (stop reason
``aborted``), ``error`` (stop reason ``error``, with its ``errorMessage``) or ``completed``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xcsh.agent.types import AgentMessage
from xcsh.coding.errors import PromptAborted
from xcsh.coding.messages import last_assistant

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import Handler, RpcServer


@dataclass(slots=True)
class _Waiting:
    command: str
    cid: Any
    message: AgentMessage | None


class Settler:
    """Tracks prompt-like commands until their run chain ends and writes their ``settled`` frame."""

    def __init__(self, server: RpcServer) -> None:
        self.server = server
        self.waiting: list[_Waiting] = []

    # ---- frames ----------------------------------------------------------------------
    def settle(self, command: str, cid: Any, outcome: str, error: str | None = None) -> None:
        frame: dict[str, Any] = {"type": "settled"}
        if cid is not None:
            frame["id"] = cid
        frame["command"] = command
        frame["outcome"] = outcome
        if error is not None:
            frame["error"] = error
        self.server.write(frame)

    # ---- tracking --------------------------------------------------------------------
    def _queued(self) -> list[AgentMessage]:
        steering, follow_ups = self.server.session.queued_messages()
        return [*steering, *follow_ups]

    def _last_queued(self) -> AgentMessage | None:
        queued = self._queued()
        return queued[-1] if queued else None

    def queued(self, command: str, cid: Any) -> None:
        """A steer/follow-up (or a queued prompt) was just accepted: wait for the chain that takes it."""
        self.waiting.append(_Waiting(command, cid, self._last_queued()))

    def prompt_started(
        self, command: str, cid: Any, task: asyncio.Future[None] | None, failed: str | None
    ) -> None:
        if failed is not None:
            self.settle(command, cid, "error", failed)
            return
        if task is None:
            self.queued(command, cid)
            return
        start = len(self.server.session.messages)
        task.add_done_callback(lambda t: self._chain_done(t, command, cid, start))

    def _chain_done(self, task: asyncio.Future[None], command: str, cid: Any, start: int) -> None:
        outcome, error = self._outcome(task, start)
        self.settle(command, cid, outcome, error)
        still = {id(m) for m in self._queued()}
        keep: list[_Waiting] = []
        for item in self.waiting:
            if item.message is not None and id(item.message) in still:
                keep.append(item)
            else:
                self.settle(item.command, item.cid, outcome, error)
        self.waiting = keep

    def _outcome(self, task: asyncio.Future[None], start: int) -> tuple[str, str | None]:
        if task.cancelled():
            return "aborted", None
        exc = task.exception()
        if isinstance(exc, PromptAborted):  # aborted before its run started (its error response said so)
            return "aborted", None
        if exc is not None:
            return "error", str(exc) or type(exc).__name__
        added = self.server.session.messages[start:]
        last = last_assistant(added)
        reason = last.get("stopReason") if last is not None else None
        if reason == "aborted":
            return "aborted", None
        if reason == "error" and last is not None:
            return "error", str(last.get("errorMessage") or "error")
        return "completed", None

    def cleared(self) -> None:
        """After ``clear_queue``: whatever is no longer queued settles ``cleared``."""
        still = {id(m) for m in self._queued()}
        keep = []
        for item in self.waiting:
            if item.message is not None and id(item.message) not in still:
                self.settle(item.command, item.cid, "cleared")
            else:
                keep.append(item)
        self.waiting = keep


def _after(handler: Handler, then: Any) -> Handler:
    async def wrapped(server: RpcServer, cmd: dict[str, Any]) -> Any:
        result = await handler(server, cmd)
        then(cmd)
        return result

    return wrapped


def install(server: RpcServer) -> None:
    """Turn the settle frames on for ``server`` (called only with ``--protocol-fixes``)."""
    settler = Settler(server)
    server.prompt_started.append(settler.prompt_started)
    for name in ("steer", "follow_up"):
        handler = server.handlers.get(name)
        if handler is not None:
            server.handlers[name] = _after(
                handler, lambda cmd, name=name: settler.queued(name, cmd.get("id"))
            )
    clear = server.handlers.get("clear_queue")
    if clear is not None:
        server.handlers["clear_queue"] = _after(clear, lambda cmd: settler.cleared())
