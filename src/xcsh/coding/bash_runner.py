"""The stable import path for shell execution; the code lives in :mod:`xcsh.coding.bash`.

``capture`` (output sanitising, tail retention, counts), ``process`` (the process-group
runner), ``session`` (persistent user-bash state) and ``wire`` (protocol dicts and the
model's view). New code imports from those modules directly.
"""

from __future__ import annotations

from xcsh.coding.bash.capture import OUTPUT_LIMIT_BYTES, OutputCapture, count_lines, sanitize_output
from xcsh.coding.bash.process import (
    KILL_GRACE_S,
    NON_INTERACTIVE_ENV,
    BashLaunchError,
    ProcessOutcome,
    find_bash,
    run_shell_process,
    shell_environment,
)
from xcsh.coding.bash.session import DEFAULT_TIMEOUT_S, BashRunResult, BashSession
from xcsh.coding.bash.wire import (
    bash_execution_message,
    bash_execution_to_text,
    bash_result_wire,
    truncation_meta,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "KILL_GRACE_S",
    "NON_INTERACTIVE_ENV",
    "OUTPUT_LIMIT_BYTES",
    "BashLaunchError",
    "BashRunResult",
    "BashSession",
    "OutputCapture",
    "ProcessOutcome",
    "bash_execution_message",
    "bash_execution_to_text",
    "bash_result_wire",
    "count_lines",
    "find_bash",
    "run_shell_process",
    "sanitize_output",
    "shell_environment",
    "truncation_meta",
]
