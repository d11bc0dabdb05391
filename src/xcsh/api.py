"""The in-process API: the RPC protocol's commands and events without a subprocess.

::

    import xcsh

    async with xcsh.open_session(cwd="/path/to/project", args=["--model", "anthropic/claude-sonnet-4"]) as session:
        events = await session.prompt_and_wait("What does this project do?")
        print(await session.get_last_assistant_text())

:func:`open_session` runs the same command core as ``xcsh --mode rpc`` (every handler,
the same validation, the same frames, JSON-encoded and decoded as on the wire) in the
caller's event loop; the object it yields is the typed RPC client
(:class:`xcsh.rpc.client.RpcClient`) connected to that core instead of a process, so code
written against one works with the other. docs/in-process.md describes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from xcsh.rpc.client import RpcClient

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession
    from xcsh.modes.rpc.memory import MemoryProcess

logger = logging.getLogger(__name__)


class Session(RpcClient):
    """An :class:`RpcClient` whose "process" is the command core running in this event loop."""

    @property
    def core(self) -> AgentSession:
        """The live session object (for inspection; drive it through the commands)."""
        session = cast("MemoryProcess", self.process).session
        if session is None:
            raise RuntimeError("the session is not started")
        return session


@contextlib.asynccontextmanager
async def open_session(
    cwd: str | os.PathLike[str] | None = None,
    *,
    args: Sequence[str] = (),
    agent_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    protocol_fixes: bool = False,
    timeout: float = 30.0,
) -> AsyncIterator[Session]:
    """Start a session in this process and yield it; it is closed (as at stdin EOF) on exit.

    ``args`` are command-line flags of ``xcsh --mode rpc`` (``--model``, ``--tools``,
    ``--no-session``, ``--approve``, ``--no-todo-defaults``, ``--protocol-fixes`` …); an
    unknown flag raises ``ValueError``. ``env`` replaces the environment for model keys and
    the models/settings lookup (default: ``os.environ``); ``agent_dir`` defaults to
    ``$PI_CODING_AGENT_DIR`` or ``~/.xcsh/agent``. Start-up errors raise
    :class:`xcsh.coding.factory.StartupError` with the message the CLI would print.
    """
    from xcsh.cli.args import parse_args
    from xcsh.cli.main import startup_options
    from xcsh.coding.factory import create_session
    from xcsh.coding.paths import agent_dir as default_agent_dir
    from xcsh.modes.rpc.memory import MemoryProcess

    parsed = parse_args(list(args))
    if parsed.unknown or parsed.messages or parsed.file_args:
        raise ValueError(
            f"not session flags: {' '.join([*parsed.unknown, *parsed.messages, *parsed.file_args])}"
        )
    environment = dict(os.environ if env is None else env)
    directory = Path(agent_dir) if agent_dir is not None else default_agent_dir(environment)
    options = startup_options(
        parsed, cwd=Path(cwd if cwd is not None else os.getcwd()).resolve(), agent_dir=directory, mode="rpc"
    )
    options.env = environment
    updates = parsed.message_updates or "full"
    if updates not in ("full", "delta"):
        raise ValueError(f"--message-updates must be full or delta, not {updates!r}")
    process = MemoryProcess(
        lambda: create_session(options),
        protocol_fixes=protocol_fixes or parsed.protocol_fixes,
        message_updates="delta" if updates == "delta" else "full",
    )
    session = Session(cast(asyncio.subprocess.Process, process), timeout=timeout)
    session._reader = asyncio.ensure_future(session._read())
    ready = asyncio.ensure_future(session._ready.wait())
    ended = asyncio.ensure_future(process.wait())
    try:
        async with asyncio.timeout(timeout):
            await asyncio.wait({ready, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ready.cancel()
    if not session._ready.is_set():
        await session.close()
        error = process.start_error()
        raise error if error is not None else RuntimeError("the session ended before it was ready")
    ended.cancel()
    try:
        yield session
    finally:
        await session.close()
