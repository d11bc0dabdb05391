"""Projects in folders other users control (docs/security.md, "Folders other users control"):
their context files, commands, agent definitions and ``.xcsh/config.yml`` are skipped unless the
user trusted the project (``--trust``, ``trust.projects``, a recorded ``--trust``); a shared
folder like ``/tmp`` and folders above the project never are; the warning names the remedy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding.tools.as_user import run_unprivileged
from xcsh.coding.discovery import LoadContext, discover
from xcsh.coding.discovery.base import UserTrust
from xcsh.coding.private_fs import foreign_status
from xcsh.coding.settings import Settings
from xcsh.coding.subagents.agents import load_agents
from xcsh.coding.trust import TrustStore

OTHER_UID = 65534  # nobody


def _project(root: Path, *, repo: bool = True) -> Path:
    project = root / "proj"
    (project / ".xcsh" / "commands").mkdir(parents=True)
    (project / ".xcsh" / "agents").mkdir()
    if repo:
        _git_init(project)
    (project / "AGENTS.md").write_text("PROJECT-CONTEXT\n")
    (project / ".xcsh" / "commands" / "deploy.md").write_text("Deploy it\n")
    (project / ".xcsh" / "agents" / "scout.md").write_text(
        "---\nname: scout\ndescription: looks\n---\nLook.\n"
    )
    (project / ".xcsh" / "config.yml").write_text("steeringMode: all\n")
    return project


def _git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=60)


def _found(cwd: Path, agent: Path, trust: UserTrust | None = None) -> tuple[list[str], list[str]]:
    found = discover(LoadContext.create(cwd, agent.parent / "home", agent, trust=trust))
    return [f.content for f in found.context_files], [c.name for c in found.commands]


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    directory = tmp_path / "agent"
    directory.mkdir()
    return directory


def _warnings(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_a_world_writable_project_is_skipped_with_the_remedy_named_and_read_once_the_user_trusts_it(
    tmp_path: Path, agent: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project = _project(tmp_path)
    project.chmod(0o777)  # as WSL shows /mnt/c/..., or a share mounted with file_mode=0777
    with caplog.at_level("WARNING"):
        assert _found(project, agent) == ([], [])
    notice = _warnings(caplog)
    assert "writable by every user" in notice
    assert "--trust" in notice and f"trust.projects in {agent / 'config.yml'}" in notice

    trusted = ["PROJECT-CONTEXT\n"], ["deploy"]
    assert _found(project, agent, UserTrust(grant=True)) == trusted
    assert _found(project, agent, UserTrust(dirs=(str(project),))) == trusted  # trust.projects
    assert _found(project, agent, UserTrust(dirs=(str(tmp_path),))) == ([], [])  # names another one
    TrustStore(agent).grant(project)  # an earlier run's --trust
    assert _found(project, agent) == trusted
    (project / ".xcsh" / "config.yml").write_text("steeringMode: all\nbash: {}\n")  # anyone may change it
    assert _found(project, agent) == ([], [])  # the recorded trust lapsed with it


def test_trusting_a_subdirectory_of_a_repository_covers_the_repository_from_its_root_down(
    tmp_path: Path, agent: Path
) -> None:
    repo = _project(tmp_path)
    package = repo / "pkg"
    package.mkdir()
    (package / "AGENTS.md").write_text("PACKAGE-CONTEXT\n")
    for folder in (repo, package):
        folder.chmod(0o777)  # everything under /mnt/c is
    assert _found(package, agent) == ([], [])
    contents, _ = _found(package, agent, UserTrust(grant=True))
    assert contents == ["PROJECT-CONTEXT\n", "PACKAGE-CONTEXT\n"]


def test_a_trusted_projects_agent_definitions_are_read_from_a_world_writable_folder(
    tmp_path: Path, agent: Path
) -> None:
    project = _project(tmp_path)
    project.chmod(0o777)
    home = tmp_path / "home"

    def project_agents(trust: UserTrust | None) -> list[str]:
        return [d.name for d in load_agents(project, home, agent, trust=trust) if d.source == "project"]

    assert project_agents(None) == []
    assert project_agents(UserTrust(grant=True)) == ["scout"]


def test_no_trust_covers_a_shared_sticky_folder_like_tmp_nor_a_folder_above_the_trusted_project(
    tmp_path: Path, agent: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "shared"
    project = _project(shared, repo=False)
    (shared / "AGENTS.md").write_text("PLANTED-ABOVE\n")
    shared.chmod(0o1777)  # /tmp's mode
    trust = UserTrust(grant=True)
    assert _found(project, agent, trust) == (["PROJECT-CONTEXT\n"], ["deploy"])  # above cwd: skipped

    (shared / "proj").rename(shared / "moved")  # the project is the shared folder itself now
    (shared / ".xcsh" / "commands").mkdir(parents=True)
    (shared / ".xcsh" / "commands" / "planted.md").write_text("PLANTED-COMMAND\n")
    with caplog.at_level("WARNING"):
        assert _found(shared, agent, UserTrust(grant=True)) == ([], [])
    assert "a shared folder like /tmp" in _warnings(caplog)
    assert "--trust" not in _warnings(caplog)  # no remedy offered where none helps

    above = tmp_path / "open"  # world-writable without the sticky bit, above a trusted project
    project = _project(above, repo=False)
    (above / "AGENTS.md").write_text("PLANTED-ABOVE\n")
    above.chmod(0o777)
    assert _found(project, agent, UserTrust(grant=True)) == (
        ["PROJECT-CONTEXT\n"],
        ["deploy"],
    )


def test_project_settings_in_a_world_writable_folder_apply_only_once_the_user_trusts_the_project(
    tmp_path: Path, agent: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project = _project(tmp_path)
    project.chmod(0o777)
    with caplog.at_level("WARNING"):
        assert Settings.load(agent, project).get("steeringMode") != "all"
    notice = _warnings(caplog)
    assert f"skipped {project / '.xcsh' / 'config.yml'}" in notice
    assert "--trust" in notice and f"trust.projects in {agent / 'config.yml'}" in notice

    assert Settings.load(agent, project, grant=True).get("steeringMode") == "all"
    (agent / "config.yml").write_text(f"trust:\n  projects: [{json.dumps(str(project))}]\n")
    assert Settings.load(agent, project).get("steeringMode") == "all"

    project.chmod(0o1777)  # a shared folder: never, even when named
    assert Settings.load(agent, project, grant=True).get("steeringMode") != "all"


def test_project_trust_in_settings_comes_from_the_user_file_only(tmp_path: Path, agent: Path) -> None:
    project = _project(tmp_path)
    (project / ".xcsh" / "config.yml").write_text(
        f"steeringMode: all\ntrust:\n  projects: [{json.dumps(str(project))}]\n"
    )
    project.chmod(0o777)
    assert Settings.load(agent, project).get("steeringMode") != "all"


root_only = pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")


@root_only
def test_as_root_another_users_folder_is_foreign_unless_that_user_ran_sudo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "theirs"
    folder.mkdir()
    os.chown(folder, OTHER_UID, OTHER_UID)
    monkeypatch.delenv("SUDO_UID", raising=False)
    status = foreign_status(folder)
    assert status is not None and status.reason == f"owned by another user (uid {OTHER_UID})"
    monkeypatch.setenv("SUDO_UID", str(OTHER_UID))  # `sudo xcsh` by the folder's owner, as git allows
    assert foreign_status(folder) is None
    monkeypatch.setenv("SUDO_UID", "1")
    assert foreign_status(folder) is not None


@root_only
def test_as_root_a_checkout_owned_by_another_uid_is_read_once_listed_in_trust_projects(
    tmp_path: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SUDO_UID", raising=False)
    project = _project(tmp_path)  # a bind-mounted repository owned by the host user's uid
    os.chown(project, OTHER_UID, OTHER_UID)
    assert _found(project, agent) == ([], [])
    assert Settings.load(agent, project).get("steeringMode") != "all"
    (agent / "config.yml").write_text(f"trust:\n  projects: [{json.dumps(str(project))}]\n")
    assert _found(project, agent, UserTrust(dirs=(str(project),))) == (["PROJECT-CONTEXT\n"], ["deploy"])
    assert Settings.load(agent, project).get("steeringMode") == "all"


DISCOVER_AS_USER = """
import json, sys
from pathlib import Path
from xcsh.coding.discovery import LoadContext, discover
from xcsh.coding.discovery.base import UserTrust

project, agent = Path(sys.argv[1]), Path(sys.argv[2])
out = {}
for name, trust in (("plain", None), ("trusted", UserTrust(grant=True))):
    found = discover(LoadContext.create(project, agent / "home", agent, trust=trust))
    out[name] = [f.content for f in found.context_files]
print(json.dumps(out))
"""


@pytest.fixture
def readable_root() -> Iterator[Path]:
    """A folder every user may enter (``tmp_path`` is closed to others when the tests run as root)."""
    root = Path(tempfile.mkdtemp(prefix="xcsh-foreign-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root)


@root_only
def test_an_unprivileged_user_skips_a_third_users_project_unless_trusted(readable_root: Path) -> None:
    project = _project(readable_root)
    os.chown(project, 4242, 4242)  # neither nobody (who runs the code) nor root
    agent = readable_root / "agent"
    agent.mkdir()
    result = run_unprivileged(DISCOVER_AS_USER, str(project), str(agent))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"plain": [], "trusted": ["PROJECT-CONTEXT\n"]}
    assert "owned by another user (uid 4242)" in result.stderr and "--trust" in result.stderr


PLANTED_GIT_AS_USER = """
import json, sys
from pathlib import Path
from xcsh.coding.discovery import LoadContext, discover
from xcsh.coding.discovery.base import UserTrust

cwd, agent = Path(sys.argv[1]), Path(sys.argv[2])
found = discover(LoadContext.create(cwd, agent / "home", agent, trust=UserTrust(grant=True)))
print(json.dumps([f.content for f in found.context_files]))
"""


@root_only
def test_a_git_repository_planted_by_the_owner_of_the_folder_above_gets_no_share_of_the_users_trust(
    readable_root: Path,
) -> None:
    share = readable_root / "share"  # a team lead's /srv/share, theirs (uid 4242)
    mine = share / "mine"  # the user's own (nobody's, who runs the code) project in it
    mine.mkdir(parents=True)
    (share / "AGENTS.md").write_text("PLANTED-ABOVE\n")
    (mine / "AGENTS.md").write_text("MY-CONTEXT\n")
    os.chown(share, 4242, 4242)
    os.chown(mine, 65534, 65534)
    agent = readable_root / "agent"
    agent.mkdir()

    def trusted_context() -> list[str]:
        result = run_unprivileged(PLANTED_GIT_AS_USER, str(mine), str(agent))
        assert result.returncode == 0, result.stderr
        return list(json.loads(result.stdout))

    assert trusted_context() == ["MY-CONTEXT\n"]
    _git_init(share)  # a real repository, made by the share's owner
    for folder, _, names in os.walk(share):
        for name in [".", *names]:
            os.chown(os.path.join(folder, name), 4242, 4242)
    os.chown(mine, 65534, 65534)
    assert trusted_context() == ["MY-CONTEXT\n"]


def test_an_empty_git_folder_does_not_make_the_world_writable_folder_above_a_trusted_project_its_repository(
    tmp_path: Path, agent: Path
) -> None:
    drive = tmp_path / "c"  # WSL's /mnt/c: 0777, no sticky bit
    project = _project(drive, repo=False)
    (drive / "AGENTS.md").write_text("ANYONES-TEXT\n")
    (drive / ".git").mkdir()  # git: "not a git repository"
    for folder in (drive, project):
        folder.chmod(0o777)
    assert _found(project, agent, UserTrust(grant=True)) == (["PROJECT-CONTEXT\n"], ["deploy"])


@root_only
def test_trusting_a_subdirectory_of_a_checkout_owned_by_another_uid_covers_its_root_owned_by_the_same_uid(
    tmp_path: Path, agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SUDO_UID", raising=False)
    repo = _project(tmp_path)  # a container's bind-mounted checkout, the host user's uid throughout
    package = repo / "pkg"
    package.mkdir()
    (package / "AGENTS.md").write_text("PACKAGE-CONTEXT\n")
    for folder in (repo, package):
        os.chown(folder, OTHER_UID, OTHER_UID)
    contents, _ = _found(package, agent, UserTrust(grant=True))
    assert contents == ["PROJECT-CONTEXT\n", "PACKAGE-CONTEXT\n"]
