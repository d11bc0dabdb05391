"""The ``bash`` tool: run a shell command for the model.

Contract (agent-behaviour §13.1, §10):

- ``bash -c <command>`` via :func:`xcsh.coding.bash.process.run_shell_process`: its own
  process group, stdin ``/dev/null``, stdout+stderr merged in arrival order, output
  sanitised; abort or timeout kills the whole group. Each call is independent (no
  persistent ``cd``/exports, unlike user bash); it starts in ``cwd`` (default: the
  session cwd) with the non-interactive environment plus ``env``.
- ``timeout`` in seconds, default 300, clamped to 1–3600.
- Output streams to ``on_update`` as partial results (at most one every 100 ms, the
  first at once). Only the last 51 200 bytes are returned; the full output (up to
  50 MiB) is then kept in a temp file named in the notice and in
  ``details.fullOutputPath``, readable until the session ends (``coding.bash.spill``).
- ``head``/``tail`` keep the first/last N lines of the whole output (both: head
  first, then tail), then the byte budget: with ``head`` alone the first lines that fit,
  else the last; the notice names the lines shown and says when the budget cut them.
  Empty output → ``(no output)``.
- Non-zero exit → ToolError ``<output>\\n\\nCommand exited with code N``; timeout →
  ToolError ending ``[Command timed out after N seconds]``; abort → ToolError ending
  ``Command aborted``.
- Class exclusive, abortable.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.bash import OUTPUT_LIMIT_BYTES
from xcsh.coding.bash.capture import SPILL_LIMIT_BYTES
from xcsh.coding.bash.process import (
    BashLaunchError,
    ProcessOutcome,
    find_bash,
    run_shell_process,
    shell_environment,
)
from xcsh.coding.tools.defs_search import BASH_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_search import BASH_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.defs_search import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, MIN_TIMEOUT_S
from xcsh.coding.tools.errors import ToolAbortedError, ToolError
from xcsh.coding.tools.paths import display_path, resolve_path
from xcsh.coding.tools.truncate import format_size, head_bytes, truncate_head, truncate_tail

UPDATE_INTERVAL_S = 0.1
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def clamp_timeout(value: Any) -> float:
    """The effective timeout in seconds for a ``timeout`` argument."""
    if value is None:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"timeout must be a number of seconds, got {value!r}") from exc
    return min(max(seconds, MIN_TIMEOUT_S), MAX_TIMEOUT_S)


def _seconds(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _positive_int(args: dict[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) < 1:
        raise ToolError(f"{name} must be a positive number of lines")
    return int(value)


def _output_lines(outcome: ProcessOutcome) -> Iterator[str]:
    """Every line of the command's output (from its spill file when it was saved to one)."""
    capture = outcome.capture
    if capture.spill_path is None:
        yield from _split_lines(capture.tail())
        return
    with open(capture.spill_path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            yield line.removesuffix("\n")


def _selected(lines: Iterable[str], head: int | None, tail: int | None) -> tuple[list[str], int, int]:
    """(the lines head/tail select, index of the first, total lines), holding no more lines in
    memory than the byte budget could show."""
    kept: deque[str] = deque()
    kept_bytes = 0
    total = 0
    first = 0
    for line in lines:
        total += 1
        if head is not None and total > head:
            continue
        if head is not None and tail is None:
            if kept_bytes <= OUTPUT_LIMIT_BYTES:  # past the budget no further line can show
                kept.append(line)
                kept_bytes += len(line) + 1
            continue
        kept.append(line)
        kept_bytes += len(line) + 1
        while len(kept) > 1 and (
            (tail is not None and len(kept) > tail) or kept_bytes - len(kept[0]) - 1 > OUTPUT_LIMIT_BYTES * 4
        ):
            kept_bytes -= len(kept.popleft()) + 1
            first += 1
    return list(kept), first, total


def _filtered(outcome: ProcessOutcome, head: int | None, tail: int | None) -> tuple[str, str | None]:
    """Apply head/tail to the whole output, then the byte budget (head keeps the first lines that
    fit, tail the last); returns text and the notice naming the lines shown."""
    lines, first, total = _selected(_output_lines(outcome), head, tail)
    text = "\n".join(lines)
    cut = (
        truncate_tail(text, max_lines=len(lines) or 1, max_bytes=OUTPUT_LIMIT_BYTES)
        if tail is not None
        else None
    )
    if cut is None:
        cut = truncate_head(text, max_lines=len(lines) or 1, max_bytes=OUTPUT_LIMIT_BYTES)
    body = cut.content
    start = first + 1
    if tail is not None and cut.truncated:
        start = first + len(lines) - cut.output_lines + 1
    partial = ""
    if cut.first_line_exceeds_limit:  # head: one line longer than the budget, shown cut
        body = head_bytes(lines[0], OUTPUT_LIMIT_BYTES)
        partial = f"line {start} cut at {format_size(OUTPUT_LIMIT_BYTES)}; "
        shown_lines = 1
    else:
        shown_lines = cut.output_lines if lines else 0
    end = start + shown_lines - 1
    if cut.last_line_partial:  # tail: one line longer than the budget, its end shown
        partial = f"line {end} cut to its last {format_size(OUTPUT_LIMIT_BYTES)}; "
    if not cut.truncated and len(lines) == total:
        return body, None
    which = ", ".join(
        f"{name}={value}" for name, value in (("head", head), ("tail", tail)) if value is not None
    )
    limit = f", {format_size(OUTPUT_LIMIT_BYTES)} limit" if cut.truncated else ""
    saved = _saved(outcome)
    return body, f"[Showing lines {start}-{end} of {total} ({partial}{which}{limit}){saved}]"


def _saved(outcome: ProcessOutcome) -> str:
    capture = outcome.capture
    if capture.spill_path is None:
        return ""
    if capture.spill_capped:
        return f". Output saved up to its first {format_size(SPILL_LIMIT_BYTES)}: {capture.spill_path}"
    return f". Full output: {capture.spill_path}"


def _unfiltered(outcome: ProcessOutcome) -> tuple[str, str | None, dict[str, Any]]:
    capture = outcome.capture
    text = capture.tail()
    if not capture.truncated:
        return text.rstrip("\n"), None, {}
    shown = text  # already the last OUTPUT_LIMIT_BYTES, cut at a line start
    total = capture.total_newlines + (0 if text.endswith("\n") else 1)
    shown_lines = len(_split_lines(shown))
    start = max(1, total - shown_lines + 1)
    notice = f"[Showing lines {start}-{total} of {total} ({format_size(OUTPUT_LIMIT_BYTES)} limit){_saved(outcome)}]"
    details = {
        "truncation": {
            "direction": "tail",
            "truncatedBy": "bytes",
            "totalLines": total,
            "totalBytes": capture.total_bytes,
            "outputLines": shown_lines,
            "outputBytes": len(shown.encode("utf-8")),
        },
        "fullOutputPath": capture.spill_path,
    }
    return shown.rstrip("\n"), notice, details


class _Throttle:
    """Forward a rolling tail of the output to ``on_update`` at most every ``interval`` seconds."""

    def __init__(self, on_update: ToolUpdate, interval: float) -> None:
        self._on_update = on_update
        self._interval = interval
        self._text = ""
        self._last: float | None = None

    def __call__(self, chunk: str) -> None:
        self._text = (self._text + chunk)[-OUTPUT_LIMIT_BYTES:]
        now = time.monotonic()
        if self._last is not None and now - self._last < self._interval:
            return
        self._last = now
        self._on_update({"content": [{"type": "text", "text": self._text}]})


def create_bash_tool(
    cwd: Path, *, environment: Mapping[str, str] | None = None, update_interval_s: float = UPDATE_INTERVAL_S
) -> AgentTool:
    """The ``bash`` tool bound to the session cwd; ``environment`` is added to every command."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolError("command is required")
        timeout_s = clamp_timeout(args.get("timeout"))
        head, tail = _positive_int(args, "head"), _positive_int(args, "tail")
        run_dir = resolve_path(cwd, str(args["cwd"])) if args.get("cwd") else Path(cwd)
        if not run_dir.is_dir():
            raise ToolError(f"Working directory not found: {display_path(cwd, run_dir)}")
        extra = dict(environment or {})
        env_arg = args.get("env") or {}
        if not isinstance(env_arg, dict):
            raise ToolError("env must be an object mapping variable names to string values")
        for name, value in env_arg.items():
            if not _ENV_NAME_RE.match(str(name)):
                raise ToolError(f"Invalid environment variable name: {name!r}")
            extra[str(name)] = str(value)
        try:
            outcome = await run_shell_process(
                [find_bash(), "-c", command],
                cwd=run_dir,
                env=shell_environment(extra),
                timeout_s=timeout_s,
                signal=signal,
                on_output=_Throttle(on_update, update_interval_s),
            )
        except BashLaunchError as exc:
            raise ToolError(str(exc)) from exc
        details: dict[str, Any] = {}
        if head is not None or tail is not None:
            body, notice = _filtered(outcome, head, tail)
            if outcome.capture.spill_path is not None:
                details["fullOutputPath"] = outcome.capture.spill_path
        else:
            body, notice, details = _unfiltered(outcome)
        text = body.rstrip("\n") or "(no output)"
        if notice:
            text += f"\n\n{notice}"
        if outcome.timed_out:
            raise ToolError(f"{text}\n\n[Command timed out after {_seconds(timeout_s)} seconds]")
        if outcome.aborted:
            raise ToolAbortedError(f"{text}\n\nCommand aborted")
        code = outcome.exit_code
        if code is not None and code < 0:
            raise ToolError(f"{text}\n\nCommand was killed by signal {-code}")
        if code:
            raise ToolError(f"{text}\n\nCommand exited with code {code}")
        result: AgentToolResult = {"content": [{"type": "text", "text": text}]}
        if details:
            result["details"] = details
        return result

    return AgentTool(
        name="bash",
        label="Bash",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
    )
