"""The approval policy's rules and dialog texts (coding/approvals.py)."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.approvals import ApprovalConfig, config_from, describe, rule_allows

CONFIG = ApprovalConfig(
    tools=frozenset({"bash", "write", "edit"}),
    allow_commands=("ls", "git status"),
    allow_paths=("docs/", "*.md"),
)


def test_command_prefixes_match_whole_words_and_never_shell_control(tmp_path: Path) -> None:
    def allowed(command: str) -> bool:
        return rule_allows(CONFIG, tmp_path, "bash", {"command": command})

    assert allowed("ls") and allowed("ls -la src") and allowed("git status --short")
    assert not allowed("lsof") and not allowed("git push")
    for sneaky in ("ls; rm -rf x", "ls && rm x", "ls | sh", "ls $(rm x)", "ls `rm x`", "ls > f", "ls\nrm x"):
        assert not allowed(sneaky), sneaky


def test_every_named_path_must_be_in_an_allowed_directory_or_glob(tmp_path: Path) -> None:
    def allowed(args: dict[str, object]) -> bool:
        return rule_allows(CONFIG, tmp_path, "write", args)

    assert allowed({"path": "docs/a.txt", "content": ""}) and allowed({"path": "README.md", "content": ""})
    assert not allowed({"path": "docs/../src/a.py", "content": ""})
    assert not allowed({"path": "src/a.py", "content": ""})
    assert allowed({"edits": [{"path": "docs/x"}, {"path": "notes.md"}]})
    assert not allowed({"edits": [{"path": "docs/x"}, {"path": "src/y.py"}]})


def test_the_flag_wins_over_settings_and_no_tools_means_off() -> None:
    settings = {"approvals.tools": ["bash"], "approvals.allowCommands": ["ls"], "approvals.timeoutSeconds": 5}
    assert config_from(settings.get, "write, edit") == ApprovalConfig(
        tools=frozenset({"write", "edit"}), allow_commands=("ls",), timeout_s=5.0
    )
    assert config_from(settings.get, None).tools == frozenset({"bash"})  # type: ignore[union-attr]
    assert config_from({}.get, None) is None and config_from(settings.get, "") is None


def test_the_dialog_shows_the_command_the_new_file_or_the_edits(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    assert describe("bash", {"command": "make test"}, tmp_path) == ("Allow bash?", "$ make test")
    title, message = describe("write", {"path": "a.txt", "content": "new\n"}, tmp_path)
    assert title == "Allow write to a.txt?" and "-old" in message and "+new" in message
    title, message = describe(
        "edit",
        {"edits": [{"path": "b.py", "loc": {"range": {"pos": "3#AB", "end": "4#CD"}}, "content": ["x"]}]},
        tmp_path,
    )
    assert title == "Allow edit of b.py?" and message.endswith("+x") and "3#AB" in message
    assert describe("deploy", {"env": "prod"}, tmp_path) == ("Allow deploy?", '{\n  "env": "prod"\n}')
