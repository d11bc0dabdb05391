"""Consent before running a project's own code (docs/security.md).

A project directory can make xcsh run code in two ways: Python extensions in
``<project>/.xcsh/extensions/`` (imported at start-up) and settings in
``<project>/.xcsh/config.yml`` or ``.xcsh/settings.json`` that run code or weaken a protection
(:data:`PROTECTED_SETTINGS`, e.g. ``bash.environment`` can set ``BASH_ENV``). Both are
used only when the user trusted that directory:

* ``--trust`` records the directory in the trust store ``<agent dir>/trust.json``
  (mode ``0600``), keyed by its resolved path and a hash of that code as it is now;
* the user setting ``trust.projects`` (a list of directories, user ``config.yml`` only)
  trusts directories whatever their content.

A stored trust lapses when the hashed content changes, so a file the agent itself writes
under ``.xcsh/`` never becomes trusted by that act. Otherwise the code is skipped and one
stderr line says what was skipped and how to allow it. Nothing prompts: RPC hosts ask the
user themselves and pass ``--trust``. A trust the user gave by name (:func:`named_by_user`) also
lets the project's files be read from folders other users control.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from xcsh.coding.private_fs import make_private_dirs, open_private, write_private_file

STORE_NAME = "trust.json"
PROJECT_EXTENSIONS = Path(".xcsh") / "extensions"
PROJECT_SETTINGS = Path(".xcsh") / "config.yml"
PROJECT_SETTINGS_JSON = Path(".xcsh") / "settings.json"
"""The reference's project settings file, read too (coding/settings.py ``PROJECT_FILES``)."""
PROJECTS_SETTING = "trust.projects"
# Project settings that choose the model or its thinking: an untrusted repository must not move
# the user from a local model to a cloud provider (their code would leave the machine) or to a
# costlier model or level without their say (docs/decisions.md, "Model settings of a project").
MODEL_SETTINGS = (
    "modelRoles",
    "enabledModels",
    "task.agentModelOverrides",
    "defaultThinkingLevel",
    "thinkingBudgets",
)
# Project settings honoured only in a trusted directory (dotted prefixes).
PROTECTED_SETTINGS = ("bash.environment", "approvals", "tools.passProviderKeys", "trust", *MODEL_SETTINGS)
_CACHE_DIR = "__pycache__"


def _resolve(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def _code_files(project: Path) -> list[Path]:
    """The files whose content a trust is bound to, in a stable order.

    Every file under ``.xcsh/extensions/`` but the ``.pyc`` files of ``__pycache__`` folders
    (extensions are compiled from source, never from those: coding/extensions/loader.py;
    anything else in such a folder is hashed like any file), following symbolic
    links to directories (``extensions/pkg -> ../../tools/pkg``: a change behind the link lapses
    the trust like one in place); a directory reached twice (a link cycle) is walked once.
    """
    files: list[Path] = []
    root = project / PROJECT_EXTENSIONS
    if root.is_dir():
        seen: set[tuple[int, int]] = set()
        for directory, dirs, names in os.walk(root, followlinks=True):
            try:
                status = os.stat(directory)
            except OSError:
                dirs[:] = []
                continue
            if (status.st_dev, status.st_ino) in seen:
                dirs[:] = []
                continue
            seen.add((status.st_dev, status.st_ino))
            dirs.sort()
            in_cache = os.path.basename(directory) == _CACHE_DIR
            files.extend(Path(directory) / n for n in sorted(names) if not (in_cache and n.endswith(".pyc")))
    for name in (PROJECT_SETTINGS, PROJECT_SETTINGS_JSON):  # config.yml first: older hashes stay valid
        if os.path.isfile(project / name):
            files.append(project / name)
    return files


def content_hash(project: Path) -> str:
    """SHA-256 over the relative names and bytes of the project's extensions and settings file."""
    import hashlib  # only for a project with code of its own

    digest = hashlib.sha256()
    for file in _code_files(project):
        try:
            data = file.read_bytes()
        except OSError:
            data = b"<unreadable>"
        name = file.relative_to(project).as_posix().encode("utf-8", "surrogateescape")
        digest.update(name + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


class ProjectTrust(msgspec.Struct, kw_only=True):
    """Whether a project's code may run, and what is skipped when it may not."""

    project: Path
    trusted: bool
    changed: bool = False
    """True when a stored trust exists but the code changed since it was granted."""
    skipped_extensions: list[Path] = msgspec.field(default_factory=list)
    skipped_settings: list[str] = msgspec.field(default_factory=list)
    settings_files: list[str] = msgspec.field(default_factory=list)
    """The project settings files (relative, ``/``-separated) the skipped settings come from."""

    def notice(self, agent_dir: Path) -> str | None:
        """The one stderr line about skipped code (None when nothing was skipped)."""
        if self.trusted or not (self.skipped_extensions or self.skipped_settings):
            return None
        parts = [p.relative_to(self.project).as_posix() for p in self.skipped_extensions]
        if self.skipped_settings:
            named = " and ".join(self.settings_files) or PROJECT_SETTINGS.as_posix()
            parts.append(f"{named} settings {', '.join(self.skipped_settings)}")
        why = "changed since it was trusted" if self.changed else "not trusted"
        return (
            f"xcsh: skipped project code in {self.project} ({why}): {'; '.join(parts)}. "
            f"To allow it, run once with --trust (trusts this directory as it is now) "
            f"or add the directory to {PROJECTS_SETTING} in {agent_dir / 'config.yml'}\n"
        )


class TrustStore:
    """``<agent dir>/trust.json``: ``{"version": 1, "projects": {path: {"hash", "trustedAt"}}}``."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = agent_dir / STORE_NAME

    def _read(self) -> dict[str, Any]:
        import json  # only where a trust store exists

        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {"version": 1, "projects": {}}
        if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
            return {"version": 1, "projects": {}}
        return data

    def stored_hash(self, project: Path) -> str | None:
        entry = self._read()["projects"].get(str(_resolve(project)))
        value = entry.get("hash") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else None

    def grant(self, project: Path) -> str:
        """Trust ``project`` as it is now (read-modify-write under a lock); returns the hash."""
        import json

        digest = content_hash(project)
        if self.stored_hash(project) == digest:
            return digest  # recorded as it is: a host passing --trust on every start writes nothing
        make_private_dirs(self.path.parent)
        fd = open_private(self.path.with_name(STORE_NAME + ".lock"), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = self._read()
            digest = content_hash(project)
            data["projects"][str(_resolve(project))] = {
                "hash": digest,
                "trustedAt": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            write_private_file(self.path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
            return digest
        finally:
            os.close(fd)


def decide(
    project: Path,
    agent_dir: Path,
    *,
    grant: bool,
    trusted_dirs: Iterable[str] = (),
    project_setting_keys: Sequence[str] = (),
    project_extensions: Sequence[Path] = (),
    project_settings_files: Sequence[str] = (),
) -> ProjectTrust:
    """Decide whether ``project``'s code may run, recording the trust first when ``grant`` (with
    or without code: a recorded trust also covers the project's folders other users control).
    A trust that cannot be recorded (a read-only agent dir) holds for this run, with a warning.

    ``project_setting_keys`` are the protected keys the project's settings files
    (``project_settings_files``, relative names) set and ``project_extensions`` the extensions
    found in it: they are reported when skipped.
    """
    project = _resolve(project)
    store = TrustStore(agent_dir)
    if grant:  # recorded even without code: the trust also lets a foreign folder's files be read
        try:
            store.grant(project)
        except OSError as exc:  # a read-only agent dir: the record is for later runs, not this one
            sys.stderr.write(
                f"xcsh: could not record the trust of {project} in {store.path}: "
                f"{exc.strerror or exc}; trusted for this run only\n"
            )
            sys.stderr.flush()
        return ProjectTrust(project=project, trusted=True)
    has_code = bool(project_extensions or project_setting_keys)
    if not has_code:
        return ProjectTrust(project=project, trusted=True)
    if any(_resolve(Path(d).expanduser()) == project for d in trusted_dirs):
        return ProjectTrust(project=project, trusted=True)
    stored = store.stored_hash(project)
    if stored is not None and stored == content_hash(project):
        return ProjectTrust(project=project, trusted=True)
    return ProjectTrust(
        project=project,
        trusted=False,
        changed=stored is not None,
        skipped_extensions=list(project_extensions),
        skipped_settings=list(project_setting_keys),
        settings_files=list(project_settings_files),
    )


def named_by_user(project: Path, agent_dir: Path, *, grant: bool, trusted_dirs: Iterable[str] = ()) -> bool:
    """Whether the user trusted ``project`` by name: ``--trust`` on this run, listed in
    ``trust.projects``, or a stored ``--trust`` whose code has not changed since.

    Stricter than :func:`decide`, which calls a directory without project code trusted:
    approvals' ``allowCommands`` need this (a repository's ``.git/config``, ``conftest.py`` or
    ``Makefile`` choose what an allowed ``git status`` or ``pytest`` runs).
    """
    project = _resolve(project)
    if grant or any(_resolve(Path(d).expanduser()) == project for d in trusted_dirs):
        return True
    stored = TrustStore(agent_dir).stored_hash(project)
    return stored is not None and stored == content_hash(project)


def remedy(project: Path, agent_dir: Path) -> str:
    """How the user trusts ``project`` so that its files are read from folders other users
    control (docs/security.md, "Folders other users control"): the flag and the setting, named."""
    return (
        f"if {project} is a project you trust, run xcsh there once with --trust "
        f"(it also lets the project's .xcsh/extensions and protected settings run) "
        f"or add it to {PROJECTS_SETTING} in {agent_dir / 'config.yml'}"
    )


def report(trust: ProjectTrust, agent_dir: Path) -> None:
    """Write the skipped-code line to stderr (stdout belongs to the protocol in RPC mode)."""
    line = trust.notice(agent_dir)
    if line:
        sys.stderr.write(line)
        sys.stderr.flush()
