"""Discovery: each provider on a tree of real files, at project and user level, and the merge rules."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from xcsh.coding.discovery import LoadContext, discover


@dataclass
class Tree:
    home: Path
    agent: Path
    repo: Path
    cwd: Path

    def write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def found(self, disabled: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
        return discover(LoadContext.create(self.cwd, self.home, self.agent), disabled=disabled)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    home = tmp_path / "home"
    repo = home / "src" / "repo"
    cwd = repo / "pkg" / "sub"
    cwd.mkdir(parents=True)
    (repo / ".git").mkdir()
    agent = tmp_path / "agent"
    agent.mkdir()
    return Tree(home=home, agent=agent, repo=repo, cwd=cwd)


SKILL = "---\nname: {name}\ndescription: {desc}\n---\nSteps for {name}.\n"


def paths(items: list) -> list[str]:  # type: ignore[type-arg]
    return [item.path for item in items]


def test_xcsh_md_is_read_walking_up_to_the_repository_root(tree: Tree) -> None:
    top = tree.write(tree.repo / "XCSH.md", "repo rules")
    mid = tree.write(tree.repo / "pkg" / "AGENTS.md", "package rules")
    tree.write(tree.home / "src" / "XCSH.md", "above the repo: not read")
    here = tree.write(tree.cwd / "CLAUDE.md", "leaf rules")
    files = tree.found().context_files
    assert paths(files) == [str(top), str(mid), str(here)]  # farthest first, cwd last
    assert [f.depth for f in files] == [2, 1, 0]


def test_native_files_come_from_the_agent_dir_and_the_nearest_dot_xcsh(tree: Tree) -> None:
    user = tree.write(tree.agent / "XCSH.md", "user wide")
    project = tree.write(tree.repo / ".xcsh" / "XCSH.md", "project wide")
    tree.write(tree.repo / "XCSH.md", "shadowed: same directory level as .xcsh/XCSH.md")
    files = tree.found().context_files
    assert paths(files) == [str(project), str(user)]
    assert files[0].source.provider == "native" and files[1].level == "user"


def test_only_one_user_context_file_is_kept_the_highest_priority_one(tree: Tree) -> None:
    tree.write(tree.home / ".claude" / "CLAUDE.md", "claude user")
    tree.write(tree.home / ".codex" / "AGENTS.md", "codex user")
    tree.write(tree.home / ".gemini" / "GEMINI.md", "gemini user")
    (files,) = [tree.found().context_files]
    assert [f.content for f in files] == ["claude user"]
    assert [f.content for f in tree.found(disabled=("claude",)).context_files] == ["codex user"]


def test_other_agents_project_context_files_are_read(tree: Tree) -> None:
    tree.cwd = tree.repo
    claude = tree.write(tree.repo / ".claude" / "CLAUDE.md", "claude project")
    assert paths(tree.found().context_files) == [str(claude)]
    claude.unlink()
    gemini = tree.write(tree.repo / ".gemini" / "GEMINI.md", "gemini project")
    assert paths(tree.found().context_files) == [str(gemini)]
    gemini.unlink()
    agents = tree.write(tree.repo / ".agents" / "AGENTS.md", "agents project")
    assert paths(tree.found().context_files) == [str(agents)]
    agents.unlink()
    copilot = tree.write(tree.repo / ".github" / "copilot-instructions.md", "copilot")
    assert paths(tree.found().context_files) == [str(copilot)]


def test_identical_context_files_are_kept_once_the_closest_one(tree: Tree) -> None:
    tree.write(tree.repo / "AGENTS.md", "same words")
    closest = tree.write(tree.cwd / "AGENTS.md", "same words")
    assert paths(tree.found().context_files) == [str(closest)]


def test_system_md_customisation_prefers_the_project(tree: Tree) -> None:
    tree.write(tree.agent / "SYSTEM.md", "user system")
    assert tree.found().system_prompt_customization.content == "user system"  # type: ignore[union-attr]
    tree.write(tree.repo / ".xcsh" / "SYSTEM.md", "project system")
    assert tree.found().system_prompt_customization.content == "project system"  # type: ignore[union-attr]
    tree.write(tree.home / ".gemini" / "system.md", "gemini user system")
    assert tree.found().system_prompts[0].source.provider == "native"


def test_system_md_and_append_system_md_files_replace_the_flags(tree: Tree) -> None:
    tree.cwd = tree.repo
    assert tree.found().config_file("SYSTEM.md") is None
    user = tree.write(tree.home / ".codex" / "SYSTEM.md", "codex")
    assert tree.found().config_file("SYSTEM.md") == user
    agent = tree.write(tree.agent / "SYSTEM.md", "agent")
    assert tree.found().config_file("SYSTEM.md") == agent
    project = tree.write(tree.repo / ".xcsh" / "APPEND_SYSTEM.md", "more")
    assert tree.found().config_file("APPEND_SYSTEM.md") == project


def test_skills_from_every_source_first_name_wins_native_ones_need_a_description(tree: Tree) -> None:
    tree.write(
        tree.repo / ".xcsh" / "skills" / "deploy" / "SKILL.md", SKILL.format(name="deploy", desc="ship")
    )
    tree.write(tree.agent / "skills" / "deploy" / "SKILL.md", SKILL.format(name="deploy", desc="user copy"))
    tree.write(tree.agent / "skills" / "bare" / "SKILL.md", "no front matter")
    tree.write(tree.home / ".claude" / "skills" / "review" / "SKILL.md", "Review code.")
    tree.write(tree.home / ".agents" / "skills" / "lint" / "SKILL.md", SKILL.format(name="lint", desc="lint"))
    tree.write(tree.home / ".codex" / "skills" / "x" / "SKILL.md", "---\nname: codexy\nenabled: false\n---\n")
    tree.write(tree.home / ".config" / "opencode" / "skills" / "oc" / "SKILL.md", "OpenCode skill")
    skills = {s.name: s for s in tree.found().skills}
    assert sorted(skills) == ["deploy", "lint", "oc", "review"]
    assert skills["deploy"].description == "ship" and skills["deploy"].level == "project"
    assert skills["deploy"].body == "Steps for deploy."
    assert skills["review"].source.provider == "claude"


def test_commands_and_prompt_templates_are_found_with_their_sources(tree: Tree) -> None:
    tree.cwd = tree.repo
    tree.write(tree.repo / ".xcsh" / "commands" / "fix.md", "Fix $1")
    tree.write(tree.agent / "commands" / "fix.md", "user fix")
    tree.write(tree.home / ".claude" / "commands" / "review.md", "Review $ARGUMENTS")
    tree.write(tree.home / ".codex" / "prompts" / "p.md", "---\nname: renamed\n---\nbody")
    tree.write(tree.agent / "prompts" / "team" / "standup.md", "Standup notes")
    tree.write(tree.repo / ".opencode" / "commands" / "oc.md", "oc")
    found = tree.found()
    commands = {c.name: c for c in found.commands}
    assert sorted(commands) == ["fix", "oc", "review"]
    assert commands["fix"].level == "project" and commands["review"].source.provider == "claude"
    prompts = {p.name: p for p in found.prompts}
    assert sorted(prompts) == ["standup"]  # only xcsh's own prompts/ hold templates, as in the reference
    assert prompts["standup"].group == "team"


def test_rules_from_every_source_first_name_wins(tree: Tree) -> None:
    tree.cwd = tree.repo
    tree.write(tree.repo / ".xcsh" / "rules" / "style.md", "---\ndescription: d\n---\nproject style")
    tree.write(tree.agent / "rules" / "style.md", "user style")
    tree.write(tree.repo / ".cursor" / "rules" / "ts.mdc", "---\nglobs: ['*.ts']\n---\nts")
    tree.write(tree.home / ".cursor" / "rules" / "user-cursor.mdc", "u")
    tree.write(tree.repo / ".windsurf" / "rules" / "wind.md", "w")
    tree.write(tree.home / ".codeium" / "windsurf" / "memories" / "global_rules.md", "g")
    tree.write(tree.home / "src" / ".clinerules", "cline")
    rules = {r["name"]: r for r in tree.found().rules}
    assert sorted(rules) == ["clinerules", "global_rules", "style", "ts", "user-cursor", "wind"]
    assert rules["style"]["content"] == "project style" and rules["style"]["description"] == "d"
    assert rules["ts"]["globs"] == ["*.ts"] and rules["ts"]["_source"]["provider"] == "cursor"


def test_agent_definition_folders_are_listed_project_first(tree: Tree) -> None:
    project = tree.repo / ".xcsh" / "agents"
    project.mkdir(parents=True)
    (tree.agent / "agents").mkdir()
    (tree.home / ".codex" / "agents").mkdir(parents=True)
    dirs = tree.found().agent_dirs
    assert [(d.path, d.level) for d in dirs] == [
        (str(project), "project"),
        (str(tree.agent / "agents"), "user"),
        (str(tree.home / ".codex" / "agents"), "user"),
    ]


def test_a_disabled_provider_is_not_read(tree: Tree) -> None:
    tree.write(tree.cwd / "AGENTS.md", "x")
    assert tree.found(disabled=("agents-md",)).context_files == []


def test_instruction_files_below_cwd_are_listed_down_to_four_levels(tmp_path: Path) -> None:
    from xcsh.coding.discovery.subdirs import nested_instruction_files

    for relative in (
        "XCSH.md",
        "a/AGENTS.md",
        "a/b/c/d/XCSH.md",
        "a/b/c/d/e/XCSH.md",
        "node_modules/x/AGENTS.md",
    ):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "XCSH.md").write_text("x")
    assert nested_instruction_files(tmp_path) == ["a/AGENTS.md", "a/b/c/d/XCSH.md"]


def test_plugin_folders_bring_named_commands_skills_and_agents(tree: Tree) -> None:
    plugin = tree.home / "plugins" / "kit"
    tree.write(plugin / ".xcsh-plugin" / "plugin.json", '{"name": "toolkit"}')
    tree.write(plugin / "commands" / "ship.md", "Ship $1")
    tree.write(plugin / "skills" / "audit" / "SKILL.md", "Audit things.")
    (plugin / "agents").mkdir()
    found = discover(LoadContext.create(tree.cwd, tree.home, tree.agent, [plugin]))
    assert [c.name for c in found.commands] == ["toolkit:ship"]
    assert [s.name for s in found.skills] == ["toolkit:audit"]
    assert [d.path for d in found.agent_dirs] == [str(plugin / "agents")]
    assert tree.found().commands == []  # without --plugin-dir nothing is read


def test_plugin_skills_are_offered_only_when_enabled(tree: Tree) -> None:
    from xcsh.coding.skills import SkillSelection, select_skills

    plugin = tree.home / "kit"
    tree.write(plugin / "skills" / "audit" / "SKILL.md", "Audit things.")
    skills = discover(LoadContext.create(tree.cwd, tree.home, tree.agent, [plugin])).skills
    assert select_skills(skills, SkillSelection(), home=tree.home) == []
    assert [s.name for s in select_skills(skills, SkillSelection(plugin_skills=True), home=tree.home)] == [
        "kit:audit"
    ]


def _nested_reference(cwd: Path, limit: int, max_dirs: int) -> list[str]:
    """The listing as first written (every entry sorted and stat'ed), to compare the fast walk with."""
    import os

    from xcsh.coding.discovery.subdirs import FILE_NAMES, MAX_DEPTH, MIN_DEPTH, SKIPPED

    found: list[str] = []
    visited = 0
    level: list[tuple[Path, int]] = [(cwd, 0)]
    while level and len(found) < limit and visited < max_dirs:
        next_level: list[tuple[Path, int]] = []
        for directory, depth in level:
            visited += 1
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            names = {e.name for e in entries if e.is_file()}
            if depth >= MIN_DEPTH:
                name = next((n for n in FILE_NAMES if n in names), None)
                if name is not None:
                    found.append((directory / name).relative_to(cwd).as_posix())
            if depth < MAX_DEPTH:
                next_level += [
                    (Path(e.path), depth + 1)
                    for e in entries
                    if e.is_dir(follow_symlinks=False)
                    and not e.name.startswith(".")
                    and e.name not in SKIPPED
                ]
        level = next_level
    return sorted(found)[:limit]


@pytest.mark.parametrize(("limit", "max_dirs"), [(200, 5000), (7, 5000), (200, 25), (3, 9)])
def test_the_instruction_file_walk_finds_what_a_full_sorted_walk_finds_within_its_bounds(
    tmp_path: Path, limit: int, max_dirs: int
) -> None:
    import random

    from xcsh.coding.discovery.subdirs import nested_instruction_files

    rng = random.Random(7)
    names = ["a", "B", "c1", "z", ".h", "node_modules", "XCSH.md", "AGENTS.md", "é"]
    directories = [tmp_path]
    for _ in range(120):  # a random tree six levels deep: dirs, instruction files, dirs named like files
        parent = rng.choice(directories)
        if len(parent.relative_to(tmp_path).parts) >= 6:
            continue
        child = parent / rng.choice(names)
        if child.exists():
            continue
        if rng.random() < 0.6:
            child.mkdir()
            directories.append(child)
        else:
            child.write_text("x")
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "a" / "link").symlink_to(tmp_path)  # a symlinked directory is not followed
    (tmp_path / "a" / "AGENTS.md").symlink_to(tmp_path / "a" / "missing")  # a dangling link is no file
    expected = _nested_reference(tmp_path, limit, max_dirs)
    assert nested_instruction_files(tmp_path, limit=limit, max_dirs=max_dirs) == expected
    assert limit < 200 or max_dirs < 5000 or expected  # the full walk finds some


def test_agent_folders_give_every_kind_at_each_level_also_through_a_link_and_not_from_a_file(
    tree: Tree,
) -> None:
    # .agents in cwd is a link to a real folder elsewhere in the repository; .agent in the repo
    # root is a plain file
    real = tree.repo / "shared-agents"
    tree.write(real / "skills" / "lint" / "SKILL.md", SKILL.format(name="lint", desc="lint it"))
    tree.write(real / "rules" / "style.md", "cwd style")
    tree.write(real / "prompts" / "review.md", "review prompt")
    tree.write(real / "commands" / "fix.md", "fix command")
    tree.write(real / "AGENTS.md", "cwd agents")
    tree.write(real / "SYSTEM.md", "cwd system")
    (tree.cwd / ".agents").symlink_to(real, target_is_directory=True)
    tree.write(tree.repo / ".agent", "not a folder")
    tree.write(tree.repo / "pkg" / ".agent" / "AGENTS.md", "pkg agents")
    tree.write(tree.home / ".agents" / "commands" / "home.md", "home command")
    found = tree.found(disabled=("native", "agents-md", "claude", "codex", "gemini", "opencode", "cline"))
    link = tree.cwd / ".agents"
    assert [(s.name, s.path) for s in found.skills] == [("lint", str(link / "skills" / "lint" / "SKILL.md"))]
    assert [(r["name"], r["path"]) for r in found.rules] == [("style", str(link / "rules" / "style.md"))]
    assert found.prompts == []  # .agents/prompts are not templates: the reference never expands them
    assert [(c.name, c.path, c.level) for c in found.commands] == [
        ("fix", str(link / "commands" / "fix.md"), "project"),
        ("home", str(tree.home / ".agents" / "commands" / "home.md"), "user"),
    ]
    assert [(f.content, f.depth) for f in found.context_files] == [("pkg agents", 1), ("cwd agents", 0)]
    assert [p.content for p in found.system_prompts] == ["cwd system"]


def test_project_files_linking_out_of_the_project_are_skipped_and_named_once(
    tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tree.write(tree.home / "secret" / "credentials", "aws_secret_access_key = OUTSIDE")
    tree.write(tree.home / "secret" / "skills" / "s1" / "SKILL.md", SKILL.format(name="s1", desc="outside"))
    (tree.cwd / "AGENTS.md").symlink_to(outside)
    (tree.cwd / ".xcsh" / "skills" / "s2").mkdir(parents=True)
    (tree.cwd / ".xcsh" / "skills" / "s2" / "SKILL.md").symlink_to(outside)
    (tree.cwd / ".agents").symlink_to(tree.home / "secret", target_is_directory=True)
    inside = tree.write(tree.repo / "docs" / "agents.md", "inside the repository")
    (tree.repo / "AGENTS.md").symlink_to(inside)
    tree.write(tree.agent / "skills" / "mine" / "SKILL.md", "")
    (tree.agent / "skills" / "mine" / "SKILL.md").unlink()
    (tree.agent / "skills" / "mine" / "SKILL.md").symlink_to(
        tree.write(tree.home / "secret" / "mine.md", SKILL.format(name="mine", desc="the user's own link"))
    )
    with caplog.at_level("WARNING"):
        found = tree.found()
    assert [f.content for f in found.context_files] == ["inside the repository"]
    assert [s.name for s in found.skills] == ["mine"]  # user level: the user's own choice
    [notice] = [r.getMessage() for r in caplog.records if "link outside the project" in r.getMessage()]
    assert str(tree.cwd / "AGENTS.md") in notice and "s2/SKILL.md" in notice and "s1/SKILL.md" in notice
    assert "OUTSIDE" not in notice


def test_a_discovered_file_larger_than_the_cap_is_skipped(tree: Tree) -> None:
    from xcsh.coding.discovery.base import MAX_FILE_BYTES

    tree.write(tree.cwd / "AGENTS.md", "x" * (MAX_FILE_BYTES + 1))
    tree.write(tree.repo / "AGENTS.md", "small")
    assert [f.content for f in tree.found().context_files] == ["small"]


def test_a_plugin_manifest_nested_a_thousand_levels_names_the_plugin_after_its_folder(tree: Tree) -> None:
    # review 7 D1: json.loads raised RecursionError and the whole plugins provider failed
    plugin = tree.home / "plugins" / "kit"
    tree.write(plugin / ".xcsh-plugin" / "plugin.json", '{"name":' * 1000 + '"x"' + "}" * 1000)
    tree.write(plugin / "commands" / "ship.md", "Ship $1")
    found = discover(LoadContext.create(tree.cwd, tree.home, tree.agent, [plugin]))
    assert [c.name for c in found.commands] == ["kit:ship"]
