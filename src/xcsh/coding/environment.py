"""The environment section of the system prompt: OS, shell, cwd, date and a git snapshot.

The git snapshot is taken once when the session starts (branch, main branch, short
status, recent commits) and is only read inside a repository; every git call is bounded
by a short timeout and a failure just leaves the part out.
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 2.0
MAX_STATUS_LINES = 20
RECENT_COMMITS = 5


@dataclass(frozen=True, slots=True)
class GitSnapshot:
    branch: str
    main_branch: str | None
    status: str
    """``git status --short`` output (trimmed to :data:`MAX_STATUS_LINES`), "" when clean."""
    commits: str
    """The last few commits, one line each."""


@dataclass(frozen=True, slots=True)
class Environment:
    os_name: str
    shell: str
    git: GitSnapshot | None


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.rstrip() if done.returncode == 0 else None


def git_snapshot(cwd: Path) -> GitSnapshot | None:
    """The repository state at ``cwd``, or None outside a repository (or without git)."""
    branch = _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    if branch is None:
        return None
    main = next(
        (
            name
            for name in ("main", "master")
            if _git(cwd, "rev-parse", "--verify", "--quiet", name) is not None
        ),
        None,
    )
    status_lines = (_git(cwd, "status", "--short") or "").splitlines()
    if len(status_lines) > MAX_STATUS_LINES:
        hidden = len(status_lines) - MAX_STATUS_LINES
        status_lines = [*status_lines[:MAX_STATUS_LINES], f"… and {hidden} more"]
    commits = _git(cwd, "log", "--oneline", f"-{RECENT_COMMITS}") or ""
    return GitSnapshot(branch=branch, main_branch=main, status="\n".join(status_lines), commits=commits)


def detect_environment(cwd: Path, *, in_repo: bool) -> Environment:
    """OS and shell of this process, and the git snapshot when ``in_repo``."""
    shell = os.environ.get("SHELL") or ("cmd.exe" if os.name == "nt" else "/bin/sh")
    os_name = f"{platform.system()} {platform.release()}".strip()
    return Environment(os_name=os_name, shell=shell, git=git_snapshot(cwd) if in_repo else None)
