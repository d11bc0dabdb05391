"""Process entry point: parse flags, build the session, run the chosen mode."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from xcsh import __version__
from xcsh.cli.args import NOOP_FLAGS, NOOP_VALUE_FLAGS, build_parser


def _setup_logging() -> None:
    level = os.environ.get("XCSH_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="xcsh: %(levelname)s %(name)s: %(message)s",
    )


def main(argv: list[str] | None = None) -> int:
    """Run xcsh with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["conformance"]:
        from xcsh.conformance.runner import main as conformance_main

        return conformance_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    _setup_logging()
    if args.version:
        sys.stdout.write(f"{__version__}\n")
        return 0
    mode = args.mode or ("text" if args.print else None)
    if mode == "rpc" and any(a.startswith("@") for a in argv):
        sys.stderr.write("Error: @file arguments are not supported in RPC mode\n")
        return 1
    _note_noops(args)
    from xcsh.coding.paths import agent_dir

    if args.list_models is not None:
        return _list_models(agent_dir(), args.list_models or None)
    from xcsh.coding.factory import StartupError, StartupOptions, create_session

    options = StartupOptions(
        cwd=Path.cwd(),
        agent_dir=agent_dir(),
        provider=args.provider,
        model=args.model,
        models=args.models,
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
    )
    try:
        if mode == "rpc":
            from xcsh.modes.rpc.run import run_rpc

            return run_rpc(lambda: create_session(options))
        from xcsh.modes.print_mode import run_print

        prompt = " ".join(args.messages)
        if not prompt and not sys.stdin.isatty():
            prompt = sys.stdin.read()
        if not prompt.strip():
            parser.print_help(sys.stderr)
            return 2
        return run_print(lambda: create_session(options), prompt, json_events=mode == "json")
    except StartupError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1


def _note_noops(args: object) -> None:
    for flag in (*NOOP_FLAGS, *NOOP_VALUE_FLAGS):
        name = flag.lstrip("-").replace("-", "_")
        value = getattr(args, name, None)
        if value and flag != "--no-title":
            sys.stderr.write(f"xcsh: note: {flag} is accepted but has no effect in this version\n")


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
