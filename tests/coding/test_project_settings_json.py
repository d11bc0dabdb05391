"""cwd's ``.xcsh/settings.json`` (the reference's project settings file) is read, with the limits of
``.xcsh/config.yml``: config.yml wins key by key, a bad file is ignored with a warning, a folder
other users control is skipped, protected keys need trust and change the trust hash (review 4 D3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coding.session_helpers import workspace_session
from conftest import Workspace
from xcsh.coding import trust
from xcsh.coding.settings import Settings


def _project(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    agent = tmp_path / "agent"
    cwd = tmp_path / "proj"
    (cwd / ".xcsh").mkdir(parents=True)
    agent.mkdir()
    for name, text in files.items():
        (cwd / ".xcsh" / name).write_text(text)
    return agent, cwd


def test_the_projects_settings_json_is_read(tmp_path: Path) -> None:
    agent, cwd = _project(
        tmp_path, {"settings.json": '{"skills": {"enabled": false}, "steeringMode": "all"}'}
    )
    settings = Settings.load(agent, cwd)
    assert settings.get("skills.enabled") is False and settings.get("steeringMode") == "all"
    assert settings.project_files == [cwd / ".xcsh" / "settings.json"]


def test_config_yml_wins_over_settings_json_key_by_key(tmp_path: Path) -> None:
    agent, cwd = _project(
        tmp_path,
        {
            "settings.json": json.dumps(
                {"compaction": {"enabled": False, "reserveTokens": 1}, "steeringMode": "all"}
            ),
            "config.yml": "compaction:\n  enabled: true\n",
        },
    )
    settings = Settings.load(agent, cwd)
    assert settings.get("compaction.enabled") is True
    assert settings.get("compaction.reserveTokens") == 1
    assert settings.get("steeringMode") == "all"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "Could not read settings file"),
        ("[1, 2]", "must contain a mapping"),
        (" " * (300 * 1024) + "{}", "KiB allowed"),
        ("\xff{}", "Could not read settings file"),
        # review 7 D1: nesting past ~990 levels raised RecursionError and stopped start-up
        ('{"a":' * 1000 + "1" + "}" * 1000, "Could not read settings file"),
        ("[" * 1000 + "]" * 1000, "Could not read settings file"),
    ],
)
def test_a_settings_json_that_cannot_be_read_is_ignored_naming_it_and_config_yml_still_applies(
    tmp_path: Path, text: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    agent, cwd = _project(tmp_path, {"config.yml": "steeringMode: all\n"})
    (cwd / ".xcsh" / "settings.json").write_bytes(text.encode("latin-1"))
    with caplog.at_level("WARNING"):
        settings = Settings.load(agent, cwd)
    assert settings.get("steeringMode") == "all"
    [message] = [r.getMessage() for r in caplog.records if "settings.json" in r.getMessage()]
    assert reason in message and "ignored" in message


def test_a_settings_json_in_a_folder_every_user_can_write_is_skipped_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agent, cwd = _project(tmp_path, {"settings.json": '{"steeringMode": "all"}'})
    (cwd / ".xcsh").chmod(0o777)
    try:
        with caplog.at_level("WARNING"):
            settings = Settings.load(agent, cwd)
    finally:
        (cwd / ".xcsh").chmod(0o755)
    assert settings.get("steeringMode") != "all"
    assert any(f"skipped {cwd / '.xcsh' / 'settings.json'}" in r.getMessage() for r in caplog.records)


def test_protected_keys_of_settings_json_need_trust_and_the_notice_names_the_file(
    workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    xcsh_dir = workspace.proj / ".xcsh"
    xcsh_dir.mkdir()
    (xcsh_dir / "settings.json").write_text(
        '{"bash": {"environment": {"FROM_JSON": "1"}}, "steeringMode": "all"}'
    )
    untrusted = workspace_session(workspace, no_tools=True)
    try:
        assert untrusted.settings.get("bash.environment") is None
        assert untrusted.settings.get("steeringMode") == "all"  # harmless keys apply
    finally:
        untrusted.shutdown()
    assert ".xcsh/settings.json settings bash.environment.FROM_JSON" in capfd.readouterr().err
    trusted = workspace_session(workspace, no_tools=True, trust=True)
    try:
        assert trusted.settings.get("bash.environment") == {"FROM_JSON": "1"}
    finally:
        trusted.shutdown()


def test_a_change_to_settings_json_lapses_a_recorded_trust(tmp_path: Path) -> None:
    agent, cwd = _project(tmp_path, {"settings.json": '{"steeringMode": "all"}'})
    trust.decide(cwd, agent, grant=True)
    keys = ["bash.environment.BASH_ENV"]
    assert trust.decide(cwd, agent, grant=False, project_setting_keys=keys).trusted
    (cwd / ".xcsh" / "settings.json").write_text('{"bash": {"environment": {"BASH_ENV": "/x"}}}')
    decision = trust.decide(cwd, agent, grant=False, project_setting_keys=keys)
    assert not decision.trusted and decision.changed


@pytest.mark.parametrize(
    "text",
    [
        '{"steeringMode": {"a": 1}, "followUpMode": "bogus", "interruptMode": ["x"]}',
        '{"steeringMode": 5, "followUpMode": null, "interruptMode": "never"}',
    ],
)
def test_a_delivery_mode_off_the_schema_reads_as_its_default_with_a_warning(
    workspace: Workspace, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    # review 7 D3: get_state sent "{'a': 1}", "bogus" and "['x']" off the schema
    (workspace.proj / ".xcsh").mkdir()
    (workspace.proj / ".xcsh" / "settings.json").write_text(text)
    with caplog.at_level("WARNING"):
        session = workspace_session(workspace, no_tools=True)
    try:
        snap = session.snapshot()
        assert (snap.steering_mode, snap.follow_up_mode, snap.interrupt_mode) == (
            "one-at-a-time",
            "one-at-a-time",
            "wait",
        )
    finally:
        session.shutdown()
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert all(key in warned for key in ("steeringMode", "followUpMode", "interruptMode"))
