"""Tool approvals: an opt-in policy under which the agent asks the host before running a call.

Off unless ``--approve TOOLS`` or the ``approvals.tools`` setting names tools (``*`` = every
tool, built-in, host or extension). For such a call the gate asks its :class:`ConfirmUI`
(the mode supplies one: the RPC extension-UI ``confirm`` request, ACP's permission request)
with a title naming the tool and a message showing the command, the new file or the diff.
Confirmed → the call runs once; declined, timed out (``approvals.timeoutSeconds``, default
120), aborted or with no UI at all → the call does not run and the model reads a tool error
saying why. Calls matching an always-allowed rule run without asking:

- ``approvals.allowCommands``: command prefixes for ``bash`` (a prefix matches at a word
  boundary; a command with shell control characters — ``;``, ``&``, ``|``, ``$(``, a
  backtick, ``>``, ``<`` or a newline — is always asked about);
- ``approvals.allowPaths``: directories or glob patterns (relative to the cwd) for tools
  whose arguments name paths (``path``, or ``edits[].path``); every named path must match.

The gate plugs in as a ``before_tool_call`` hook of the session, after the extensions'
(an extension that blocks the call first means nobody is asked).
"""

from __future__ import annotations

import contextvars
import fnmatch
import os
from collections.abc import Callable
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
MAX_SHOWN_LINES = 200
SHELL_CONTROL = (";", "&", "|", "$(", "`", ">", "<", "\n")
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
        return "*" in self.tools or tool_name in self.tools


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return []


def config_from(settings_get: Callable[[str], Any], flag: str | None) -> ApprovalConfig | None:
    """The policy from the ``--approve`` flag (wins) or the ``approvals.*`` settings; None when off."""
    tools = _names(flag) if flag is not None else _names(settings_get("approvals.tools"))
    if not tools:
        return None
    timeout = settings_get("approvals.timeoutSeconds")
    return ApprovalConfig(
        tools=frozenset(tools),
        allow_commands=tuple(_names(settings_get("approvals.allowCommands"))),
        allow_paths=tuple(_names(settings_get("approvals.allowPaths"))),
        timeout_s=float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT_S,
    )


def _paths_of(args: dict[str, Any]) -> list[str]:
    paths = [args["path"]] if isinstance(args.get("path"), str) else []
    edits = args.get("edits")
    if isinstance(edits, list):
        paths += [e["path"] for e in edits if isinstance(e, dict) and isinstance(e.get("path"), str)]
    return paths


def _clip(lines: list[str]) -> str:
    if len(lines) > MAX_SHOWN_LINES:
        lines = [*lines[:MAX_SHOWN_LINES], f"… {len(lines) - MAX_SHOWN_LINES} more lines"]
    return "\n".join(lines)


def describe(tool_name: str, args: dict[str, Any], cwd: Path) -> tuple[str, str]:
    """The dialog's title and message: the command, the new content, or a diff of the edits."""
    import json  # an approval dialog only

    title = f"Allow {tool_name}?"
    if isinstance(args.get("command"), str):
        return title, f"$ {args['command']}"
    path = args.get("path")
    if isinstance(path, str) and isinstance(args.get("content"), str):
        import difflib  # only when a call is put to the user

        target = cwd / path
        old = target.read_text(errors="replace").splitlines() if target.is_file() else []
        diff = difflib.unified_diff(old, args["content"].splitlines(), f"a/{path}", f"b/{path}", lineterm="")
        return f"Allow {tool_name} to {path}?", _clip(list(diff))
    edits = args.get("edits")
    if isinstance(edits, list) and edits:
        lines: list[str] = []
        for edit in edits:
            if isinstance(edit, dict):
                lines += _edit_lines(edit, str(edit.get("path", path or "")))
        shown = sorted({str(e.get("path")) for e in edits if isinstance(e, dict) and e.get("path")})
        return f"Allow {tool_name} of {', '.join(shown) or 'files'}?", _clip(lines)
    return title, json.dumps(args, indent=2, ensure_ascii=False, default=str)


def _edit_lines(edit: dict[str, Any], name: str) -> list[str]:
    """One edit as diff lines: replace-mode old/new text, or a hashline edit's location and lines."""
    import json

    if any(k in edit for k in ("old_text", "oldText", "new_text", "newText")):
        import difflib  # only when a call is put to the user

        old_text = edit.get("old_text", edit.get("oldText", ""))
        new_text = edit.get("new_text", edit.get("newText", ""))
        return list(
            difflib.unified_diff(
                str(old_text).splitlines(), str(new_text).splitlines(), f"a/{name}", f"b/{name}", lineterm=""
            )
        )
    if edit.get("delete"):
        return [f"delete {name}"]
    if isinstance(edit.get("move"), str):
        return [f"move {name} → {edit['move']}"]
    where = json.dumps(edit.get("loc"), ensure_ascii=False) if "loc" in edit else "(whole file)"
    content = edit.get("content")
    body = [f"+{line}" for line in content] if isinstance(content, list) else ["(lines removed)"]
    return [f"@@ {name} at {where}", *body]


def command_allowed(config: ApprovalConfig, command: str) -> bool:
    """Whether an always-allowed prefix covers ``command`` (never with shell control characters)."""
    text = command.strip()
    if any(mark in text for mark in SHELL_CONTROL):
        return False
    return any(text == p.rstrip() or text.startswith(p.rstrip() + " ") for p in config.allow_commands)


def path_allowed(config: ApprovalConfig, cwd: Path, raw: str) -> bool:
    """Whether ``raw`` (relative to ``cwd``) is inside an allowed directory or matches an allowed glob."""
    target = Path(os.path.normpath(cwd / raw))
    for rule in config.allow_paths:
        base = Path(os.path.normpath(cwd / rule))
        if target == base or base in target.parents:
            return True
        try:
            relative = target.relative_to(cwd).as_posix()
        except ValueError:
            relative = target.as_posix()
        if fnmatch.fnmatchcase(relative, rule):
            return True
    return False


def rule_allows(config: ApprovalConfig, cwd: Path, tool_name: str, args: dict[str, Any]) -> bool:
    """Whether an always-allowed rule lets this call run without asking."""
    command = args.get("command")
    if tool_name == "bash" and isinstance(command, str):
        return command_allowed(config, command)
    paths = _paths_of(args)
    return bool(paths) and bool(config.allow_paths) and all(path_allowed(config, cwd, p) for p in paths)


class ApprovalGate:
    """Decides, per tool call, whether it may run; asks :attr:`ui` when a rule does not allow it."""

    def __init__(self, session: AgentSession, config: ApprovalConfig) -> None:
        self.session = session
        self.config = config
        self.ui: ConfirmUI | None = None

    def always_allowed(self, tool_name: str, args: dict[str, Any]) -> bool:
        return rule_allows(self.config, self.session.cwd, tool_name, args)

    async def check(self, call: ToolCall, args: dict[str, Any]) -> str | None:
        """None when the call may run; otherwise the error text the model reads instead."""
        name = call["name"]
        if not self.config.covers(name) or self.always_allowed(name, args):
            return None
        if self.ui is None:
            return f"This {name} call needs approval and no one can approve it here; it was not run."
        signal = self.session.run_signal
        timed_out: list[bool] = []
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
    """The ``--approve`` flag (None: the ``approvals.*`` settings decide)."""

    flag: str | None = None


def configure(options: StartupOptions) -> ApprovalsStartup:
    return ApprovalsStartup(flag=options.approve)


def install(session: AgentSession, startup: ApprovalsStartup) -> None:
    """Turn approvals on for ``session`` when the flag or the settings name tools."""
    config = config_from(session.settings.get, startup.flag)
    if config is None:
        return
    gate = ApprovalGate(session, config)
    session.features.put(gate)
    session.hooks.before_tool_call.append(gate.check)
