"""The long session files of ``bench_long_sessions.py``, written straight to disk (no agent).

:func:`build_session` writes turns of a user prompt, one to four assistant tool calls with their
results (1–3 KB each, every 40th a 40 KB output) and a final answer; every ~1,000 entries the
conversation goes back to an earlier user message (an abandoned branch), a ``model_change`` and a
label here and there, and one ``compaction`` entry 60 % of the way in. Seeded: the same file
for the same arguments.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from xcsh.coding.sessions.entries import (
    generate_entry_id,
    iso_now,
    new_header,
    serialize_entry,
    session_file_name,
)

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "from",
    "or",
    "at",
    "an",
    "which",
]


def _prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _usage(rng: random.Random, context: int) -> dict[str, Any]:
    output = rng.randint(50, 800)
    return {
        "input": context,
        "output": output,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": context + output,
        "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
    }


class _Writer:
    """Appends entries to a session file, tracking ids, the parent and the user-message ids."""

    def __init__(self, path: Path, cwd: str) -> None:
        self.handle = path.open("w", encoding="utf-8")
        self.handle.write(serialize_entry(new_header(cwd)) + "\n")
        self.ids: set[str] = set()
        self.parent: str | None = None
        self.users: list[str] = []
        self.count = 0
        self.clock = 1_700_000_000_000

    def add(self, kind: str, **fields: Any) -> str:
        entry_id = generate_entry_id(self.ids)
        self.ids.add(entry_id)
        entry = {"type": kind, "id": entry_id, "parentId": self.parent, "timestamp": iso_now(), **fields}
        self.handle.write(serialize_entry(entry) + "\n")
        self.parent = entry_id
        self.count += 1
        return entry_id

    def message(self, message: dict[str, Any]) -> str:
        self.clock += 1000
        message["timestamp"] = self.clock
        entry_id = self.add("message", message=message)
        if message["role"] == "user":
            self.users.append(entry_id)
        return entry_id


def build_session(directory: Path, cwd: str, entries: int, seed: int = 7) -> dict[str, Any]:
    """Write a realistic session of about ``entries`` entries in ``directory``; describe it."""
    rng = random.Random(seed)
    header_probe = new_header(cwd)
    path = directory / session_file_name(header_probe)
    w = _Writer(path, cwd)
    w.add("model_change", model="fake/fake-model")
    w.add("thinking_level_change", thinkingLevel="off")
    compacted = False
    branches = 0
    large = 0
    call = 0
    context = 2000
    while w.count < entries:
        if w.count > 0 and w.count // 1000 > branches and len(w.users) > 3:
            branches += 1  # go back to an earlier user message: what followed is an abandoned branch
            target = w.users[-rng.randint(2, 3)]
            w.parent = target
        if not compacted and w.count >= entries * 0.6 and len(w.users) > 10:
            compacted = True
            w.add(
                "compaction",
                summary="## Goal\n" + _prose(rng, 3000),
                shortSummary=_prose(rng, 80),
                firstKeptEntryId=w.users[-4],
                tokensBefore=context,
            )
        if rng.random() < 0.01:
            w.add("label", targetId=rng.choice(w.users) if w.users else w.parent, label=f"mark {w.count}")
        w.message({"role": "user", "content": [{"type": "text", "text": _prose(rng, rng.randint(60, 800))}]})
        for _ in range(rng.randint(1, 4)):
            call += 1
            tool = rng.choice(["read", "bash", "edit", "grep"])
            w.message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": _prose(rng, rng.randint(40, 400))},
                        {
                            "type": "toolCall",
                            "id": f"call_{call}",
                            "name": tool,
                            "arguments": {"path": f"src/pkg/module_{call % 97}.py", "limit": 200},
                        },
                    ],
                    "api": "openai-completions",
                    "provider": "fake",
                    "model": "fake-model",
                    "usage": _usage(rng, context),
                    "stopReason": "toolUse",
                }
            )
            big = call % 40 == 0
            large += big
            size = 40_000 if big else rng.randint(1000, 3000)
            w.message(
                {
                    "role": "toolResult",
                    "toolCallId": f"call_{call}",
                    "toolName": tool,
                    "content": [
                        {"type": "text", "text": ("    line = value  # code\n" * (size // 25 + 1))[:size]}
                    ],
                    "isError": rng.random() < 0.05,
                }
            )
            context += size // 4
        w.message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": _prose(rng, rng.randint(200, 1500))}],
                "api": "openai-completions",
                "provider": "fake",
                "model": "fake-model",
                "usage": _usage(rng, context),
                "stopReason": "stop",
            }
        )
    w.handle.close()
    return {
        "path": path,
        "entries": w.count,
        "bytes": path.stat().st_size,
        "branches": branches,
        "large_outputs": large,
        "users": w.users,
    }
