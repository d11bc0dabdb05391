"""One class per configuration source (xcsh's own, the cross-agent folders and plugins in a module each,
the other coding tools' in :mod:`.tools`); :data:`PROVIDERS` lists them in registration order."""

from __future__ import annotations

from xcsh.coding.discovery.providers.agents import AgentsProvider
from xcsh.coding.discovery.providers.base import Provider
from xcsh.coding.discovery.providers.native import NativeProvider
from xcsh.coding.discovery.providers.plugins import PluginsProvider
from xcsh.coding.discovery.providers.standalone import StandaloneProvider
from xcsh.coding.discovery.providers.tools import (
    ClaudeProvider,
    ClineProvider,
    CodexProvider,
    CursorProvider,
    GeminiProvider,
    GithubProvider,
    OpenCodeProvider,
    WindsurfProvider,
)

# Registration order settles ties between equal priorities (as in the reference).
PROVIDERS: tuple[Provider, ...] = (
    StandaloneProvider(),
    NativeProvider(),
    ClaudeProvider(),
    PluginsProvider(),
    ClineProvider(),
    AgentsProvider(),
    CodexProvider(),
    CursorProvider(),
    GeminiProvider(),
    OpenCodeProvider(),
    GithubProvider(),
    WindsurfProvider(),
)

__all__ = ["PROVIDERS", "Provider"]
