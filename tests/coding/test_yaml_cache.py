"""The cache of parsed YAML config files: an unchanged file is not parsed again, any change is.

PyYAML does every parse; the cache only returns its earlier result for the same bytes
(xcsh/coding/yaml_cache.py). ``parse`` here is ``yaml.safe_load`` with a call counter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from xcsh.coding.models import ModelRegistry
from xcsh.coding.models_config import ModelsConfigError
from xcsh.coding.settings import Settings, SettingsError
from xcsh.coding.yaml_cache import (
    MAX_CONFIG_BYTES,
    ConfigFileRefused,
    cache_dir_for,
    cache_file,
    read_yaml_file,
)

CONFIG = "providers:\n  fake:\n    baseUrl: http://127.0.0.1:9/v1\n    api: openai-completions\n    auth: none\n    models:\n      - id: a\n"


class CountingParse:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> Any:
        self.calls += 1
        return yaml.safe_load(text)


def _setup(tmp_path: Path, text: str = CONFIG) -> tuple[Path, Path, CountingParse]:
    path = tmp_path / "models.yml"
    path.write_text(text)
    return path, tmp_path / "cache", CountingParse()


def test_an_unchanged_file_is_answered_from_the_cache_without_parsing(tmp_path: Path) -> None:
    path, cache, parse = _setup(tmp_path)
    first = read_yaml_file(path, parse, cache)
    second = read_yaml_file(path, parse, cache)
    assert first == second == yaml.safe_load(CONFIG)
    assert parse.calls == 1
    assert cache_file(cache, str(path)).is_file()
    # each call gets its own copy: a caller changing its tree changes nothing kept
    second["providers"]["fake"]["models"].clear()
    assert read_yaml_file(path, parse, cache) == yaml.safe_load(CONFIG)


def test_an_edit_keeping_the_size_and_modification_time_is_parsed_again(tmp_path: Path) -> None:
    path, cache, parse = _setup(tmp_path)
    read_yaml_file(path, parse, cache)
    before = path.stat()
    edited = CONFIG.replace("id: a", "id: b")
    assert len(edited) == len(CONFIG)
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert read_yaml_file(path, parse, cache)["providers"]["fake"]["models"] == [{"id": "b"}]
    assert parse.calls == 2
    # and the new content is what is kept from then on
    assert read_yaml_file(path, parse, cache)["providers"]["fake"]["models"] == [{"id": "b"}]
    assert parse.calls == 2


def test_a_file_replaced_by_rename_is_parsed_again(tmp_path: Path) -> None:
    path, cache, parse = _setup(tmp_path)
    read_yaml_file(path, parse, cache)
    fresh = tmp_path / "new.yml"
    fresh.write_text(CONFIG + "extra: 1\n")
    fresh.replace(path)
    assert read_yaml_file(path, parse, cache)["extra"] == 1
    assert parse.calls == 2


@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x00", b"not msgpack at all", b"\x95\x01", b"\xdc\xff\xff"],
    ids=["empty", "zero", "text", "truncated", "short-array"],
)
def test_a_corrupt_cache_file_is_ignored_and_replaced(tmp_path: Path, garbage: bytes) -> None:
    path, cache, parse = _setup(tmp_path)
    read_yaml_file(path, parse, cache)
    cache_file(cache, str(path)).write_bytes(garbage)
    assert read_yaml_file(path, parse, cache) == yaml.safe_load(CONFIG)
    assert parse.calls == 2
    assert read_yaml_file(path, parse, cache) == yaml.safe_load(CONFIG)
    assert parse.calls == 2  # the rewritten entry serves again


def test_an_entry_kept_for_another_file_with_the_same_bytes_is_not_used(tmp_path: Path) -> None:
    path, cache, parse = _setup(tmp_path)
    read_yaml_file(path, parse, cache)
    other = tmp_path / "other" / "models.yml"
    other.parent.mkdir()
    other.write_text(CONFIG)
    cache_file(cache, str(other)).write_bytes(cache_file(cache, str(path)).read_bytes())
    read_yaml_file(other, parse, cache)
    assert parse.calls == 2


@pytest.mark.parametrize(
    "text",
    [
        "when: 2024-01-02\n",  # a date: MessagePack would give it back as a string
        "tags: !!set {a, b}\n",
        "base: &b {x: 1}\nfirst: *b\nsecond: *b\n",  # one mapping in two places
        "n: .nan\n",
        "big: 123456789012345678901234567890\n",
        "data: !!binary aGVsbG8=\n",  # bytes survive exactly: kept
        "1: one\n2.5: two\nnull: three\ntrue: four\n",  # keys that are not strings: kept
    ],
)
def test_values_the_cache_cannot_give_back_exactly_are_parsed_every_time(tmp_path: Path, text: str) -> None:
    path, cache, parse = _setup(tmp_path, text)
    expected = yaml.safe_load(text)
    exact = "binary" in text or "four" in text
    for _ in range(2):
        got = read_yaml_file(path, parse, cache)
        assert type(got) is type(expected)
        assert repr(got) == repr(expected)
    assert parse.calls == (1 if exact else 2)


def test_without_a_cache_directory_nothing_is_kept(tmp_path: Path) -> None:
    path, _, parse = _setup(tmp_path)
    read_yaml_file(path, parse, None)
    read_yaml_file(path, parse, None)
    assert parse.calls == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models.yml"]


def test_an_unwritable_cache_directory_only_costs_the_parse(tmp_path: Path) -> None:
    path, _, parse = _setup(tmp_path)
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the cache directory would go")
    for _ in range(2):
        assert read_yaml_file(path, parse, blocker / "yaml") == yaml.safe_load(CONFIG)
    assert parse.calls == 2


def test_a_yaml_error_is_raised_every_time_and_nothing_is_kept(tmp_path: Path) -> None:
    path, cache, parse = _setup(tmp_path, "a: [unclosed\n")
    for _ in range(2):
        with pytest.raises(yaml.YAMLError):
            read_yaml_file(path, parse, cache)
    assert parse.calls == 2
    assert not cache.exists()


def test_the_crlf_text_is_parsed_as_read_text_gives_it(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_bytes(b'a: "x\r\n  y"\r\nb: |\r\n  one\r\n  two\r\n')
    assert read_yaml_file(path, yaml.safe_load, tmp_path / "cache") == yaml.safe_load(path.read_text())


def test_settings_and_models_read_through_the_cache_and_see_an_edit(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.yml").write_text(CONFIG.replace("- id: a", "- id: a\n        contextWindow: 1000"))
    (agent / "config.yml").write_text("defaultThinkingLevel: low\n")
    for _ in range(2):
        assert Settings.load(agent).get("defaultThinkingLevel") == "low"
        registry = ModelRegistry.load(agent, env={})
        found = registry.find("fake", "a")
        assert found is not None and found["contextWindow"] == 1000
    kept = sorted(p.name.split("-", 1)[1] for p in cache_dir_for(agent).iterdir())
    assert kept == ["config.yml.msgpack", "models.yml.msgpack"]
    (agent / "config.yml").write_text("defaultThinkingLevel: high\n")
    assert Settings.load(agent).get("defaultThinkingLevel") == "high"


def test_broken_config_files_give_the_same_errors_as_before(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "config.yml").write_text("a: [unclosed\n")
    with pytest.raises(SettingsError, match=r"Could not read settings file .*config\.yml: while parsing"):
        Settings.load(agent)
    (agent / "models.yml").write_text("providers: [unclosed\n")
    with pytest.raises(ModelsConfigError, match=r"models\.yml: invalid YAML at line 2, column 1"):
        ModelRegistry.load(agent, env={})
    (agent / "models.yml").write_bytes(b"providers: \xff\n")
    with pytest.raises(ModelsConfigError, match=r"models\.yml: cannot read file: 'utf-8' codec"):
        ModelRegistry.load(agent, env={})


CONCURRENT = """
import sys
from pathlib import Path
import yaml
from xcsh.coding.yaml_cache import read_yaml_file
path, cache = Path(sys.argv[1]), Path(sys.argv[2])
for _ in range(200):
    assert read_yaml_file(path, yaml.safe_load, cache) == yaml.safe_load(path.read_text())
"""


def test_processes_reading_and_writing_the_cache_at_once_always_get_the_file_s_content(
    tmp_path: Path,
) -> None:
    path, cache, _ = _setup(tmp_path)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = [sys.executable, "-c", CONCURRENT, str(path), str(cache)]
    readers = [subprocess.Popen(argv, env=env) for _ in range(3)]
    # the cache entry is replaced under them while they read it
    for i in range(50):
        cache_file(cache, str(path)).parent.mkdir(parents=True, exist_ok=True)
        read_yaml_file(path, yaml.safe_load, cache)
        cache_file(cache, str(path)).unlink(missing_ok=True)
        if i % 10 == 0:
            cache_file(cache, str(path)).write_bytes(b"\x95")
    assert [reader.wait(timeout=60) for reader in readers] == [0, 0, 0]
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_a_text_parsed_once_is_taken_from_the_cache_file_by_the_next_process(tmp_path: Path) -> None:
    from xcsh.coding.yaml_cache import TextCache

    file = tmp_path / "cache" / "front-matter.msgpack"
    first, parse = TextCache(file), CountingParse()
    assert first.parse("name: a\ntools: [read]\n", parse) == {"name": "a", "tools": ["read"]}
    first.flush()
    later = TextCache(file)  # as the next start opens it
    got = later.parse("name: a\ntools: [read]\n", parse)
    assert got == {"name": "a", "tools": ["read"]} and parse.calls == 1
    got["tools"].append("x")  # a fresh value each time
    assert later.parse("name: a\ntools: [read]\n", parse) == {"name": "a", "tools": ["read"]}
    # another text (an edit) is parsed; a value it cannot give back exactly is parsed every time
    assert later.parse("name: b\n", parse) == {"name": "b"} and parse.calls == 2
    for _ in range(2):
        assert later.parse("when: 2024-01-02\n", parse) == yaml.safe_load("when: 2024-01-02\n")
    assert parse.calls == 4
    later.flush()
    assert TextCache(file).parse("name: b\n", parse) == {"name": "b"} and parse.calls == 4


def test_a_corrupt_text_cache_file_is_an_empty_cache_and_nothing_new_writes_nothing(tmp_path: Path) -> None:
    from xcsh.coding.yaml_cache import TextCache

    file = tmp_path / "front-matter.msgpack"
    file.write_bytes(b"\x93\x01garbage")
    cache, parse = TextCache(file), CountingParse()
    assert cache.parse("a: 1\n", parse) == {"a": 1} and parse.calls == 1
    cache.flush()
    assert TextCache(file).parse("a: 1\n", parse) == {"a": 1} and parse.calls == 1
    before = file.stat().st_mtime_ns, file.read_bytes()
    unchanged = TextCache(file)
    unchanged.parse("a: 1\n", parse)
    unchanged.flush()  # only known texts: the file is not rewritten
    assert (file.stat().st_mtime_ns, file.read_bytes()) == before


def test_a_config_file_that_is_removed_leaves_no_kept_copy_of_its_bytes(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.yml").write_text(CONFIG.replace("auth: none", "apiKey: sk-secret"))
    (agent / "config.yml").write_text("defaultThinkingLevel: low\n")
    Settings.load(agent)
    ModelRegistry.load(agent, env={})
    assert len(list(cache_dir_for(agent).iterdir())) == 2
    (agent / "models.yml").unlink()
    (agent / "config.yml").unlink()
    Settings.load(agent)
    ModelRegistry.load(agent, env={})
    assert list(cache_dir_for(agent).iterdir()) == []


def _oversized(path: Path, first: str) -> None:
    """A valid YAML file just past the cap: ``first`` and then comment lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(first + ("# padding padding padding padding padding padding padding\n" * 5000))
    assert path.stat().st_size > MAX_CONFIG_BYTES


def test_an_oversized_project_config_is_ignored_with_a_warning_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    agent, project = tmp_path / "agent", tmp_path / "proj"
    agent.mkdir()
    (agent / "config.yml").write_text("steeringMode: one-at-a-time\n")
    _oversized(project / ".xcsh" / "config.yml", "steeringMode: all\n")
    settings = Settings.load(agent, project)
    assert settings.get("steeringMode") == "one-at-a-time"  # the user's value: the project file is not read
    assert str(project / ".xcsh" / "config.yml") in caplog.text and "256 KiB" in caplog.text


def test_an_oversized_user_config_or_models_file_is_an_error_naming_it(tmp_path: Path) -> None:
    _oversized(tmp_path / "config.yml", "steeringMode: all\n")
    with pytest.raises(SettingsError, match=r"config\.yml.*256 KiB"):
        Settings.load(tmp_path)
    _oversized(tmp_path / "models.yml", "providers: {}\n")
    with pytest.raises(ModelsConfigError, match=r"models\.yml.*256 KiB"):
        ModelRegistry.load(tmp_path, env={})
    (tmp_path / "models.yml").unlink()
    _oversized(tmp_path / "models.json", "{}\n")
    with pytest.raises(ModelsConfigError, match=r"models\.json.*256 KiB"):
        ModelRegistry.load(tmp_path, env={})


def test_a_config_file_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "config.yml")  # no writer ever comes: reading it would block for ever
    with pytest.raises(ConfigFileRefused, match="not a regular file"):
        read_yaml_file(tmp_path / "config.yml", yaml.safe_load, None)
