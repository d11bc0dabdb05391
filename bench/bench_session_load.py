"""Benchmark: open (read + parse) a 50 000-entry session file and rebuild its context.

Run as ``python bench/bench_session_load.py [entries]``; prints a small table of
wall time, entries per second and peak traced memory. Nothing is asserted.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from xcsh.coding.sessions.context import build_session_context
from xcsh.coding.sessions.entries import generate_entry_id, iso_now, new_header, serialize_entry
from xcsh.coding.sessions.store import SessionStore

T = TypeVar("T")


def _message(i: int) -> dict[str, Any]:
    if i % 3 == 0:
        return {
            "role": "user",
            "content": [{"type": "text", "text": f"question {i} " + "word " * 40}],
            "timestamp": i,
        }
    if i % 3 == 1:
        return {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"answer {i} " + "token " * 80},
                {
                    "type": "toolCall",
                    "id": f"call{i}",
                    "name": "read",
                    "arguments": {"path": f"src/file{i}.py"},
                },
            ],
            "api": "openai-completions",
            "provider": "fake",
            "model": "fake-model",
            "usage": {
                "input": 1000,
                "output": 100,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 1100,
                "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
            },
            "stopReason": "toolUse",
            "timestamp": i,
        }
    return {
        "role": "toolResult",
        "toolCallId": f"call{i - 1}",
        "toolName": "read",
        "content": [{"type": "text", "text": "line of file content\n" * 30}],
        "isError": False,
        "timestamp": i,
    }


def build_file(directory: Path, count: int) -> Path:
    """Write a linear session of ``count`` message entries directly (fast, no fsync per line)."""
    header = new_header(str(directory))
    path = directory / "bench.jsonl"
    ids: set[str] = set()
    parent: str | None = None
    with path.open("w", encoding="utf-8") as handle:
        handle.write(serialize_entry(header) + "\n")
        for i in range(count):
            entry_id = generate_entry_id(ids)
            ids.add(entry_id)
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": iso_now(),
                "message": _message(i),
            }
            handle.write(serialize_entry(entry) + "\n")
            parent = entry_id
    return path


def measure(action: Callable[[], T]) -> tuple[T, float, int]:
    """Time one run, then repeat it under tracemalloc (which slows allocation) for the peak."""
    started = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - started
    _dispose(result)
    tracemalloc.start()
    result = action()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return result, elapsed, peak


def _dispose(result: object) -> None:
    if isinstance(result, SessionStore):
        result.close()  # the second run must be able to take the file lock again


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        started = time.perf_counter()
        path = build_file(directory, count)
        build_s = time.perf_counter() - started
        size_mb = path.stat().st_size / 1e6

        def open_store() -> SessionStore:
            return SessionStore.open(path, cwd_for_new=directory)

        store, open_s, open_peak = measure(open_store)
        entries, leaf = store.entries, store.leaf_id
        context, context_s, context_peak = measure(lambda: build_session_context(entries, leaf))
        store.close()

    print(f"session file: {count:,} entries, {size_mb:.1f} MB (written in {build_s:.2f} s)")
    print(f"{'step':<28}{'seconds':>10}{'entries/s':>14}{'peak MB':>10}  (peak: tracemalloc, separate run)")
    for name, seconds, peak in (
        ("open (read + parse)", open_s, open_peak),
        ("build_session_context", context_s, context_peak),
    ):
        print(f"{name:<28}{seconds:>10.3f}{count / seconds:>14,.0f}{peak / 1e6:>10.1f}")
    print(f"context messages: {len(context.messages):,}")


if __name__ == "__main__":
    main()
