"""Rule files: front matter, condition/scope normalisation, the emitted Rule shape, discovery order."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.ttsr.rules import (
    RuleSource,
    build_rule,
    looks_like_glob,
    parse_condition_and_scope,
    parse_front_matter,
)
from xcsh.coding.ttsr.setup import discover_rules

SOURCE: RuleSource = {"provider": "native", "providerName": "xcsh", "path": "/r.md", "level": "project"}


def test_front_matter_is_split_from_a_trimmed_body() -> None:
    front, body = parse_front_matter("---\ncondition: FOO\ndescription: d\n---\n\n  Body text.\n\n")
    assert front == {"condition": "FOO", "description": "d"}
    assert body == "Body text."


def test_text_without_front_matter_is_all_body() -> None:
    assert parse_front_matter("Just a rule.\n") == ({}, "Just a rule.\n")
    assert parse_front_matter("---\nno closing fence") == ({}, "---\nno closing fence")


def test_crlf_html_comments_and_kebab_keys_are_normalised() -> None:
    text = "---\r\ninterrupt-mode: never\r\n<!-- note -->always-apply: true\r\n---\r\nBody<!-- hidden -->\r\n"
    front, body = parse_front_matter(text)
    assert front == {"interruptMode": "never", "alwaysApply": True}
    assert body == "Body"


def test_invalid_yaml_falls_back_to_key_value_lines() -> None:
    front, body = parse_front_matter("---\ncondition: [unclosed\ndescription: plain\n---\nBody")
    assert front == {"condition": "[unclosed", "description": "plain"}
    assert body == "Body"


def test_condition_accepts_a_string_a_list_and_the_legacy_keys() -> None:
    assert parse_condition_and_scope({"condition": " FOO "}) == (["FOO"], None)
    assert parse_condition_and_scope({"condition": ["a", "b", "a", "", 3]}) == (["a", "b"], None)
    assert parse_condition_and_scope({"ttsr_trigger": "x+"}) == (["x+"], None)
    assert parse_condition_and_scope({"ttsrTrigger": "y"}) == (["y"], None)
    assert parse_condition_and_scope({"condition": "new", "ttsr_trigger": "old"}) == (["new"], None)
    assert parse_condition_and_scope({}) == (None, None)


def test_glob_conditions_become_edit_and_write_scopes_with_a_catch_all_condition() -> None:
    assert parse_condition_and_scope({"condition": "*.rs"}) == (
        [".*"],
        ["tool:edit(*.rs)", "tool:write(*.rs)"],
    )
    assert parse_condition_and_scope({"condition": ["src/**/*.ts", "console\\.log"], "scope": "text"}) == (
        ["console\\.log"],
        ["text", "tool:edit(src/**/*.ts)", "tool:write(src/**/*.ts)"],
    )


def test_glob_detection_leaves_regexes_alone() -> None:
    assert looks_like_glob("*.rs") and looks_like_glob("src/**/*.ts") and looks_like_glob("docs/?.md")
    assert not looks_like_glob("FOO.*")  # a regex: no slash and not a plain *.ext
    assert not looks_like_glob("^rm -rf")
    assert not looks_like_glob("(a|b)/*.ts")
    assert not looks_like_glob("plain")


def test_scope_strings_split_on_top_level_commas_only() -> None:
    _, scope = parse_condition_and_scope(
        {"condition": "x", "scope": "text, tool:edit(src/{a,b}/*.ts), thinking"}
    )
    assert scope == ["text", "tool:edit(src/{a,b}/*.ts)", "thinking"]


def test_rule_carries_the_wire_fields_in_order_and_omits_absent_ones() -> None:
    text = "---\ncondition: FOO\nglobs: '*.py'\ninterruptMode: prose-only\n---\nDo not FOO."
    rule = build_rule("no-foo", text, Path("/r.md"), SOURCE)
    assert list(rule) == [
        "name",
        "path",
        "content",
        "globs",
        "alwaysApply",
        "condition",
        "interruptMode",
        "_source",
    ]
    assert rule == {
        "name": "no-foo",
        "path": "/r.md",
        "content": "Do not FOO.",
        "globs": ["*.py"],
        "alwaysApply": False,
        "condition": ["FOO"],
        "interruptMode": "prose-only",
        "_source": SOURCE,
    }


def test_always_apply_needs_a_real_true_and_unknown_interrupt_modes_are_dropped() -> None:
    rule = build_rule(
        "r", "---\nalwaysApply: 'true'\ninterruptMode: sometimes\ndescription: 7\n---\nx", Path("/r"), SOURCE
    )
    assert rule["alwaysApply"] is False
    assert "interruptMode" not in rule and "description" not in rule
    assert build_rule("r", "---\nalwaysApply: true\n---\nx", Path("/r"), SOURCE)["alwaysApply"] is True


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_discovery_reads_every_location_and_the_first_definition_of_a_name_wins(tmp_path: Path) -> None:
    proj, agent = tmp_path / "proj", tmp_path / "agent"
    write(proj / ".xcsh" / "rules" / "shared.md", "---\ncondition: P\n---\nproject")
    write(agent / "rules" / "shared.md", "---\ncondition: U\n---\nuser")
    write(agent / "rules" / "user-only.mdc", "user only")
    write(proj / ".cursor" / "rules" / "cursor.mdc", "cursor")
    write(proj / ".windsurf" / "rules" / "wind.md", "windsurf")
    write(proj / ".agents" / "rules" / "agents.md", "agents")
    write(proj / ".xcsh" / "rules" / "notes.txt", "ignored")
    rules = discover_rules(proj, agent)
    assert [r["name"] for r in rules] == ["shared", "user-only", "agents", "cursor", "wind"]
    assert rules[0]["content"] == "project" and rules[0]["_source"]["level"] == "project"
    assert rules[1]["_source"] == {
        "provider": "native",
        "providerName": "xcsh",
        "path": str((agent / "rules" / "user-only.mdc").resolve()),
        "level": "user",
    }
    assert [r["_source"]["provider"] for r in rules[2:]] == ["agents", "cursor", "windsurf"]


def test_discovery_without_rule_directories_finds_nothing(tmp_path: Path) -> None:
    assert discover_rules(tmp_path / "proj", tmp_path / "agent") == []
