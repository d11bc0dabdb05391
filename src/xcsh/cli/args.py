"""Command-line parsing with the reference's rules.

The reference parses its command line by hand and never fails on it: an unknown flag is
ignored, a value flag at the end of the line (no value left) is ignored, an unknown
``--mode`` value is ignored. We keep those rules (hosts pass flags of newer versions),
but say on stderr what was ignored. ``@path`` arguments are file attachments; any other
argument not starting with ``-`` is a message.

Every flag is described once in :data:`FLAGS`; the parser and ``--help`` read that table.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Kind = Literal["bool", "value", "append", "csv", "optional", "pattern"]

MODES = ("text", "json", "rpc", "acp")


class Flag(msgspec.Struct, frozen=True):
    """One command-line flag: its spellings, where it is stored and how it takes a value."""

    names: tuple[str, ...]
    dest: str
    kind: Kind
    help: str
    metavar: str = ""
    noop: bool = False
    """Accepted for compatibility; has no effect here (a note is written when used)."""


FLAGS: tuple[Flag, ...] = (
    Flag(("--help", "-h"), "help", "bool", "show this help and exit"),
    Flag(("--version", "-v"), "version", "bool", "print the version and exit"),
    Flag(("--mode",), "mode", "value", "output mode: text (default), json, rpc or acp", "MODE"),
    Flag(("--print", "-p"), "print", "bool", "run the prompt to completion and print the answer"),
    Flag(("--provider",), "provider", "value", "provider used to resolve --model", "NAME"),
    Flag(
        ("--model",), "model", "value", "model: id, provider/id or fuzzy pattern, optional :level", "PATTERN"
    ),
    Flag(("--models",), "models", "csv", "comma-separated model patterns cycle_model cycles through", "LIST"),
    Flag(("--smol",), "smol", "value", "model for the smol (fast) role ($PI_SMOL_MODEL)", "MODEL"),
    Flag(("--slow",), "slow", "value", "model for the slow (reasoning) role ($PI_SLOW_MODEL)", "MODEL"),
    Flag(("--plan",), "plan", "value", "model for the plan role ($PI_PLAN_MODEL)", "MODEL"),
    Flag(
        ("--thinking",), "thinking", "value", "initial thinking level: minimal|low|medium|high|xhigh", "LEVEL"
    ),
    Flag(("--api-key",), "api_key", "value", "API key for the selected model's provider", "KEY"),
    Flag(("--system-prompt",), "system_prompt", "value", "replace the system prompt (text or file)", "TEXT"),
    Flag(("--append-system-prompt",), "append_system_prompt", "value", "append to the system prompt", "TEXT"),
    Flag(("--tools",), "tools", "value", "comma-separated built-in tools to enable", "LIST"),
    Flag(("--no-tools",), "no_tools", "bool", "no built-in tool is active (unless --tools lists some)"),
    Flag(("--no-session",), "no_session", "bool", "keep the session in memory only"),
    Flag(("--session-dir",), "session_dir", "value", "where session files are created and looked up", "DIR"),
    Flag(("--session", "--resume", "-r"), "session", "optional", "open a session by id or path", "ID|PATH"),
    Flag(("--continue", "-c"), "continue_", "bool", "continue the most recent session here"),
    Flag(("--fork",), "fork", "value", "copy a session's history into a new session", "ID|PATH"),
    Flag(("--export",), "export", "value", "write a session file as HTML (optional 2nd arg: output)", "FILE"),
    Flag(("--extension", "-e"), "extensions", "append", "load an extension (repeatable)", "PATH"),
    Flag(("--no-extensions",), "no_extensions", "bool", "do not discover extensions"),
    Flag(
        ("--trust",),
        "trust",
        "bool",
        "trust this directory's own code as it is now (.xcsh/extensions, settings)",
    ),
    Flag(("--skills",), "skills", "csv", "only skills whose names match these globs", "GLOBS"),
    Flag(("--no-skills",), "no_skills", "bool", "do not load skills"),
    Flag(("--no-rules",), "no_rules", "bool", "do not load rules (prompt rules and TTSR rules)"),
    Flag(
        ("--approve",),
        "approve",
        "value",
        "ask the host before running these tools (bash covers python; write, edit cover ast_edit, notebook; * = all)",
        "TOOLS",
    ),
    Flag(
        ("--no-todo-defaults",), "no_todo_defaults", "bool", "rpc: no eager todo prelude, no todo reminders"
    ),
    Flag(
        ("--protocol-fixes",), "protocol_fixes", "bool", "rpc: ids on every error, settled frames per prompt"
    ),
    Flag(
        ("--message-updates",),
        "message_updates",
        "value",
        "rpc: message_update frames carry the whole partial message (full) or only their delta (delta)",
        "full|delta",
    ),
    Flag(
        ("--allow-home",), "allow_home", "bool", "stay in the home directory instead of moving to a temp dir"
    ),
    Flag(("--list-models",), "list_models", "pattern", "list available models (optional pattern)", "PATTERN"),
    Flag(("--no-title",), "no_title", "bool", "no automatic session title (implied by rpc mode)"),
    Flag(("--hook",), "hooks", "append", "load a legacy hook module (not supported)", "PATH", noop=True),
    Flag(("--plugin-dir",), "plugin_dirs", "append", "load a plugin folder (repeatable)", "DIR"),
    Flag(
        ("--provider-session-id",),
        "provider_session_id",
        "value",
        "provider-side session id",
        "ID",
        noop=True,
    ),
    Flag(("--no-lsp",), "no_lsp", "bool", "no language servers (none are used here)", noop=True),
    Flag(("--no-mcp",), "no_mcp", "bool", "no MCP servers (none are used here)", noop=True),
    Flag(("--no-pty",), "no_pty", "bool", "no PTY for bash (never used here)", noop=True),
)

_BY_NAME: dict[str, Flag] = {name: flag for flag in FLAGS for name in flag.names}


class CliArgs(msgspec.Struct):
    """The parsed command line. ``notes`` are one-line remarks for stderr (ignored input)."""

    help: bool = False
    version: bool = False
    mode: str | None = None
    print: bool = False
    provider: str | None = None
    model: str | None = None
    models: list[str] | None = None
    smol: str | None = None
    slow: str | None = None
    plan: str | None = None
    thinking: str | None = None
    api_key: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    tools: str | None = None
    no_tools: bool = False
    no_session: bool = False
    session_dir: str | None = None
    session: str | None = None
    """``None`` when absent, ``""`` when given without a value (the reference's picker)."""
    continue_: bool = False
    fork: str | None = None
    export: str | None = None
    extensions: list[str] = msgspec.field(default_factory=list)
    no_extensions: bool = False
    trust: bool = False
    skills: list[str] | None = None
    no_skills: bool = False
    no_rules: bool = False
    approve: str | None = None
    no_todo_defaults: bool = False
    protocol_fixes: bool = False
    message_updates: str | None = None
    allow_home: bool = False
    list_models: str | None = None
    """``None`` when absent, ``""`` without a pattern."""
    no_title: bool = False
    hooks: list[str] = msgspec.field(default_factory=list)
    plugin_dirs: list[str] = msgspec.field(default_factory=list)
    provider_session_id: str | None = None
    no_lsp: bool = False
    no_mcp: bool = False
    no_pty: bool = False
    messages: list[str] = msgspec.field(default_factory=list)
    file_args: list[str] = msgspec.field(default_factory=list)
    """``@path`` arguments, without the ``@``."""
    unknown: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)

    def used_noops(self) -> list[str]:
        """Spellings of the no-op flags present on the command line."""
        return [flag.names[0] for flag in FLAGS if flag.noop and getattr(self, flag.dest)]


def parse_args(argv: list[str]) -> CliArgs:
    """Parse ``argv`` the way the reference does; never raises, never exits."""
    args = CliArgs()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        flag = _BY_NAME.get(arg)
        if flag is None:
            if arg.startswith("@"):
                args.file_args.append(arg[1:])
            elif arg.startswith("-") and arg != "-":
                args.unknown.append(arg)
                args.notes.append(f"unknown option {arg} ignored")
            else:
                args.messages.append(arg)
            continue
        if flag.kind == "bool":
            setattr(args, flag.dest, True)
            continue
        following = argv[i] if i < len(argv) else None
        if flag.kind == "optional":
            # a value only when the next argument does not look like a flag
            if following is not None and not following.startswith("-"):
                args.session = following
                i += 1
            else:
                args.session = ""
            continue
        if flag.kind == "pattern":
            if following is not None and not following.startswith(("-", "@")):
                args.list_models = following
                i += 1
            else:
                args.list_models = ""
            continue
        if following is None:
            args.notes.append(f"{arg} needs a value; ignored")
            continue
        i += 1
        _store_value(args, flag, arg, following)
    return args


def _store_value(args: CliArgs, flag: Flag, spelling: str, value: str) -> None:
    if flag.dest == "mode":
        if value in MODES:
            args.mode = value
        else:
            args.notes.append(f"unknown mode {value!r} ignored (expected {', '.join(MODES)})")
    elif flag.kind == "append":
        getattr(args, flag.dest).append(value)
    elif flag.kind == "csv":
        setattr(args, flag.dest, [part.strip() for part in value.split(",") if part.strip()])
    else:
        setattr(args, flag.dest, value)


def help_text() -> str:
    """The ``--help`` text, generated from :data:`FLAGS`."""
    lines = [
        "usage: xcsh [options] [@file ...] [message ...]",
        "",
        "xcsh — a coding agent. Run a one-shot task with -p, or serve hosts with --mode rpc.",
        "",
        "Options:",
    ]
    for flag in FLAGS:
        spelled = ", ".join(flag.names)
        if flag.metavar:
            spelled += f" <{flag.metavar}>" if flag.kind != "optional" else f" [{flag.metavar}]"
        lines.append(f"  {spelled:<38} {flag.help}")
    lines += [
        "",
        "Unknown options are ignored with a note on stderr. @file arguments attach text files",
        "and images to the first message (print mode only).",
        "",
        "Examples:",
        "  xcsh --mode rpc                      serve the JSON-lines RPC protocol on stdio",
        '  xcsh -p "add a test for foo()"        run one task and print the answer',
        '  xcsh -p @src/app.py "explain this"   attach a file to the prompt',
        "  xcsh --export session.jsonl out.html write a session as an HTML page",
        "  xcsh --list-models claude            list available models matching a pattern",
        '  xcsh conformance --agent-cmd "xcsh --mode rpc"   protocol scenarios (docs/conformance.md)',
        "  xcsh fake-llm --script s.json --agent-dir DIR    a scripted model for testing hosts",
        "",
        "Environment: PI_CODING_AGENT_DIR (agent data dir, default ~/.xcsh/agent), provider keys",
        "such as ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY.",
    ]
    return "\n".join(lines) + "\n"
