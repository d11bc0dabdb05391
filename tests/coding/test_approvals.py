"""The approval policy's rules and dialog texts (coding/approvals.py, approval_rules.py, approval_dialog.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xcsh.coding.approval_dialog import MAX_SHOWN_LINES, describe
from xcsh.coding.approvals import ApprovalConfig, config_from, rule_allows

CONFIG = ApprovalConfig(
    tools=frozenset({"bash", "write", "edit"}),
    allow_commands=("ls", "git status"),
    allow_paths=("docs/", "*.md"),
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of the test's own (``~`` in tool paths resolves here)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    (path / "docs").mkdir(parents=True)
    return path


def test_command_prefixes_match_whole_words_and_never_shell_control(tmp_path: Path) -> None:
    def allowed(command: str) -> bool:
        return rule_allows(CONFIG, tmp_path, "bash", {"command": command})

    assert allowed("ls") and allowed("ls -la src") and allowed("git status --short")
    assert allowed("  ls   -la ") and allowed("git  status")
    assert not allowed("lsof") and not allowed("git push") and not allowed("git") and not allowed("")
    for sneaky in ("ls; rm -rf x", "ls && rm x", "ls | sh", "ls $(rm x)", "ls `rm x`", "ls > f", "ls\nrm x"):
        assert not allowed(sneaky), sneaky


def test_a_command_with_any_shell_syntax_is_asked_about_even_without_control_characters(
    tmp_path: Path,
) -> None:
    def allowed(command: str) -> bool:
        return rule_allows(CONFIG, tmp_path, "bash", {"command": command})

    # the reviewer's bypass: @P expands the prompt string, which runs the substitution
    assert not allowed("ls ${x:=\\$\\(touch\\ marker\\)} ${x@P}")
    for sneaky in (
        "ls $HOME",
        "ls 'a b'",
        'ls "$x"',
        "ls a\\ b",
        "ls {a,b}",
        "ls *",
        "ls ?",
        "ls [ab]",
        "ls ~",
        "ls #x",
        "ls !x",
        "ls (x)",
        "ls\tx",
        "ls\rx",
        "ls\x1b[2Kx",
        "ls \u202ex",
        "ls é",
    ):
        assert not allowed(sneaky), repr(sneaky)
    # a rule with shell syntax matches nothing
    assert not rule_allows(
        ApprovalConfig(tools=frozenset({"bash"}), allow_commands=("ls *",)),
        tmp_path,
        "bash",
        {"command": "ls *"},
    )


def test_an_allowed_command_with_env_or_a_cwd_outside_the_project_is_asked_about(
    proj: Path, tmp_path: Path
) -> None:
    def allowed(**args: object) -> bool:
        return rule_allows(CONFIG, proj, "bash", {"command": "ls", **args})

    assert (
        allowed()
        and allowed(env={})
        and allowed(cwd="docs")
        and allowed(cwd=str(proj))
        and allowed(timeout=5)
    )
    assert not allowed(env={"BASH_ENV": str(proj / "evil.sh")})
    assert not allowed(cwd="/") and not allowed(cwd="..") and not allowed(cwd="~")
    os.symlink(tmp_path, proj / "out")  # a link the repository ships, pointing out of it
    assert not allowed(cwd="out")
    assert not allowed(something_new=True)


def test_every_named_path_must_be_in_an_allowed_directory_or_glob(tmp_path: Path) -> None:
    def allowed(args: dict[str, object]) -> bool:
        return rule_allows(CONFIG, tmp_path, "write", args)

    assert allowed({"path": "docs/a.txt", "content": ""}) and allowed({"path": "README.md", "content": ""})
    assert not allowed({"path": "docs/../src/a.py", "content": ""})
    assert not allowed({"path": "src/a.py", "content": ""})
    assert rule_allows(CONFIG, tmp_path, "edit", {"edits": [{"path": "docs/x"}, {"path": "notes.md"}]})
    assert not rule_allows(CONFIG, tmp_path, "edit", {"edits": [{"path": "docs/x"}, {"path": "src/y.py"}]})


def test_paths_are_resolved_as_the_tools_resolve_them_and_through_symlinks(proj: Path, home: Path) -> None:
    whole = ApprovalConfig(tools=frozenset({"write"}), allow_paths=(".",))

    def allowed(path: str, config: ApprovalConfig = whole) -> bool:
        return rule_allows(config, proj, "write", {"path": path, "content": "x"})

    assert allowed("docs/a.md") and allowed("@docs/a.md") and allowed(str(proj / "a.md"))
    assert not allowed("~/.bashrc") and not allowed(f"@{home}/at.txt") and not allowed(str(home / "x"))
    os.symlink(home, proj / "docs" / "cfg")
    assert not allowed("docs/cfg/.profile")
    os.symlink(home / ".profile", proj / "profile")  # a dangling link: writing it creates the target
    assert not allowed("profile")
    # a relative rule never reaches outside the project, even through a link it names
    assert not allowed(
        "docs/cfg/.profile", ApprovalConfig(tools=frozenset({"write"}), allow_paths=("docs/cfg",))
    )
    # an absolute or ~ rule does what it says
    assert allowed("~/notes/a.txt", ApprovalConfig(tools=frozenset({"write"}), allow_paths=("~/notes",)))
    assert allowed(str(home / "a.txt"), ApprovalConfig(tools=frozenset({"write"}), allow_paths=(str(home),)))


def test_glob_stars_stay_in_one_segment_and_relative_globs_stay_in_the_project(
    proj: Path, home: Path
) -> None:
    def allowed(path: str, *rules: str) -> bool:
        config = ApprovalConfig(tools=frozenset({"write"}), allow_paths=rules)
        return rule_allows(config, proj, "write", {"path": path, "content": "x"})

    assert allowed("README.md", "*.md") and not allowed("docs/a.md", "*.md")
    assert (
        allowed("docs/a.md", "**/*.md") and allowed("docs/a.md", "docs/*.md") and allowed("a.md", "**/*.md")
    )
    assert not allowed(str(home / "abs.md"), "*.md") and not allowed(str(home / "abs.md"), "**/*.md")
    assert not allowed("../home/abs.md", "**/*.md") and not allowed("../home/abs.md", "../*/*.md")
    assert allowed(str(home / "abs.md"), f"{home}/*.md") and allowed(str(home / "abs.md"), "~/*.md")
    assert not allowed(str(home / "d" / "abs.md"), "~/*.md")


def test_every_path_a_call_touches_is_checked(proj: Path, home: Path) -> None:
    config = ApprovalConfig(tools=frozenset({"*"}), allow_paths=("docs/", "**/*.ipynb", "src"))
    (proj / "src").mkdir()
    (proj / "src" / "a.py").write_text("x = 1\n")

    def allowed(tool: str, args: dict[str, object]) -> bool:
        return rule_allows(config, proj, tool, args)

    assert allowed("edit", {"edits": [{"path": "docs/a.md", "move": "docs/b.md"}]})
    assert not allowed("edit", {"edits": [{"path": "docs/a.md", "move": "~/moved-out.sh"}]})
    assert not allowed("edit", {"edits": [{"path": "docs/a.md", "move": 3}]})
    assert allowed("notebook", {"action": "delete", "notebook_path": "docs/n.ipynb", "cell_index": 0})
    assert not allowed("notebook", {"action": "delete", "notebook_path": "~/n.ipynb", "cell_index": 0})
    # ast_edit rewrites every file below a directory (links included): only a named file is provable
    assert allowed("ast_edit", {"ops": [], "path": "src/a.py"})
    assert not allowed("ast_edit", {"ops": [], "path": "src"}) and not allowed("ast_edit", {"ops": []})
    assert allowed("read", {"path": "docs/a.md"}) and not allowed("read", {"path": "https://docs/a.md"})
    assert not allowed("read", {"path": "docs/a.zip:x.md"}) and not allowed("read", {"path": "docs/d.db?q=x"})
    # tools whose every path this policy cannot name are never allowed by a path rule
    for tool in ("bash", "python", "find", "task", "deploy"):
        assert not allowed(tool, {"path": "docs/a.md", "command": "ls", "cells": []}), tool


def test_git_internals_and_hard_links_are_always_asked_about(proj: Path, home: Path) -> None:
    config = ApprovalConfig(tools=frozenset({"write"}), allow_paths=(".",))
    (proj / ".git" / "hooks").mkdir(parents=True)
    assert not rule_allows(config, proj, "write", {"path": ".git/hooks/pre-commit", "content": "x"})
    (home / ".bashrc").write_text("ORIGINAL\n")
    os.link(home / ".bashrc", proj / "rc")
    assert not rule_allows(config, proj, "write", {"path": "rc", "content": "x"})


def test_path_rules_never_allow_writing_agent_policy_code_or_instructions(proj: Path, home: Path) -> None:
    """Review 5 N4: ``.xcsh/``, other agents' folders, instruction files, git's user config and the
    agent dir ask, as written and after symlinks, whatever their case; reading them (but the
    agent dir) may still be allowed."""
    config = ApprovalConfig(tools=frozenset({"write", "read"}), allow_paths=(".", "~/"))
    agent_dir = home / "agentdir"
    agent_dir.mkdir()
    (proj / "cfg").mkdir()
    os.symlink(proj / "cfg", proj / ".xcsh")  # .xcsh/config.yml is read through the link
    os.symlink(proj / ".claude", proj / "docs" / "c")

    def allowed(path: str, tool: str = "write") -> bool:
        return rule_allows(config, proj, tool, {"path": path, "content": "x"}, agent_dir)

    assert allowed("src/a.py") and allowed("docs/AGENTS.txt") and allowed("~/notes.txt")
    for path in (
        ".xcsh/config.yml",
        ".XCSH/extensions/e.py",
        "cfg/../.xcsh/commands/c.md",
        ".claude/commands/x.md",
        "docs/c/settings.json",
        "sub/.codex/prompts/p.md",
        ".cursor/rules/r.mdc",
        ".github/workflows/ci.yml",
        "AGENTS.md",
        "sub/claude.md",
        "XCSH.md",
        "~/.gitconfig",
        "~/.config/git/config",
        "~/.config/opencode/AGENTS.md",
        f"{agent_dir}/config.yml",
    ):
        assert not allowed(path), path
    assert allowed("AGENTS.md", "read") and allowed(".xcsh/config.yml", "read")
    assert not allowed(f"{agent_dir}/models.yml", "read") and not allowed(".git/config", "read")


def test_envrc_git_config_hooks_and_session_folders_are_never_written_unasked(proj: Path, home: Path) -> None:
    """direnv runs ``.envrc`` on ``cd``, git runs hooks and ``.git/config``'s programs, and a
    session file the agent rewrote would speak for the user when resumed: with ``allowPaths:
    ["."]`` every write there asks, the session folders given as ``write_dirs`` included."""
    config = ApprovalConfig(tools=frozenset({"write", "read"}), allow_paths=(".",))
    sessions = proj / "sessions"
    (sessions / "--proj--").mkdir(parents=True)
    os.symlink(sessions, proj / "docs" / "s")

    def allowed(path: str, tool: str = "write") -> bool:
        args = {"path": path, "content": "x"}
        return rule_allows(config, proj, tool, args, home / "agentdir", [sessions])

    assert allowed("src/a.py") and allowed("envrc.md") and allowed("sessions.md")
    for path in (
        ".envrc",
        "sub/.ENVRC",
        ".git/config",
        ".git/hooks/post-checkout",
        "sessions/--proj--/s.jsonl",
        "docs/s/--proj--/s.jsonl",
        "sessions",
    ):
        assert not allowed(path), path
    assert allowed("sessions/--proj--/s.jsonl", "read") and allowed(".envrc", "read")


def test_project_settings_only_add_gated_tools() -> None:
    """Review 5 N4: a project's ``allowCommands``/``allowPaths`` are ignored, its tools are added."""
    user = {"approvals.tools": ["bash"], "approvals.allowPaths": ["docs/"]}
    merged = {**user, "approvals.tools": ["read"], "approvals.allowCommands": ["python3"]}
    config = config_from(merged.get, None, user.get)
    assert config == ApprovalConfig(tools=frozenset({"bash", "python", "read"}), allow_paths=("docs/",))


def test_naming_one_tool_covers_every_tool_that_runs_code_or_writes_files() -> None:
    settings = {"approvals.tools": ["bash"], "approvals.allowCommands": ["ls"], "approvals.timeoutSeconds": 5}
    config = config_from(settings.get, "write, edit")
    assert config == ApprovalConfig(
        tools=frozenset({"write", "edit", "ast_edit", "notebook"}), allow_commands=("ls",), timeout_s=5.0
    )
    assert config_from(settings.get, None).tools == frozenset({"bash", "python"})  # type: ignore[union-attr]
    recommended = config_from({}.get, "bash,write,edit")
    assert recommended is not None
    assert all(recommended.covers(t) for t in ("bash", "python", "write", "edit", "ast_edit", "notebook"))
    assert not recommended.covers("read") and not recommended.covers("grep")
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


def test_the_dialog_shows_env_cwd_moves_and_where_links_lead(proj: Path, home: Path) -> None:
    title, message = describe(
        "bash", {"command": "echo hello", "cwd": "/", "env": {"BASH_ENV": "/x/evil.sh"}}, proj
    )
    assert title == "Allow bash?" and message == "cwd: /\nenv: BASH_ENV=/x/evil.sh\n$ echo hello"
    # no text of the call can pose as one of the dialog's own lines
    _, message = describe("bash", {"command": "rm -rf x\ncwd: /safe", "env": {"A": "1\nenv: B=2"}}, proj)
    assert message == "env: A=1\\nenv: B=2\n$ rm -rf x\n> cwd: /safe"
    title, message = describe(
        "python", {"cells": [{"code": "import os\nos.system('id')"}], "cwd": "~", "reset": True}, proj
    )
    assert message.endswith("\n# cell 1\n  import os\n  os.system('id')")
    assert (
        "os.system('id')" in message and f"cwd: {home}" in message and "reset: the kernel restarts" in message
    )
    title, message = describe("edit", {"edits": [{"path": "docs/a.md", "move": "~/moved-out.sh"}]}, proj)
    assert title == f"Allow edit of docs/a.md → {home}/moved-out.sh?"
    assert f"move docs/a.md → {home}/moved-out.sh" in message
    os.symlink(home, proj / "docs" / "cfg")
    title, _ = describe("write", {"path": "docs/cfg/.profile", "content": "x"}, proj)
    assert title == f"Allow write to docs/cfg/.profile (→ {home}/.profile)?"
    title, _ = describe("notebook", {"action": "delete", "notebook_path": "~/n.ipynb", "cell_index": 0}, proj)
    assert title == f"Allow notebook delete in {home}/n.ipynb?"


def test_the_diff_is_against_the_file_the_tool_will_write(proj: Path, home: Path) -> None:
    (home / ".bashrc").write_text("ORIGINAL\n")
    title, message = describe("write", {"path": "~/.bashrc", "content": "PWNED\n"}, proj)
    assert title == f"Allow write to {home}/.bashrc?"
    assert "-ORIGINAL" in message and "+PWNED" in message
    assert message.startswith(f"--- {home}/.bashrc\n+++ {home}/.bashrc\n")
    _, message = describe("write", {"path": "@docs/n.md", "content": "1#ZZ:copied\n"}, proj)
    assert "+copied" in message  # the content as the tool writes it (copied anchors dropped)


def test_control_characters_in_the_dialog_are_shown_escaped(proj: Path) -> None:
    title, message = describe(
        "bash", {"command": "rm -rf ~ \r\x1b[2K$ ls \u202eok", "env": {"A": "\x07"}}, proj
    )
    assert message == "env: A=\\x07\n$ rm -rf ~ \\r\\x1b[2K$ ls \\u202eok"
    title, message = describe("write", {"path": "a\rb\n.md", "content": "x\x1b]0;t\x07\nlinë 2\n"}, proj)
    assert title == "Allow write to a\\rb\\n.md?"
    assert "+x\\x1b]0;t\\x07" in message and "+linë 2" in message
    assert "\x1b" not in message and "\r" not in message


def test_what_changes_how_a_call_runs_is_shown_before_the_clipped_body(proj: Path) -> None:
    """Review 5 N6: a long command, code or rewrite cannot clip ``cwd``, ``env``, ``reset`` or
    ``ast_edit``'s other arguments out of the dialog."""
    long = "echo building\n" + "\n".join(f"echo {n}" for n in range(230))
    _, message = describe("bash", {"command": long, "cwd": "/", "env": {"BASH_ENV": "/x/evil.sh"}}, proj)
    lines = message.split("\n")
    assert lines[:3] == ["cwd: /", "env: BASH_ENV=/x/evil.sh", "$ echo building"]
    assert len(lines) == 2 + MAX_SHOWN_LINES + 1 and lines[-1] == f"… {231 - MAX_SHOWN_LINES} more lines"
    cells = [{"code": long}]
    _, message = describe("python", {"cells": cells, "cwd": "/", "reset": True}, proj)
    assert message.split("\n")[:2] == ["cwd: /", "reset: the kernel restarts first (its variables are lost)"]
    ops = [{"pat": long, "out": "x"}]
    _, message = describe("ast_edit", {"ops": ops, "path": "a.py", "lang": "python", "glob": "**"}, proj)
    assert message.split("\n")[0] == '{"lang": "python", "glob": "**"}' and message.endswith("more lines")


def test_tool_names_compare_case_insensitively() -> None:
    """Review 5 N7: ``Bash`` in the flag or the setting gates ``bash`` (and its group)."""
    config = config_from({"approvals.tools": ["Read"]}.get, None)
    assert config is not None and config.covers("read") and config.covers("READ")
    flagged = config_from({}.get, "Bash,Write")
    assert flagged is not None and all(flagged.covers(t) for t in ("bash", "python", "edit", "Notebook"))
    assert not flagged.covers("read")


@pytest.mark.parametrize("moved_agent_dir", [False, True], ids=["default", "PI_CODING_AGENT_DIR"])
def test_path_rules_apply_in_the_working_folder_of_a_start_in_home_but_not_through_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved_agent_dir: bool
) -> None:
    """Started in the home directory xcsh works in ``~/.xcsh/tmp`` or ``<agent dir>/tmp``: a
    project like any other for ``allowPaths``, though it lies in a protected folder."""
    from xcsh.cli.args import parse_args
    from xcsh.cli.workdir import working_dir
    from xcsh.coding.paths import agent_dir as agent_dir_of

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CONFIG_DIR", raising=False)
    if moved_agent_dir:
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "cfg" / "agent"))
    else:
        monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    agent = agent_dir_of()
    agent.mkdir(parents=True)
    (agent / "auth.json").write_text("{}")
    monkeypatch.chdir(home)
    cwd = working_dir(parse_args([]), lambda line: None)
    assert cwd != home and (cwd == agent / "tmp" or not moved_agent_dir)
    (cwd / "notes.txt").write_text("x\n")
    (cwd / "keys.json").symlink_to(agent / "auth.json")
    config = ApprovalConfig(tools=frozenset({"*"}), allow_paths=(".",))

    def allows(tool: str, args: dict[str, object]) -> bool:
        return rule_allows(config, cwd, tool, args, agent)

    assert allows("write", {"path": "notes.txt", "content": "y"})
    assert allows("read", {"path": "notes.txt"})
    assert allows("edit", {"edits": [{"path": "notes.txt"}]})
    # what is protected in any project still is, and a link out of the folder is checked where it leads
    assert not allows("write", {"path": "AGENTS.md", "content": "y"})
    assert not allows("write", {"path": ".xcsh/config.yml", "content": "y"})
    assert not allows("read", {"path": "keys.json"})
    assert not allows("read", {"path": str(agent / "auth.json")})
