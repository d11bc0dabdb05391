"""Agent definitions for task: bundled ones, and discovered agents/ folders overriding them."""

from __future__ import annotations

from pathlib import Path

from xcsh.coding.subagents.agents import BUNDLED, load_agents, parse_agent

SCOUT = "---\nname: scout\ndescription: Looks around\ntools: read, find\nspawns: explore\nthinking-level: med\n---\nYou only look.\n"


def test_project_definitions_win_over_user_ones_and_user_ones_over_bundled(tmp_path: Path) -> None:
    project, home, agent_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "agent"
    (project / ".xcsh" / "agents").mkdir(parents=True)
    (agent_dir / "agents").mkdir(parents=True)
    home.mkdir()
    (project / ".xcsh" / "agents" / "scout.md").write_text(SCOUT)
    (agent_dir / "agents" / "scout.md").write_text("---\nname: scout\ndescription: user scout\n---\nUser.\n")
    (agent_dir / "agents" / "explore.md").write_text(
        "---\nname: explore\ndescription: my explorer\n---\nMine.\n"
    )
    (agent_dir / "agents" / "broken.md").write_text("no front matter and no description\n")
    agents = {a.name: a for a in load_agents(project, home, agent_dir, disabled=["designer"])}
    scout = agents["scout"]
    assert (scout.description, scout.source, scout.tools, scout.spawns) == (
        "Looks around",
        "project",
        ("read", "find"),
        ("explore",),
    )
    assert (
        scout.prompt == "You only look." and scout.thinking_level == "medium" and scout.may_spawn("explore")
    )
    assert agents["explore"].description == "my explorer" and agents["explore"].source == "user"
    assert "designer" not in agents and "broken" not in agents
    assert {a.name for a in BUNDLED} - {"designer"} <= set(agents)


def test_a_definition_needs_a_name_and_a_description() -> None:
    assert parse_agent("---\nname: x\n---\nbody", "user") is None
    star = parse_agent("---\nname: x\ndescription: d\nspawns: '*'\ntools: [read, bash]\n---\nbody", "user")
    assert (
        star is not None
        and star.spawns == "*"
        and star.tools == ("read", "bash")
        and star.may_spawn("anything")
    )


def test_a_discovery_the_session_made_for_the_same_context_is_used_and_any_other_is_not(
    tmp_path: Path,
) -> None:
    from xcsh.coding.discovery import LoadContext, discover

    project, home, agent_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "agent"
    for folder in (project, home, agent_dir):
        folder.mkdir()
    before = discover(LoadContext.create(project, home, agent_dir))  # no agents/ folder yet
    (project / ".xcsh" / "agents").mkdir(parents=True)
    (project / ".xcsh" / "agents" / "scout.md").write_text(SCOUT)
    fresh = {a.name for a in load_agents(project, home, agent_dir)}
    assert "scout" in fresh
    # the same context, every provider asked: its folders are taken as they were found
    assert {a.name for a in load_agents(project, home, agent_dir, known=before)} == fresh - {"scout"}
    # another context, or a discovery with a provider left out: walked again
    elsewhere = discover(LoadContext.create(home, home, agent_dir))
    assert {a.name for a in load_agents(project, home, agent_dir, known=elsewhere)} == fresh
    partial = discover(LoadContext.create(project, home, agent_dir), disabled=["claude"])
    assert {a.name for a in load_agents(project, home, agent_dir, known=partial)} == fresh


def test_agents_of_plugin_folders_are_found_only_when_the_folders_are_given(tmp_path: Path) -> None:
    project, home, agent_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "agent"
    for folder in (project, home, agent_dir):
        folder.mkdir()
    plugin = tmp_path / "kit"
    (plugin / "agents").mkdir(parents=True)
    (plugin / "agents" / "scout.md").write_text(SCOUT)
    assert "scout" not in {a.name for a in load_agents(project, home, agent_dir)}
    assert "scout" in {a.name for a in load_agents(project, home, agent_dir, plugin_dirs=[plugin])}


def test_a_project_definition_linking_out_of_the_project_is_skipped(tmp_path: Path) -> None:
    project, home, agent_dir = tmp_path / "proj", tmp_path / "home", tmp_path / "agent"
    (project / ".git").mkdir(parents=True)
    (project / ".xcsh" / "agents").mkdir(parents=True)
    home.mkdir()
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\nname: sneaky\ndescription: from outside\n---\nOutside.\n")
    (project / ".xcsh" / "agents" / "sneaky.md").symlink_to(outside)
    (project / ".xcsh" / "agents" / "scout.md").write_text("\ufeff" + SCOUT)  # a byte order mark is fine
    names = {a.name for a in load_agents(project, home, agent_dir)}
    assert "sneaky" not in names and "scout" in names
