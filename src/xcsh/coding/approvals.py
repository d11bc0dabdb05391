"""Tool approvals: an opt-in policy under which the agent asks the host before running a call.

Off unless ``--approve TOOLS`` or the ``approvals.tools`` setting names tools (``*`` = every
tool, built-in, host or extension). For such a call the gate asks its :class:`ConfirmUI`
(the mode supplies one: the RPC extension-UI ``confirm`` request, ACP's permission request)
with a title naming the tool and a message showing the command, the new file or the diff.
Confirmed → the call runs once; declined, timed out (``approvals.timeoutSeconds``, default
120), aborted or with no UI at all → the call does not run and the model reads a tool error
saying why. Naming one tool covers its group: ``bash`` and ``python`` (they run code),
``write``, ``edit``, ``ast_edit`` and ``notebook`` (they write files). Calls that an
always-allowed rule proves harmless run without asking (coding/approval_rules.py):

- ``approvals.allowCommands``: argv prefixes for ``bash``, only for plain commands (no shell
  syntax at all), no ``env`` and a ``cwd`` inside the project; only in a project the user
  named trusted (:func:`xcsh.coding.trust.named_by_user`), and an allowed ``git`` runs with
  every program a git configuration can name switched off (:func:`harden_git`);
- ``approvals.allowPaths``: directories or globs for the tools whose paths are known; every
  path the call touches, resolved as the tools resolve it and through symlinks, must match,
  and no write may touch the agent's policy, code or instructions (``.xcsh/``, ``AGENTS.md``…).

Both come from the user's own config only: a project's ``approvals`` can only add gated tools.

The dialog's text (coding/approval_dialog.py) shows everything that decides what the call
does, with control characters escaped.

The gate plugs in as a ``before_tool_call`` hook of the session, after the extensions'
(an extension that blocks the call first means nobody is asked).
"""

from __future__ import annotations

import contextvars
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from xcsh.ai.abort import AbortSignal

if TYPE_CHECKING:
    from xcsh.ai.types import ToolCall
    from xcsh.coding.options import StartupOptions
    from xcsh.coding.session import AgentSession

    # Typing only: a Protocol class costs ~0.13 M instructions to create, and nothing checks it
    # at run time (docs/performance.md, "Seventh session: start-up").
    class ConfirmUI(Protocol):
        """Asks a person a yes/no question (the extension UI's ``confirm`` shape)."""

        async def confirm(
            self,
            title: str,
            message: str,
            *,
            timeout_ms: int | None = None,
            signal: AbortSignal | None = None,
            on_timeout: Callable[[], None] | None = None,
        ) -> bool: ...


DEFAULT_TIMEOUT_S = 120.0
# naming one tool of a group covers the whole group: every tool that runs code, every tool that
# writes files (docs/approvals.md, "Which tools")
TOOL_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"bash", "python"}),
    frozenset({"write", "edit", "ast_edit", "notebook"}),
)
# the tool call being put to the user (set around the confirm call, per task): a UI that can
# attach the question to the call it is about (ACP's permission request) reads it
PENDING_CALL: contextvars.ContextVar[ToolCall | None] = contextvars.ContextVar("pending_call", default=None)


class ApprovalConfig(msgspec.Struct, frozen=True):
    """Which calls need approval, what is always allowed, and how long to wait for an answer."""

    tools: frozenset[str]
    allow_commands: tuple[str, ...] = ()
    allow_paths: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S

    def covers(self, tool_name: str) -> bool:
        """Whether calls of ``tool_name`` need approval (names compare case-insensitively)."""
        return "*" in self.tools or tool_name.lower() in self.tools


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def _tool_names(value: Any) -> list[str]:
    """Tool names as compared (lower case: ``--approve Bash`` gates ``bash``)."""
    return [name.lower() for name in _names(value)]


def with_groups(names: list[str]) -> frozenset[str]:
    """``names`` plus every tool sharing a group (:data:`TOOL_GROUPS`) with one of them."""
    tools = set(names)
    for group in TOOL_GROUPS:
        if tools & group:
            tools |= group
    return frozenset(tools)


def config_from(
    settings_get: Callable[[str], Any], flag: str | None, user_get: Callable[[str], Any] | None = None
) -> ApprovalConfig | None:
    """The policy from the ``--approve`` flag (wins) or the ``approvals.*`` settings; None when off.

    ``settings_get`` sees every layer, ``user_get`` (default: the same) only the user's own:
    a project's settings can only narrow the policy — its ``approvals.tools`` are added to the
    user's, its ``allowCommands`` and ``allowPaths`` are ignored (a repository, or an agent
    writing to it, must not be able to let itself run without asking).
    """
    user = user_get or settings_get
    if flag is not None:
        tools = _tool_names(flag)
    else:
        tools = list(
            dict.fromkeys(
                [*_tool_names(user("approvals.tools")), *_tool_names(settings_get("approvals.tools"))]
            )
        )
    if not tools:
        return None
    timeout = settings_get("approvals.timeoutSeconds")
    return ApprovalConfig(
        tools=with_groups(tools),
        allow_commands=tuple(_names(user("approvals.allowCommands"))),
        allow_paths=tuple(_names(user("approvals.allowPaths"))),
        timeout_s=float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT_S,
    )


def rule_allows(
    config: ApprovalConfig,
    cwd: Path,
    tool_name: str,
    args: dict[str, Any],
    agent_dir: Path | None = None,
    write_dirs: Sequence[Path] = (),
) -> bool:
    """Whether an always-allowed rule proves this call may run without asking (coding/approval_rules).

    ``write_dirs``: folders besides the agent dir that no write may touch unasked (the sessions')."""
    if tool_name == "bash":
        if not config.allow_commands:
            return False
        from xcsh.coding.approval_rules import bash_allowed  # only when a covered call is checked

        return bash_allowed(config.allow_commands, cwd, args)
    if not config.allow_paths:
        return False
    from xcsh.coding.approval_rules import paths_allowed

    return paths_allowed(config.allow_paths, cwd, tool_name, args, agent_dir, write_dirs)


async def harden_git(cwd: Path, args: dict[str, Any]) -> bool:
    """For an allowed ``bash`` call running ``git``: put the settings that switch off every
    program a git configuration names (coding/environment.py, ``GIT_NO_PROGRAMS`` and the
    filter and diff drivers) and any alias of its subcommand into ``args["env"]``. False when
    they cannot be worked out (ask instead)."""
    words = str(args.get("command", "")).split()
    if not words or os.path.basename(words[0]) != "git":
        return True
    import asyncio

    from xcsh.coding.environment import git_program_overrides
    from xcsh.coding.tools.paths import resolve_path

    run_dir = resolve_path(cwd, str(args["cwd"])) if args.get("cwd") else cwd
    count = os.environ.get("GIT_CONFIG_COUNT", "")
    first = int(count) if count.isdigit() else 0  # the user's own GIT_CONFIG_* entries stay
    # an alias (``!command``, or one adding ``-c`` settings) must not stand in for the
    # subcommand: an empty alias makes git refuse it; builtins cannot be aliased, so they run
    subcommands = [word for word in words[1:] if not word.startswith("-")][:2]
    aliases = [(f"alias.{word}", "") for word in subcommands]
    env = await asyncio.to_thread(git_program_overrides, run_dir, first, aliases)
    if env is None:
        return False
    args["env"] = env
    return True


class ApprovalGate:
    """Decides, per tool call, whether it may run; asks :attr:`ui` when a rule does not allow it."""

    def __init__(self, session: AgentSession, config: ApprovalConfig) -> None:
        self.session = session
        self.config = config
        self.ui: ConfirmUI | None = None

    def always_allowed(self, tool_name: str, args: dict[str, Any]) -> bool:
        return rule_allows(
            self.config,
            self.session.cwd,
            tool_name,
            args,
            self.session.config.agent_dir,
            self._session_dirs(),
        )

    def _session_dirs(self) -> list[Path]:
        """Where session files live: the sessions root (``$XDG_DATA_HOME`` can put it outside the
        agent dir), ``--session-dir``, and the open session's file and its artifacts folder
        (``--session <path>`` can name one anywhere), with its lock file (a new file in its place
        would void the lock: a second process could then append to the same session)."""
        from xcsh.coding.paths import sessions_root
        from xcsh.coding.sessions.lock import lock_path_for

        dirs = [sessions_root()]
        if self.session.config.session_dir is not None:
            dirs.append(self.session.config.session_dir)
        current = self.session.store.path
        if current is not None:
            dirs += [current, current.with_suffix(""), lock_path_for(current)]
        return dirs

    async def check(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        """None when the call may run; otherwise the error text the model reads instead.

        A ``git`` command an ``allowCommands`` rule lets run unasked gets, in ``args["env"]``
        (the tool's own copy of the arguments), the ``GIT_CONFIG_*`` settings that stop any
        configuration from making git run a program (:func:`harden_git`); when those cannot be
        worked out, the call is asked about instead.
        """
        name = call["name"]
        if not self.config.covers(name):
            return None
        if self.always_allowed(name, args) and (name != "bash" or await harden_git(self.session.cwd, args)):
            return None
        if self.ui is None:
            return f"This {name} call needs approval and no one can approve it here; it was not run."
        signal = self.session.run_signal
        timed_out: list[bool] = []
        from xcsh.coding.approval_dialog import describe  # only when a call is put to the user

        title, message = describe(name, args, self.session.cwd)
        token = PENDING_CALL.set(call)
        try:
            allowed = await self.ui.confirm(
                title,
                message,
                timeout_ms=int(self.config.timeout_s * 1000),
                signal=signal,
                on_timeout=lambda: timed_out.append(True),
            )
        finally:
            PENDING_CALL.reset(token)
        if allowed:
            return None
        if signal is not None and signal.aborted:
            return f"The {name} call was aborted while waiting for approval; it was not run."
        if timed_out:
            return f"No approval for this {name} call within {self.config.timeout_s:g}s; it was denied and not run."
        return f"The user denied this {name} call; it was not run."


def approval_gate_for(session: AgentSession) -> ApprovalGate | None:
    """The session's approval gate (None when approvals are off)."""
    return session.features.get(ApprovalGate)


class ApprovalsStartup(msgspec.Struct, frozen=True):
    """The ``--approve`` flag (None: the ``approvals.*`` settings decide) and ``--trust``."""

    flag: str | None = None
    trust: bool = False


def configure(options: StartupOptions) -> ApprovalsStartup:
    return ApprovalsStartup(flag=options.approve, trust=options.trust)


def _commands_trusted(session: AgentSession, startup: ApprovalsStartup) -> bool:
    """Whether the user named this project trusted (``allowCommands`` apply only then)."""
    from xcsh.coding import trust

    listed = session.settings.get_user(trust.PROJECTS_SETTING) or []
    dirs = [str(d) for d in listed] if isinstance(listed, list) else []
    if trust.named_by_user(session.cwd, session.config.agent_dir, grant=startup.trust, trusted_dirs=dirs):
        return True
    sys.stderr.write(
        f"xcsh: approvals.allowCommands are not applied in {session.cwd}: it is not a trusted project "
        f"(--trust, or {trust.PROJECTS_SETTING}); every covered bash call asks\n"
    )
    return False


def _warn_unknown(session: AgentSession, config: ApprovalConfig) -> None:
    """One stderr line naming the gated tools that are not built in. A warning, not a refusal:
    host tools (``set_host_tools``) and extension tools register after start-up, and a gate
    named for them must hold then; a misspelt built-in (``bsah``) gates nothing, hence the line."""
    from xcsh.coding.tools import BUILTIN_TOOL_NAMES, FEATURE_TOOL_NAMES

    known = {
        *BUILTIN_TOOL_NAMES,
        *FEATURE_TOOL_NAMES,
        *(t.name.lower() for t in session.registered_tools()),
        "*",
    }
    unknown = sorted(config.tools - known)
    if unknown:
        sys.stderr.write(
            f"xcsh: approvals name tools that are not built in: {', '.join(unknown)} "
            "(they are gated if a host or extension registers them)\n"
        )


def install(session: AgentSession, startup: ApprovalsStartup) -> None:
    """Turn approvals on for ``session`` when the flag or the settings name tools."""
    config = config_from(session.settings.get, startup.flag, session.settings.get_user)
    if config is None:
        return
    if config.allow_commands and not _commands_trusted(session, startup):
        config = msgspec.structs.replace(config, allow_commands=())
    _warn_unknown(session, config)
    gate = ApprovalGate(session, config)
    session.features.put(gate)
    session.hooks.before_tool_call.append(gate.check)
