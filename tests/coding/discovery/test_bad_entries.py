"""One folder entry that cannot be examined (its ``stat`` fails with ENAMETOOLONG, or EACCES
through a link into a folder the user cannot search) is skipped with a warning naming it; the
rest of its folder and every other source are still read (review 4 D1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xcsh.coding.discovery import LoadContext, discover
from xcsh.coding.discovery.registry import Discovered

SKILL = "---\nname: {name}\ndescription: d\n---\nbody\n"


def _write(path: Path, text: str = "text") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _bad_link(path: Path) -> Path:
    """A link whose target name is too long for ``stat`` (ENAMETOOLONG, even for root)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink("x" * 300, path)
    return path


class Tree:
    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.agent = root / "agent"
        self.repo = self.home / "repo"
        self.cwd = self.repo / "pkg"
        self.cwd.mkdir(parents=True)
        (self.repo / ".git").mkdir()
        self.agent.mkdir()
        _write(self.agent / "XCSH.md", "user instructions")
        _write(self.agent / "SYSTEM.md", "user system")
        _write(self.agent / "skills" / "userskill" / "SKILL.md", SKILL.format(name="userskill"))
        _write(self.cwd / ".xcsh" / "skills" / "good" / "SKILL.md", SKILL.format(name="good"))
        _write(self.cwd / ".xcsh" / "commands" / "good.md", "a command")
        _write(self.cwd / ".xcsh" / "rules" / "style.md", "---\ndescription: style\n---\nbe tidy")
        _write(self.home / ".claude" / "CLAUDE.md", "claude user")
        _write(self.home / ".claude" / "commands" / "claudecmd.md", "claude command")
        _write(self.home / ".codex" / "skills" / "codexskill" / "SKILL.md", SKILL.format(name="codexskill"))
        (self.agent / "agents").mkdir()

    def found(self) -> Discovered:
        return discover(LoadContext.create(self.cwd, self.home, self.agent))


def _summary(found: Discovered) -> dict[str, object]:
    return {
        "context": sorted(f.content for f in found.context_files),
        "system": [p.content for p in found.system_prompts],
        "skills": sorted(s.name for s in found.skills),
        "commands": sorted(c.name for c in found.commands),
        "rules": sorted(str(r["name"]) for r in found.rules),
        "agent_dirs": [Path(d.path).name for d in found.agent_dirs],
    }


@pytest.mark.parametrize(
    "where",
    [
        ".xcsh/commands/dangling.md",
        ".xcsh/rules/dangling.md",
        ".xcsh/skills/dangling",
        "home:.claude/commands/dangling.md",
        "home:.codex/skills/dangling",
        "agent:skills/dangling",
    ],
)
def test_one_entry_whose_stat_fails_is_skipped_and_named_and_everything_else_is_read(
    tmp_path: Path, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    tree = Tree(tmp_path)
    expected = _summary(tree.found())
    assert expected["commands"] == ["claudecmd", "good"] and "codexskill" in expected["skills"]
    base = {"home": tree.home, "agent": tree.agent}.get(where.split(":")[0], tree.cwd)
    bad = _bad_link(base / where.split(":")[-1])
    with caplog.at_level("WARNING"):
        assert _summary(tree.found()) == expected
    messages = [r.getMessage() for r in caplog.records]
    assert any(str(bad) in m for m in messages), messages
    assert not any("provider" in m and "failed" in m for m in messages), messages


@pytest.mark.parametrize("folder", [".xcsh/agents", ".codex/agents", ".clinerules"])
def test_a_folder_probe_whose_stat_fails_is_skipped_and_the_provider_keeps_its_other_items(
    tmp_path: Path, folder: str, caplog: pytest.LogCaptureFixture
) -> None:
    tree = Tree(tmp_path)
    expected = _summary(tree.found())
    bad = _bad_link(tree.cwd / folder)
    with caplog.at_level("WARNING"):
        assert _summary(tree.found()) == expected
    messages = [r.getMessage() for r in caplog.records]
    assert any(str(bad) in m for m in messages), messages


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches every folder: EACCES needs another user")
def test_a_link_into_a_folder_the_user_cannot_search_is_skipped(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    expected = _summary(tree.found())
    private = tmp_path / "private"
    _write(private / "secret.md")
    os.symlink(private / "secret.md", tree.home / ".claude" / "commands" / "x.md")
    private.chmod(0o600)
    try:
        assert _summary(tree.found()) == expected
    finally:
        private.chmod(0o700)


def test_a_bad_system_md_link_in_the_project_leaves_the_users_system_md_in_charge(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tree = Tree(tmp_path)
    bad = _bad_link(tree.cwd / ".xcsh" / "SYSTEM.md")
    with caplog.at_level("WARNING"):
        found = tree.found()
        assert found.config_file("SYSTEM.md") == tree.agent / "SYSTEM.md"
    assert any(str(bad) in r.getMessage() for r in caplog.records)


def test_a_bad_instruction_file_link_below_cwd_does_not_hide_its_folders_subfolders(tmp_path: Path) -> None:
    from xcsh.coding.discovery.subdirs import nested_instruction_files

    tree = Tree(tmp_path)
    _bad_link(tree.cwd / "lib" / "AGENTS.md")
    _write(tree.cwd / "lib" / "deep" / "XCSH.md")
    assert nested_instruction_files(tree.cwd) == ["lib/deep/XCSH.md"]
