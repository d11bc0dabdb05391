"""Print mode's progress on stderr: what the agent is doing while the answer is produced.

Concise by design: the streamed text as it arrives, one line per tool call (name and
its main argument), one line per result (ok or the error's first line), retries and
compactions. Shown when stderr is a terminal, or when ``XCSH_PROGRESS=1``;
``XCSH_PROGRESS=0`` turns it off. stdout keeps only the final answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

MAX_ARG_CHARS = 80
# the argument that says most about a call, per tool (others: the first string argument)
MAIN_ARG = {
    "bash": "command",
    "read": "path",
    "write": "path",
    "edit": "path",
    "grep": "pattern",
    "find": "pattern",
}


def progress_wanted(env: Mapping[str, str], stream: TextIO | None) -> bool:
    """``XCSH_PROGRESS`` (1/0) decides; otherwise only when ``stream`` is a terminal (``None``:
    a closed stderr, which is none)."""
    value = env.get("XCSH_PROGRESS", "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    if stream is None:
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _short(text: str, limit: int = MAX_ARG_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _main_arg(tool: str, args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    key = MAIN_ARG.get(tool)
    value = args.get(key) if key else None
    if not isinstance(value, str):
        value = next((v for k, v in args.items() if isinstance(v, str) and not k.startswith("_")), None)
    return _short(value) if isinstance(value, str) else _short(json.dumps(args, ensure_ascii=False))


def _result_text(result: Any) -> str:
    content = result.get("content") if isinstance(result, dict) else None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and str(block.get("text", "")).strip():
                return str(block["text"]).strip().splitlines()[0]
    return ""


class ProgressPrinter:
    """An event listener writing progress lines to ``out``."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._in_text = False

    def _line(self, text: str) -> None:
        if self._in_text:
            self._out.write("\n")
            self._in_text = False
        self._out.write(text + "\n")
        self._out.flush()

    def __call__(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_update":
            update = event.get("assistantMessageEvent") or {}
            if update.get("type") == "text_delta" and update.get("delta"):
                self._out.write(str(update["delta"]))
                self._out.flush()
                self._in_text = True
        elif kind == "tool_execution_start":
            tool = str(event.get("toolName", ""))
            self._line(f"→ {tool} {_main_arg(tool, event.get('args'))}".rstrip())
        elif kind == "tool_execution_end":
            tool = str(event.get("toolName", ""))
            if event.get("isError"):
                self._line(f"✗ {tool}: {_short(_result_text(event.get('result')) or 'failed')}")
            else:
                self._line(f"✓ {tool}")
        elif kind == "auto_retry_start":
            attempt, most = event.get("attempt"), event.get("maxAttempts")
            delay = int(event.get("delayMs") or 0) / 1000
            error = _short(str(event.get("errorMessage") or ""))
            self._line(f"retry {attempt}/{most} in {delay:g}s: {error}")
        elif kind == "auto_compaction_start":
            self._line("compacting the conversation…")
        elif kind == "agent_end" and self._in_text:
            self._out.write("\n")
            self._out.flush()
            self._in_text = False
