"""Warm the current model's provider once the host has gone quiet, and again after a model change.

See :mod:`xcsh.ai.warm`. Warming starts when no command has been answered for
:data:`QUIET_S` since the server became ready or answered its last command: an import in
the warm-up thread holds the interpreter lock in long stretches, so a host that sends
commands back to back right after start-up (a burst of ``get_state``) would otherwise
wait on it (docs/performance.md, profile 17). A prompt that arrives first imports what it
needs itself, as before. ``XCSH_WARM=0`` in the environment turns warming off;
``XCSH_WARM_QUIET_MS`` sets the quiet period (default 50).

Nothing is warmed while a prompt or run chain is in flight (the session ``is_streaming``): a
prompt written at once imports what its request needs itself, and imports running beside it
would only delay its first token (docs/performance.md, "Fourth session: first prompt"); the
warm-up waits for the first quiet moment after the run.

The same quiet moment also imports what the first ``get_state`` answer did not need
(:data:`DEFERRED`: the agent loop, the commands' TypedDicts and their validation, compaction's
checks, the built-in tools' implementations, the tool-argument validator (``jsonschema``);
docs/performance.md, profile 19): one module per turn of the event loop, so a command that
arrives meanwhile waits for at most one module's import. After the last one the process makes
itself non-dumpable (:func:`xcsh.coding.secrets.forbid_dumps`; the first tool process would
otherwise do it).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
from typing import TYPE_CHECKING

from xcsh.coding.tools import IMPLEMENTATIONS

if TYPE_CHECKING:
    from xcsh.modes.rpc.server import RpcServer

logger = logging.getLogger(__name__)

QUIET_S = 0.05
# imported on first use, or here once the host is quiet (what a prompt needs first, then what
# its first tool call needs: tool execution and the partial JSON of the call's arguments)
DEFERRED: tuple[str, ...] = (
    "xcsh.agent.loop",
    "xcsh.rpc.validation",  # a command with fields is checked against its TypedDict
    "xcsh.rpc.commands",
    "json",  # session lines are written with it (inbound frames need it only when msgspec refuses one)
    "xcsh.coding.file_mentions",  # a prompt's @file mentions
    "xcsh.agent.tool_calls",
    "xcsh.ai.partial_json",
    "xcsh.coding.compaction.prune",
    "xcsh.coding.compaction.tokens",
    "xcsh.coding.compaction.facts",
    *IMPLEMENTATIONS,
    # the tool-argument validator (xcsh.agent.validation), ~30 ms of CPU on a first tool call:
    # imported in four steps of ~7 ms, each in its own loop turn
    "attrs",
    "referencing",
    "jsonschema_specifications",
    "jsonschema",
)


def _quiet_s() -> float:
    raw = os.environ.get("XCSH_WARM_QUIET_MS", "")
    try:
        return max(0.0, float(raw) / 1000) if raw else QUIET_S
    except ValueError:
        return QUIET_S


def wire(server: RpcServer) -> None:
    if os.environ.get("XCSH_WARM", "1") == "0":
        return
    quiet = _quiet_s()
    last_answer = 0.0
    timer: asyncio.TimerHandle | None = None
    deferred_left = list(DEFERRED)
    deferred_importing = False

    def start() -> None:
        nonlocal deferred_importing
        model = server.session.model
        if model.get("api"):
            from xcsh.ai.warm import warm_in_background  # once the host is quiet, not at start-up

            warm_in_background(model["api"], model.get("baseUrl") or "")  # once per api; cheap after
        if deferred_left and not deferred_importing:
            deferred_importing = True
            asyncio.get_running_loop().call_soon(import_deferred)

    def import_deferred() -> None:
        nonlocal deferred_importing
        if server.session.is_streaming:
            # a run started meanwhile: it imports what it needs; the rest waits for the next quiet
            deferred_importing = False
            return
        name = deferred_left.pop(0)
        try:
            importlib.import_module(name)
        except Exception:  # best effort, like the provider warm-up: its first use reports the problem
            logger.debug("warm-up could not import %s", name, exc_info=True)
        if deferred_left:
            asyncio.get_running_loop().call_soon(import_deferred)
        else:
            from xcsh.coding.secrets import forbid_dumps

            forbid_dumps()  # after what a prompt needs: the ctypes import (~2 ms) is last

    def when_quiet() -> None:
        nonlocal timer
        loop = asyncio.get_running_loop()
        left = last_answer + quiet - loop.time()
        if left > 0:
            timer = loop.call_later(left, when_quiet)
            return
        if server.session.is_streaming:
            # a prompt is in flight: warming now would compete with its request and first
            # tokens (its own imports are done by then or under way); look again later
            timer = loop.call_later(quiet or QUIET_S, when_quiet)
            return
        timer = None
        start()

    def answered() -> None:
        # set_model / cycle_model may have changed the api: checked once the host is quiet
        nonlocal last_answer, timer
        loop = asyncio.get_running_loop()
        last_answer = loop.time()
        if timer is None:
            timer = loop.call_later(quiet, when_quiet)

    server.on_ready.append(answered)
    server.after_response.append(answered)
