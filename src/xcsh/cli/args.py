"""Command-line definition, mirroring the reference's flags.

Every flag of rpc-protocol §2.1 is accepted; flags not implemented yet are no-ops noted
on stderr, never start-up errors (existing hosts pass several of them by default).
"""

from __future__ import annotations

import argparse

NOOP_FLAGS = ("--no-skills", "--no-lsp", "--no-mcp", "--no-pty", "--no-title")
NOOP_VALUE_FLAGS = ("--skills", "--hook", "--provider-session-id", "--smol", "--slow", "--plan")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xcsh",
        description="xcsh — a coding agent. Run a one-shot task with -p, or serve hosts with --mode rpc.",
        epilog=(
            "Examples:\n"
            "  xcsh --mode rpc                      serve the JSON-lines RPC protocol on stdio\n"
            '  xcsh -p "add a test for foo()"        run one task and print the answer\n'
            "  xcsh --list-models claude            list available models matching a pattern\n"
            "Environment: PI_CODING_AGENT_DIR (agent data dir, default ~/.xcsh/agent), provider keys\n"
            "such as ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("messages", nargs="*", help="prompt text (print mode); ignored in RPC mode")
    add("--version", "-v", action="store_true", help="print the version and exit")
    add("--mode", choices=("text", "json", "rpc"), default=None, help="output mode (default text)")
    add("--print", "-p", action="store_true", help="run the prompt to completion and print the answer")
    add("--list-models", nargs="?", const="", default=None, metavar="PATTERN", help="list available models")
    add("--provider", help="provider used to resolve --model")
    add("--model", help="model: id, provider/id or fuzzy pattern, optional :level suffix")
    add("--models", help="comma-separated model patterns that cycle_model cycles through")
    add("--thinking", help="initial thinking level: minimal|low|medium|high|xhigh")
    add("--api-key", help="API key for the selected model's provider")
    add("--system-prompt", help="replace the system prompt (text, or a file path)")
    add("--append-system-prompt", help="append to the system prompt (text, or a file path)")
    add("--tools", help="comma-separated built-in tools to enable")
    add("--no-tools", action="store_true", help="no built-in tool is active (unless --tools lists some)")
    add("--no-session", action="store_true", help="keep the session in memory only")
    add("--session-dir", help="directory where session files are created and looked up")
    add(
        "--session",
        "--resume",
        "-r",
        dest="session",
        nargs="?",
        const="",
        default=None,
        help="open a session by id or path",
    )
    add(
        "--continue",
        "-c",
        dest="continue_",
        action="store_true",
        help="continue the most recent session here",
    )
    add("--fork", help="copy a session's history into a new session")
    add(
        "--extension",
        "-e",
        dest="extensions",
        action="append",
        default=[],
        help="load an extension (repeatable)",
    )
    add("--no-extensions", action="store_true", help="do not discover extensions")
    add("--no-rules", action="store_true", help="do not load TTSR/prompt rules")
    for flag in NOOP_FLAGS:
        add(flag, action="store_true", help=argparse.SUPPRESS)
    for flag in NOOP_VALUE_FLAGS:
        add(flag, help=argparse.SUPPRESS)
    return parser
