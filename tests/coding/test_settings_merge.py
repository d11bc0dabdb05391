"""A setting whose value is a mapping is merged key by key across defaults < user < project, as the
reference's deep merge does; protected keys keep their trust rule (review 4 D4)."""

from __future__ import annotations

from pathlib import Path

from coding.session_helpers import workspace_session
from conftest import Workspace
from xcsh.coding import trust
from xcsh.coding.settings import Settings


def _settings(tmp_path: Path, user: str, project: str) -> Settings:
    (tmp_path / "user.yml").write_text(user)
    (tmp_path / "project.yml").write_text(project)
    return Settings(user_file=tmp_path / "user.yml", project_file=tmp_path / "project.yml")


def test_a_projects_mapping_adds_to_the_users_mapping_instead_of_replacing_it(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        "bash:\n  environment:\n    USERVAR: from-user\n    BOTH: user\n"
        "task:\n  agentModelOverrides:\n    explore: fake/small\n",
        "bash:\n  environment:\n    PROJVAR: from-project\n    BOTH: project\n"
        "task:\n  agentModelOverrides:\n    plan: fake/big\n"
        "thinkingBudgets:\n  high: 99\n",
    )
    assert settings.get("bash.environment") == {
        "USERVAR": "from-user",
        "BOTH": "project",
        "PROJVAR": "from-project",
    }
    assert settings.get("task.agentModelOverrides") == {"explore": "fake/small", "plan": "fake/big"}
    budgets = settings.get("thinkingBudgets")
    assert budgets["high"] == 99 and budgets["low"] == 2048  # the defaults' other budgets are kept
    assert settings.get("bash")["environment"]["USERVAR"] == "from-user"  # the parent mapping too


def test_a_value_that_is_not_a_mapping_replaces_what_is_below_it_whole(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        "a:\n  b: 1\nc: scalar\nlist: [1, 2]\n",
        "a: 5\nc:\n  d: 2\nlist: [3]\n",
    )
    assert settings.get("a") == 5
    assert settings.get("c") == {"d": 2}
    assert settings.get("list") == [3]


def test_a_runtime_override_of_a_mapping_is_taken_as_given(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        "task:\n  agentModelOverrides:\n    explore: fake/small\n",
        "task:\n  agentModelOverrides:\n    plan: fake/big\n",
    )
    settings.reset_to_defaults(("task.agentModelOverrides",))  # RPC mode's reset
    assert settings.get("task.agentModelOverrides") == {}


def test_merged_values_are_copies_and_leave_every_layer_alone(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "m:\n  a: {x: 1}\n", "m:\n  a: {y: 2}\n")
    first = settings.get("m")
    first["a"]["z"] = 3
    assert settings.get("m") == {"a": {"x": 1, "y": 2}}
    assert settings.get_user("m") == {"a": {"x": 1}}


def test_an_untrusted_projects_protected_entries_never_enter_the_merged_mapping(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        "bash:\n  environment:\n    USERVAR: from-user\n",
        "bash:\n  environment:\n    BASH_ENV: /repo/evil.sh\n  autoBackground: {thresholdMs: 5}\n"
        "bash.environment: {PATH: /repo/bin}\n"
        "thinkingBudgets: {high: 999999}\n"
        "approvals:\n  allowCommands: [rm]\n",
    )
    settings.drop_project_keys(trust.PROTECTED_SETTINGS)  # what start-up does in an untrusted project
    assert settings.get("bash.environment") == {"USERVAR": "from-user"}
    assert settings.get("bash")["environment"] == {"USERVAR": "from-user"}
    assert settings.get("bash.autoBackground.thresholdMs") == 5  # unprotected keys still apply
    assert settings.get("thinkingBudgets")["high"] == 16384
    assert settings.get("approvals") is None


def test_a_trusted_projects_environment_adds_to_the_users_in_a_session(workspace: Workspace) -> None:
    workspace.config("bash:\n  environment:\n    USERVAR: from-user\n")
    (workspace.proj / ".xcsh").mkdir()
    (workspace.proj / ".xcsh" / "config.yml").write_text("bash:\n  environment:\n    PROJVAR: from-project\n")
    untrusted = workspace_session(workspace, no_tools=True)
    try:
        assert untrusted.settings.get("bash.environment") == {"USERVAR": "from-user"}
    finally:
        untrusted.shutdown()
    trusted = workspace_session(workspace, no_tools=True, trust=True)
    try:
        assert trusted.settings.get("bash.environment") == {"USERVAR": "from-user", "PROJVAR": "from-project"}
    finally:
        trusted.shutdown()
