"""The always-allowed rules of tool approvals: what a rule can prove, and nothing more.

A rule lets a call run without asking only when it can show that the call does what the rule
names; anything it cannot show is put to the host (docs/approvals.md, "Always-allowed rules").

``approvals.allowCommands`` (``bash`` only). A command is allowed when

- its text uses only the plain characters ``A–Z a–z 0–9 _ . / : = + , @ % -`` and spaces, so
  the shell can neither expand, substitute, quote, glob, redirect nor chain anything in it;
- its leading words equal a rule's words (``ls`` allows ``ls -la src``, not ``lsof``;
  ``git status`` allows ``git status --short``, not ``git push``): a rule is an argv prefix;
- the call passes no ``env`` and its ``cwd`` (if any) is inside the project root after
  symlinks are resolved; any other argument than ``command``, ``description``, ``timeout``,
  ``head``, ``tail`` and these two means asking.

``approvals.allowPaths``. A call is allowed when it names its paths in arguments this module
knows (:data:`PATH_ARGUMENTS`; other tools — ``bash``, ``python``, ``find``, ``task``,
extension tools — are never allowed by a path rule) and **every** such path passes:

- the path is resolved as the tool resolves it (:func:`~xcsh.coding.tools.paths.resolve_path`:
  ``~``, a leading ``@``, relative to the cwd), then through every symlink (``realpath``);
- a path naming the agent's own policy, code or instructions never passes (:func:`protected`):
  a ``.git`` component (hooks and config run code), the project's ``.xcsh/`` and the other
  agents' folders discovery reads (``.claude``, ``.codex`` …), the instruction files
  (``AGENTS.md``, ``CLAUDE.md`` …), direnv's ``.envrc``, git's user config, anything in the
  agent dir and, for writes, in the session folders (``--session-dir``, the sessions root) — judged
  both as written and after symlinks, without regard to case; nor does an existing file with
  more than one hard link;
- a directory rule (``docs/``, ``.``) passes the path itself and everything below it; a glob
  rule (``*``, ``?``, ``[…]``, ``{a,b}``) is matched with ``*`` and ``?`` inside one path
  segment and ``**`` across segments. A relative rule is taken from the project root and only
  ever matches inside it (a rule that resolves outside the root, e.g. through a symlink the
  repository ships, matches nothing); a rule starting with ``/`` or ``~`` is absolute and is
  matched against the real absolute path.

Pure functions over the arguments and the file system; imported when a call is checked.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from xcsh.coding.globs import glob_to_regex
from xcsh.coding.paths import work_tmp_dir
from xcsh.coding.tools.paths import resolve_path

# the characters a command may use to be allowed by a prefix rule (plus spaces between words)
SAFE_WORD = re.compile(r"[A-Za-z0-9_./:=+,@%-]+")
BASH_PLAIN_ARGUMENTS = frozenset({"command", "description", "timeout", "head", "tail"})
GLOB_MARKS = ("*", "?", "[", "{")


def command_words(text: str) -> list[str] | None:
    """``text`` split into words, or None when it has anything beyond safe words and spaces."""
    words = [word for word in text.split(" ") if word]
    if not words or not all(SAFE_WORD.fullmatch(word) for word in words):
        return None
    return words


def command_allowed(rules: Sequence[str], command: str) -> bool:
    """Whether a rule's words are the leading words of ``command`` (plain text only)."""
    words = command_words(command)
    if words is None:
        return False
    for rule in rules:
        prefix = command_words(rule)
        if prefix is not None and words[: len(prefix)] == prefix:
            return True
    return False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def bash_allowed(rules: Sequence[str], cwd: Path, args: dict[str, Any]) -> bool:
    """Whether a ``bash`` call may run without asking: a plain allowed command, no ``env``, ``cwd`` in the project."""
    command = args.get("command")
    if not isinstance(command, str) or not command_allowed(rules, command):
        return False
    if args.get("env"):
        return False
    run_dir = args.get("cwd")
    if run_dir:
        try:
            if not isinstance(run_dir, str) or not _inside(_real(resolve_path(cwd, run_dir)), _real(cwd)):
                return False
        except (OSError, ValueError):
            return False
    return set(args) <= BASH_PLAIN_ARGUMENTS | {"env", "cwd"}


# ---- paths


def _one(name: str, default: str | None = None) -> Callable[[dict[str, Any]], list[str] | None]:
    def paths(args: dict[str, Any]) -> list[str] | None:
        value = args.get(name, default)
        if value is None and default is not None:
            value = default
        return [value] if isinstance(value, str) and value.strip() else None

    return paths


def _edits(args: dict[str, Any]) -> list[str] | None:
    edits = args.get("edits")
    if not isinstance(edits, list) or not edits:
        return None
    paths: list[str] = []
    for edit in edits:
        if not isinstance(edit, dict) or not isinstance(edit.get("path"), str):
            return None
        paths.append(edit["path"])
        if "move" in edit:
            if not isinstance(edit["move"], str):
                return None
            paths.append(edit["move"])
    return paths


def _read_path(args: dict[str, Any]) -> list[str] | None:
    # a URL, an archive member (a.zip:x) or a SQLite selector (db.sqlite?q=…) names no one file
    paths = _one("path")(args)
    return None if paths is None or any(mark in paths[0] for mark in (":", "?")) else paths


# every argument naming a path each tool touches (None: cannot tell → ask); the search tools'
# default path is the cwd, as they use it
PATH_ARGUMENTS: dict[str, Callable[[dict[str, Any]], list[str] | None]] = {
    "write": _one("path"),
    "edit": _edits,
    "notebook": _one("notebook_path"),
    "ast_edit": _one("path"),
    "read": _read_path,
    "ls": _one("path", "."),
    "grep": _one("path", "."),
    "ast_grep": _one("path", "."),
    "inspect_image": _one("path"),
}
# the tools among them that change files (the others only read)
WRITING = frozenset({"write", "edit", "notebook", "ast_edit"})
# tools whose path must name one file: a directory would let them write files found below it
FILE_ONLY = frozenset({"ast_edit"})


def touched_paths(tool_name: str, args: dict[str, Any]) -> list[str] | None:
    """The paths a call of ``tool_name`` names, or None when this module cannot tell them all."""
    known = PATH_ARGUMENTS.get(tool_name)
    return known(args) if known is not None else None


def _is_glob(rule: str) -> bool:
    return any(mark in rule for mark in GLOB_MARKS)


def _is_absolute(rule: str) -> bool:
    text = rule.strip().removeprefix("@")
    return text.startswith(("/", "~"))


def _glob_matches(rule: str, target: Path, root: Path, cwd: Path) -> bool:
    text = rule.strip().removeprefix("@")
    if _is_absolute(rule):
        parts = Path(os.path.expanduser(text)).parts
        fixed = next((i for i, part in enumerate(parts) if _is_glob(part)), len(parts))
        base = _real(Path(*parts[:fixed])) if fixed else Path("/")
        pattern = "/".join([base.as_posix().rstrip("/"), *parts[fixed:]])
        return bool(glob_to_regex(pattern).match(target.as_posix()))
    if not _inside(target, root):
        return False
    relative = target.relative_to(root).as_posix()
    return bool(glob_to_regex(text.removeprefix("./")).match(relative))


def _rule_matches(rule: str, target: Path, root: Path, cwd: Path) -> bool:
    if not rule.strip():
        return False
    if _is_glob(rule):
        return _glob_matches(rule, target, root, cwd)
    base = _real(resolve_path(cwd, rule))
    if not _is_absolute(rule) and not _inside(base, root):
        return False  # a relative rule never reaches outside the project
    return _inside(target, base)


# Folders whose files steer an agent or run code when read (docs/approvals.md, "Always-allowed
# rules"): git's, xcsh's, the other agents' that discovery reads (coding/discovery/providers),
# and editors' and CI's folders that run what is in them. Compared case-insensitively.
PROTECTED_DIRS = frozenset(
    {
        ".git",
        ".xcsh",
        ".claude",
        ".codex",
        ".gemini",
        ".cursor",
        ".opencode",
        ".windsurf",
        ".clinerules",
        ".agent",
        ".agents",
        ".github",
        ".vscode",
    }
)
# Files read as instructions for every session (discovery's context files) or as git's config.
# ``.envrc`` is run by direnv when a shell enters its folder (docs/approvals.md).
PROTECTED_FILES = frozenset(
    {"xcsh.md", "agents.md", "claude.md", "gemini.md", "system.md", ".gitconfig", ".envrc"}
)
# Folders of ~/.config read as another agent's or git's configuration.
PROTECTED_CONFIG_DIRS = frozenset({"git", "opencode"})


def protected(
    path: Path, agent_dir: Path | None = None, *, writes: bool = True, write_dirs: Sequence[Path] = ()
) -> bool:
    """Whether ``path`` (absolute) names agent policy, code or instructions no path rule may allow.

    ``write_dirs``: more folders no write may touch unasked (the session folders: a session
    file the agent rewrote would speak for the user in the session that resumes it).
    For a reading tool (``writes`` false) only ``.git`` and the agent dir (its ``models.yml``
    and ``auth.json`` hold keys) are protected.

    xcsh's own working folder for a start in the home directory
    (:func:`xcsh.coding.paths.work_tmp_dir`: ``~/.xcsh/tmp``, or ``<agent dir>/tmp``) is a project
    like any other: inside it only the names below it count (its own ``.git``, ``AGENTS.md``…),
    not the ``.xcsh`` or agent dir it lies in, else no path rule ever passed there.
    """
    scratch = _below_work_folder(path)
    parts = [part.casefold() for part in (scratch if scratch is not None else path.parts)]
    if writes:
        if any(part in PROTECTED_DIRS for part in parts) or (parts and parts[-1] in PROTECTED_FILES):
            return True
        if any(a == ".config" and b in PROTECTED_CONFIG_DIRS for a, b in pairwise(parts)):
            return True
    elif ".git" in parts:
        return True
    folders = [agent_dir] if agent_dir is not None and scratch is None else []
    if writes:
        folders += write_dirs
    for folder in folders:
        for base in {folder.absolute(), _real(folder)}:
            if _inside(path, base):
                return True
    return False


def _below_work_folder(path: Path) -> tuple[str, ...] | None:
    """``path``'s parts below xcsh's working folder for a home start, or None when it is not in it
    (the folder as named and as resolved: a link out of it is checked where it leads)."""
    folder = work_tmp_dir()
    for base in {folder.absolute(), _real(folder)}:
        if _inside(path, base):
            return path.parts[len(base.parts) :]
    return None


def _target_ok(target: Path) -> bool:
    try:
        info = target.stat()
    except OSError:
        return True  # a new file
    return info.st_nlink <= 1 or stat.S_ISDIR(info.st_mode)


def path_allowed(
    rules: Sequence[str],
    cwd: Path,
    raw: str,
    *,
    file_only: bool = False,
    writes: bool = True,
    agent_dir: Path | None = None,
    write_dirs: Sequence[Path] = (),
) -> bool:
    """Whether the path ``raw`` names (as the tools resolve it, symlinks followed) passes a rule."""
    try:
        written = Path(os.path.normpath(resolve_path(cwd, raw)))
        target = _real(written)
        root = _real(cwd)
        if any(protected(p, agent_dir, writes=writes, write_dirs=write_dirs) for p in (written, target)):
            return False
        if not _target_ok(target) or (file_only and not target.is_file()):
            return False
        return any(_rule_matches(rule, target, root, cwd) for rule in rules)
    except (OSError, ValueError):
        return False


def paths_allowed(
    rules: Sequence[str],
    cwd: Path,
    tool_name: str,
    args: dict[str, Any],
    agent_dir: Path | None = None,
    write_dirs: Sequence[Path] = (),
) -> bool:
    """Whether every path the call touches passes a rule (False when the tool's paths are unknown)."""
    if not rules:
        return False
    paths = touched_paths(tool_name, args)
    if not paths:
        return False
    file_only, writes = tool_name in FILE_ONLY, tool_name in WRITING
    return all(
        path_allowed(
            rules, cwd, raw, file_only=file_only, writes=writes, agent_dir=agent_dir, write_dirs=write_dirs
        )
        for raw in paths
    )
