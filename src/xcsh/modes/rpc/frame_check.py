"""The outbound-checking debug switch: every frame the server writes is validated against the schema.

``XCSH_RPC_CHECK_FRAMES=1`` turns it on: a frame that does not match the protocol's JSON
Schema (``xcsh rpc-schema``) is still written, and each violation is reported on stderr
and, when ``XCSH_RPC_CHECK_FRAMES_LOG`` names a file, appended to it (the test suite's
outbound-validation run reads that file). Off by default: checking costs far more than
writing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

logger = logging.getLogger(__name__)

FrameCheck = Callable[[Any], None]


def frame_check_from_env(env: Mapping[str, str]) -> FrameCheck | None:
    """The checking hook for the frame writer, or None when the switch is off."""
    if env.get("XCSH_RPC_CHECK_FRAMES", "").strip().lower() not in {"1", "true", "yes", "on"}:
        return None
    from xcsh.rpc.schema import FrameChecker

    checker = FrameChecker()
    log_path = env.get("XCSH_RPC_CHECK_FRAMES_LOG") or None

    def check(frame: Any) -> None:
        problems = checker.violations(frame)
        if not problems:
            return
        import json  # a violation only

        try:
            shown = json.dumps(frame, ensure_ascii=False, default=repr)[:2000]
        except (RecursionError, ValueError):  # the report must never cost the frame itself
            shown = repr(type(frame))
        text = (
            "".join(f"outbound frame violates the protocol: {p}\n" for p in problems) + f"  frame: {shown}\n"
        )
        logger.error("%s", text.rstrip("\n"))
        if log_path is not None:
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(text)

    return check
