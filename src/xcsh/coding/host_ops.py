"""Session operations hosts ask for beyond the reference: commands, queue, sessions, tree, tools.

Each function takes the session and returns the wire payload (protocol field names);
failures the host caused raise :class:`~xcsh.coding.errors.CommandError`. RPC handlers,
the in-process API and ACP call these, so every surface gives the same answers
(docs/host-commands.md).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from xcsh.coding.errors import CommandError
from xcsh.coding.sessions.context import message_text

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession

MAX_PREVIEW = 120


def list_commands(session: AgentSession) -> dict[str, Any]:
    """``get_commands``: the session's command registry (extension commands, file commands and
    prompt templates, skills), as :meth:`xcsh.coding.commands.CommandRegistry.list` gives it."""
    return {"commands": [info.wire() for info in session.commands.list()]}


def clear_queue(session: AgentSession) -> dict[str, list[str]]:
    """``clear_queue``: drop queued steering and follow-up messages; return their texts."""
    steering, follow_ups = session.drop_queued()
    return {
        "steering": [message_text(m) for m in steering],
        "followUp": [message_text(m) for m in follow_ups],
    }


def list_sessions(session: AgentSession, scope: Literal["cwd", "all"] = "cwd") -> dict[str, Any]:
    """``list_sessions``: stored sessions of the cwd (or of every project), newest first."""
    from xcsh.coding.paths import sessions_root
    from xcsh.coding.sessions.info_cache import cache_path_for
    from xcsh.coding.sessions.listing import list_all_sessions, list_sessions, same_project, session_dir_for

    configured = session.config.session_dir
    cache_file = cache_path_for(session.config.agent_dir)
    if scope == "all" and configured is None:
        infos = list_all_sessions(sessions_root(), cache_file=cache_file)
    else:
        infos = list_sessions(
            configured or session_dir_for(session.cwd, sessions_root()), cache_file=cache_file
        )
        if configured is None:  # the per-project folder: another path may encode the same
            infos = [info for info in infos if same_project(info.cwd, Path(session.cwd))]
    current = Path(session.store.path) if session.store.path is not None else None
    out = []
    for info in infos:
        item: dict[str, Any] = {"path": str(info.path), "id": info.id, "cwd": info.cwd}
        is_current = current is not None and Path(info.path) == current
        # the current session's name from memory: its header may still be being rewritten
        title = session.store.title if is_current else info.title
        if title:
            item["name"] = title
        item["firstMessage"] = info.first_message
        item["messageCount"] = info.message_count
        item["created"] = info.created
        item["modified"] = (
            datetime.datetime.fromtimestamp(info.modified, datetime.UTC).isoformat().replace("+00:00", "Z")
        )
        if info.parent_session:
            item["parentSession"] = info.parent_session
        item["current"] = is_current
        out.append(item)
    return {"sessions": out}


def _one_line(text: str) -> str:
    """``" ".join(text.split())``, enough of it for a preview: the first ``MAX_PREVIEW`` characters.

    Only a head of the text is split when that head already gives more than ``MAX_PREVIEW``
    characters (its last word may be cut, but past the preview's end), so a 40 KB tool output
    is not split whole for a 120-character preview.
    """
    head = text[: 4 * MAX_PREVIEW]
    if len(head) < len(text):
        line = " ".join(head.split())
        if len(line) > MAX_PREVIEW:
            return line
    return " ".join(text.split())


def _preview(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    if isinstance(message, dict):
        text = message_text(message)
        if not text and message.get("role") == "assistant":
            calls = [
                b.get("name")
                for b in message.get("content") or []
                if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            text = ", ".join(str(c) for c in calls if c)
        return _one_line(text)[:MAX_PREVIEW]
    for key in ("summary", "modelId", "model", "thinkingLevel", "customType"):
        value = entry.get(key)
        if isinstance(value, str):
            return value[:MAX_PREVIEW]
    return None


def entry_tree(session: AgentSession) -> dict[str, Any]:
    """``get_tree``: the session's entries as a tree (``label`` entries folded into their targets).

    Each node: ``id``, ``parentId`` (past folded label entries: the node it hangs under),
    ``type``, ``timestamp``, ``role`` (message entries), ``preview`` (a one-line excerpt),
    ``label`` (when labelled) and ``children``. ``leafId`` is the node new messages attach
    under (the leaf, or its nearest ancestor that is not a label entry); ``path`` lists the
    ids from the root to it. Every id named is a node of the tree.
    """
    store = session.store
    nodes: dict[str, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    label_parents: dict[str, Any] = {}  # a folded label entry's id -> its parentId
    for entry in store.entries:
        raw: dict[str, Any] = dict(entry)
        if raw.get("type") == "label":
            label_parents[str(raw.get("id"))] = raw.get("parentId")
            continue
        node: dict[str, Any] = {
            "id": raw.get("id"),
            "parentId": _folded_parent(raw.get("parentId"), label_parents),
            "type": raw.get("type"),
            "timestamp": raw.get("timestamp"),
        }
        message = raw.get("message")
        if isinstance(message, dict):
            node["role"] = message.get("role")
        preview = _preview(raw)
        if preview:
            node["preview"] = preview
        label = store.get_label(str(raw.get("id")))
        if label:
            node["label"] = label
        node["children"] = []
        # the parent is looked up before this node is known, so an entry that is its own
        # parent (or whose parent is not an earlier entry) is a root and every entry is in
        # the tree once: no cycle, nothing hanging off an unreachable node
        parent_key = None if node["parentId"] is None else str(node["parentId"])
        parent = nodes.get(parent_key) if parent_key is not None else None
        (parent["children"] if parent is not None else roots).append(node)
        nodes[str(node["id"])] = node
    # the leaf is a label entry whenever the last thing appended was a label (a branch of a
    # labelled path, an extension's setLabel): the tree shows the node the label hangs under
    path = [str(e.get("id")) for e in store.branch_path(store.leaf_id) if e.get("type") != "label"]
    return {"tree": roots, "leafId": path[-1] if path else None, "path": path}


def _folded_parent(parent_id: Any, label_parents: dict[str, Any]) -> Any:
    """An entry's ``parentId`` in ``get_tree``: past folded label entries, the entry it hangs
    under (any other value as written: a root's None, a hand-edited parent naming no entry)."""
    seen: set[str] = set()
    while parent_id is not None and str(parent_id) in label_parents and str(parent_id) not in seen:
        seen.add(str(parent_id))
        parent_id = label_parents[str(parent_id)]
    return parent_id


def tool_infos(session: AgentSession) -> dict[str, Any]:
    """``get_tools``: every registered tool with ``active`` and ``source`` (builtin, host, extension, feature)."""
    from xcsh.coding.tools import BUILTIN_TOOL_NAMES

    active = set(session.active_tool_names)
    tools = []
    for tool in session.registered_tools():
        if tool.meta.get("host"):
            source = "host"
        elif "extensionPath" in tool.meta:
            source = "extension"
        elif tool.name in BUILTIN_TOOL_NAMES:
            source = "builtin"
        else:
            source = "feature"
        item: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "active": tool.name in active,
            "source": source,
        }
        if tool.label:
            item["label"] = tool.label
        if tool.hidden:
            item["hidden"] = True
        tools.append(item)
    return {"tools": tools}


def set_active_tools(session: AgentSession, names: list[Any]) -> dict[str, Any]:
    """``set_active_tools``: exactly these registered tools are active from the next model call.

    Unknown names fail the command and change nothing. The system prompt is rebuilt.
    """
    if not all(isinstance(n, str) for n in names):
        raise CommandError("toolNames must be an array of strings")
    unknown = [n for n in names if not session.has_tool(n)]
    if unknown:
        known = ", ".join(t.name for t in session.registered_tools()) or "none"
        raise CommandError(f"Unknown tool(s): {', '.join(unknown)}. Registered tools: {known}")
    session.set_active_tools(names)
    return {"toolNames": list(session.active_tool_names)}
