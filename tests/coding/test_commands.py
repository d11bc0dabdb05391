"""Slash-command placeholders and the command registry's listing."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.commands import CommandInfo, CommandRegistry, FileCommand, expand_template, parse_args
from xcsh.coding.discovery import CommandFile, Source
from xcsh.coding.skills import Skill


def test_arguments_split_on_blanks_and_quotes_group() -> None:
    assert parse_args("""a  "b c" 'd e'\tf""") == ["a", "b c", "d e", "f"]


def test_every_placeholder_of_the_reference_is_filled() -> None:
    assert expand_template("$1|$2|$3", "x y") == "x|y|"
    assert expand_template("$@[2]|$@[1:2]|$@[5]", "a b c") == "b c|a b|"
    assert expand_template("$ARGUMENTS / $@", "a b") == "a b / a b"
    assert expand_template("{{ARGUMENTS}} {{ arguments }} {{args}}", "a b") == "a b a b a,b"


def test_a_template_without_placeholders_gets_the_arguments_appended() -> None:
    assert expand_template("Explain.", "main.py") == "Explain.\n\nmain.py"
    assert expand_template("Explain.", "") == "Explain."
    assert expand_template("", "just args") == "just args"


def _file(tmp: Path, name: str, text: str, *, template: bool) -> FileCommand:
    path = tmp / f"{name}.md"
    source = Source("native", "xcsh", str(path), "project")
    item = CommandFile(name=name, path=str(path), content=text, level="project", source=source)
    return FileCommand.parse(item, template=template)


class Lister:
    def matches(self, text: str) -> bool:
        return text.startswith("/ext")

    async def run(self, session: object, text: str) -> None:
        return None

    def command_infos(self) -> list[CommandInfo]:
        return [CommandInfo(name="ext", description="from an extension", source="extension", path="/e.py")]


def test_the_registry_lists_every_kind_and_expands_commands_before_templates(tmp_path: Path) -> None:
    registry = CommandRegistry([Lister()])
    fix = _file(
        tmp_path, "fix", "---\ndescription: Fix it\nargument-hint: <issue>\n---\nFix $1", template=False
    )
    tpl = _file(
        tmp_path,
        "tpl",
        "A long first line that is the description of this template, more than sixty",
        template=True,
    )
    skill = Skill(name="deploy", description="Ship", path=str(tmp_path / "SKILL.md"), source="native:user")
    registry.set_sources(commands=[fix], templates=[tpl], skills=[skill])
    listing = [info.wire() for info in registry.list()]
    assert [e["name"] for e in listing] == ["ext", "fix", "tpl", "skill:deploy"]
    assert listing[0] == {
        "name": "ext",
        "description": "from an extension",
        "source": "extension",
        "path": "/e.py",
    }
    assert listing[1]["argumentHint"] == "<issue>" and listing[1]["description"] == "Fix it"
    assert listing[2]["description"].endswith("...") and len(listing[2]["description"]) == 63
    assert listing[3]["source"] == "skill" and listing[3]["location"] == "user"
    assert registry.expand("/fix 12") == "Fix 12"
    assert registry.expand("/nope 12") == "/nope 12" and registry.expand("plain") == "plain"
    assert registry.runnable_for("/ext go") is not None and registry.runnable_for("/fix") is None


def test_always_apply_rules_already_in_the_prompt_are_not_repeated(tmp_path: Path) -> None:
    from xcsh.coding.project_context import load_project_context
    from xcsh.coding.skills import SkillSelection
    from xcsh.coding.system_prompt import build_system_prompt

    rules = tmp_path / "proj" / ".xcsh" / "rules"
    rules.mkdir(parents=True)
    (rules / "a.md").write_text("---\nalwaysApply: true\n---\nUse tabs.")
    (rules / "b.md").write_text("---\nalwaysApply: true\n---\nWrite tests.")
    project = load_project_context(
        cwd=tmp_path / "proj",
        home=tmp_path / "home",
        agent_dir=tmp_path / "agent",
        selection=SkillSelection(),
    )
    prompt = build_system_prompt(
        cwd=tmp_path, tools=[], project=project, append_prompt="Team rule: Use tabs."
    )
    assert prompt.count("Use tabs.") == 1 and "# Rules\nWrite tests." in prompt
