"""Benchmark: compaction's pure work — token estimates and the cut-point search — vs. session length.

Run: ``python bench/bench_compaction.py [max_turns]``. Builds in-memory sessions of
growing length (each turn: a prompt, a tool call, its result, an answer) and times
``estimate_messages_tokens`` over the live context, ``find_cut_point`` and the whole
``prepare_compaction``. Prints a table and writes ``bench/results/compaction.json``.
Nothing is asserted: these are measurements.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from xcsh.coding.compaction.prepare import find_cut_point, prepare_compaction
from xcsh.coding.compaction.tokens import estimate_messages_tokens
from xcsh.coding.sessions.store import SessionStore

RESULTS = Path(__file__).resolve().parent / "results"


def _usage(prompt: int) -> dict[str, Any]:
    return {"input": prompt, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": prompt + 50}


def build_store(turns: int) -> SessionStore:
    store = SessionStore.in_memory(Path(tempfile.gettempdir()))
    store.append_model_change("fake/fake-model")
    store.append_thinking_level_change(None)
    for i in range(turns):
        store.append_message(
            {"role": "user", "content": [{"type": "text", "text": f"q{i} " * 50}], "timestamp": i}
        )
        call = {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": f"src/f{i}.py"}}
        store.append_message(
            {
                "role": "assistant",
                "content": [call],
                "stopReason": "toolUse",
                "usage": _usage(i * 900),
                "timestamp": i,
            }
        )
        store.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{i}",
                "toolName": "read",
                "content": [{"type": "text", "text": "line\n" * 400}],
                "isError": False,
                "timestamp": i,
            }
        )
        store.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"answer {i} " * 40}],
                "stopReason": "stop",
                "usage": _usage(i * 900 + 600),
                "timestamp": i,
            }
        )
    return store


def _time(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    max_turns = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    sizes = [n for n in (100, 500, 1000, 2500, 5000, 10000) if n <= max_turns]
    rows = []
    print(
        f"{'turns':>7} {'entries':>8} {'estimate ms':>12} {'cut point ms':>13} {'prepare ms':>11} {'us/entry':>9}"
    )
    for turns in sizes:
        store = build_store(turns)
        path = store.branch_path(store.leaf_id)
        messages = store.build_context().messages
        repeat = 5 if turns <= 2500 else 2
        estimate = _time(partial(estimate_messages_tokens, messages), repeat)
        cut = _time(partial(find_cut_point, path, 0, len(path), 20000), repeat)
        prepare = _time(partial(prepare_compaction, path, keep_recent_tokens=20000), repeat)
        per_entry = prepare / len(path) * 1e6
        rows.append(
            {
                "turns": turns,
                "entries": len(path),
                "estimate_s": estimate,
                "cut_point_s": cut,
                "prepare_s": prepare,
                "prepare_us_per_entry": per_entry,
            }
        )
        print(
            f"{turns:>7} {len(path):>8} {estimate * 1e3:>12.2f} {cut * 1e3:>13.2f} "
            f"{prepare * 1e3:>11.2f} {per_entry:>9.2f}"
        )
        store.close()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compaction.json").write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
