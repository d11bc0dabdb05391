"""The environment section of the system prompt: OS, shell, cwd, date and a git snapshot.

The git snapshot is taken once when the session starts (branch, main branch, short
status, recent commits) and is only read inside a repository; every git call is bounded
by a short timeout and a failure just leaves the part out.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import msgspec

GIT_TIMEOUT_S = 2.0
MAX_STATUS_LINES = 20
RECENT_COMMITS = 5


class GitSnapshot(msgspec.Struct, frozen=True):
    branch: str
    main_branch: str | None
    status: str
    """``git status --short`` output (trimmed to :data:`MAX_STATUS_LINES`), "" when clean."""
    commits: str
    """The last few commits, one line each."""


class Environment(msgspec.Struct, frozen=True):
    os_name: str
    shell: str
    git: GitSnapshot | None


_COMMANDS: dict[str, list[str]] = {
    "branch": ["rev-parse", "--abbrev-ref", "HEAD"],
    "main": ["rev-parse", "--verify", "--quiet", "main"],
    "master": ["rev-parse", "--verify", "--quiet", "master"],
    "status": ["status", "--short"],
    "log": ["log", "--oneline", f"-{RECENT_COMMITS}"],
}


def _start(repo: Path, commands: dict[str, list[str]]) -> dict[str, subprocess.Popen[str]]:
    """Start the git ``commands`` (concurrently); stops at the first that cannot be started."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    running: dict[str, subprocess.Popen[str]] = {}
    for name, args in commands.items():
        try:
            running[name] = subprocess.Popen(
                ["git", *args],
                cwd=repo,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        except OSError:
            break
    return running


def _collect(running: dict[str, subprocess.Popen[str]]) -> dict[str, str | None]:
    """Each started command's stdout (None on failure or after :data:`GIT_TIMEOUT_S`)."""
    results: dict[str, str | None] = dict.fromkeys(_COMMANDS)
    for name, process in running.items():
        try:
            out, _ = process.communicate(timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            continue
        results[name] = out.rstrip() if process.returncode == 0 else None
    return results


_early: dict[str, dict[str, subprocess.Popen[str]]] = {}
"""Snapshots started by :func:`start_git_snapshot`, by cwd, until a session start collects them."""


def start_git_snapshot(cwd: Path) -> None:
    """Start the snapshot's git commands for ``cwd`` now, when it is inside a repository.

    For a process that builds its session right away (``xcsh --mode rpc``): the commands then
    run on another core while the process imports the rest of itself, and the session's
    :func:`detect_environment` for this cwd collects them instead of starting its own (once;
    a later session start runs git again).
    """
    from xcsh.coding.discovery.base import find_repo_root

    absolute = os.path.abspath(cwd)
    if absolute in _early or find_repo_root(Path(absolute)) is None:
        return
    _early[absolute] = _start(Path(absolute), _COMMANDS)


def git_snapshot(cwd: Path) -> GitSnapshot | None:
    """The repository state at ``cwd``, or None outside a repository (or without git)."""
    early = _early.pop(os.path.abspath(cwd), None)
    out = _collect(early if early is not None else _start(cwd, _COMMANDS))
    branch = out["branch"]
    if branch is None:
        return None
    main = "main" if out["main"] is not None else "master" if out["master"] is not None else None
    status_lines = (out["status"] or "").splitlines()
    if len(status_lines) > MAX_STATUS_LINES:
        hidden = len(status_lines) - MAX_STATUS_LINES
        status_lines = [*status_lines[:MAX_STATUS_LINES], f"… and {hidden} more"]
    commits = "\n".join(_clip(line) for line in (out["log"] or "").splitlines())
    return GitSnapshot(branch=branch, main_branch=main, status="\n".join(status_lines), commits=commits)


def _clip(line: str, limit: int = 120) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def detect_environment(cwd: Path, *, in_repo: bool) -> Environment:
    """OS and shell of this process, and the git snapshot when ``in_repo``."""
    if not in_repo:
        early = _early.pop(os.path.abspath(cwd), None)
        if early is not None:
            _collect(early)  # started for a repository that is not one now: reaped, not used
    shell = os.environ.get("SHELL") or ("cmd.exe" if os.name == "nt" else "/bin/sh")
    os_name = f"{platform.system()} {platform.release()}".strip()
    return Environment(os_name=os_name, shell=shell, git=git_snapshot(cwd) if in_repo else None)
