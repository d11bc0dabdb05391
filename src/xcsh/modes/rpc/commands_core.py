"""Handlers for prompting, state, models, thinking and queue modes (rpc-protocol §5.1–§5.5).

Each handler is a thin adapter: read the command's fields, call one session operation,
shape the response (:mod:`xcsh.modes.rpc.shapes`). Rules live in the session core.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from xcsh.coding.errors import PROMPT_ABORTED_TEXT, CommandError, PromptAborted
from xcsh.coding.secrets import public_model
from xcsh.modes.rpc.shapes import cycle_payload, encoded_state

if TYPE_CHECKING:
    from xcsh.ai.types import ImageContent
    from xcsh.modes.rpc.server import Handler, InstantHandler, RpcServer
    from xcsh.rpc import commands as c

from xcsh.modes.rpc.server import HANDLED, NO_DATA


def _start(
    server: RpcServer,
    command: str,
    cid: Any,
    text: str,
    images: list[ImageContent] | None,
    behavior: str | None,
    *,
    aborted: bool = False,
) -> None:
    """Start a prompt; failures (now or later) are answered with the same id and command.

    ``aborted``: an abort came after the prompt was written and has already run; the prompt is
    not started, and its late error says so (as for one aborted while waiting for its run).
    """
    try:
        task: asyncio.Future[None] | None
        if aborted:
            task = never_run = asyncio.get_running_loop().create_future()
            never_run.set_exception(PromptAborted(PROMPT_ABORTED_TEXT))
        else:
            task = server.session.start_prompt(text, images, behavior)
    except CommandError as exc:
        server.respond(command, cid, error=str(exc))
        for listener in server.prompt_started:
            listener(command, cid, None, str(exc))
        return
    if task is None:
        for listener in server.prompt_started:
            listener(command, cid, None, None)
        return

    def done(t: asyncio.Future[None]) -> None:
        if t.cancelled():
            return
        exc = t.exception()
        if exc is not None:
            server.respond(command, cid, error=str(exc) or type(exc).__name__)

    task.add_done_callback(done)
    # after ``done``: a late failure's error response comes before any settled frame
    for listener in server.prompt_started:
        listener(command, cid, task, None)
    server.spawn(task)


def start_prompt(server: RpcServer, cmd: c.PromptCommand) -> Any:
    """``prompt``, which never waits: answered and its run started in the turn that reads it
    when nothing is queued (server.instant), else in its turn like any command."""
    aborted = server.read_before_abort  # written before an abort that has already run
    text = cmd["message"]
    images = cmd.get("images")
    behavior = cmd.get("streamingBehavior")
    locale = cmd.get("locale")
    if locale and not aborted:
        server.session.set_locale(locale)
    server.respond("prompt", cmd.get("id"))
    _start(server, "prompt", cmd.get("id"), text, images, behavior, aborted=aborted)
    return HANDLED


async def prompt(server: RpcServer, cmd: c.PromptCommand) -> Any:
    return start_prompt(server, cmd)


async def steer(server: RpcServer, cmd: c.SteerCommand) -> Any:
    server.session.steer(cmd["message"], cmd.get("images"))
    return NO_DATA


async def follow_up(server: RpcServer, cmd: c.FollowUpCommand) -> Any:
    server.session.follow_up(cmd["message"], cmd.get("images"))
    return NO_DATA


async def abort(server: RpcServer, cmd: c.AbortCommand) -> Any:
    await server.session.abort()
    return NO_DATA


async def abort_and_prompt(server: RpcServer, cmd: c.AbortAndPromptCommand) -> Any:
    aborted = server.read_before_abort  # written before an abort that has already run
    text = cmd["message"]
    images = cmd.get("images")
    if not aborted:
        await server.session.abort()
    server.respond("abort_and_prompt", cmd.get("id"))
    _start(server, "abort_and_prompt", cmd.get("id"), text, images, None, aborted=aborted)
    return HANDLED


def state(server: RpcServer, cmd: c.GetStateCommand) -> Any:
    """``get_state``, which never waits: answered at once when nothing is queued (server.instant)."""
    return encoded_state(server.session, server.message_updates)


async def get_state(server: RpcServer, cmd: c.GetStateCommand) -> Any:
    return state(server, cmd)


async def get_messages(server: RpcServer, cmd: c.GetMessagesCommand) -> Any:
    return {"messages": list(server.session.messages)}


async def set_model(server: RpcServer, cmd: c.SetModelCommand) -> Any:
    return public_model(server.session.set_model(cmd["provider"], cmd["modelId"]))


async def cycle_model(server: RpcServer, cmd: c.CycleModelCommand) -> Any:
    return cycle_payload(server.session.cycle_model())


async def get_available_models(server: RpcServer, cmd: c.GetAvailableModelsCommand) -> Any:
    return {"models": [public_model(m) for m in server.session.registry.available_models()]}


async def set_thinking_level(server: RpcServer, cmd: c.SetThinkingLevelCommand) -> Any:
    server.session.apply_thinking_level(cmd["level"])
    return NO_DATA


async def cycle_thinking_level(server: RpcServer, cmd: c.CycleThinkingLevelCommand) -> Any:
    level = server.session.cycle_thinking_level()
    return None if level is None else {"level": level}


async def set_steering_mode(server: RpcServer, cmd: c.SetSteeringModeCommand) -> Any:
    server.session.set_steering_mode(cmd["mode"])
    return NO_DATA


async def set_follow_up_mode(server: RpcServer, cmd: c.SetFollowUpModeCommand) -> Any:
    server.session.set_follow_up_mode(cmd["mode"])
    return NO_DATA


async def set_interrupt_mode(server: RpcServer, cmd: c.SetInterruptModeCommand) -> Any:
    server.session.set_interrupt_mode(cmd["mode"])
    return NO_DATA


async def set_auto_compaction(server: RpcServer, cmd: c.SetAutoCompactionCommand) -> Any:
    server.session.set_auto_compaction(cmd["enabled"])
    return NO_DATA


async def set_auto_retry(server: RpcServer, cmd: c.SetAutoRetryCommand) -> Any:
    server.session.set_auto_retry(cmd["enabled"])
    return NO_DATA


async def get_integrations(server: RpcServer, cmd: c.GetIntegrationsCommand) -> Any:
    from xcsh.version import __version__

    model = server.session.model
    return {
        "version": __version__,
        "model": {"state": "connected", "provider": model["provider"]},
        "services": [],
    }


async def set_locale(server: RpcServer, cmd: c.SetLocaleCommand) -> Any:
    server.session.set_locale(cmd["locale"])
    return NO_DATA


INSTANT: dict[str, InstantHandler] = {"get_state": state, "prompt": start_prompt}

HANDLERS: dict[str, Handler] = {
    "prompt": prompt,
    "steer": steer,
    "follow_up": follow_up,
    "abort": abort,
    "abort_and_prompt": abort_and_prompt,
    "get_state": get_state,
    "get_messages": get_messages,
    "set_model": set_model,
    "cycle_model": cycle_model,
    "get_available_models": get_available_models,
    "set_thinking_level": set_thinking_level,
    "cycle_thinking_level": cycle_thinking_level,
    "set_steering_mode": set_steering_mode,
    "set_follow_up_mode": set_follow_up_mode,
    "set_interrupt_mode": set_interrupt_mode,
    "set_auto_compaction": set_auto_compaction,
    "set_auto_retry": set_auto_retry,
    "get_integrations": get_integrations,
    "set_locale": set_locale,
}
