"""Settings writes are read-modify-write under a file lock: only the keys set change."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

import yaml

from xcsh.coding.settings import Settings, settings_lock_path, update_settings_file


def test_two_settings_objects_loaded_before_either_write_keep_both_changes(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text("retry:\n  baseDelayMs: 10\ncustom: kept\n")
    first = Settings.load(tmp_path)
    second = Settings.load(tmp_path)
    first.set("steeringMode", "all")
    second.set("retry.enabled", False)
    on_disk = yaml.safe_load((tmp_path / "config.yml").read_text())
    assert on_disk == {
        "retry": {"baseDelayMs": 10, "enabled": False},
        "custom": "kept",
        "steeringMode": "all",
    }
    assert second.get("steeringMode") == "all"  # the writer sees the file as it now is
    assert first.get("retry.enabled") is True  # the other object has not re-read yet


def test_the_settings_file_and_its_lock_are_private(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    Settings.load(agent).set("followUpMode", "all")
    assert (agent / "config.yml").stat().st_mode & 0o777 == 0o600
    assert settings_lock_path(agent / "config.yml").stat().st_mode & 0o777 == 0o600
    assert agent.stat().st_mode & 0o777 == 0o700


def test_an_unreadable_settings_file_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "config.yml"
    path.write_text("retry: [unclosed\n")
    settings = Settings(user_file=None)
    settings.user_file = path
    settings.set("steeringMode", "all")
    assert path.read_text() == "retry: [unclosed\n"
    assert settings.get("steeringMode") == "all"


def test_an_update_waits_for_the_lock_held_by_another_writer(tmp_path: Path) -> None:
    path = tmp_path / "config.yml"
    update_settings_file(path, {"a": 1})
    fd = os.open(settings_lock_path(path), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (update_settings_file(path, {"b": 2}), done.set()))
    worker.start()
    try:
        assert not done.wait(0.2)  # blocked behind our lock (a bounded negative check)
        path.write_text("a: 1\nc: 3\n")  # a change made while holding the lock survives
    finally:
        os.close(fd)
    worker.join(timeout=10)
    assert done.is_set()
    assert yaml.safe_load(path.read_text()) == {"a": 1, "c": 3, "b": 2}


def test_a_value_read_again_reflects_every_kind_of_change_and_mutable_values_stay_copies(
    tmp_path: Path,
) -> None:
    """get() remembers its lookups until the next change; every change is seen by the next read."""
    project = tmp_path / "project.yml"
    project.write_text("compaction:\n  strategy: 'off'\nlist: [1, 2]\n")
    settings = Settings(user_file=tmp_path / "user.yml", project_file=project)
    seen = [settings.get("compaction.strategy"), settings.get("compaction.strategy")]
    settings.drop_project_keys(("compaction",))
    seen.append(settings.get("compaction.strategy"))
    settings.override("compaction.strategy", "handoff")
    seen.append(settings.get("compaction.strategy"))
    settings.set("compaction.strategy", "snapshot")
    seen.append(settings.get("compaction.strategy"))
    settings.reset_to_defaults(("compaction.strategy",))
    seen.append(settings.get("compaction.strategy"))
    assert seen == ["off", "off", "context-full", "handoff", "snapshot", "context-full"]
    assert settings.get("missing.key", 7) == 7 and settings.get("missing.key") is None
    first = settings.get("list")
    first.append(3)
    assert settings.get("list") == [1, 2]


def test_a_settings_write_keeps_the_users_comments_order_and_layout(tmp_path: Path) -> None:
    path = tmp_path / "config.yml"
    path.write_text(
        "# my settings\nretry:\n  # keep it snappy\n  baseDelayMs: 10   # ms\ncustom: kept  # mine\nflag: yes\n"
    )
    settings = Settings.load(tmp_path)
    settings.set("retry.enabled", False)
    settings.set("steeringMode", "all")
    assert path.read_text() == (
        "# my settings\nretry:\n  # keep it snappy\n  baseDelayMs: 10   # ms\n  enabled: false\n"
        "custom: kept  # mine\nflag: yes\nsteeringMode: all\n"
    )
    assert Settings.load(tmp_path).get("flag") is True  # still read as PyYAML reads it


def test_a_value_the_comment_keeping_writer_would_change_is_written_plainly_with_its_meaning(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.yml"
    path.write_text("# mine\ncustom: kept\n")
    Settings.load(tmp_path).set("note", "no")  # YAML 1.2 writes `no` bare, which PyYAML reads as False
    assert yaml.safe_load(path.read_text()) == {"custom": "kept", "note": "no"}
    assert Settings.load(tmp_path).get("note") == "no"


def test_a_new_settings_file_is_a_plain_mapping(tmp_path: Path) -> None:
    Settings.load(tmp_path).set("retry.maxRetries", 5)
    assert (tmp_path / "config.yml").read_text() == "retry:\n  maxRetries: 5\n"


def test_a_settings_write_keeps_the_files_own_indentation(tmp_path: Path) -> None:
    path = tmp_path / "config.yml"
    original = "# top\nskills:\n    enabled: true\n    list:\n      - a\n      - b\ntheme: dark\n"
    path.write_text(original)
    Settings.load(tmp_path).set("theme", "light")
    assert path.read_text() == original.replace("dark", "light")
