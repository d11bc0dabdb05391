"""The skill-source switches (``skills.enablePiUser``, ``enablePiProject``, ``enableCodexUser``, …)
decide which sources' skills a session offers, with the reference's defaults: Codex's user skills
only when the user opts in (review 4 D5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xcsh.coding.project_context import load_project_context, skill_selection
from xcsh.coding.settings import Settings

SKILL = "---\nname: {name}\ndescription: does {name}\n---\nbody\n"
NAMES = ("projskill", "userskill", "codexskill", "claudeskill", "claudeproj", "agentsskill")


def _offered(tmp_path: Path, config: str) -> dict[str, bool]:
    home = tmp_path / "home"
    agent = tmp_path / "agent"
    cwd = home / "proj"
    (cwd / ".git").mkdir(parents=True)
    agent.mkdir(exist_ok=True)
    places = {
        "projskill": cwd / ".xcsh" / "skills",
        "userskill": agent / "skills",
        "codexskill": home / ".codex" / "skills",
        "claudeskill": home / ".claude" / "skills",
        "claudeproj": cwd / ".claude" / "skills",
        "agentsskill": cwd / ".agents" / "skills",
    }
    for name, folder in places.items():
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "SKILL.md").write_text(SKILL.format(name=name))
    (agent / "config.yml").write_text(config)
    settings = Settings.load(agent, cwd)
    selection = skill_selection(settings.get, no_skills=False, include=None)
    context = load_project_context(cwd=cwd, home=home, agent_dir=agent, selection=selection)
    offered = {s.name for s in context.skills}
    return {name: name in offered for name in NAMES}


def test_by_default_every_source_but_codexs_user_skills_is_offered(tmp_path: Path) -> None:
    assert _offered(tmp_path, "") == {name: name != "codexskill" for name in NAMES}


@pytest.mark.parametrize(
    ("config", "off"),
    [
        ("skills:\n  enablePiProject: false\n", {"projskill", "codexskill"}),
        ("skills:\n  enablePiUser: false\n", {"userskill", "codexskill"}),
        ("skills:\n  enableCodexUser: true\n", set()),
        (
            "skills:\n  enableXcshUser: false\n  enableXcshProject: false\n",
            {"claudeskill", "claudeproj", "codexskill"},
        ),
        # every built-in source off: the other sources' skills go too, as in the reference
        (
            "skills:\n  enablePiUser: false\n  enablePiProject: false\n"
            "  enableXcshUser: false\n  enableXcshProject: false\n",
            set(NAMES),
        ),
    ],
)
def test_each_switch_turns_its_sources_skills_on_or_off(tmp_path: Path, config: str, off: set[str]) -> None:
    assert _offered(tmp_path, config) == {name: name not in off for name in NAMES}


def test_a_project_can_switch_its_own_skills_off_in_its_settings(tmp_path: Path) -> None:
    (tmp_path / "home" / "proj" / ".xcsh").mkdir(parents=True)
    (tmp_path / "home" / "proj" / ".xcsh" / "config.yml").write_text("skills:\n  enablePiProject: false\n")
    assert _offered(tmp_path, "")["projskill"] is False
