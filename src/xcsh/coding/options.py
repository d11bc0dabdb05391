"""Start-up options: what the CLI (or an embedding host) asks of a new session.

Only :mod:`xcsh.coding.factory` and the features' ``configure`` functions read these;
each feature receives its own small config object built from them (see
:mod:`xcsh.coding.features`). Also the tool-selection rules shared by the factory and
the features that register tools.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import msgspec

from xcsh.coding.recovery import has_small_profile
from xcsh.coding.tools import EDIT_MODES, ENABLING_SETTINGS, ToolOptions

if TYPE_CHECKING:
    from xcsh.ai.types import Model
    from xcsh.coding.settings import Settings

    # Typing only: a Protocol class costs ~0.13 M instructions to create, and nothing checks it
    # at run time (docs/performance.md, "Seventh session: start-up").
    class ToolChoice(Protocol):
        """The ``--tools`` / ``--no-tools`` choice (StartupOptions or a feature's config)."""

        @property
        def tools(self) -> str | None: ...

        @property
        def no_tools(self) -> bool: ...


logger = logging.getLogger(__name__)


class StartupOptions(msgspec.Struct, kw_only=True):
    cwd: Path
    agent_dir: Path
    env: Mapping[str, str] = msgspec.field(default_factory=lambda: dict(os.environ))
    provider: str | None = None
    model: str | None = None
    models: str | None = None
    thinking: str | None = None
    api_key: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    tools: str | None = None
    no_tools: bool = False
    no_session: bool = False
    session_dir: Path | None = None
    session: str | None = None
    continue_session: bool = False
    fork: str | None = None
    rpc_mode: bool = False
    extensions: list[str] = msgspec.field(default_factory=list)
    no_extensions: bool = False
    no_rules: bool = False
    no_skills: bool = False
    skills: list[str] | None = None
    """Glob patterns: only skills whose names match one are loaded (None: all)."""
    plugin_dirs: list[str] = msgspec.field(default_factory=list)
    """``--plugin-dir`` folders: their commands, skills and agents are discovered."""
    model_roles: dict[str, str] = msgspec.field(default_factory=dict)
    """Role → model pattern from --smol/--slow/--plan (runtime overrides, never persisted)."""
    # tool approvals (coding/approvals.py): comma list of tools, "*" for all; None = settings
    approve: str | None = None
    # RPC mode without the eager todo prelude and reminders (flag --no-todo-defaults)
    no_todo_defaults: bool = False
    trust: bool = False
    """``--trust``: record the project directory as trusted (its code as it is now) and run it."""
    project_trusted: bool | None = None
    """Set by :func:`create_session`: whether the project's own code may run (coding/trust.py)."""


def tool_enabled(settings: Settings, name: str) -> bool:
    """The tool's enabling setting (``calc.enabled`` …), true when absent, as in the reference."""
    key = ENABLING_SETTINGS.get(name)
    return key is None or settings.get_bool(key, True)


def tool_selection(options: ToolChoice, settings: Settings, name: str) -> tuple[bool, bool]:
    """(registered, active) for a default-on feature tool under ``--tools`` / ``--no-tools``."""
    if not tool_enabled(settings, name):
        return False, False
    if options.tools is None:
        return True, not options.no_tools
    listed = name in {n.strip().lower() for n in options.tools.split(",")}
    return listed, listed


# A small model's tools when ``--tools`` is not given: fewer choices, a shorter prompt
# and a smaller output grammar (docs/local-model.md, "Focused tool set").
SMALL_MODEL_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find")


def small_model_tools(options: StartupOptions, model: Model) -> str | None:
    """The ``--tools`` list a starting model with the small profile gets by default, else None.

    None when the caller chose tools itself (``--tools`` or ``--no-tools``).
    """
    if options.tools is not None or options.no_tools or not has_small_profile(model):
        return None
    return ",".join(SMALL_MODEL_TOOLS)


def tool_options(settings: Settings, model: Model | None = None) -> ToolOptions:
    """The built-in tools' options from settings; an unknown ``edit.mode`` falls back to hashline.

    A starting model with the small-model profile edits in ``replace`` mode unless
    ``edit.mode`` is configured: a 1.5B model copies text it has read far more reliably
    than it copies line anchors (docs/local-model.md). Such a model's ``write`` also refuses
    to drop most of an existing file's lines (``guard_overwrite``).
    """
    mode = str(settings.get("edit.mode", "hashline")).strip().lower()
    if model is not None and has_small_profile(model) and not settings.is_configured("edit.mode"):
        mode = "replace"
    if mode not in EDIT_MODES:
        logger.warning(
            "edit.mode %r is not supported (known: %s); using hashline", mode, ", ".join(EDIT_MODES)
        )
        mode = "hashline"
    return ToolOptions(
        edit_mode=mode,
        read_hash_lines=settings.get_bool("readHashLines", True),
        read_line_numbers=settings.get_bool("readLineNumbers", False),
        guard_overwrite=model is not None and has_small_profile(model),
    )
