"""The export written in pieces is the document rendered whole, and its shortcuts change no byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coding.test_export_html import H, hostile_session
from xcsh.coding.export import export_session_html
from xcsh.coding.export.file import export_session_file
from xcsh.coding.export.html import _JSON_BATCH, _json_for_script, render_session_html
from xcsh.coding.export.render import highlight_code
from xcsh.coding.export.tree import SNIPPET, snippet
from xcsh.coding.sessions.store import SessionStore


def whole_script_json(data: object) -> str:
    """The embedded data as one ``json.dumps`` of everything, then escaped for ``<script>``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def long_hostile_session(tmp_path: Path) -> SessionStore:
    store = hostile_session(tmp_path)
    odd = ["\u2028 \u2029 </script> & é 漢 \U0001f600", "lone \ud800 surrogate", "x" * 5000, ""]
    for i in range(2 * _JSON_BATCH + 7):  # entries in three batches of the embedded data
        text = f"{odd[i % len(odd)]} {i} {H}"
        store.append_message({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i})
    return store


def test_the_streamed_file_is_the_whole_document_encoded(tmp_path: Path) -> None:
    store = long_hostile_session(tmp_path)
    tools = [{"name": "bash", "description": "Run " + H}]
    document = render_session_html(
        header=store.header,
        entries=store.entries,
        leaf_id=store.leaf_id,
        system_prompt="System \ud800 " + H,
        tools=tools,
    )
    out = export_session_html(store, tmp_path / "out.html", system_prompt="System \ud800 " + H, tools=tools)
    assert out.read_bytes() == document.encode("utf-8", "backslashreplace")
    assert len(document) > 1 << 20  # more than one write
    data = {
        "header": store.header,
        "entries": store.entries,
        "leafId": store.leaf_id,
        "systemPrompt": "System \ud800 " + H,
        "tools": tools,
    }
    assert f'<script type="application/json" id="session-data">{whole_script_json(data)}</script>' in document
    assert store.path is not None
    exported = export_session_file(store.path, tmp_path / "file.html")
    leaf = store.entries[-1]["id"]
    again = render_session_html(header=store.header, entries=store.entries, leaf_id=leaf)
    assert exported.read_bytes() == again.encode("utf-8", "backslashreplace")


@pytest.mark.parametrize("entries", [0, 1, _JSON_BATCH, _JSON_BATCH + 1, 3 * _JSON_BATCH])
def test_the_embedded_data_in_batches_is_one_dump_of_the_whole(entries: int) -> None:
    items: list[Any] = [{"i": i, "t": "<&>\u2028\ud800é", "n": [1.5, None, True]} for i in range(entries)]
    data = {"header": {"id": "x<"}, "entries": items, "leafId": None, "systemPrompt": "", "tools": []}
    assert "".join(_json_for_script(data)) == whole_script_json(data)


WORDS = st.sampled_from(["a", "bc", "word", "é", "\u3000", "\n", "\t"])
SPACES = st.integers(min_value=1, max_value=120).map(lambda n: " " * n)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(WORDS, SPACES), max_size=200))
@example(["word "] * 14 + [" " * 300] + ["word "] * 20)  # the head joins to fewer than SNIPPET
@example(["word "] * 16 + [" " * 300] + ["word "] * 20)  # … and to a few more
@example(["x" * 79, " " * 300, "y"])
@example(["x" * 500])
def test_a_snippet_is_the_whole_text_collapsed_and_cut(pieces: list[str]) -> None:
    text = "".join(pieces)
    entry = {"type": "message", "id": "1", "message": {"role": "user", "content": text}}
    whole = " ".join(text.split())
    assert snippet(entry) == (whole[:SNIPPET] + "…" if len(whole) > SNIPPET else whole)


@pytest.mark.parametrize(("code", "language"), [('{\n  "path": "a.py"\n}', "json"), ("ls -la | wc", "bash")])
def test_code_met_again_is_highlighted_as_pygments_highlights_it(code: str, language: str) -> None:
    from pygments import highlight  # type: ignore[import-untyped]
    from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
    from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]

    fresh = highlight(code, get_lexer_by_name(language), HtmlFormatter(nowrap=True, classprefix="pg-"))
    assert '<span class="pg-' in fresh
    for _ in range(3):
        assert highlight_code(code, language) == f'<pre class="code"><code>{fresh}</code></pre>'
