"""Wire shapes of a user bash run: the §5.8 ``BashResult`` and the ``bashExecution`` message
(agent-behaviour §10.2); the text the model sees for it is written once, in
:func:`xcsh.coding.messages.bash_execution_text` (§10.3).

``bash_result_wire`` omits ``exitCode`` when None and adds ``newCwd`` only when the
command changed the directory, so a plain ``echo`` matches S42 exactly.
"""

from __future__ import annotations

import time
from typing import Any, TypedDict

from xcsh.agent.types import BashExecutionMessage, OutputMeta
from xcsh.coding.bash.session import BashRunResult


def bash_result_wire(result: BashRunResult) -> dict[str, Any]:
    """The ``BashResult`` wire dict of rpc-protocol §5.8 (``exitCode`` omitted when None,
    ``newCwd`` only when the command changed directory)."""
    wire: dict[str, Any] = {"output": result.output}
    if result.exit_code is not None:
        wire["exitCode"] = result.exit_code
    wire.update(
        {
            "cancelled": result.cancelled,
            "truncated": result.truncated,
            "totalBytes": result.total_bytes,
            "outputBytes": result.output_bytes,
            "totalLines": result.total_lines,
            "outputLines": result.output_lines,
        }
    )
    if result.cwd_changed and result.new_cwd is not None:
        wire["newCwd"] = result.new_cwd
    return wire


def truncation_meta(result: BashRunResult) -> dict[str, Any] | None:
    """``meta.truncation`` for a bashExecution message (agent-behaviour §10.2), None if not truncated."""
    if not result.truncated:
        return None
    start = max(1, result.total_lines - result.output_lines + 1)
    return {
        "direction": "tail",
        "truncatedBy": "bytes",
        "totalLines": result.total_lines,
        "totalBytes": result.total_bytes,
        "outputLines": result.output_lines,
        "outputBytes": result.output_bytes,
        "shownRange": {"start": start, "end": result.total_lines},
    }


class _Optional(TypedDict, total=False):
    exitCode: int
    meta: OutputMeta
    excludeFromContext: bool


def bash_execution_message(
    command: str,
    result: BashRunResult,
    *,
    timestamp_ms: int | None = None,
    exclude_from_context: bool = False,
) -> BashExecutionMessage:
    """The ``bashExecution`` agent message recording a user bash run."""
    exit_code: _Optional = {} if result.exit_code is None else {"exitCode": result.exit_code}
    truncation = truncation_meta(result)
    meta: _Optional = {} if truncation is None else {"meta": {"truncation": truncation}}
    exclude: _Optional = {"excludeFromContext": True} if exclude_from_context else {}
    return {
        "role": "bashExecution",
        "command": command,
        "output": result.output,
        **exit_code,
        "cancelled": result.cancelled,
        "truncated": result.truncated,
        **meta,
        "timestamp": timestamp_ms if timestamp_ms is not None else int(time.time() * 1000),
        **exclude,
    }
