"""The exported session page in a real headless Chromium: no injected script runs, code is
highlighted, folded parts unfold, and a screenshot is kept as a CI artifact."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from xcsh.coding.export.html import export_session_html
from xcsh.coding.sessions.store import SessionStore

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Each payload would mark the page if it ever executed.
PAYLOADS = [
    "<script>document.title='pwned';document.documentElement.setAttribute('data-pwned','script')</script>",
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">",
    "<svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\"></svg>",
    "[click](javascript:document.documentElement.setAttribute('data-pwned','link'))",
]
TITLE = "Browser check"

requires_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not on PATH (apt-get install chromium)"
)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # belt and braces: no name resolves to the outside
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def assistant(content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "x",
        "provider": "fake",
        "model": "fake-model",
        "usage": {},
        "stopReason": "stop",
        "timestamp": 2,
    }


def export(tmp_path: Path) -> Path:
    store = SessionStore.in_memory(tmp_path)
    store.set_title(TITLE)
    store.append_message({"role": "user", "content": "\n\n".join(PAYLOADS), "timestamp": 1})
    store.append_message(
        assistant(
            [
                {"type": "thinking", "thinking": "A long line of reasoning.\n\n" + "Step. " * 400},
                {"type": "text", "text": "```python\ndef answer():\n    return 42\n```\n\n" + PAYLOADS[0]},
                {"type": "toolCall", "id": "c1", "name": PAYLOADS[1], "arguments": {"command": PAYLOADS[2]}},
            ]
        )
    )
    store.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": PAYLOADS[0]}],
            "isError": False,
            "timestamp": 3,
        }
    )
    return export_session_html(store, tmp_path / "session.html", system_prompt=PAYLOADS[0])


class Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


@requires_chromium
def test_no_injected_script_runs_while_the_page_own_script_does(tmp_path: Path) -> None:
    page = export(tmp_path)
    dom = Dom()
    dom.feed(chromium(tmp_path, "--dump-dom", page.as_uri()).stdout)
    html_attrs = next(attrs for tag, attrs in dom.elements if tag == "html")
    assert html_attrs.get("data-js") == "1"  # scripts can run: the hashed search script did
    assert "data-pwned" not in html_attrs
    assert dom.title == f"{TITLE} · xcsh session"
    assert not [a for t, a in dom.elements if t in ("svg", "iframe") or (t == "img" and a.get("src") == "x")]
    search = next(attrs for tag, attrs in dom.elements if tag == "input" and attrs.get("id") == "tree-search")
    assert "hidden" not in search
    spans = {attrs.get("class") for tag, attrs in dom.elements if tag == "span"}
    assert {"pg-k", "pg-nf", "pg-mi"} <= spans  # def, answer, 42 highlighted by Pygments
    assert [a.get("class") for t, a in dom.elements if t == "details"].count("thinking") == 1


@requires_chromium
def test_screenshot_is_kept_and_an_open_details_element_renders_its_content(tmp_path: Path) -> None:
    page = export(tmp_path)
    document = page.read_text(encoding="utf-8")
    assert document.count('<details class="thinking">') == 1
    opened = tmp_path / "opened.html"
    opened.write_text(
        document.replace('<details class="thinking">', '<details class="thinking" open>'), encoding="utf-8"
    )

    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        "folded": ARTIFACTS / "export-session.png",
        "folded-again": tmp_path / "folded-again.png",
        "opened": ARTIFACTS / "export-session-thinking-open.png",
    }
    size = "--window-size=1280,1400"
    chromium(tmp_path, size, f"--screenshot={shots['folded']}", page.as_uri())
    chromium(tmp_path, size, f"--screenshot={shots['folded-again']}", page.as_uri())
    chromium(tmp_path, size, f"--screenshot={shots['opened']}", opened.as_uri())

    images = {name: path.read_bytes() for name, path in shots.items()}
    assert all(data.startswith(b"\x89PNG\r\n\x1a\n") for data in images.values())
    assert images["folded"] == images["folded-again"]  # rendering is deterministic …
    assert images["opened"] != images["folded"]  # … so the difference is the unfolded thinking text
