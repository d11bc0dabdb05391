"""The shortcuts taken for long sessions give exactly what the whole computation gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xcsh.coding import host_ops
from xcsh.coding.export import render
from xcsh.coding.export.html import render_session_html
from xcsh.coding.sessions.store import SessionStore

WHITESPACE_HEAVY = st.text(
    alphabet=st.sampled_from(["a", "é", " ", "\n", "\t", "\u2028", "\u3000", "b", "\x1c"]), max_size=2000
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(WHITESPACE_HEAVY, st.text(max_size=2000)))
def test_a_preview_of_the_head_of_a_text_is_the_preview_of_the_whole_text(text: str) -> None:
    whole = " ".join(text.split())[: host_ops.MAX_PREVIEW]
    assert host_ops._one_line(text)[: host_ops.MAX_PREVIEW] == whole


def _tool_turns(store: SessionStore) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("bash", {"command": "ls -la | grep py"}),
        ("write", {"path": "src/a.py", "content": "def f():\n    return 1\n"}),
        ("write", {"path": "web/index.html", "content": "<p>x</p>"}),
        ("write", {"path": "notes.unknownext", "content": "plain"}),
        ("edit", {"path": "src/a.py", "oldText": "return 1", "newText": "return 2"}),
        ("read", {"path": "src/a.py"}),
    ]
    for round_ in range(3):
        store.append_message({"role": "user", "content": f"round {round_}\n```python\nx = {round_}\n```"})
        for i, (name, args) in enumerate(calls):
            call_id = f"c{round_}_{i}"
            store.append_message(
                {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": args}],
                    "api": "openai-completions",
                    "provider": "fake",
                    "model": "m",
                    "stopReason": "toolUse",
                }
            )
            store.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": "ok " * 50}],
                    "isError": False,
                }
            )


def test_an_export_with_lexers_made_once_is_the_export_with_a_new_lexer_for_every_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore.in_memory(tmp_path)
    _tool_turns(store)

    def page() -> str:
        return render_session_html(header=store.header, entries=store.entries, leaf_id=store.leaf_id)

    render._lexer.cache_clear()
    render._lexer_for_name.cache_clear()
    cached = page()
    assert render._lexer.cache_info().hits > 0 and render._lexer_for_name.cache_info().hits > 0
    monkeypatch.setattr(render, "_lexer", render._lexer.__wrapped__)
    monkeypatch.setattr(render, "_lexer_for_name", render._lexer_for_name.__wrapped__)
    assert page() == cached
    assert 'class="pg-' in cached  # highlighting happened on both paths
