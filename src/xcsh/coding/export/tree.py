"""The export's sidebar: every entry of the session as a tree, with a kind and a one-line snippet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xcsh.coding.export.render import esc
from xcsh.coding.sessions.context import content_text, message_text
from xcsh.coding.sessions.entries import SessionEntry

SNIPPET = 80
"""Characters of an entry's text shown in the tree (then ``…``)."""

META_TYPES = {
    "model_change": "Model",
    "thinking_level_change": "Thinking level",
    "service_tier_change": "Service tier",
    "mode_change": "Mode",
    "label": "Label",
    "custom": "Extension data",
    "ttsr_injection": "Rules injected",
    "mcp_tool_selection": "MCP tools",
    "session_init": "Session init",
    "context_change": "Context",
}
_ROLE_LABELS = {
    "developer": "Developer",
    "bashExecution": "Bash",
    "pythonExecution": "Python",
    "custom": "Custom",
    "fileMention": "Files",
}


def entry_kind(entry: SessionEntry) -> tuple[str, str]:
    """``(filter class, short label)`` of an entry for the tree."""
    kind = entry.get("type")
    message = entry.get("message") if isinstance(entry.get("message"), dict) else None
    if kind == "message" and message is not None:
        role = message.get("role")
        if role == "user":
            return "k-user", "User"
        if role == "assistant":
            return "k-assistant", "Assistant"
        if role == "toolResult":
            return "k-tool", f"Result {message.get('toolName', '')}"
        return "k-msg", _ROLE_LABELS.get(str(role), str(role))
    if kind == "custom_message":
        return "k-msg", f"Custom {entry.get('customType', '')}"
    if kind == "compaction":
        return "k-msg", "Compaction"
    if kind == "branch_summary":
        return "k-msg", "Branch summary"
    return "k-meta", META_TYPES.get(str(kind), str(kind))


def snippet(entry: SessionEntry) -> str:
    message = entry.get("message")
    text = ""
    if isinstance(message, dict):
        text = message_text(message)
        if not text and message.get("role") == "assistant":
            calls = [
                b.get("name", "")
                for b in message.get("content") or []
                if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            text = ", ".join(str(c) for c in calls)
        text = text or str(message.get("command") or message.get("summary") or "")
    elif entry.get("type") in ("compaction", "branch_summary"):
        text = str(entry.get("shortSummary") or entry.get("summary") or "")
    elif entry.get("type") == "custom_message":
        text = content_text(entry.get("content"))
    else:
        for key in ("model", "thinkingLevel", "serviceTier", "mode", "label", "customType"):
            if key in entry:
                text = str(entry[key])
                break
    text = _one_line(text)
    return text[:SNIPPET] + "…" if len(text) > SNIPPET else text


def _one_line(text: str) -> str:
    """``" ".join(text.split())``, or a prefix of it longer than :data:`SNIPPET` characters.

    When a head of the text already joins to more than ``SNIPPET`` characters, only that head
    is split: the joined head is a prefix of the joined whole (its last word may be cut, but
    past the snippet's end), so a 40 KB tool output is not split whole for an 80-character
    snippet.
    """
    head = text[: 4 * SNIPPET]
    if len(head) < len(text):
        line = " ".join(head.split())
        if len(line) > SNIPPET:
            return line
    return " ".join(text.split())


def tree_html(
    entries: Sequence[SessionEntry], anchors: Mapping[str, str], active: set[str], labels: Mapping[str, str]
) -> str:
    by_id = {str(e.get("id")): e for e in entries}
    children: dict[str, list[SessionEntry]] = {}
    roots: list[SessionEntry] = []
    for entry in entries:
        parent = entry.get("parentId")
        if isinstance(parent, str) and parent in by_id and parent != entry.get("id"):
            children.setdefault(parent, []).append(entry)
        else:
            roots.append(entry)

    def node(entry: SessionEntry) -> str:
        entry_id = str(entry.get("id"))
        kind, label = entry_kind(entry)
        classes = [kind, "active" if entry_id in active else "", "labeled" if entry_id in labels else ""]
        badge = f'<span class="badge">{esc(labels[entry_id])}</span>' if entry_id in labels else ""
        return (
            f'<li><a class="node {" ".join(c for c in classes if c)}" href="#{anchors[entry_id]}">'
            f'<span class="role">{esc(label)}</span> {esc(snippet(entry))}{badge}</a></li>'
        )

    out = ['<ul class="tree">']
    work: list[str | SessionEntry] = list(reversed(roots))
    seen: set[str] = set()
    while work:
        item = work.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        current: SessionEntry | None = item
        # A chain of single children stays at one level; only forks nest.
        while current is not None and str(current.get("id")) not in seen:
            seen.add(str(current.get("id")))
            out.append(node(current))
            kids = children.get(str(current.get("id")), [])
            if len(kids) == 1:
                current = kids[0]
                continue
            for kid in reversed(kids):
                work.extend(["</ul></li>", kid, '<li class="fork"><ul>'])
            current = None
    out.append("</ul>")
    return "".join(out)
