"""Stream matching: per-stream buffers, scopes, globs, repeat policy and interrupt modes (pure)."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.ttsr.matcher import (
    MatchContext,
    TtsrMatcher,
    compile_condition,
    compile_glob,
    path_candidates,
    should_interrupt,
)
from xcsh.coding.ttsr.rules import Rule, RuleSource, build_rule

SOURCE: RuleSource = {"provider": "native", "providerName": "xcsh", "path": "/r.md", "level": "project"}
TEXT = MatchContext(source="text")
THINKING = MatchContext(source="thinking")


def rule(name: str, front: str, body: str = "body") -> Rule:
    return build_rule(name, f"---\n{front}\n---\n{body}", Path(f"/{name}.md"), SOURCE)


def tool(name: str, *paths: str, key: str = "toolcall:c1") -> MatchContext:
    return MatchContext(source="tool", tool_name=name, file_paths=list(paths), stream_key=key)


def names(rules: list[Rule]) -> list[str]:
    return [r["name"] for r in rules]


def test_a_condition_split_across_deltas_matches_on_the_completing_delta() -> None:
    matcher = TtsrMatcher([rule("no-forbidden", "condition: FORBIDDEN")])
    assert matcher.check("this is FOR", TEXT) == []
    assert names(matcher.check("BIDDEN text", TEXT)) == ["no-forbidden"]


def test_buffers_are_kept_per_stream_and_reset_at_turn_start() -> None:
    matcher = TtsrMatcher([rule("r", "condition: FORBIDDEN\nscope: [text, thinking]")])
    assert matcher.check("FOR", TEXT) == []
    assert matcher.check("BIDDEN", THINKING) == []  # another stream's buffer
    matcher.reset_buffers()
    assert matcher.check("BIDDEN", TEXT) == []


def test_default_scope_is_text_and_tools_but_not_thinking() -> None:
    matcher = TtsrMatcher([rule("r", "condition: bad")])
    assert matcher.check("bad", THINKING) == []
    assert names(matcher.check("bad", TEXT)) == ["r"]
    assert names(matcher.check("bad", tool("bash"))) == ["r"]


def test_tool_scopes_select_tool_names_and_path_globs() -> None:
    matcher = TtsrMatcher([rule("env", "condition: '*.env'")])
    assert matcher.check("x", TEXT) == []
    assert matcher.check("x", tool("bash", "secrets.env")) == []
    assert matcher.check("x", tool("write", "notes.txt", key="k2")) == []
    assert names(matcher.check("x", tool("write", "config/secrets.env", key="k3"))) == ["env"]
    assert names(matcher.check("x", tool("EDIT", "/abs/dir/.prod.env", key="k4"))) == ["env"]


def test_bare_and_prefixed_scope_tokens() -> None:
    matcher = TtsrMatcher(
        [
            rule("bare", "condition: x\nscope: bash"),
            rule("any", "condition: x\nscope: 'tool'"),
            rule("path-only", "condition: x\nscope: 'tool(*.md)'"),
        ]
    )
    assert names(matcher.check("x", tool("bash", key="a"))) == ["bare", "any"]
    assert names(matcher.check("x", tool("read", "README.md", key="b"))) == ["any", "path-only"]
    assert matcher.check("x", TEXT) == []


def test_rule_globs_require_a_matching_tool_call_path() -> None:
    matcher = TtsrMatcher([rule("py", "condition: print\\(\nglobs: ['src/**/*.py']")])
    assert matcher.check("print(", TEXT) == []
    assert matcher.check("print(", tool("write", "tests/a.py")) == []
    assert names(matcher.check("print(", tool("write", "src/pkg/a.py", key="k2"))) == ["py"]


def test_once_repeat_mode_never_fires_an_injected_rule_again() -> None:
    matcher = TtsrMatcher([rule("r", "condition: bad")])
    matcher.mark_injected(["r"])
    for _ in range(20):
        matcher.count_turn()
    assert matcher.check("bad", TEXT) == []


def test_restored_injections_block_the_rule_in_once_mode() -> None:
    matcher = TtsrMatcher([rule("r", "condition: bad"), rule("s", "condition: bad")])
    matcher.restore_injected(["r"])
    assert names(matcher.check("bad", TEXT)) == ["s"]
    matcher.forget_injections()
    assert names(matcher.check("bad", TEXT)) == ["r", "s"]


def test_after_gap_mode_fires_again_once_enough_turns_have_ended() -> None:
    matcher = TtsrMatcher([rule("r", "condition: bad")], repeat_mode="after-gap", repeat_gap=3)
    matcher.count_turn()
    matcher.mark_injected(["r"])
    matcher.count_turn()
    matcher.count_turn()
    assert matcher.check("bad", TEXT) == []
    matcher.count_turn()
    matcher.reset_buffers()
    assert names(matcher.check("bad", TEXT)) == ["r"]


def test_rules_without_a_valid_condition_or_reachable_scope_are_not_ttsr_rules() -> None:
    matcher = TtsrMatcher(
        [
            rule("prompt-only", "description: just guidance"),
            rule("broken", "condition: '(unclosed'"),
            rule("nowhere", "condition: x\nscope: '!!'"),
            rule("half", "condition: ['(bad', 'good']"),
        ]
    )
    assert names(matcher.rules) == ["half"]
    assert names(matcher.check("good", TEXT)) == ["half"]


def test_first_rule_of_a_name_wins() -> None:
    matcher = TtsrMatcher([rule("r", "condition: one"), rule("r", "condition: two")])
    assert matcher.check("two", TEXT) == []
    assert names(matcher.check("one", TEXT)) == ["r"]


def test_javascript_named_groups_are_accepted() -> None:
    assert compile_condition(r"(?<word>rm)\s+-rf").search("rm -rf /") is not None
    assert compile_condition(r"(?<!x)y(?<=y)").search("ay") is not None


def test_globs_follow_file_glob_rules() -> None:
    assert compile_glob("*.ts").match("a.ts") and not compile_glob("*.ts").match("src/a.ts")
    assert compile_glob("src/**/*.ts").match("src/a.ts")
    assert compile_glob("src/**/*.ts").match("src/x/y/a.ts")
    assert not compile_glob("src/**/*.ts").match("lib/a.ts")
    assert compile_glob("**").match("any/thing")
    assert compile_glob("{a,b}.py").match("b.py") and not compile_glob("{a,b}.py").match("c.py")
    assert compile_glob("[!x].md").match("y.md") and not compile_glob("[!x].md").match("x.md")
    assert compile_glob("?.txt").match("a.txt") and not compile_glob("?.txt").match("ab.txt")
    assert compile_glob("a+b(1).txt").match("a+b(1).txt")


def test_interrupt_modes_apply_per_stream_kind() -> None:
    never = rule("n", "condition: x\ninterruptMode: never")
    prose = rule("p", "condition: x\ninterruptMode: prose-only")
    tools = rule("t", "condition: x\ninterruptMode: tool-only")
    plain = rule("d", "condition: x")
    assert should_interrupt([plain], "text", "always")
    assert not should_interrupt([plain], "text", "never")
    assert not should_interrupt([never], "text", "always")
    assert should_interrupt([prose], "thinking", "never") and not should_interrupt([prose], "tool", "always")
    assert should_interrupt([tools], "tool", "never") and not should_interrupt([tools], "text", "always")
    assert should_interrupt([never, tools], "tool", "never")


def test_path_arguments_give_relative_and_absolute_candidates() -> None:
    cwd = "/work/proj"
    assert path_candidates({"path": "./src/a.py", "content": "x"}, cwd) == [
        "./src/a.py",
        "src/a.py",
        "/work/proj/src/a.py",
    ]
    assert path_candidates({"filePath": "/work/proj/b.ts"}, cwd) == ["/work/proj/b.ts", "b.ts"]
    assert path_candidates({"paths": ["../out.txt", 3], "other": "c.py"}, cwd) == [
        "../out.txt",
        "/work/out.txt",
    ]
    assert path_candidates("not a dict", cwd) == [] and path_candidates({"path": "  "}, cwd) == []
