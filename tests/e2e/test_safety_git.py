"""The start-up git snapshot never runs a program a repository's own `.git/config` names.

A downloaded tree can bring a `.git/config` whose `core.fsmonitor`, filter driver or
`log.showSignature` + `gpg.program` runs a script; the snapshot xcsh takes for the system prompt
(`git status`, `git log`, `git rev-parse`) must run none of them, and no git process it starts
sees the provider keys. The snapshot itself still shows the branch, the change and the commits.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import Workspace
from xcsh.rpc.client import RpcClient

KEY = "sk-GITSNAPSHOT-5e4d3c2b1a"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _hostile_repo(repo: Path, hook: Path) -> None:
    """A repository whose config runs ``hook`` on status (fsmonitor, a clean filter) and log (gpg)."""
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    (repo / "a.txt").write_text("hi\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q", "-m", "first")
    # a signed-looking commit on top, so log.showSignature has something to verify
    tree, parent = _git(repo, "rev-parse", "HEAD^{tree}"), _git(repo, "rev-parse", "HEAD")
    body = (
        f"tree {tree}\nparent {parent}\nauthor A <a@b> 1700000000 +0000\n"
        "committer A <a@b> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n"
        " -----END PGP SIGNATURE-----\n\nsigned commit\n"
    )
    signed = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo,
        input=body,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    _git(repo, "update-ref", "refs/heads/main", signed)
    for key in ("core.fsmonitor", "filter.evil.clean", "gpg.program"):
        _git(repo, "config", key, str(hook))
    _git(repo, "config", "log.showSignature", "true")
    (repo / "a.txt").write_text("ho\n")  # same size, new mtime: status must hash it (clean filter)


async def test_a_repositorys_git_config_runs_no_program_at_start_up_and_the_snapshot_still_shows_the_repo(
    workspace: Workspace, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$0 $* key=$OPENAI_API_KEY" >> {marker}\ncat\n')
    hook.chmod(0o755)
    _hostile_repo(workspace.proj, hook)
    workspace.env["OPENAI_API_KEY"] = KEY
    args = ["--model", "fake/fake-model", "--no-tools", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=workspace.proj, env=workspace.env) as client:
        prompt = (await client.get_state())["systemPrompt"]
    assert not marker.exists(), marker.read_text()
    assert "- Current branch: main" in prompt
    assert " M a.txt" in prompt and "signed commit" in prompt and " first" in prompt


async def test_a_filter_driver_whose_name_holds_an_equals_sign_runs_no_program_at_start_up(
    workspace: Workspace, tmp_path: Path
) -> None:
    # git splits a ``-c`` setting at its first "=": ``-c filter.x=y.clean=`` would set ``filter.x``
    # and leave the driver ``x=y`` on; the snapshot must switch it off all the same.
    marker = tmp_path / "marker"
    repo = workspace.proj
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("hi\n")
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.email=a@b", "-c", "user.name=A", "commit", "-q", "-m", "first")
    with (repo / ".git" / "config").open("a") as config:
        config.write(f'[filter "x=y"]\n\tclean = "echo ran key=$OPENAI_API_KEY >> {marker}; cat"\n')
    (repo / ".gitattributes").write_text("* filter=x=y\n")
    os.utime(repo / "a.txt", (978307200, 978307200))  # same content, other mtime: status hashes it
    workspace.env["OPENAI_API_KEY"] = KEY
    args = ["--model", "fake/fake-model", "--no-tools", "--no-session"]
    async with RpcClient.spawn(args=args, cwd=repo, env=workspace.env) as client:
        prompt = (await client.get_state())["systemPrompt"]
    assert not marker.exists(), marker.read_text()
    assert "- Current branch: main" in prompt and " first" in prompt
    assert "?? .gitattributes" in prompt  # status still ran, with the driver switched off
