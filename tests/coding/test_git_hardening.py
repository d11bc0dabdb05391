"""The settings an allowed ``git`` command runs under (coding/environment.py
``git_program_overrides``, docs/approvals.md): whatever the repository's configuration names, a
read-only command runs none of its programs. Real repositories in tmp dirs, the real git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from xcsh.coding.environment import git_program_overrides

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME with a git identity; no user or system configuration of the machine."""
    directory = tmp_path / "home"
    directory.mkdir()
    (directory / ".gitconfig").write_text(
        "[user]\n\tname = t\n\temail = t@t\n[init]\n\tdefaultBranch = main\n"
    )
    for name in [n for n in os.environ if n.startswith(("GIT_", "SSH_", "GNUPG"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(directory))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return directory


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """git with only PATH, HOME and the settings given: nothing of the machine's or of other tests'."""
    base = {name: os.environ[name] for name in ("PATH", "HOME", "GIT_CONFIG_NOSYSTEM") if name in os.environ}
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**base, "LC_ALL": "C", **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _program(tmp_path: Path, marker: Path, then: str = "exit 1") -> Path:
    """A program that notes it ran in ``marker``."""
    program = tmp_path / "planted.sh"
    program.write_text(f'#!/bin/sh\necho "ran $*" >> {marker}\n{then}\n')
    program.chmod(0o755)
    return program


def _allowed(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``git <args>`` run as approvals run an allowed command: under git_program_overrides."""
    env = git_program_overrides(repo, 0, [(f"alias.{args[0]}", "")])
    assert env is not None
    return _git(repo, *args, env=env)


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    (path / "a.txt").write_text("one\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "one")
    return path


SIGNATURES = {
    "ssh": ("-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"),
    "x509": ("-----BEGIN SIGNED MESSAGE-----", "-----END SIGNED MESSAGE-----"),
}


@pytest.mark.parametrize("kind", sorted(SIGNATURES))
def test_an_allowed_git_log_runs_no_signature_program_of_the_repository_config(
    tmp_path: Path, home: Path, kind: str
) -> None:
    repo = _repo(tmp_path / "repo")
    begin, end = SIGNATURES[kind]
    tree = _git(repo, "rev-parse", "HEAD^{tree}").stdout.strip()
    parent = _git(repo, "rev-parse", "HEAD").stdout.strip()
    commit = tmp_path / "commit.txt"
    commit.write_text(
        f"tree {tree}\nparent {parent}\nauthor a <a@b> 1700000000 +0000\n"
        f"committer a <a@b> 1700000000 +0000\ngpgsig {begin}\n U1NIU0lHAAAAAQ==\n {end}\n\nsigned\n"
    )
    signed = _git(repo, "hash-object", "-t", "commit", "-w", str(commit)).stdout.strip()
    _git(repo, "update-ref", "HEAD", signed)
    marker = tmp_path / "marker"
    program = _program(tmp_path, marker)
    (tmp_path / "signers").touch()
    _git(repo, "config", "log.showSignature", "true")
    _git(repo, "config", f"gpg.{kind}.program", str(program))
    _git(repo, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "signers"))
    plain = _git(repo, "log", "-1")
    assert plain.returncode == 0 and marker.exists(), plain.stderr  # plain git runs it
    marker.unlink()

    for command in (("log", "-1"), ("show", "-s")):
        result = _allowed(repo, *command)
        assert result.returncode == 0 and "signed" in result.stdout, result.stderr
    assert not marker.exists(), marker.read_text()


def test_a_git_command_in_a_repository_naming_an_upload_program_is_asked_about_not_run_unasked(
    tmp_path: Path, home: Path
) -> None:
    origin = _repo(tmp_path / "origin")
    (origin / "a.txt").write_text("two\n")
    _git(origin, "commit", "-qam", "two")
    _git(origin, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    cloned = _git(
        tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{origin}", str(clone)
    )
    assert cloned.returncode == 0, cloned.stderr
    marker = tmp_path / "marker"
    program = _program(tmp_path, marker, then='exec git-upload-pack "$@"')
    _git(clone, "config", "remote.origin.uploadpack", str(program))

    # the blobs are missing, so `git log -p` fetches them with that program; git takes the first
    # configuration that names it, so no setting can switch it off: the call is asked about
    assert git_program_overrides(clone) is None
    assert _git(clone, "log", "-p", "-1").returncode == 0 and marker.exists()  # as plain git would
    _git(clone, "config", "--unset", "remote.origin.uploadpack")
    assert git_program_overrides(clone) is not None


def test_an_allowed_git_command_runs_no_merge_driver_pager_or_archive_filter_the_config_names(
    tmp_path: Path, home: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    marker = tmp_path / "marker"
    program = _program(tmp_path, marker)
    (repo / ".gitattributes").write_text("*.txt merge=planted\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "attributes")
    _git(repo, "checkout", "-qb", "side")
    (repo / "a.txt").write_text("side\n")
    _git(repo, "commit", "-qam", "side")
    _git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("main\n")
    _git(repo, "commit", "-qam", "main")
    _git(repo, "config", "merge.planted.driver", f"{program} %O %A %B")
    _git(repo, "config", "tar.tgz.command", str(program))

    merged = _allowed(repo, "merge", "-q", "--no-edit", "side")
    assert merged.returncode != 0  # left in conflict rather than resolved by the planted driver
    _git(repo, "merge", "--abort")
    archived = _allowed(repo, "archive", "--format=tgz", "HEAD")
    assert archived.returncode != 0
    assert not marker.exists(), marker.read_text()


def _with_submodule(tmp_path: Path, *, gitmodules: bool) -> tuple[Path, Path]:
    """A repository whose checked-out submodule ``sub`` names, in its own configuration, a diff
    ``textconv`` and a ``clean`` filter for its ``*.txt`` (``.gitattributes``), with ``s.txt``
    changed; added by ``git submodule add`` (``.gitmodules``, git dir under ``.git/modules``) or
    as a bare gitlink with its ``.git`` in place. Returns the repository and the marker file."""
    tmp_path.mkdir(exist_ok=True)
    marker = tmp_path / "marker"
    program = _program(tmp_path, marker, then='cat "$@"')
    source = _repo(tmp_path / "subsrc")
    (source / ".gitattributes").write_text("*.txt diff=up filter=up\n")
    (source / "s.txt").write_text("s\n")
    _git(source, "add", "-A")
    _git(source, "commit", "-qm", "s")
    repo = _repo(tmp_path / "repo")
    if gitmodules:
        added = _git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
        assert added.returncode == 0, added.stderr
    else:
        assert _git(tmp_path, "clone", "-q", str(source), str(repo / "sub")).returncode == 0
        _git(repo, "add", "sub")
    _git(repo, "commit", "-qm", "sub")
    sub = repo / "sub"
    _git(sub, "config", "diff.up.textconv", str(program))
    _git(sub, "config", "filter.up.clean", str(program))
    _git(repo, "config", "diff.submodule", "diff")  # plain `git diff` shows the submodule's diff
    (sub / "s.txt").write_text("changed\n")
    os.utime(sub / "s.txt", (1, 1))  # stat no longer matches the index: git hashes it anew
    return repo, marker


@pytest.mark.parametrize("gitmodules", [True, False], ids=["submodule-add", "bare-gitlink"])
def test_an_allowed_git_diff_or_status_runs_no_driver_a_submodules_own_config_names(
    tmp_path: Path, home: Path, gitmodules: bool
) -> None:
    repo, marker = _with_submodule(tmp_path, gitmodules=gitmodules)
    assert _git(repo, "diff", "--submodule=diff").returncode == 0 and marker.exists()  # plain git runs them
    marker.unlink()

    for command in (("diff",), ("diff", "--submodule=diff"), ("status", "--short")):
        _allowed(repo, *command)
        _allowed(repo / "sub", *command)  # started inside the submodule too
    assert not marker.exists(), marker.read_text()
    status = _allowed(repo, "status", "--short")
    assert status.returncode == 0 and "sub" in status.stdout, status.stderr


def test_drivers_of_a_submodule_inside_a_submodule_are_switched_off_too(tmp_path: Path, home: Path) -> None:
    inner, marker = _with_submodule(tmp_path / "inner", gitmodules=True)
    outer = _repo(tmp_path / "outer")
    added = _git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "mid")
    assert added.returncode == 0, added.stderr
    updated = _git(
        outer, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--recursive"
    )
    assert updated.returncode == 0, updated.stderr
    deep = outer / "mid" / "sub"
    program = tmp_path / "inner" / "planted.sh"
    _git(deep, "config", "diff.up.textconv", str(program))
    _git(deep, "config", "filter.up.clean", str(program))
    (deep / "s.txt").write_text("changed\n")
    os.utime(deep / "s.txt", (1, 1))

    _allowed(outer, "diff", "--submodule=diff")
    _allowed(outer, "status", "--short")
    assert not marker.exists(), marker.read_text()
