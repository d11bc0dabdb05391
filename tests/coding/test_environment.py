"""The environment section's git snapshot and the locale mapping."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from xcsh.coding import environment
from xcsh.coding.environment import detect_environment, git_snapshot, start_git_snapshot
from xcsh.coding.locale import display_name, initial_locale, supported


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_a_repository_snapshot_has_branch_main_branch_status_and_commits(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(
        tmp_path,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=A",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "first commit",
    )
    (tmp_path / "new.txt").write_text("x")
    snap = git_snapshot(tmp_path)
    assert snap is not None
    assert (snap.branch, snap.main_branch) == ("main", "main")
    assert snap.status == "?? new.txt" and snap.commits.endswith(" first commit")


def test_outside_a_repository_there_is_no_snapshot(tmp_path: Path) -> None:
    assert git_snapshot(tmp_path) is None


def _repo(path: Path) -> Path:
    git(path, "init", "-q", "-b", "main")
    git(path, "-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q", "--allow-empty", "-m", "first")
    return path


def test_a_snapshot_started_early_is_the_one_the_session_gets_and_is_used_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    fresh = git_snapshot(repo)
    start_git_snapshot(repo / ".")  # the same directory, spelt differently
    early = detect_environment(repo, in_repo=True).git
    assert early == fresh and early is not None and early.status == ""
    (repo / "new.txt").write_text("x")
    # a later session start runs git again instead of reusing the early snapshot
    later = detect_environment(repo, in_repo=True).git
    assert later is not None and later.status == "?? new.txt"


def test_outside_a_repository_nothing_is_started_early(tmp_path: Path) -> None:
    start_git_snapshot(tmp_path)
    assert str(tmp_path) not in environment._early
    assert detect_environment(tmp_path, in_repo=False).git is None


def test_an_early_snapshot_of_what_is_no_longer_a_repository_is_reaped_not_used(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    start_git_snapshot(repo)
    early = environment._early[str(repo)]
    assert detect_environment(repo, in_repo=False).git is None
    assert str(repo) not in environment._early
    assert early.processes and all(p.returncode is not None for p in early.processes)


def test_locales_are_normalised_onto_the_supported_ones() -> None:
    assert (
        supported("ja_JP.UTF-8") == "ja" and supported("zh-Hans") == "zh-cn" and supported("pt-BR") == "pt-br"
    )
    assert display_name("fr-FR") == "French" and display_name("en-US") is None and display_name("sv") is None
    assert initial_locale({"LANG": "de_DE.UTF-8"}) == "de"
    assert initial_locale({"XCSH_LOCALE": "ko", "LANG": "de_DE.UTF-8"}) == "ko"
    assert initial_locale({"LANG": "C.UTF-8"}) == "en" and initial_locale({}) is None


def test_git_gets_no_provider_key_but_the_users_git_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-for-git")
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    env = environment.git_environment()
    assert "OPENAI_API_KEY" not in env and env["GIT_DIR"] == "/elsewhere/.git"
    assert env["GIT_OPTIONAL_LOCKS"] == "0" and env["LC_ALL"] == "C"


def test_when_git_cannot_list_the_drivers_the_snapshot_has_no_status_but_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git older than 2.6 has no ``config --name-only``: the driver listing fails (exit 129),
    so the filters cannot be switched off and ``status`` (which would run them) is not run; an
    approval rule's ``git`` call is asked about instead."""
    (tmp_path / "repo").mkdir()
    repo = _repo(tmp_path / "repo")
    (repo / "new.txt").write_text("x")
    real = shutil.which("git")
    assert real is not None
    old_git = tmp_path / "bin" / "git"
    old_git.parent.mkdir()
    # the real git, but its config command does not know --name-only (as before git 2.6)
    old_git.write_text(
        "#!/bin/sh\n"
        'if [ "$2" = config ]; then shift 2; exec "$0.real" --no-pager config --name-onlyy "$@"; fi\n'
        'exec "$0.real" "$@"\n'
    )
    old_git.chmod(0o755)
    (old_git.parent / "git.real").symlink_to(real)
    monkeypatch.setenv("PATH", f"{old_git.parent}{os.pathsep}{os.environ['PATH']}")
    snap = git_snapshot(repo)
    assert snap is not None and snap.branch == "main" and snap.commits.endswith(" first")
    assert snap.status == ""
    assert environment.git_program_overrides(repo) is None  # an allowed git call asks instead
    monkeypatch.undo()
    fresh = git_snapshot(repo)
    assert fresh is not None and fresh.status == "?? new.txt"  # the same repository, listed: status runs


def test_every_filter_and_diff_driver_the_config_names_is_switched_off() -> None:
    listing = (
        "filter.lfs.clean\0filter.lfs.smudge\0filter.my.evil.process\0filter.x=y.clean\0"
        "diff.pdf.textconv\0diff.a.b.command\0diff.external\0"
    )
    overrides = environment._driver_overrides(listing)
    assert overrides is not None
    assert ("filter.lfs.clean", "") in overrides and ("filter.lfs.smudge", "") in overrides
    assert ("filter.my.evil.process", "") in overrides and ("filter.my.evil.required", "false") in overrides
    assert ("filter.x=y.clean", "") in overrides
    assert ("diff.pdf.textconv", "") in overrides and ("diff.pdf.cachetextconv", "false") in overrides
    assert ("diff.a.b.command", "") in overrides and ("diff.external", "") in overrides
    assert environment._driver_overrides("") == []  # nothing defined: nothing set (git diff works)
    assert environment._driver_overrides("filter.a\nb.clean\0") is None  # cannot be named: no status
