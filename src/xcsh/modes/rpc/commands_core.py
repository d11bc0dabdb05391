"""Handlers for prompting, state, models, thinking and queue modes (rpc-protocol §5.1–§5.5)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from xcsh.agent.queue import normalize_queue_mode
from xcsh.ai.thinking import next_level, parse_level
from xcsh.ai.types import THINKING_LEVELS, Model
from xcsh.coding.errors import CommandError
from xcsh.coding.secrets import public_model
from xcsh.coding.session import model_ref
from xcsh.modes.rpc.fields import opt_images, opt_str, req_bool, req_str
from xcsh.modes.rpc.updates import EncodedOnce

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession
    from xcsh.modes.rpc.server import Handler, RpcServer

from xcsh.modes.rpc.server import HANDLED, NO_DATA


def _start(server: RpcServer, command: str, cid: Any, text: str, images: Any, behavior: str | None) -> None:
    """Start a prompt; failures (now or later) are answered with the same id and command."""
    try:
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

    def done(t: asyncio.Task[None]) -> None:
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


async def prompt(server: RpcServer, cmd: dict[str, Any]) -> Any:
    text = req_str(cmd, "message")
    images = opt_images(cmd)
    behavior = opt_str(cmd, "streamingBehavior")
    locale = opt_str(cmd, "locale")
    if locale:
        server.session.set_locale(locale)
    server.respond("prompt", cmd.get("id"))
    _start(server, "prompt", cmd.get("id"), text, images, behavior)
    return HANDLED


async def steer(server: RpcServer, cmd: dict[str, Any]) -> Any:
    server.session.steer(req_str(cmd, "message"), opt_images(cmd))
    return NO_DATA


async def follow_up(server: RpcServer, cmd: dict[str, Any]) -> Any:
    server.session.follow_up(req_str(cmd, "message"), opt_images(cmd))
    return NO_DATA


async def abort(server: RpcServer, cmd: dict[str, Any]) -> Any:
    await server.session.abort()
    return NO_DATA


async def abort_and_prompt(server: RpcServer, cmd: dict[str, Any]) -> Any:
    text = req_str(cmd, "message")
    images = opt_images(cmd)
    await server.session.abort()
    server.respond("abort_and_prompt", cmd.get("id"))
    _start(server, "abort_and_prompt", cmd.get("id"), text, images, None)
    return HANDLED


_system_prompt = EncodedOnce()
_dump_tools = EncodedOnce()


async def get_state(server: RpcServer, cmd: dict[str, Any]) -> Any:
    data = server.session.state()
    # the large, rarely changing parts are encoded once (see EncodedOnce)
    if "systemPrompt" in data:
        data["systemPrompt"] = _system_prompt(data["systemPrompt"])
    if "dumpTools" in data:
        data["dumpTools"] = _dump_tools(data["dumpTools"])
    data["messageUpdates"] = server.message_updates
    return data


async def get_messages(server: RpcServer, cmd: dict[str, Any]) -> Any:
    return {"messages": server.session.messages}


async def set_model(server: RpcServer, cmd: dict[str, Any]) -> Any:
    provider = req_str(cmd, "provider")
    model_id = req_str(cmd, "modelId")
    session = server.session
    model = next(
        (m for m in session.registry.available_models() if m["provider"] == provider and m["id"] == model_id),
        None,
    )
    if model is None:
        raise CommandError(f"Model not found: {provider}/{model_id}")
    session.switch_model(model)
    _remember_default(session, model)
    return public_model(model)


def _remember_default(session: AgentSession, model: Model) -> None:
    """Record ``model`` as the default model of later processes (setting ``modelRoles.default``).

    An explicit ``:level`` of the previous value is kept, as the reference does.
    """
    value = model_ref(model)
    previous = session.settings.get("modelRoles.default")
    if isinstance(previous, str):
        _, colon, suffix = previous.rpartition(":")
        if colon and parse_level(suffix) is not None:
            value = f"{value}:{suffix}"
    session.settings.set("modelRoles.default", value)


async def cycle_model(server: RpcServer, cmd: dict[str, Any]) -> Any:
    session = server.session
    scoped = [
        (m, level)
        for m, level in session.config.scoped_models
        if session.registry.api_key_for(m["provider"]) or session.registry.is_keyless(m["provider"])
    ]
    current = session.model
    if scoped:
        if len(scoped) < 2:
            return None
        index = next(
            (
                i
                for i, (m, _) in enumerate(scoped)
                if m["provider"] == current["provider"] and m["id"] == current["id"]
            ),
            0,
        )
        model, level = scoped[(index + 1) % len(scoped)]
        # the scoped model's own level, applied as is: unset stays unset (omitted below)
        session.switch_model(model, level)
        _remember_default(session, model)
        data: dict[str, Any] = {"model": public_model(model)}
        if session.thinking_level is not None:
            data["thinkingLevel"] = session.thinking_level
        data["isScoped"] = True
        return data
    models = session.registry.available_models()
    if len(models) < 2:
        return None
    index = next(
        (
            i
            for i, m in enumerate(models)
            if m["provider"] == current["provider"] and m["id"] == current["id"]
        ),
        0,
    )
    model = models[(index + 1) % len(models)]
    session.switch_model(model)
    _remember_default(session, model)
    data = {"model": public_model(model)}
    if session.thinking_level is not None:
        data["thinkingLevel"] = session.thinking_level
    data["isScoped"] = False
    return data


async def get_available_models(server: RpcServer, cmd: dict[str, Any]) -> Any:
    return {"models": [public_model(m) for m in server.session.registry.available_models()]}


async def set_thinking_level(server: RpcServer, cmd: dict[str, Any]) -> Any:
    level = cmd.get("level")
    if level not in THINKING_LEVELS:
        raise CommandError(f"Invalid thinking level: {level}. Valid levels: {', '.join(THINKING_LEVELS)}")
    server.session.apply_thinking_level(level)
    return NO_DATA


async def cycle_thinking_level(server: RpcServer, cmd: dict[str, Any]) -> Any:
    session = server.session
    level = next_level(session.model, session.thinking_level)
    if level is None:
        return None
    session.apply_thinking_level(level)
    return {"level": session.thinking_level or "off"}


async def set_steering_mode(server: RpcServer, cmd: dict[str, Any]) -> Any:
    mode = cmd.get("mode")
    server.session.agent.steering.mode = normalize_queue_mode(mode)
    server.session.settings.set("steeringMode", mode)
    return NO_DATA


async def set_follow_up_mode(server: RpcServer, cmd: dict[str, Any]) -> Any:
    mode = cmd.get("mode")
    server.session.agent.follow_ups.mode = normalize_queue_mode(mode)
    server.session.settings.set("followUpMode", mode)
    return NO_DATA


async def set_interrupt_mode(server: RpcServer, cmd: dict[str, Any]) -> Any:
    mode = cmd.get("mode")
    server.session.agent.interrupt_mode = "wait" if mode == "wait" else "immediate"
    server.session.settings.set("interruptMode", mode)
    return NO_DATA


async def set_auto_compaction(server: RpcServer, cmd: dict[str, Any]) -> Any:
    enabled = req_bool(cmd, "enabled")
    settings = server.session.settings
    settings.set("compaction.enabled", enabled)
    if enabled and settings.get("compaction.strategy") == "off":
        settings.set("compaction.strategy", "context-full")
    return NO_DATA


async def set_auto_retry(server: RpcServer, cmd: dict[str, Any]) -> Any:
    server.session.settings.set("retry.enabled", req_bool(cmd, "enabled"))
    return NO_DATA


async def get_integrations(server: RpcServer, cmd: dict[str, Any]) -> Any:
    from xcsh import __version__

    model = server.session.model
    return {
        "version": __version__,
        "model": {"state": "connected", "provider": model["provider"]},
        "services": [],
    }


async def set_locale(server: RpcServer, cmd: dict[str, Any]) -> Any:
    server.session.set_locale(req_str(cmd, "locale"))
    return NO_DATA


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
