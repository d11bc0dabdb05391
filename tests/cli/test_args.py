"""The command line is parsed with the reference's rules: nothing on it makes start-up fail."""

from __future__ import annotations

from xcsh.cli.args import FLAGS, parse_args


def test_unknown_flags_are_ignored_with_a_note_and_messages_kept() -> None:
    args = parse_args(["--some-future-flag", "-Z", "hello", "--mode", "rpc"])
    assert args.mode == "rpc"
    assert args.unknown == ["--some-future-flag", "-Z"]
    assert args.messages == ["hello"]
    assert any("--some-future-flag" in n for n in args.notes)


def test_a_value_flag_without_a_value_is_ignored_with_a_note() -> None:
    args = parse_args(["-p", "--model"])
    assert args.print and args.model is None
    assert args.notes == ["--model needs a value; ignored"]


def test_an_unknown_mode_is_ignored_and_acp_is_a_mode() -> None:
    assert parse_args(["--mode", "fancy"]).mode is None
    assert parse_args(["--mode", "acp"]).mode == "acp"


def test_resume_takes_a_value_only_when_the_next_argument_is_not_a_flag() -> None:
    assert parse_args(["--resume", "abc"]).session == "abc"
    assert parse_args(["-r", "--no-session"]).session == ""
    assert parse_args(["--session"]).session == ""


def test_list_models_takes_a_pattern_unless_a_flag_or_file_follows() -> None:
    assert parse_args(["--list-models", "claude"]).list_models == "claude"
    assert parse_args(["--list-models", "@x"]).list_models == ""
    assert parse_args(["--list-models"]).list_models == ""


def test_at_arguments_are_files_and_repeatable_flags_accumulate() -> None:
    args = parse_args(
        ["@a.txt", "-e", "x.py", "--extension", "y.py", "--plugin-dir", "p", "--no-lsp", "@b.png"]
    )
    assert args.file_args == ["a.txt", "b.png"]
    assert args.extensions == ["x.py", "y.py"]
    assert args.plugin_dirs == ["p"]
    assert args.used_noops() == ["--no-lsp"]


def test_comma_lists_are_split_and_trimmed() -> None:
    args = parse_args(["--skills", "a*, b", "--models", "x,y"])
    assert args.skills == ["a*", "b"] and args.models == ["x", "y"]


def test_every_reference_flag_is_known() -> None:
    reference = {
        "--help", "-h", "--version", "-v", "--allow-home", "--mode", "--continue", "-c", "--resume", "-r",
        "--session", "--fork", "--provider", "--model", "--smol", "--slow", "--plan", "--api-key",
        "--system-prompt", "--append-system-prompt", "--provider-session-id", "--no-session",
        "--session-dir", "--models", "--no-tools", "--no-lsp", "--no-pty", "--no-mcp", "--tools",
        "--thinking", "--print", "-p", "--export", "--hook", "--extension", "-e", "--plugin-dir",
        "--no-extensions", "--no-skills", "--no-rules", "--no-title", "--skills", "--list-models",
    }  # fmt: skip
    known = {name for flag in FLAGS for name in flag.names}
    assert reference <= known
