"""Why a compaction did not happen: the protocol's error texts (agent-behaviour §7).

Kept apart from :mod:`.prepare` and :mod:`.summarize` so the compactor's hooks, installed in
every session, import neither until a compaction actually runs (docs/performance.md, profile 16).
"""

from __future__ import annotations

NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
ALREADY_COMPACTED = "Already compacted"
COMPACTION_CANCELLED = "Compaction cancelled"


class CompactionError(Exception):
    """A compaction could not run; the message is the protocol's error text."""


class NothingToCompactError(CompactionError):
    def __init__(self) -> None:
        super().__init__(NOTHING_TO_COMPACT)


class AlreadyCompactedError(CompactionError):
    def __init__(self) -> None:
        super().__init__(ALREADY_COMPACTED)


class CompactionCancelledError(CompactionError):
    def __init__(self) -> None:
        super().__init__(COMPACTION_CANCELLED)
