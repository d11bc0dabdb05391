"""One module per configuration source; :data:`PROVIDERS` lists them in registration order."""

from __future__ import annotations

from xcsh.coding.discovery.providers.agents import AgentsProvider
from xcsh.coding.discovery.providers.base import Provider
from xcsh.coding.discovery.providers.claude import ClaudeProvider
from xcsh.coding.discovery.providers.cline import ClineProvider
from xcsh.coding.discovery.providers.codex import CodexProvider
from xcsh.coding.discovery.providers.cursor import CursorProvider
from xcsh.coding.discovery.providers.gemini import GeminiProvider
from xcsh.coding.discovery.providers.github import GithubProvider
from xcsh.coding.discovery.providers.native import NativeProvider
from xcsh.coding.discovery.providers.opencode import OpenCodeProvider
from xcsh.coding.discovery.providers.plugins import PluginsProvider
from xcsh.coding.discovery.providers.standalone import StandaloneProvider
from xcsh.coding.discovery.providers.windsurf import WindsurfProvider

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
