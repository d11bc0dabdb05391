"""The ``python`` tool: run cells in the session's persistent IPython kernel.

Contract (reference ``python``): ``{cells: [{code, title?}], timeout? (s, default
30, clamped 1-600, per cell), cwd?, reset?}``. The kernel (see ``kernel``) starts on
first use and keeps its state for the session; ``reset`` restarts it first. Cells
run in order; before them the kernel's working directory is set to ``cwd`` (default
the session cwd). The text is the cell output (stdout/stderr, result reprs); with
several cells each is headed ``[i/n] title`` (``(ok)`` when silent). PNG results
come back as image blocks. A failing cell stops the call with an error result that
keeps the earlier cells' output, names the failing cell and shows its traceback; a
timeout or an abort interrupts the kernel (its state is kept). Output is limited to
the last 3000 lines / 50 KiB. Progress is sent as tool updates after each cell.
``details``: ``cells`` ([{index, title, code, output, status, durationMs}]) and,
when present, ``jsonOutputs``. Class exclusive, abortable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_search import PYTHON_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_search import PYTHON_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolAbortedError, ToolError
from xcsh.coding.tools.kernel import PythonKernel
from xcsh.coding.tools.paths import resolve_path
from xcsh.coding.tools.truncate import truncate_tail

TIMEOUT_DEFAULT = 30.0
TIMEOUT_MIN = 1.0
TIMEOUT_MAX = 600.0


def _timeout(raw: object) -> float:
    if raw is None:
        return TIMEOUT_DEFAULT
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ToolError("timeout must be a number of seconds")
    return max(TIMEOUT_MIN, min(TIMEOUT_MAX, float(raw)))


def _limited(text: str) -> str:
    cut = truncate_tail(text)
    if not cut.truncated:
        return text
    return f"[Output cut to its last {cut.output_lines} of {cut.total_lines} lines]\n" + cut.content


def _cells(raw: object) -> list[dict[str, str]]:
    if not isinstance(raw, list) or not raw:
        raise ToolError('cells must be a non-empty array of {code, title?}, e.g. [{"code": "print(1 + 1)"}]')
    cells: list[dict[str, str]] = []
    for index, cell in enumerate(raw):
        if not isinstance(cell, dict) or not isinstance(cell.get("code"), str):
            raise ToolError(f"cells[{index}] needs a string code")
        title = cell.get("title")
        cells.append({"code": cell["code"], "title": title if isinstance(title, str) else ""})
    return cells


def create_python_tool(cwd: Path, kernel: PythonKernel) -> AgentTool:
    """The ``python`` tool using ``kernel`` (one per session)."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        cells = _cells(args.get("cells"))
        timeout = _timeout(args.get("timeout"))
        raw_cwd = args.get("cwd")
        workdir = resolve_path(cwd, raw_cwd) if isinstance(raw_cwd, str) and raw_cwd.strip() else cwd
        if not workdir.is_dir():
            raise ToolError(f"Working directory does not exist: {workdir}")
        if args.get("reset"):
            await kernel.restart()
        setup = await kernel.execute(
            f"import os as _xcsh_os; _xcsh_os.chdir({json.dumps(str(workdir))}); del _xcsh_os",
            timeout,
            signal,
        )
        if setup.aborted:
            raise ToolAbortedError()
        if setup.error:
            raise ToolError(f"Could not enter {workdir}: {setup.error}")
        outputs: list[str] = []
        images: list[dict[str, str]] = []
        json_outputs: list[Any] = []
        results: list[dict[str, Any]] = []
        total = len(cells)
        for index, cell in enumerate(cells, 1):

            def streamed(text: str, index: int = index) -> None:
                head = f"[{index}/{total}]\n" if total > 1 else ""
                so_far = "\n\n".join([*outputs, head + text.rstrip("\n")])
                on_update(
                    {"content": [{"type": "text", "text": _limited(so_far)}], "details": {"cells": results}}
                )

            outcome = await kernel.execute(cell["code"], timeout, signal, streamed)
            body = outcome.text + (
                ("\n" if outcome.text and not outcome.text.endswith("\n") else "") + outcome.error
                if outcome.error
                else ""
            )
            body = body.rstrip("\n")
            images += outcome.images
            json_outputs += outcome.json
            status = "error" if (outcome.error or outcome.timed_out or outcome.aborted) else "complete"
            results.append(
                {
                    "index": index - 1,
                    "title": cell["title"],
                    "code": cell["code"],
                    "output": body,
                    "status": status,
                    "durationMs": outcome.duration_ms,
                }
            )
            if total > 1:
                head = f"[{index}/{total}]" + (f" {cell['title']}" if cell["title"] else "")
                outputs.append(f"{head}\n{body}" if body else f"{head} (ok)")
            elif body:
                outputs.append(body)
            combined = _limited("\n\n".join(outputs))
            on_update({"content": [{"type": "text", "text": combined}], "details": {"cells": results}})
            if outcome.aborted:
                raise ToolAbortedError()
            if outcome.timed_out:
                raise ToolError(
                    f"{combined}\n\nCell {index} timed out after {timeout:g}s and was interrupted; the kernel's state is kept.".lstrip()
                )
            if outcome.error:
                if total > 1:
                    note = f"Cell {index} failed. Earlier cells succeeded and their state persists; fix and re-run only cell {index}."
                    raise ToolError(f"{combined}\n\n{note}")
                raise ToolError(combined)
        details: dict[str, Any] = {"cells": results}
        if json_outputs:
            details["jsonOutputs"] = json_outputs
        content: list[Any] = [
            {"type": "text", "text": _limited("\n\n".join(outputs)) or "(no output)"},
            *images,
        ]
        return {"content": content, "details": details}

    return AgentTool(
        name="python",
        label="Python",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="exclusive",
        abortable=True,
    )
