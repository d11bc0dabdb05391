"""Safe HTML fragments for session content: markdown, highlighted code, messages and entries.

Every string that comes from a session goes through :func:`html.escape`, Pygments
(which escapes) or markdown-it with raw HTML disabled; links are limited to
http(s), mailto and in-page/relative targets, and markdown images become links
so the page never fetches anything.
"""

from __future__ import annotations

import difflib
import functools
import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight as pygments_highlight  # type: ignore[import-untyped]  # types-Pygments is not a dev dependency
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]  # types-Pygments is not a dev dependency
from pygments.lexer import Lexer  # type: ignore[import-untyped]  # types-Pygments is not a dev dependency
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename  # type: ignore[import-untyped]  # types-Pygments is not a dev dependency
from pygments.util import ClassNotFound  # type: ignore[import-untyped]  # types-Pygments is not a dev dependency

SAFE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
_ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
_FOLD_LINES = 25
_FOLD_CHARS = 3000
CLASS_PREFIX = "pg-"

_FORMATTER = HtmlFormatter(nowrap=True, classprefix=CLASS_PREFIX)


def esc(value: object) -> str:
    """HTML-escape any value (quotes included, so it is safe in attributes too)."""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


# --------------------------------------------------------------------------- code and markdown


@functools.lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    """The lexer for a language name, made once per name (Pygments' lookup and a new lexer cost
    ~0.15 ms, once per tool call of an export before; a lexer keeps no state between texts)."""
    try:
        return get_lexer_by_name(language.strip().lower())
    except ClassNotFound:
        return None


def highlight_code(code: str, language: str | None = None, *, lexer: Lexer | None = None) -> str:
    """A ``<pre class="code">`` block, highlighted when the language is known."""
    chosen = lexer or (_lexer(language) if language else None)
    body = _highlight(code, chosen) if chosen is not None else esc(code)
    return f'<pre class="code"><code>{body}</code></pre>'


_REPEATED_CODE = 2048
"""Highlighted texts up to this length are kept (:func:`_highlight`)."""


def _highlight(code: str, lexer: Lexer) -> str:
    """Pygments' HTML for ``code``; a short text met again (the same arguments of another tool
    call, the same command) is highlighted once. Exact: a lexer keeps no state between texts
    and the formatter is fixed, so the same inputs give the same output."""
    if len(code) <= _REPEATED_CODE:
        return _highlight_kept(code, lexer)
    return str(pygments_highlight(code, lexer, _FORMATTER))


@functools.lru_cache(maxsize=512)
def _highlight_kept(code: str, lexer: Lexer) -> str:
    return str(pygments_highlight(code, lexer, _FORMATTER))


def _lexer_for_path(path: str) -> Lexer | None:
    return _lexer_for_name(os.path.basename(path))


@functools.lru_cache(maxsize=256)
def _lexer_for_name(name: str) -> Lexer | None:
    """The lexer for a file name (Pygments matches only the name, not the folders)."""
    try:
        return get_lexer_for_filename(name)
    except ClassNotFound:
        return None


def _markdown_highlight(code: str, language: str, _attrs: str) -> str:
    lexer = _lexer(language) if language else None
    return _highlight(code, lexer) if lexer is not None else ""


class _SafeMarkdown(MarkdownIt):
    """CommonMark + tables/strikethrough, no raw HTML, only safe link targets."""

    def validateLink(self, url: str) -> bool:
        match = _SCHEME.match(url.strip())
        return match is None or match.group(1).lower() in _ALLOWED_SCHEMES


def _render_link_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return self.renderToken(tokens, idx, options, env)


def _render_image(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # A remote image would be a network fetch: show it as a link instead.
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env) or src
    return f'<a class="md-image" href="{esc(src)}" rel="noopener noreferrer nofollow">[image: {esc(alt)}]</a>'


_MD = _SafeMarkdown(
    "commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _markdown_highlight}
)
_MD.enable(["table", "strikethrough"])
_MD.add_render_rule("link_open", _render_link_open)
_MD.add_render_rule("image", _render_image)


def markdown(text: str) -> str:
    """Markdown rendered to safe HTML inside ``<div class="md">``."""
    return f'<div class="md">{_MD.render(text)}</div>'


# --------------------------------------------------------------------------- content blocks


def image(block: Mapping[str, Any]) -> str:
    mime = str(block.get("mimeType") or "")
    data = block.get("data")
    if mime in SAFE_IMAGE_TYPES and isinstance(data, str) and data and _BASE64.match(data):
        return f'<img class="inline-image" alt="{esc(mime)} image" src="data:{mime};base64,{esc(data)}">'
    return f'<span class="missing">[{esc(mime or "image")} not shown]</span>'


def folded_text(text: str, label: str, *, css: str = "output") -> str:
    """Plain text in a ``<pre>``; folded into ``<details>`` when long."""
    lines = text.count("\n") + 1
    pre = f'<pre class="{css}">{esc(text)}</pre>'
    if lines <= _FOLD_LINES and len(text) <= _FOLD_CHARS:
        return pre
    return f'<details class="fold"><summary>{esc(label)} · {lines} lines</summary>{pre}</details>'


def content_blocks(content: object, *, as_markdown: bool = True) -> str:
    """User/custom/tool content (a string or text/image blocks)."""
    if isinstance(content, str):
        return markdown(content) if as_markdown else folded_text(content, "Output")
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            text = str(block.get("text", ""))
            parts.append(markdown(text) if as_markdown else folded_text(text, "Output"))
        elif block.get("type") == "image":
            parts.append(image(block))
    return "".join(parts)


def _tool_preview(name: str, args: Mapping[str, Any]) -> str:
    for key in ("command", "path", "file_path", "pattern", "query", "url"):
        value = args.get(key)
        if isinstance(value, str) and value:
            break
    else:
        edits = args.get("edits")
        first = edits[0] if isinstance(edits, list) and edits and isinstance(edits[0], dict) else {}
        value = first.get("path") or next((v for v in args.values() if isinstance(v, str)), "")
    text = " ".join(str(value).split())
    return text if len(text) <= 120 else text[:119] + "…"


def _edit_pairs(args: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    items = args.get("edits") if isinstance(args.get("edits"), list) else [args]
    pairs: list[tuple[str, str, str]] = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        old = item.get("old_text", item.get("oldText"))
        new = item.get("new_text", item.get("newText"))
        if isinstance(old, str) and isinstance(new, str):
            path = str(item.get("path") or args.get("path") or "")
            pairs.append((path, old, new))
    return pairs


def tool_arguments(name: str, args: Mapping[str, Any]) -> str:
    """The body of a tool call: commands, written files and edits shown as code; the rest as JSON."""
    parts: list[str] = []
    if name == "bash" and isinstance(args.get("command"), str):
        parts.append(highlight_code(args["command"], "bash"))
    elif name == "write" and isinstance(args.get("content"), str):
        path = str(args.get("path") or args.get("file_path") or "")
        parts.append(f'<div class="path">{esc(path)}</div>')
        parts.append(highlight_code(args["content"], lexer=_lexer_for_path(path)))
    else:
        for path, old, new in _edit_pairs(args):
            diff = "".join(
                difflib.unified_diff(
                    old.splitlines(keepends=True), new.splitlines(keepends=True), path, path, lineterm="\n"
                )
            )
            parts.append(highlight_code(diff, "diff"))
    parts.append(
        '<details class="fold"><summary>Arguments</summary>'
        + highlight_code(json.dumps(args, indent=2, ensure_ascii=False), "json")
        + "</details>"
        if parts
        else highlight_code(json.dumps(args, indent=2, ensure_ascii=False), "json")
    )
    return "".join(parts)


def tool_call(block: Mapping[str, Any]) -> str:
    name = str(block.get("name", ""))
    args = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
    assert isinstance(args, dict)
    intent = block.get("intent")
    intent_html = f'<div class="intent">{esc(intent)}</div>' if isinstance(intent, str) and intent else ""
    return (
        '<details class="tool-call"><summary><span class="tool-name">'
        f'{esc(name)}</span> <span class="preview">{esc(_tool_preview(name, args))}</span></summary>'
        f"{intent_html}{tool_arguments(name, args)}</details>"
    )


def assistant_blocks(content: object) -> str:
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(markdown(str(block.get("text", ""))))
        elif kind == "thinking":
            parts.append(
                '<details class="thinking"><summary>Thinking</summary>'
                f"{markdown(str(block.get('thinking', '')))}</details>"
            )
        elif kind == "redactedThinking":
            parts.append('<details class="thinking"><summary>Thinking (redacted)</summary></details>')
        elif kind == "toolCall":
            parts.append(tool_call(block))
    return "".join(parts)


def usage_line(message: Mapping[str, Any]) -> str:
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    bits: list[str] = []
    for key, label in (
        ("input", "in"),
        ("output", "out"),
        ("cacheRead", "cache read"),
        ("cacheWrite", "cache write"),
    ):
        value = usage.get(key)
        if isinstance(value, int | float) and value:
            bits.append(f"{label} {value:,}")
    cost = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), dict) else None
    if isinstance(cost, int | float) and cost:
        bits.append(f"${cost:.4f}")
    duration = message.get("duration")
    if isinstance(duration, int | float):
        bits.append(f"{duration / 1000:.1f} s")
    return f'<div class="usage">{esc(" · ".join(bits))}</div>' if bits else ""


def _bash_execution(message: Mapping[str, Any], prompt: str, field: str) -> str:
    command = str(message.get(field, ""))
    parts = [f'<pre class="command">{esc(prompt)} {esc(command)}</pre>']
    output = str(message.get("output", ""))
    if output:
        parts.append(folded_text(output, "Output"))
    status: list[str] = []
    if message.get("cancelled"):
        status.append("cancelled")
    exit_code = message.get("exitCode")
    if isinstance(exit_code, int) and exit_code != 0:
        status.append(f"exit code {exit_code}")
    if message.get("truncated"):
        status.append("output truncated")
    if message.get("excludeFromContext"):
        status.append("not sent to the model")
    if status:
        parts.append(f'<div class="status">{esc(", ".join(status))}</div>')
    return "".join(parts)


def _file_mention(message: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for file in message.get("files") or []:
        if not isinstance(file, dict):
            continue
        path = str(file.get("path", ""))
        body = str(file.get("content", ""))
        parts.append(
            f'<details class="fold"><summary>{esc(path)}</summary>'
            f"{highlight_code(body, lexer=_lexer_for_path(path))}</details>"
        )
        if isinstance(file.get("image"), dict):
            parts.append(image(file["image"]))
    return "".join(parts)


def message_parts(message: Mapping[str, Any]) -> tuple[str, str, str]:
    """``(label, css kind, body html)`` for any message role, unknown ones included."""
    role = str(message.get("role", ""))
    if role == "user":
        return "User", "user", content_blocks(message.get("content"))
    if role == "developer":
        return "Developer", "developer", content_blocks(message.get("content"))
    if role == "assistant":
        model = f"{message.get('provider', '')}/{message.get('model', '')}"
        body = assistant_blocks(message.get("content"))
        stop = message.get("stopReason")
        if stop in ("error", "aborted"):
            text = message.get("errorMessage") or ("Aborted" if stop == "aborted" else "Error")
            body += f'<div class="error">{esc(text)}</div>'
        return f"Assistant · {model}", "assistant", body + usage_line(message)
    if role == "toolResult":
        name = str(message.get("toolName", ""))
        kind = "tool error" if message.get("isError") else "tool"
        return f"Result · {name}", kind, content_blocks(message.get("content"), as_markdown=False)
    if role == "bashExecution":
        return "Bash", "bash", _bash_execution(message, "$", "command")
    if role == "pythonExecution":
        return "Python", "bash", _bash_execution(message, ">>>", "code")
    if role in ("custom", "hookMessage"):
        label = f"Custom · {message.get('customType', '')}"
        body = content_blocks(message.get("content"))
        if not message.get("display", True):
            body = f'<details class="fold"><summary>Hidden message</summary>{body}</details>'
        return label, "custom", body
    if role == "fileMention":
        return "Files", "custom", _file_mention(message)
    dump = json.dumps(message, indent=2, ensure_ascii=False)
    return role or "Message", "custom", highlight_code(dump, "json")
