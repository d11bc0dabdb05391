"""Feature installers run on every new session (retry, compaction, todos, host tools, …).

Each feature module exposes ``install(session, options)``; add it to ``INSTALLERS``.
Keeping the list here keeps the session facade and the factory free of feature code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xcsh.coding.factory import StartupOptions
    from xcsh.coding.session import AgentSession

Installer = Callable[["AgentSession", "StartupOptions"], None]


def installers() -> list[Installer]:
    """The installers, imported lazily so start-up only loads what sessions use."""
    found: list[Installer] = []
    # first: the session-bound built-in tools (python, task, inspect_image) before any extension
    from xcsh.coding.tool_features import install as install_tools

    found.append(install_tools)
    from xcsh.coding.retry import install as install_retry

    found.append(install_retry)
    from xcsh.coding.compaction.compactor import install as install_compaction

    found.append(install_compaction)
    from xcsh.coding.extensions.feature import install as install_extensions

    found.append(install_extensions)
    # after extensions: a call an extension blocks is never put to the user
    from xcsh.coding.approvals import install as install_approvals

    found.append(install_approvals)
    from xcsh.coding.ttsr.feature import install as install_ttsr

    found.append(install_ttsr)
    # last: its post-run reminder comes after retry, compaction and TTSR recovery
    from xcsh.coding.todos import install as install_todos

    found.append(install_todos)
    return found
