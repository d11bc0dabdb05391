"""Session-level operations behind new_session, switch_session, branch and naming.

Each replaces the session's store and rebuilds the live context; none emits events.
Extensions may veto a switch through ``session.hooks.before_switch`` hooks.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from xcsh.coding.errors import CommandError
from xcsh.coding.session import AgentSession
from xcsh.coding.sessions.context import SessionContext, build_session_context, message_text
from xcsh.coding.sessions.loading import NotASessionError
from xcsh.coding.sessions.lock import SessionLockedError
from xcsh.coding.sessions.store import SessionStore, sanitize_title

logger = logging.getLogger(__name__)


def _blob_dir(session: AgentSession) -> Path:
    return session.config.agent_dir / "blobs"


def _session_dir(session: AgentSession) -> Path | None:
    if session.store.session_dir is not None:
        return session.store.session_dir
    return session.config.session_dir


async def _prepare_switch(session: AgentSession, reason: str, target: str | None = None) -> bool:
    """Ask the veto hooks, then abort work and clear queues; False when cancelled."""
    for check in session.hooks.before_switch:
        if await check(session, reason, target):
            return False
    await session.abort()
    session.agent.clear_queues()
    session.hidden_next_turn = []
    session.pending_bash_messages = []
    return True


def _adopt(session: AgentSession, store: SessionStore, reason: str) -> SessionContext:
    old = session.store
    session.store = store
    if old is not store:
        old.close()
    context = build_session_context(store.entries, store.leaf_id)
    session.agent.messages[:] = context.messages
    for callback in session.hooks.on_session_change:
        callback(session, reason)
    return context


async def new_session(session: AgentSession, parent_session: str | None) -> dict[str, Any]:
    if not await _prepare_switch(session, "new"):
        return {"cancelled": True}
    directory = _session_dir(session)
    parent = parent_session or None
    if session.config.persist and directory is not None:
        store = SessionStore.create(
            directory, session.cwd, parent_session=parent, blob_dir=_blob_dir(session)
        )
    else:
        store = SessionStore.in_memory(session.cwd, parent_session=parent)
    _adopt(session, store, "new")
    store.append_thinking_level_change(session.thinking_level)
    store.append_service_tier_change(None)
    return {"cancelled": False}


async def switch_session(session: AgentSession, session_path: str) -> dict[str, Any]:
    if not await _prepare_switch(session, "resume", session_path):
        return {"cancelled": True}
    path = Path(os.path.abspath(os.path.expanduser(session_path)))
    current = session.store.path
    try:
        if current is not None and Path(current) == path:
            session.store.close()
        store = SessionStore.open(path, cwd_for_new=session.cwd, blob_dir=_blob_dir(session))
    except (SessionLockedError, NotASessionError) as exc:
        raise CommandError(str(exc)) from exc
    except OSError as exc:
        raise ValueError(f"Could not open session {session_path}: {exc.strerror or exc}") from exc
    _restore_model_and_level(session, _adopt(session, store, "resume"))
    return {"cancelled": False}


def _restore_model_and_level(session: AgentSession, context: SessionContext) -> None:
    ref = context.models.get("default")
    if ref and "/" in ref:
        provider, model_id = ref.split("/", 1)
        model = session.registry.find(provider, model_id)
        if model is not None and session.registry.is_available(model):
            session.agent.model = model
    level = context.thinking_level
    requested = level if level is not None else str(session.settings.get("defaultThinkingLevel", "xhigh"))
    session.apply_thinking_level(requested, record=False)


async def branch(session: AgentSession, entry_id: str) -> dict[str, Any]:
    entry = session.store.get_entry(entry_id)
    if entry is None or entry.get("type") != "message" or entry.get("message", {}).get("role") != "user":
        raise ValueError("Invalid entry ID for branching")
    text = message_text(entry["message"])
    for check in session.hooks.before_branch:
        if await check(session, "branch", entry_id):
            return {"text": text, "cancelled": True}
    store = session.store.branch_to_new_file(entry_id)
    session.hidden_next_turn = []
    _adopt(session, store, "branch")
    return {"text": text, "cancelled": False}


def branch_messages(session: AgentSession) -> list[dict[str, str]]:
    out = []
    for entry in session.store.user_message_entries():
        text = message_text(entry["message"])
        if text:
            out.append({"entryId": entry["id"], "text": text})
    return out


def set_session_name(session: AgentSession, name: str) -> None:
    if not sanitize_title(name):
        raise CommandError("Session name cannot be empty")
    session.store.set_title(name, "user")
