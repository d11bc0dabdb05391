"""Whole-session switching: a new session, resuming another file, branching into a new file,
and closing the session file when the process exits.

A collaborator of :class:`~xcsh.coding.session.AgentSession` (part of the session core).
Each switch asks the features' veto hooks first, stops the work in flight, then hands the
new store to the session (:meth:`~xcsh.coding.session.AgentSession.adopt_store`), which
reloads the context and tells the features.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from xcsh.coding.errors import CommandError
from xcsh.coding.hooks import SessionHooks
from xcsh.coding.session_state import SessionConfig
from xcsh.coding.sessions.context import SessionContext, message_text
from xcsh.coding.sessions.entries import NotASessionError
from xcsh.coding.sessions.lock import SessionLockedError
from xcsh.coding.sessions.store import SessionStore

if TYPE_CHECKING:
    from xcsh.ai.types import ThinkingLevel


class SessionSwitcher:
    """Replaces the session's store; what it needs of the session is passed in explicitly."""

    def __init__(
        self,
        config: SessionConfig,
        *,
        hooks: SessionHooks,
        store: Callable[[], SessionStore],
        adopt: Callable[[SessionStore, str], SessionContext],
        stop: Callable[[], Awaitable[None]],
        restore: Callable[[SessionContext], None],
        drop_hidden: Callable[[], None],
        thinking_level: Callable[[], ThinkingLevel | None],
    ) -> None:
        self._hooks = hooks
        self._store = store
        self._adopt = adopt
        self._stop = stop  # abort the run chain and clear every queue
        self._restore = restore
        self._drop_hidden = drop_hidden
        self._thinking_level = thinking_level
        self._cwd = config.cwd
        # the process's session folder, kept for its whole life as the reference's manager keeps
        # its sessionDir: new sessions and branches go there, also after switching to a session
        # in another project's folder (where this project's --continue and listings never look)
        self._session_dir = store().session_dir or config.session_dir
        self._persist = config.persist
        self._blob_dir = config.agent_dir / "blobs"

    async def _prepare(self, reason: str, target: str | None = None) -> bool:
        """Ask the veto hooks, then stop work and clear queues; False when cancelled."""
        for check in self._hooks.before_switch:
            if await check(reason, target):
                return False
        await self._stop()
        return True

    async def new_session(self, parent_session: str | None) -> bool:
        """Start a fresh session file (or in-memory store); False when an extension cancelled."""
        if not await self._prepare("new"):
            return False
        parent = parent_session or None
        if self._persist and self._session_dir is not None:
            store = SessionStore.create(
                self._session_dir, self._cwd, parent_session=parent, blob_dir=self._blob_dir
            )
        else:
            store = SessionStore.in_memory(self._cwd, parent_session=parent)
        self._adopt(store, "new")
        store.append_thinking_level_change(self._thinking_level())
        store.append_service_tier_change(None)
        return True

    async def switch_session(self, session_path: str) -> bool:
        """Resume the session file at ``session_path``; False when an extension cancelled."""
        if not await self._prepare("resume", session_path):
            return False
        path = Path(os.path.abspath(os.path.expanduser(session_path)))
        current = self._store()
        try:
            if current.path is not None and os.path.realpath(current.path) == os.path.realpath(path):
                current.close()
            store = SessionStore.open(
                path, cwd_for_new=self._cwd, blob_dir=self._blob_dir, session_dir=self._session_dir
            )
        except (SessionLockedError, NotASessionError) as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise ValueError(f"Could not open session {session_path}: {exc.strerror or exc}") from exc
        self._restore(self._adopt(store, "resume"))
        return True

    async def branch(self, entry_id: str) -> tuple[str, bool]:
        """Branch into a new file before user message ``entry_id``: (its text, cancelled)."""
        current = self._store()
        entry = current.get_entry(entry_id)
        if entry is None or entry.get("type") != "message" or entry.get("message", {}).get("role") != "user":
            raise ValueError("Invalid entry ID for branching")
        text = message_text(entry["message"])
        for check in self._hooks.before_branch:
            if await check("branch", entry_id):
                return text, True
        from xcsh.coding.sessions.branching import branch_to_new_file  # loaded with the first branch

        store = branch_to_new_file(current, entry_id, cwd=self._cwd)
        self._drop_hidden()
        self._adopt(store, "branch")
        return text, False

    def branch_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of the user messages one can branch from."""
        out = []
        for entry in self._store().user_message_entries():
            text = message_text(entry["message"])
            if text:
                out.append((entry["id"], text))
        return out

    def close(self) -> None:
        """Run the ``on_shutdown`` hooks, then close the store (waiting, on this thread, for a
        rewrite of the file in progress)."""
        for callback in self._hooks.on_shutdown:
            callback()
        self._store().close()

    async def close_async(self) -> None:
        """:meth:`close` waiting for a rewrite in progress on a worker thread, not on the loop."""
        for callback in self._hooks.on_shutdown:
            callback()
        store = self._store()
        try:
            if store.is_rewriting:  # else no worker thread is started at every exit
                await asyncio.to_thread(store.wait_for_rewrite)
        finally:
            # also when cancelled while waiting: the file is closed and its lock released
            # (waiting for the rewrite on this thread then)
            store.close()  # waits again only for a rewrite requested meanwhile
