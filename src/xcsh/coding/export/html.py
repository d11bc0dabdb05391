"""Self-contained, script-free-to-read HTML export of a session (agent-behaviour §11, project decision).

The page is rendered here, in Python: a header (name, date, models, counts,
tokens, cost, system prompt, tools), a sidebar tree of every entry with CSS-only
filters, the current branch, then any other branches. A Content-Security-Policy
meta tag forbids every script except the page's own small search script, admitted
by its hash, and every image except ``data:`` ones; session content is always
escaped. The session data is embedded inertly as ``application/json``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]  # types-Pygments is not a dev dependency

from xcsh.coding.export.render import CLASS_PREFIX, esc, highlight_code, markdown, message_parts
from xcsh.coding.export.target import check_export_target
from xcsh.coding.export.tree import META_TYPES, snippet, tree_html
from xcsh.coding.private_fs import write_private_chunks
from xcsh.coding.sessions.context import path_to, session_stats
from xcsh.coding.sessions.entries import SessionEntry

if TYPE_CHECKING:
    from xcsh.coding.session import AgentSession
    from xcsh.coding.sessions.store import SessionStore

_SEARCH_SCRIPT = (
    "(()=>{document.documentElement.dataset.js='1';"
    "const q=document.getElementById('tree-search');if(!q)return;q.hidden=false;"
    "const nodes=[...document.querySelectorAll('.tree a.node')];"
    "const text=n=>{const t=document.getElementById(n.getAttribute('href').slice(1));"
    "return ((t?t.textContent:'')+' '+n.textContent).toLowerCase();};"
    "q.addEventListener('input',()=>{const v=q.value.trim().toLowerCase();"
    "for(const n of nodes){n.parentElement.classList.toggle('no-match',!!v&&!text(n).includes(v));}});})();"
)
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_SEARCH_SCRIPT.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'; "
    "base-uri 'none'; form-action 'none'"
)
_FILTERS = (
    ("default", "Default"),
    ("no-tools", "No tools"),
    ("user", "User"),
    ("labeled", "Labeled"),
    ("all", "All"),
)


def _pygments_css() -> str:
    scopes = ["pre.code", ".md pre"]
    light = HtmlFormatter(style="default", classprefix=CLASS_PREFIX).get_style_defs(scopes)
    dark = HtmlFormatter(style="github-dark", classprefix=CLASS_PREFIX).get_style_defs(scopes)
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}"


def _stylesheet() -> str:
    own = resources.files("xcsh.coding.export").joinpath("viewer.css").read_text(encoding="utf-8")
    return f"{_pygments_css()}\n{own}"


_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)
_JSON_BATCH = 256
"""Entries encoded per ``json.dumps`` call of the embedded data."""


def _script_safe(text: str) -> str:
    """JSON text made safe inside ``<script>``: no ``<``, ``>``, ``&``, U+2028/9 or lone surrogate."""
    return text.translate(_SCRIPT_ESCAPES).encode("utf-8", "backslashreplace").decode("utf-8")


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_for_script(data: Mapping[str, object]) -> Iterator[str]:
    """``_script_safe(json.dumps(data, compact))`` in pieces: a list value (the entries) is encoded
    a batch of items at a time, which gives the same text as encoding the whole list at once."""
    yield "{"
    for number, (key, value) in enumerate(data.items()):
        yield _script_safe(("," if number else "") + _dumps(key) + ":")
        if not isinstance(value, list):
            yield _script_safe(_dumps(value))
            continue
        yield "["
        for start in range(0, len(value), _JSON_BATCH):
            batch = _dumps(value[start : start + _JSON_BATCH])[1:-1]
            yield _script_safe(("," if start else "") + batch)
        yield "]"
    yield "}"


# --------------------------------------------------------------------------- entries


def _meta_body(entry: SessionEntry) -> str:
    kind = str(entry.get("type"))
    label = META_TYPES.get(kind, kind)
    value = snippet(entry)
    details = {k: v for k, v in entry.items() if k not in ("type", "id", "parentId", "timestamp")}
    dump = highlight_code(json.dumps(details, indent=2, ensure_ascii=False), "json")
    return (
        f'<details class="meta-line"><summary>{esc(label)}'
        f"{': ' + esc(value) if value else ''}</summary>{dump}</details>"
    )


def _entry_body(entry: SessionEntry) -> tuple[str, str, str]:
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return message_parts(entry["message"])
    if kind == "custom_message":
        return message_parts({**entry, "role": "custom"})
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        body = (
            f'<details class="fold"><summary>Summary of earlier conversation ({esc(tokens)} tokens before)'
            f"</summary>{markdown(str(entry.get('summary', '')))}</details>"
        )
        return "Compaction", "summary", body
    if kind == "branch_summary":
        return "Branch summary", "summary", markdown(str(entry.get("summary", "")))
    return "", "meta", _meta_body(entry)


def _render_entry(entry: SessionEntry, anchor: str, labels: Mapping[str, str]) -> str:
    label, css, body = _entry_body(entry)
    badge = labels.get(str(entry.get("id")))
    badge_html = f' <span class="badge">{esc(badge)}</span>' if badge else ""
    css_classes = " ".join(f"is-{part}" for part in css.split())
    stamp = str(entry.get("timestamp", ""))
    shown = f"{stamp[:10]} {stamp[11:19]} UTC" if len(stamp) >= 19 and stamp.endswith("Z") else stamp
    head = (
        f'<header><span class="role">{esc(label)}</span>{badge_html}'
        f'<time datetime="{esc(stamp)}">{esc(shown)}</time></header>'
        if label
        else ""
    )
    return f'<article class="entry {css_classes}" id="{anchor}">{head}{body}</article>'


# --------------------------------------------------------------------------- header


def _models(entries: Sequence[SessionEntry]) -> list[str]:
    found: dict[str, None] = {}
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "model_change" and entry.get("model"):
            found[str(entry["model"])] = None
        elif isinstance(message, dict) and message.get("role") == "assistant":
            found[f"{message.get('provider')}/{message.get('model')}"] = None
    return list(found)


def _header(
    header: Mapping[str, Any],
    entries: Sequence[SessionEntry],
    system_prompt: str,
    tools: Sequence[Mapping[str, Any]],
) -> str:
    messages = [
        e["message"] for e in entries if e.get("type") == "message" and isinstance(e.get("message"), dict)
    ]
    stats = session_stats(messages, session_id=str(header.get("id", "")), session_file=None)
    tokens = stats.tokens
    rows = [
        ("Date", header.get("timestamp", "")),
        ("Directory", header.get("cwd", "")),
        ("Session", header.get("id", "")),
        ("Models", ", ".join(_models(entries)) or "—"),
        (
            "Messages",
            f"{stats.user_messages} user · {stats.assistant_messages} assistant · {stats.tool_results} tool results",
        ),
        ("Tool calls", stats.tool_calls),
        (
            "Tokens",
            f"{tokens.input:,} in · {tokens.output:,} out · {tokens.cache_read:,} cache read · "
            f"{tokens.cache_write:,} cache write",
        ),
        ("Cost", f"${stats.cost:.4f}"),
    ]
    meta = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows)
    parts = [f'<header class="session-header"><h1>{esc(_title(header))}</h1><dl class="meta">{meta}</dl>']
    if system_prompt:
        parts.append(
            f'<details class="fold"><summary>System prompt</summary><pre class="output">{esc(system_prompt)}</pre></details>'
        )
    if tools:
        items = "".join(
            f"<dt>{esc(t.get('name', ''))}</dt><dd>{esc(t.get('description', ''))}</dd>" for t in tools
        )
        parts.append(
            f'<details class="fold"><summary>Tools ({len(tools)})</summary><dl class="tools">{items}</dl></details>'
        )
    parts.append(
        '<p class="note">Counts, tokens and cost cover every branch of the session file.</p></header>'
    )
    return "".join(parts)


def _tool_info(tool: object) -> dict[str, str]:
    """``{name, description}`` of a tool given as a mapping or as an object (e.g. ``AgentTool``)."""
    if isinstance(tool, Mapping):
        return {"name": str(tool.get("name", "")), "description": str(tool.get("description", ""))}
    return {"name": str(getattr(tool, "name", "")), "description": str(getattr(tool, "description", ""))}


def _title(header: Mapping[str, Any]) -> str:
    title = header.get("title")
    return title if isinstance(title, str) and title else f"Session {header.get('id', '')}"


# --------------------------------------------------------------------------- document


def render_session_html(
    *,
    header: Mapping[str, Any],
    entries: Sequence[SessionEntry],
    leaf_id: str | None,
    system_prompt: str = "",
    tools: Sequence[object] = (),
) -> str:
    """The complete HTML document for a session (all entries; the current branch first).

    ``tools`` are ``{"name", "description"}`` mappings or objects with those attributes.
    """
    return "".join(
        session_html_parts(
            header=header, entries=entries, leaf_id=leaf_id, system_prompt=system_prompt, tools=tools
        )
    )


def session_html_parts(
    *,
    header: Mapping[str, Any],
    entries: Sequence[SessionEntry],
    leaf_id: str | None,
    system_prompt: str = "",
    tools: Sequence[object] = (),
) -> Iterator[str]:
    """:func:`render_session_html`'s document in pieces, in order (their concatenation is the
    document), so a long session is written out without holding the whole page in memory."""
    anchors = {str(e.get("id")): f"e{i}" for i, e in enumerate(entries)}
    by_id = {str(e.get("id")): e for e in entries}
    leaf = by_id.get(leaf_id) if leaf_id is not None else None
    branch = path_to(by_id, leaf) if leaf is not None else []
    active = {str(e.get("id")) for e in branch}
    labels: dict[str, str] = {}
    for entry in entries:
        if entry.get("type") == "label":
            target = str(entry.get("targetId", ""))
            if entry.get("label"):
                labels[target] = str(entry["label"])
            else:
                labels.pop(target, None)
    radios = "".join(
        f'<input type="radio" name="tree-filter" id="f-{key}" value="{key}"{" checked" if key == "default" else ""}>'
        f'<label for="f-{key}">{esc(text)}</label>'
        for key, text in _FILTERS
    )
    tool_list = [_tool_info(t) for t in tools]
    yield (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CONTENT_SECURITY_POLICY)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{esc(_title(header))} · xcsh session</title>"
        f"<style>{_stylesheet()}</style></head><body>"
        '<div class="layout"><nav class="sidebar" aria-label="Session tree">'
        '<input type="search" id="tree-search" placeholder="Search…" aria-label="Search entries" hidden>'
        f'<div class="filters" role="radiogroup" aria-label="Filter">{radios}</div>'
    )
    yield tree_html(entries, anchors, active, labels)
    yield f'</nav><main>{_header(header, entries, system_prompt, tool_list)}<div class="conversation">'
    for entry in branch:
        yield _render_entry(entry, anchors[str(entry.get("id"))], labels)
    others = [e for e in entries if str(e.get("id")) not in active]
    if others:
        yield '<section class="other-branches"><h2>Other branches</h2>'
        for entry in others:
            yield _render_entry(entry, anchors[str(entry.get("id"))], labels)
        yield "</section>"
    if not branch and not others:
        yield '<p class="empty">This session has no entries.</p>'
    yield '</div></main></div><script type="application/json" id="session-data">'
    data = {
        "header": dict(header),
        "entries": list(entries),
        "leafId": leaf_id,
        "systemPrompt": system_prompt,
        "tools": tool_list,
    }
    yield from _json_for_script(data)
    yield f"</script><script>{_SEARCH_SCRIPT}</script></body></html>\n"


def write_html(path: Path, parts: Iterable[str]) -> None:
    """Write the pieces to ``path`` (private, atomic: :func:`write_private_chunks`) as UTF-8, a lone
    surrogate as its backslash escape."""
    write_private_chunks(path, _encoded(parts))


def _encoded(parts: Iterable[str], size: int = 1 << 20) -> Iterator[bytes]:
    pending: list[str] = []
    length = 0
    for part in parts:
        pending.append(part)
        length += len(part)
        if length >= size:
            yield "".join(pending).encode("utf-8", errors="backslashreplace")
            pending.clear()
            length = 0
    if pending:
        yield "".join(pending).encode("utf-8", errors="backslashreplace")


def export_session_html(
    store: SessionStore,
    output_path: Path,
    *,
    system_prompt: str = "",
    tools: Sequence[object] = (),
) -> Path:
    """Write the HTML export of ``store`` to ``output_path`` (parents created) and return that path.

    ``tools`` are ``{"name", "description"}`` mappings or objects with those attributes
    (such as ``AgentTool``). The path is returned as given
    (a relative one stays relative to the process cwd).
    """
    output_path = Path(output_path)
    check_export_target(output_path, store.path)
    parts = session_html_parts(
        header=store.header,
        entries=list(store.entries),
        leaf_id=store.leaf_id,
        system_prompt=system_prompt,
        tools=tools,
    )
    write_html(output_path, parts)
    return output_path


class ExportJob(msgspec.Struct, frozen=True):
    """An ``export_html`` taken from a session at one moment (:func:`prepare_export`); :meth:`run`
    renders and writes it without touching the session, so it may run in a worker thread."""

    output: str  # the path as the host gave it (or the default name)
    target: Path
    header: Mapping[str, Any]
    entries: list[SessionEntry]
    leaf_id: str | None
    system_prompt: str
    tools: list[dict[str, str]]

    def run(self) -> None:
        """Render and write the page. Raises ``OSError`` when it cannot be written."""
        parts = session_html_parts(
            header=self.header,
            entries=self.entries,
            leaf_id=self.leaf_id,
            system_prompt=self.system_prompt,
            tools=self.tools,
        )
        write_html(self.target, parts)


def prepare_export(session: AgentSession, output_path: str | None) -> ExportJob:
    """The ``export_html`` operation's inputs, copied from the session now.

    Without ``output_path`` the file is ``xcsh-session-<file stem>.html``; a relative path
    is resolved against the process cwd (now). The entry list is copied (entries are
    replaced, never changed in place, so later appends and rewrites leave the copy as it
    was). Raises ``ValueError`` for an in-memory session, and
    :class:`~xcsh.coding.export.target.ExportTargetError` (a ``CommandError``) when the path names
    a session file or a session's lock file (nothing is written).
    """
    store = session.store
    if store.path is None:
        raise ValueError("Cannot export in-memory session to HTML")
    output = output_path or f"xcsh-session-{Path(store.path).name.removesuffix('.jsonl')}.html"
    target = Path(output) if os.path.isabs(output) else Path.cwd() / output
    check_export_target(target, Path(store.path))
    tools = [{"name": t.name, "description": t.description} for t in session.active_tools()]
    return ExportJob(
        output=output,
        target=target,
        header=store.header,
        entries=list(store.entries),
        leaf_id=store.leaf_id,
        system_prompt=session.system_prompt,
        tools=tools,
    )


def export_html(session: AgentSession, output_path: str | None) -> str:
    """The ``export_html`` operation in the calling thread: :func:`prepare_export`, then the job's
    :meth:`~ExportJob.run`. Returns the path as given (or the default name)."""
    job = prepare_export(session, output_path)
    job.run()
    return job.output
