"""The TTSR feature's registration: discover the rules, and watch the streams only when there are any.

:func:`install` imports the watcher (:mod:`.feature`, with the matcher) only for a session
that has rules, so starting a session without any does not pay for it (docs/performance.md,
profile 16).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import msgspec

if TYPE_CHECKING:
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession
    from xcsh.coding.ttsr.rules import Rule


def discover_rules(cwd: Path, agent_dir: Path, home: Path | None = None) -> list[Rule]:
    """Every rule the discovery finds for ``cwd`` (docs/context.md), first definition of a name winning.

    Lives here, not in :mod:`.rules`, because the discovery itself builds rules with
    :func:`.rules.build_rule` (no import cycle).
    """
    from xcsh.coding.discovery import LoadContext, discover
    from xcsh.coding.paths import home_dir

    found = discover(LoadContext.create(cwd, home if home is not None else home_dir(), agent_dir))
    return cast("list[Rule]", found.rules)


class TtsrConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Where rules are discovered (the project and the agent dir)."""

    cwd: Path
    agent_dir: Path


def configure(options: StartupOptions) -> TtsrConfig | None:
    """Off with ``--no-rules``."""
    return None if options.no_rules else TtsrConfig(cwd=options.cwd, agent_dir=options.agent_dir)


def install(session: AgentSession, config: TtsrConfig) -> None:
    """Load the rules and watch the session's streams (skipped with ``ttsr.enabled: false`` or no rules)."""
    settings = session.settings
    if not settings.get_bool("ttsr.enabled", True):
        return
    project = session.config.project
    rules = (
        cast("list[Rule]", project.ttsr_rules)
        if project is not None
        else discover_rules(config.cwd, config.agent_dir)
    )
    if not rules:
        return
    from xcsh.coding.ttsr.feature import TtsrFeature
    from xcsh.coding.ttsr.matcher import TtsrMatcher

    matcher = TtsrMatcher(
        rules,
        repeat_mode=str(settings.get("ttsr.repeatMode", "once")),
        repeat_gap=settings.get_int("ttsr.repeatGap", 10),
    )
    if not matcher.has_rules:
        return
    feature = TtsrFeature(session, matcher)
    feature.restore()
    session.features.put(feature)
    session.hooks.set_after_run("ttsr", feature)
    session.hooks.on_session_change.append(feature.on_session_change)
    session.subscribe_after(feature.on_agent_event)
