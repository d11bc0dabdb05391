"""One provider per configuration source (xcsh's own, the cross-agent folders and plugins a class each
in a module each, the other coding tools' one table-driven class in :mod:`.tools`); :data:`PROVIDERS`
lists them in registration order."""

from __future__ import annotations

from xcsh.coding.discovery.providers.agents import AgentsProvider
from xcsh.coding.discovery.providers.base import Provider
from xcsh.coding.discovery.providers.native import NativeProvider
from xcsh.coding.discovery.providers.plugins import PluginsProvider
from xcsh.coding.discovery.providers.standalone import StandaloneProvider
from xcsh.coding.discovery.providers.tools import (
    CLAUDE,
    CLINE,
    CODEX,
    CURSOR,
    GEMINI,
    GITHUB,
    OPENCODE,
    WINDSURF,
)

# Registration order settles ties between equal priorities (as in the reference).
PROVIDERS: tuple[Provider, ...] = (
    StandaloneProvider(),
    NativeProvider(),
    CLAUDE,
    PluginsProvider(),
    CLINE,
    AgentsProvider(),
    CODEX,
    CURSOR,
    GEMINI,
    OPENCODE,
    GITHUB,
    WINDSURF,
)

__all__ = ["PROVIDERS", "Provider"]
