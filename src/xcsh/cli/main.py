"""Process entry point: parse flags, build the session, run the chosen mode."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from xcsh.cli.args import CliArgs, help_text, parse_args
from xcsh.version import __version__

if TYPE_CHECKING:
    from xcsh.coding.factory import StartupOptions

ROLE_ENV = {"smol": "PI_SMOL_MODEL", "slow": "PI_SLOW_MODEL", "plan": "PI_PLAN_MODEL"}


def _setup_logging() -> None:
    level = os.environ.get("XCSH_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="xcsh: %(levelname)s %(name)s: %(message)s",
    )


def note(text: str) -> None:
    """One line on stderr about something accepted but ignored or adjusted."""
    sys.stderr.write(f"xcsh: note: {text}\n")


def main(argv: list[str] | None = None) -> int:
    """Run xcsh with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["conformance"]:
        from xcsh.conformance.runner import main as conformance_main

        return conformance_main(argv[1:])
    if argv[:1] == ["fake-llm"]:
        from xcsh.conformance.serve import main as fake_llm_main

        return fake_llm_main(argv[1:])
    if argv[:1] == ["rpc-schema"]:
        return _print_rpc_schema(argv[1:])
    args = parse_args(argv)
    if args.api_key:
        from xcsh.coding.secrets import hide_from_cmdline

        hide_from_cmdline(args.api_key)  # ps shows every process's command line to every user
    from xcsh.modes.rpc import gc_pause

    if args.mode == "rpc":
        gc_pause.pause()  # before the start-up imports (xcsh.cli.entry may have done it already)
    else:
        gc_pause.cancel()  # the entry point's glance at the flags was wrong
    _setup_logging()
    if args.help:
        sys.stdout.write(help_text())
        return 0
    if args.version:
        sys.stdout.write(f"{__version__}\n")
        return 0
    for text in args.notes:
        note(text)
    for flag in args.used_noops():
        note(f"{flag} is accepted but has no effect in this version")
    from xcsh.coding.paths import agent_dir

    if args.list_models is not None:
        return _list_models(agent_dir(), args.list_models or None)
    if args.export is not None:
        return _export(args.export, args.messages[0] if args.messages else None)
    mode = args.mode or ("text" if args.print else None)
    if mode == "rpc" and args.file_args:
        sys.stderr.write("Error: @file arguments are not supported in RPC mode\n")
        return 1
    from xcsh.cli.workdir import working_dir

    cwd = working_dir(args, note)
    if mode == "rpc":
        # the session is built right away: its git snapshot runs on another core meanwhile
        from xcsh.coding.environment import start_git_snapshot

        start_git_snapshot(cwd)
    from xcsh.coding.factory import StartupError, create_session

    options = startup_options(args, cwd=cwd, agent_dir=agent_dir(), mode=mode)
    try:
        if mode == "rpc":
            from xcsh.modes.rpc.run import run_rpc

            updates = args.message_updates or "full"
            if updates not in ("full", "delta"):
                sys.stderr.write(f"Error: --message-updates must be full or delta, not {updates!r}\n")
                return 1
            return run_rpc(
                lambda: create_session(options),
                protocol_fixes=args.protocol_fixes,
                message_updates="delta" if updates == "delta" else "full",
            )
        if mode == "acp":
            return _run_acp(options)
        return _run_print(args, options, json_events=mode == "json")
    except StartupError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1


def startup_options(args: CliArgs, *, cwd: Path, agent_dir: Path, mode: str | None) -> StartupOptions:
    """The session's start-up options from parsed flags (also used by ``xcsh.open_session``)."""
    from xcsh.coding.factory import StartupOptions

    return StartupOptions(
        cwd=cwd,
        agent_dir=agent_dir,
        provider=args.provider,
        model=args.model,
        models=",".join(args.models) if args.models is not None else None,
        thinking=args.thinking,
        api_key=args.api_key,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        tools=args.tools,
        no_tools=args.no_tools,
        no_session=args.no_session,
        session_dir=Path(args.session_dir).expanduser().resolve() if args.session_dir else None,
        session=args.session,
        continue_session=args.continue_,
        fork=args.fork,
        rpc_mode=mode == "rpc",
        extensions=list(args.extensions),
        no_extensions=args.no_extensions,
        no_rules=args.no_rules,
        no_skills=args.no_skills,
        skills=args.skills,
        plugin_dirs=list(args.plugin_dirs),
        model_roles=_model_roles(args),
        approve=args.approve,
        no_todo_defaults=args.no_todo_defaults,
        trust=args.trust,
    )


def _run_acp(options: StartupOptions) -> int:
    try:
        from xcsh.modes.acp.run import run_acp
    except ImportError:
        sys.stderr.write("Error: --mode acp needs the ACP SDK: pip install 'xcsh[acp]'\n")
        return 1
    return run_acp(options)


def _run_print(args: CliArgs, options: StartupOptions, *, json_events: bool) -> int:
    from xcsh.cli.file_args import FileArgError, load_attachments
    from xcsh.coding.factory import create_session
    from xcsh.modes.print_mode import PrintJob, run_print

    try:
        attached = load_attachments(args.file_args, options.cwd)
    except FileArgError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    for text in attached.notes:
        note(text)
    messages = list(args.messages)
    first = attached.text + (messages.pop(0) if messages else "")
    if not first and not attached.images and not messages and not sys.stdin.isatty():
        first = sys.stdin.read()
    if not first.strip() and not attached.images:
        sys.stderr.write(help_text())
        return 2
    job = PrintJob(first=first, images=attached.images, more=messages, json_events=json_events)
    return run_print(lambda: create_session(options), job)


def _model_roles(args: CliArgs) -> dict[str, str]:
    """``--smol/--slow/--plan``, else ``$PI_SMOL_MODEL``/… : role → model pattern (not persisted)."""
    roles: dict[str, str] = {}
    for role, env_name in ROLE_ENV.items():
        value = getattr(args, role) or os.environ.get(env_name)
        if value:
            roles[role] = value
    return roles


def _export(source: str, output: str | None) -> int:
    """``--export <session.jsonl> [out.html]``: write the page; prints ``Exported to: <path>``."""
    from xcsh.coding.export.file import ExportError, export_session_file

    try:
        written = export_session_file(Path(source), Path(output) if output else None)
    except ExportError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    sys.stdout.write(f"Exported to: {written}\n")
    return 0


def _print_rpc_schema(rest: list[str]) -> int:
    """``xcsh rpc-schema``: print the protocol's JSON Schema (2020-12), as committed in docs/."""
    if rest:
        sys.stderr.write("usage: xcsh rpc-schema   (prints the RPC protocol's JSON Schema)\n")
        return 2
    from xcsh.rpc.schema import protocol_schema_text

    sys.stdout.write(protocol_schema_text())
    return 0


def _list_models(directory: Path, pattern: str | None) -> int:
    from xcsh.coding.models import ModelRegistry, format_model_list
    from xcsh.coding.models_config import ModelsConfigError

    try:
        registry = ModelRegistry.load(directory)
    except ModelsConfigError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    listing = format_model_list(registry.available_models(), pattern)
    sys.stdout.write(listing if listing.endswith("\n") else listing + "\n")
    if not sys.stdout.isatty():
        sys.stdout.flush()
    return 0
