"""The two automatic-continuation switches: auto-retry and auto-compaction.

One place for their rules, read by the features (retry, compaction), the session's
setters and its snapshot (``get_state.autoCompactionEnabled``). Settings only: this
module imports nothing of the session, so every part of the core may use it.
"""

from __future__ import annotations

from xcsh.coding.settings import Settings


def auto_compaction_enabled(settings: Settings) -> bool:
    """Automatic compaction is on: ``compaction.enabled`` and a strategy other than ``off``."""
    return settings.get_bool("compaction.enabled", True) and settings.get("compaction.strategy") != "off"


def set_auto_compaction(settings: Settings, enabled: bool) -> None:
    """Turn automatic compaction on or off (saved); enabling also turns an ``off`` strategy back on."""
    settings.set("compaction.enabled", enabled)
    if enabled and settings.get("compaction.strategy") == "off":
        settings.set("compaction.strategy", "context-full")


def auto_retry_enabled(settings: Settings) -> bool:
    """Retryable errors are retried (``retry.enabled``); off means one request per run."""
    return settings.get_bool("retry.enabled", True)


def set_auto_retry(settings: Settings, enabled: bool) -> None:
    """Turn automatic retry on or off (saved)."""
    settings.set("retry.enabled", enabled)
