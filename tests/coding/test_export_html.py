"""HTML export: every content kind renders, hostile content stays text, nothing can run or be fetched."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.tool import AgentTool
from xcsh.coding.export import export_session_html
from xcsh.coding.export.html import CONTENT_SECURITY_POLICY
from xcsh.coding.sessions.store import SessionStore

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "[x](javascript:alert(1))",
    "</textarea>",
]
H = " ".join(HOSTILE)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64).decode()
SVG = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>").decode()


class Page(HTMLParser):
    """Every element with its attributes, script bodies, and the visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.text: list[str] = []
        self._stack: list[str] = []
        self._script_attrs: dict[str, str | None] | None = None
        self._script_body: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._script_attrs = dict(attrs)
            self._script_body = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script_attrs is not None:
            self.scripts.append((self._script_attrs, "".join(self._script_body)))
            self._script_attrs = None

    def handle_data(self, data: str) -> None:
        if self._script_attrs is not None:
            self._script_body.append(data)
        else:
            self.text.append(data)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def assistant(content: list[dict[str, Any]], *, stop: str = "stop", **extra: Any) -> dict[str, Any]:
    usage = {
        "input": 100,
        "output": 20,
        "cacheRead": 5,
        "cacheWrite": 0,
        "totalTokens": 125,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.0125},
    }
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "usage": usage,
        "stopReason": stop,
        "timestamp": 2,
        **extra,
    }


def hostile_session(tmp_path: Path) -> SessionStore:
    store = SessionStore.create(tmp_path / "s", tmp_path, blob_dir=tmp_path / "blobs")
    store.set_title("Name " + H)
    store.append_model_change("fake/fake-model")
    store.append_thinking_level_change("high")
    first = store.append_message(
        user(
            [
                {
                    "type": "text",
                    "text": "Look at **this** "
                    + H
                    + "\n\n[ok](https://example.com/a) ![pic](https://example.com/p.png)",
                },
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "image", "data": SVG, "mimeType": "image/svg+xml"},
            ]
        )
    )
    store.append_message(
        assistant(
            [
                {"type": "thinking", "thinking": "pondering " + H, "thinkingSignature": "sig"},
                {"type": "redactedThinking", "data": "opaque"},
                {"type": "text", "text": "Code:\n\n```python\ndef answer():\n    return 42\n```\n\n" + H},
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "bash",
                    "arguments": {"command": "echo '" + H + "'"},
                },
                {"type": "toolCall", "id": "c2", "name": H, "arguments": {H: H, "nested": [H]}},
                {
                    "type": "toolCall",
                    "id": "c3",
                    "name": "edit",
                    "arguments": {"edits": [{"path": "a.py", "old_text": H + "\n", "new_text": "safe\n"}]},
                },
                {
                    "type": "toolCall",
                    "id": "c4",
                    "name": "write",
                    "arguments": {"path": "x.html", "content": H},
                },
            ],
            stop="toolUse",
            duration=1200,
        )
    )
    long_output = "\n".join(f"{i}: {H}" for i in range(100))
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": long_output}],
            "isError": False,
            "timestamp": 3,
        }
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c2",
            "toolName": H,
            "content": [{"type": "text", "text": H}],
            "isError": True,
            "timestamp": 3,
        }
    )
    store.append_message(
        {
            "role": "bashExecution",
            "command": H,
            "output": H,
            "exitCode": 2,
            "cancelled": False,
            "truncated": True,
            "timestamp": 4,
        }
    )
    store.append_message({"role": "custom", "customType": H, "content": H, "display": True, "timestamp": 5})
    store.append_message({"role": "developer", "content": [{"type": "text", "text": H}], "timestamp": 5})
    store.append_message({"role": "fileMention", "files": [{"path": H, "content": H}], "timestamp": 5})
    store.append_label(first["id"], H)
    store.append_custom(H, {H: H})
    store.append_compaction("Summary " + H, first["id"], 4242, short_summary=H)
    store.append_message(assistant([{"type": "text", "text": "oops"}], stop="error", errorMessage=H))
    store.set_leaf(first["id"])
    store.append_message(assistant([{"type": "text", "text": "another branch " + H}]))
    return store


@pytest.fixture
def exported(tmp_path: Path) -> tuple[SessionStore, str]:
    store = hostile_session(tmp_path)
    out = export_session_html(
        store,
        tmp_path / "out" / "session.html",
        system_prompt="System " + H,
        tools=[{"name": "bash", "description": "Run " + H}, {"name": H, "description": H}],
    )
    assert out == tmp_path / "out" / "session.html"
    return store, out.read_text(encoding="utf-8")


def parse(document: str) -> Page:
    page = Page()
    page.feed(document)
    page.close()
    return page


def test_hostile_strings_render_as_text_and_nothing_executable_remains(
    exported: tuple[SessionStore, str],
) -> None:
    _, document = exported
    page = parse(document)

    tags = [tag for tag, _ in page.elements]
    assert "textarea" not in tags and "iframe" not in tags and "svg" not in tags and "object" not in tags
    for tag, attrs in page.elements:
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        for name in ("href", "src", "action", "formaction"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(("javascript:", "vbscript:")), (tag, attrs)
        if tag == "img":
            assert (attrs.get("src") or "").startswith("data:image/png;base64,")
        if tag == "a":
            assert (attrs.get("href") or "").startswith(("#e", "https://")), attrs

    text = "".join(page.text)
    for hostile in HOSTILE:
        assert hostile in text
    assert "Name " + H in text  # the session name, in <title> and <h1>


def test_only_the_inert_data_block_and_the_hashed_own_script_exist(
    exported: tuple[SessionStore, str],
) -> None:
    _, document = exported
    page = parse(document)
    csp = [
        a.get("content")
        for t, a in page.elements
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp == [CONTENT_SECURITY_POLICY]
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert "img-src data:" in CONTENT_SECURITY_POLICY
    assert "style-src 'unsafe-inline'" in CONTENT_SECURITY_POLICY
    hashes = re.findall(r"'sha256-([^']+)'", CONTENT_SECURITY_POLICY)

    data_blocks = [body for attrs, body in page.scripts if attrs.get("type") == "application/json"]
    code_blocks = [body for attrs, body in page.scripts if attrs.get("type") != "application/json"]
    assert len(data_blocks) == 1 and len(code_blocks) == 1
    digest = base64.b64encode(hashlib.sha256(code_blocks[0].encode()).digest()).decode()
    assert hashes == [digest]
    assert "<" not in data_blocks[0]


def test_embedded_data_holds_the_whole_session(exported: tuple[SessionStore, str]) -> None:
    store, document = exported
    page = parse(document)
    body = next(body for attrs, body in page.scripts if attrs.get("id") == "session-data")
    data = json.loads(body)
    assert data["header"] == store.header
    assert data["entries"] == store.entries
    assert data["leafId"] == store.leaf_id
    assert data["systemPrompt"] == "System " + H
    assert data["tools"] == [{"name": "bash", "description": "Run " + H}, {"name": H, "description": H}]


def test_every_content_kind_is_rendered_with_folding_and_highlighting(
    exported: tuple[SessionStore, str],
) -> None:
    store, document = exported
    page = parse(document)
    details = [attrs.get("class") or "" for tag, attrs in page.elements if tag == "details"]
    assert details.count("thinking") == 2  # thinking + redacted thinking
    assert details.count("tool-call") == 4
    assert "fold" in details  # long tool output, system prompt, tools, compaction
    text = "".join(page.text)
    assert "100 lines" in text  # the long bash output is folded with its size
    assert "pondering" in text and "another branch" in text and "Other branches" in text
    assert "Summary " in text and "4242 tokens" in text
    assert "image/svg+xml not shown" in text
    spans = [attrs.get("class") for tag, attrs in page.elements if tag == "span"]
    assert "pg-k" in spans  # Pygments keyword in the python block
    assert "pg-gd" in spans and "pg-gi" in spans  # the edit diff
    # header counts
    assert "1 user · 3 assistant · 2 tool results" in text
    assert "$0.0375" in text
    # one anchor per entry, linked from the sidebar tree
    anchors = {attrs.get("id") for tag, attrs in page.elements if tag == "article"}
    assert len(anchors) == len(store.entries)
    links = {
        attrs.get("href")
        for tag, attrs in page.elements
        if tag == "a" and "node" in (attrs.get("class") or "")
    }
    assert links == {f"#{a}" for a in anchors}


def test_nothing_in_the_page_refers_to_the_network(exported: tuple[SessionStore, str]) -> None:
    _, document = exported
    page = parse(document)
    assert not [a for t, a in page.elements if t in ("link", "base", "iframe", "video", "audio", "source")]
    for tag, attrs in page.elements:
        if "src" in attrs:
            assert (attrs["src"] or "").startswith("data:"), tag
    assert "@import" not in document and "url(" not in document.split('id="session-data"')[0]


def test_markdown_links_are_limited_to_safe_schemes(tmp_path: Path) -> None:
    store = SessionStore.in_memory(tmp_path)
    store.append_message(
        user(
            "[a](javascript:alert(1)) [b](data:text/html,hi) [c](vbscript:x) [d](JAVASCRIPT:alert(1)) [e](mailto:a@b.c) [f](#top)"
        )
    )
    out = export_session_html(store, tmp_path / "links.html")
    hrefs = [
        a.get("href")
        for t, a in parse(out.read_text(encoding="utf-8")).elements
        if t == "a" and "node" not in (a.get("class") or "")
    ]
    assert hrefs == ["mailto:a@b.c", "#top"]


def test_tools_may_be_given_as_agent_tools(tmp_path: Path) -> None:
    async def never(*_: Any) -> Any:
        raise AssertionError("not called")

    tool = AgentTool(name="read", description="Read " + H, parameters={}, execute=never)
    store = SessionStore.in_memory(tmp_path)
    out = export_session_html(store, tmp_path / "t.html", tools=[tool])
    page = parse(out.read_text(encoding="utf-8"))
    assert "Read " + H in "".join(page.text)
    body = next(body for attrs, body in page.scripts if attrs.get("id") == "session-data")
    assert json.loads(body)["tools"] == [{"name": "read", "description": "Read " + H}]
