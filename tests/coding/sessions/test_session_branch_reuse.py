"""The store walks a branch once and reuses it: what it answers is what a fresh walk gives.

Resuming a session reads the current branch twice (the live context, then the todos); the
store keeps the last branch it walked until an entry, the leaf or an entry behind an id
changes. These tests compare every answer with the whole computation from the entries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from coding.sessions.messages import assistant, user
from conftest import fake_models_yml
from xcsh.coding.factory import StartupOptions, create_session
from xcsh.coding.sessions.context import build_session_context, path_to
from xcsh.coding.sessions.store import SessionStore
from xcsh.coding.todos import todos_of
from xcsh.coding.todos.state import latest_todo_phases, without_done


def _todo_result(call_id: str, task: str, status: str = "pending") -> dict[str, Any]:
    phases = [{"id": "phase-1", "name": "P", "tasks": [{"id": "t1", "content": task, "status": status}]}]
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "todo_write",
        "content": [{"type": "text", "text": "ok"}],
        "details": {"phases": phases},
        "isError": False,
        "timestamp": 3,
    }


def _fresh_path(store: SessionStore, leaf_id: str | None) -> list[dict[str, Any]]:
    by_id = {e["id"]: e for e in store.entries}
    leaf = by_id.get(leaf_id) if leaf_id is not None else None
    return path_to(by_id, leaf) if leaf is not None else []  # type: ignore[return-value]


def _assert_answers_match_a_fresh_walk(store: SessionStore, other: str | None) -> None:
    for leaf in (store.leaf_id, other, store.leaf_id):
        assert store.branch_path(leaf) == _fresh_path(store, leaf)
    assert store.build_context() == build_session_context(store.entries, store.leaf_id)
    handed_out = store.branch_path(store.leaf_id)
    handed_out.clear()  # a caller's list is its own
    assert store.branch_path(store.leaf_id) == _fresh_path(store, store.leaf_id)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "level", "label", "compaction", "leaf", "replace", "todo"]),
        st.integers(min_value=0, max_value=1_000),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_every_branch_and_context_answer_equals_a_fresh_walk_after_any_changes(
    ops: list[tuple[str, int]],
) -> None:
    store = SessionStore.in_memory(Path("/nowhere"))
    for step, (op, pick) in enumerate(ops):
        ids = [e["id"] for e in store.entries]
        chosen = ids[pick % len(ids)] if ids else None
        if op == "user":
            store.append_message(user(f"u{step}"))  # type: ignore[arg-type]
        elif op == "assistant":
            store.append_message(assistant(f"a{step}"))  # type: ignore[arg-type]
        elif op == "level":
            store.append_thinking_level_change(["off", "high", None][pick % 3])
        elif op == "label" and chosen is not None:
            store.append_label(chosen, f"l{step}" if pick % 2 else None)
        elif op == "compaction" and chosen is not None:
            store.append_compaction(f"s{step}", chosen, 10)
        elif op == "leaf":
            store.set_leaf(chosen if pick % 4 else None)
        elif op == "replace" and chosen is not None:
            entry = store.get_entry(chosen)
            assert entry is not None
            replacement = {**entry, "type": "message", "message": user(f"r{step}")}
            store.rewrite_entries({chosen: replacement})  # type: ignore[dict-item]
        elif op == "todo":
            store.append_message(_todo_result(f"c{step}", f"task {step}"))  # type: ignore[arg-type]
        _assert_answers_match_a_fresh_walk(store, chosen)


def test_a_resumed_session_restores_the_context_and_the_todos_of_its_current_branch(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    with SessionStore.create(sessions, tmp_path) as store:
        store.append_model_change("fake/fake-model")
        store.append_thinking_level_change("off")
        first = store.append_message(user("start"))  # type: ignore[arg-type]
        store.append_message(_todo_result("c1", "abandoned branch's task"))  # type: ignore[arg-type]
        store.set_leaf(first["id"])
        store.append_message(assistant("on the kept branch"))  # type: ignore[arg-type]
        store.append_message(_todo_result("c2", "kept task"))  # type: ignore[arg-type]
        store.append_message(_todo_result("c3", "finished task", "completed"))  # type: ignore[arg-type]
        store.append_message(_todo_result("c4", "kept task"))  # type: ignore[arg-type]
        store.append_message(user("go on"))  # type: ignore[arg-type]
        path = store.path
    assert path is not None
    with SessionStore.open(path, cwd_for_new=tmp_path) as reread:  # the entries as a resume reads them
        entries, leaf = reread.entries, reread.leaf_id
    expected_messages = build_session_context(entries, leaf).messages
    branch = path_to({e["id"]: e for e in entries}, next(e for e in entries if e["id"] == leaf))
    expected_todos = without_done(latest_todo_phases(branch))  # type: ignore[arg-type]
    assert [t["content"] for p in expected_todos for t in p["tasks"]] == ["kept task"]

    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "models.yml").write_text(fake_models_yml("http://127.0.0.1:9"))
    session = create_session(
        StartupOptions(
            cwd=tmp_path,
            agent_dir=agent_dir,
            env={},
            model="fake/fake-model",
            session=str(path),
            no_tools=True,
        )
    )
    try:
        assert list(session.messages) == expected_messages
        todos = todos_of(session)
        assert todos is not None and todos.phases == expected_todos
    finally:
        session.shutdown()
