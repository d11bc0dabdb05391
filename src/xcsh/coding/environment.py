"""The environment section of the system prompt: OS, shell, cwd, date and a git snapshot.

The git snapshot is taken once when the session starts (branch, main branch, short
status, recent commits) and is only read inside a repository; every git call is bounded
by a short timeout and a failure just leaves the part out.

The repository's configuration is not the user's: a downloaded tree can bring a ``.git/config``
whose ``core.fsmonitor``, ``log.showSignature`` + ``gpg.program`` or filter drivers name a
program. The snapshot switches every such key off through ``GIT_CONFIG_COUNT`` settings (which
win over every configuration file; a driver's name may hold any character, even "="), skips
``status`` when the drivers cannot all be switched off, reads nothing from stdin, and gives git
only ``PATH``, ``HOME`` and git's own variables from the environment: no provider key
(docs/security.md). The same settings, with the diff drivers' ``textconv`` and ``command``,
make the ``git`` commands an approval rule allows safe (:func:`git_program_overrides`).
"""

from __future__ import annotations

import os
import platform
import subprocess
import threading
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


# Every git call of the snapshot runs with these: a repository's own .git/config (a tarball or a
# shared copy brings one) must not make it run a program. Keys that run one during status, log
# and rev-parse are switched off; the drivers the config names are switched off by name
# (see _driver_overrides); transports are refused so a partial clone cannot fetch (and run
# ``ext::`` commands, ``uploadpack`` or ``core.sshCommand``) for a missing object.
#
# GIT_NO_PROGRAMS: the keys through which a configuration makes git run a program (or a bare
# repository found by walking up supplies one), shared with the ``git`` calls an approval rule
# runs without asking (coding/approvals.py); the drivers come on top, by name. ``diff.external``
# is among the drivers: an empty value is not "none" to git but a program it fails to start, so
# it is set only where a configuration defines it (else every ``git diff`` would fail).
GIT_NO_PROGRAMS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=",
    "core.editor=false",
    "sequence.editor=false",
    "credential.helper=",
    "gpg.program=false",
    "gpg.openpgp.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "gpg.ssh.defaultKeyCommand=false",
    "log.showSignature=false",
    "interactive.diffFilter=cat",
    "safe.bareRepository=explicit",
    "protocol.ext.allow=never",
)
_SAFE_CONFIG = (
    *GIT_NO_PROGRAMS,
    "diff.renames=false",
    "status.renames=false",
    "status.submoduleSummary=false",
    "protocol.allow=never",
    *(f"protocol.{name}.allow=never" for name in ("file", "ssh", "git", "http", "https", "ftp", "ftps")),
)
# The environment git gets: where to find itself and the user's own git settings, nothing else
# (no provider key, no token: the programs the overrides miss would see none of them).
_ENV_KEPT = ("PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "XDG_CONFIG_HOME", "SYSTEMROOT")
_ENV_GIT_KEPT = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
)

# The keys that name a program under a name of the configuration's choosing, so they are
# switched off by name (_driver_overrides): filters (status, diff, add, checkout), a diff
# driver's ``textconv`` (diff, log -p, show, blame, grep) and ``command`` (diff),
# ``diff.external``, a merge driver (merge, pull, rebase), a command's own pager
# (``pager.log=<program>``), ``git archive``'s compressors (``tar.<format>.command``), the viewers of
# ``git help`` and the tools of difftool/mergetool (``man|browser|difftool|mergetool.<tool>.cmd``
# and ``.path``); and the program a fetch from a local or ``file://`` remote starts
# (``remote.<name>.uploadpack``/``receivepack``: a partial clone fetches a missing object for
# ``git log -p``), which git takes from the first configuration naming it, so no setting of ours
# wins: where one is named, an allowed git command is asked about (git_program_overrides).
DRIVER_KEYS = (
    r"^(filter\..*\.(clean|smudge|process)|diff\..*\.(textconv|command)|diff\.external"
    r"|merge\..*\.driver|pager\..*|tar\..*\.command|(man|browser|difftool|mergetool)\..*\.(cmd|path)"
    r"|remote\..*\.(uploadpack|receivepack))$"
)

_COMMANDS: dict[str, list[str]] = {
    "branch": ["rev-parse", "--abbrev-ref", "HEAD"],
    "main": ["rev-parse", "--verify", "--quiet", "main"],
    "master": ["rev-parse", "--verify", "--quiet", "master"],
    "log": ["log", "--no-show-signature", "--no-decorate", "--no-color", "--oneline", f"-{RECENT_COMMITS}"],
    # the drivers the configuration defines: their programs are switched off (_driver_overrides)
    "drivers": ["config", "-z", "--name-only", "--get-regexp", DRIVER_KEYS],
}
_STATUS = ["status", "--short", "--no-renames", "--ignore-submodules=all", "--untracked-files=normal"]


def git_environment() -> dict[str, str]:
    """The environment of the snapshot's git processes (docs/security.md)."""
    env = {name: os.environ[name] for name in (*_ENV_KEPT, *_ENV_GIT_KEPT) if name in os.environ}
    env.update(
        GIT_OPTIONAL_LOCKS="0",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_PAGER="cat",
        LC_ALL="C",
    )
    return env


def _driver_overrides(listing: str) -> list[tuple[str, str]] | None:
    """Settings that switch off every driver program named in ``git config``'s NUL-separated
    ``listing`` (keys matching :data:`DRIVER_KEYS`).

    A filter's programs are emptied and it is made optional (git then passes the content
    through). A diff driver's ``textconv`` and ``command`` and ``diff.external`` are emptied: git
    cannot start an empty program, so a command that would have run one fails instead of running
    it; the textconv cache is switched off too (its notes come with the repository). None when a
    name cannot be handed to git as a key (a line break in it): then status is not run.
    """
    keys = [name for name in listing.split("\0") if name]
    filters = {name.rsplit(".", 1)[0] for name in keys if name.startswith("filter.")}
    diffs = {name.rsplit(".", 1)[0] for name in keys if name.startswith("diff.") and name.count(".") >= 2}
    others = {name for name in keys if not name.startswith(("filter.", "diff.", "remote."))}
    if any("\n" in name or "\r" in name for name in filters | diffs | others):
        return None
    settings = [
        (f"{driver}.{key}", value)
        for driver in sorted(filters)
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
    ]
    settings += [
        (f"{driver}.{key}", value)
        for driver in sorted(diffs)
        for key, value in (("textconv", ""), ("command", ""), ("cachetextconv", "false"))
    ]
    if "diff.external" in keys:
        settings.append(("diff.external", ""))
    settings += [(name, _OTHER_OFF.get(name.rsplit(".", 1)[-1].lower(), "")) for name in sorted(others)]
    return settings


# What the other keys of DRIVER_KEYS are set to (by their last part; "" where not named): git
# cannot start an empty program, so a command needing one fails instead; a merge driver "false"
# leaves the file in conflict; an empty pager is "no pager".
_OTHER_OFF = {"driver": "false", "command": "false"}


def _config_environment(env: dict[str, str], overrides: list[tuple[str, str]]) -> dict[str, str]:
    """``env`` carrying :data:`_SAFE_CONFIG` and ``overrides`` as git configuration.

    They go through ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_<n>`` / ``GIT_CONFIG_VALUE_<n>``, not
    ``-c``: git splits a ``-c`` argument at its first "=", so a driver named ``x=y`` would set
    ``filter.x`` and leave the real driver on; a key in the environment is taken whole. Like ``-c``,
    these win over every configuration file.
    """
    settings = [(item.partition("=")[0], item.partition("=")[2]) for item in _SAFE_CONFIG] + overrides
    env = dict(env)
    for index, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(settings))
    return env


def git_program_overrides(
    run_dir: Path, first_index: int = 0, extra: list[tuple[str, str]] | None = None
) -> dict[str, str] | None:
    """``GIT_CONFIG_*`` variables (and an empty ``GIT_PROXY_COMMAND``, unless the user set one)
    under which a ``git`` started in ``run_dir`` runs no program a configuration names: :data:`GIT_NO_PROGRAMS`, every driver the configuration seen from
    ``run_dir`` defines (:func:`_driver_overrides`) and ``extra``, numbered from ``first_index``
    (keeps the caller's own entries).

    The drivers of every checked-out submodule (any gitlink whose folder holds a ``.git``, with
    or without ``.gitmodules``; recursively) are listed too: ``git status`` and ``git diff`` run
    git in there, where the submodule's own configuration names its drivers.

    None when the drivers cannot all be listed or named (the caller must not run git unasked).
    """
    try:
        listing = _listing(run_dir, git_environment(), _MAX_SUBMODULE_DEPTH)
    except OSError:
        listing = ""  # no git: the command the rule allows fails the same way
    overrides = _driver_overrides(listing) if listing is not None else None
    if overrides is None or listing is None:
        return None
    if any(name.startswith("remote.") for name in listing.split("\0")):
        return None  # an upload/receive program: the first configuration naming it wins over ours
    settings = [(item.partition("=")[0], item.partition("=")[2]) for item in GIT_NO_PROGRAMS]
    settings += overrides + (extra or [])
    env: dict[str, str] = {}
    for index, (key, value) in enumerate(settings, start=first_index):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    env["GIT_CONFIG_COUNT"] = str(first_index + len(settings))
    if "GIT_PROXY_COMMAND" not in os.environ:  # an empty one beats core.gitProxy (git:// fetches)
        env["GIT_PROXY_COMMAND"] = ""
    return env


_MAX_SUBMODULE_DEPTH = 4
_MAX_SUBMODULES = 64


def _listing(run_dir: Path, env: dict[str, str], depth: int, budget: list[int] | None = None) -> str | None:
    """The NUL-separated :data:`DRIVER_KEYS` names the configuration of ``run_dir``'s repository
    and of its checked-out submodules define (None when one cannot be listed, or there are more
    than :data:`_MAX_SUBMODULES` in all, or deeper than ``depth``).

    The gitlinks come from the index (``ls-files --stage``, the whole repository from ``run_dir``);
    git is started in a submodule only for ``config`` and ``ls-files``, which run no program.
    """
    listing = _wait(_git(run_dir, _COMMANDS["drivers"], [], env), ok=(0, 1))
    staged = _wait(_git(run_dir, ["ls-files", "-z", "--stage", "--", ":/"], [], env), ok=(0, 128))
    if listing is None or staged is None:
        return None
    gitlinks = [entry.partition("\t")[2] for entry in staged.split("\0") if entry.startswith("160000 ")]
    entered = [run_dir / path for path in gitlinks if os.path.lexists(run_dir / path / ".git")]
    budget = budget if budget is not None else [_MAX_SUBMODULES]
    budget[0] -= len(entered)
    if (entered and depth == 0) or budget[0] < 0:
        return None
    parts = [listing]
    for submodule in entered:
        nested = _listing(submodule, env, depth - 1, budget)
        if nested is None:
            return None
        parts.append(nested)
    return "\0".join(part for part in parts if part)


def _git(
    repo: Path, args: list[str], overrides: list[tuple[str, str]], env: dict[str, str]
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["git", "--no-pager", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,  # stdin is the protocol's: nothing git runs may read it
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_config_environment(env, overrides),
    )


def _wait(process: subprocess.Popen[str], ok: tuple[int, ...] = (0,)) -> str | None:
    """The process's stdout (None on an exit code not in ``ok``, or after :data:`GIT_TIMEOUT_S`)."""
    try:
        out, _ = process.communicate(timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return None
    return out.rstrip() if process.returncode in ok else None


class _Snapshot:
    """The snapshot's git commands for one directory, run by a thread (started early, joined once)."""

    def __init__(self, repo: Path) -> None:
        self.processes: list[subprocess.Popen[str]] = []
        self.results: dict[str, str | None] = dict.fromkeys([*_COMMANDS, "status"])
        self._thread = threading.Thread(target=self._run, args=(repo,), name="xcsh-git-snapshot", daemon=True)
        self._thread.start()

    def _run(self, repo: Path) -> None:
        env = git_environment()
        running: dict[str, subprocess.Popen[str]] = {}
        try:
            for name, args in _COMMANDS.items():
                running[name] = _git(repo, args, [], env)
            self.processes.extend(running.values())
            # "git config" exits 1 when no driver is defined: that is an empty listing. When the
            # listing fails or times out, or a driver cannot be named, status is not run at all:
            # the snapshot says less rather than run a filter the repository chose.
            listing = _wait(running.pop("drivers"), ok=(0, 1))
            overrides = _driver_overrides(listing) if listing is not None else None
            if overrides is not None:
                status = _git(repo, _STATUS, overrides, env)
                self.processes.append(status)
                running["status"] = status
        except OSError:
            pass  # no git (or no process slot): what started is collected, the rest is left out
        for name, process in running.items():
            self.results[name] = _wait(process)

    def collect(self) -> dict[str, str | None]:
        """Each command's output (None where it failed); waits for the thread (its waits are bounded)."""
        self._thread.join()
        return self.results


_early: dict[str, _Snapshot] = {}
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
    _early[absolute] = _Snapshot(Path(absolute))


def git_snapshot(cwd: Path) -> GitSnapshot | None:
    """The repository state at ``cwd``, or None outside a repository (or without git)."""
    early = _early.pop(os.path.abspath(cwd), None)
    out = (early if early is not None else _Snapshot(cwd)).collect()
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
            early.collect()  # started for a repository that is not one now: reaped, not used
    shell = os.environ.get("SHELL") or ("cmd.exe" if os.name == "nt" else "/bin/sh")
    os_name = f"{platform.system()} {platform.release()}".strip()
    return Environment(os_name=os_name, shell=shell, git=git_snapshot(cwd) if in_repo else None)
