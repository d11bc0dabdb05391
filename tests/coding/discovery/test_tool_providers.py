"""The other coding tools' providers one by one: where each finds what, at which level, in which order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xcsh.coding.discovery import LoadContext
from xcsh.coding.discovery.base import Found
from xcsh.coding.discovery.providers import PROVIDERS

SKILL = "---\nname: {name}\ndescription: d\n---\nbody\n"
TOOLS = ("claude", "codex", "gemini", "opencode", "github", "cursor", "cline", "windsurf")


def _write(path: Path, text: str = "text") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _every_tools_files(home: Path, repo: Path, cwd: Path) -> None:
    """A file (or folder) in every place one of the eight tools reads, plus near misses."""
    for folder in (home / ".claude", cwd / ".claude"):
        _write(folder / "CLAUDE.md")
        _write(folder / "commands" / "cmd.md", "---\nname: not-used\n---\nx")
        _write(folder / "SYSTEM.md")
    _write(home / ".claude" / "skills" / "cu" / "SKILL.md", SKILL.format(name="claude-user"))
    _write(repo / ".claude" / "skills" / "cr" / "SKILL.md", SKILL.format(name="claude-repo"))
    _write(cwd / ".claude" / "skills" / "cc" / "SKILL.md", SKILL.format(name="claude-cwd"))
    _write(home / "src" / ".claude" / "skills" / "above" / "SKILL.md", SKILL.format(name="above-repo"))
    for folder in (home / ".codex", cwd / ".codex"):
        _write(folder / "AGENTS.md")
        _write(folder / "skills" / "s" / "SKILL.md", SKILL.format(name=f"codex-{folder.parent.name}"))
        _write(folder / "commands" / "c.md", "---\nname: named-command\n---\nx")
        _write(folder / "prompts" / "p.md")
        (folder / "agents").mkdir()
    for folder in (home / ".gemini", cwd / ".gemini"):
        _write(folder / "GEMINI.md")
        _write(folder / "system.md")
        (folder / "agents").mkdir()
    for folder in (home / ".config" / "opencode", cwd / ".opencode"):
        _write(folder / "AGENTS.md")
        _write(folder / "skills" / "s" / "SKILL.md", SKILL.format(name=f"oc-{folder.name}"))
        _write(folder / "commands" / "c.md", "---\nname: oc-named\n---\nx")
    _write(cwd / ".github" / "copilot-instructions.md")
    _write(home / ".cursor" / "rules" / "u.mdc")
    _write(cwd / ".cursor" / "rules" / "p.md")
    _write(cwd / ".cursor" / "rules" / "ignored.txt")
    _write(repo / ".clinerules" / "nearest.md")
    _write(repo / ".clinerules" / "ignored.mdc")
    _write(home / ".clinerules", "farther: not read")
    _write(home / ".codeium" / "windsurf" / "memories" / "global_rules.md")
    _write(cwd / ".windsurf" / "rules" / "w.md")
    _write(cwd / ".windsurf" / "rules" / "w.mdc")


def _summary(found: Found, root: Path) -> dict[str, list[Any]]:
    def rel(path: str) -> str:
        return str(Path(path).relative_to(root))

    out: dict[str, list[Any]] = {
        "context_files": [(f.level, rel(f.path), f.depth) for f in found.context_files],
        "system_prompts": [(f.level, rel(f.path)) for f in found.system_prompts],
        "skills": [(s.level, s.name, rel(s.path)) for s in found.skills],
        "commands": [(c.level, c.name, rel(c.path)) for c in found.commands],
        "prompts": [(c.level, c.name, rel(c.path)) for c in found.prompts],
        "rules": [(r["_source"]["level"], r["name"], rel(r["path"])) for r in found.rules],
        "agent_dirs": [(d.level, rel(d.path)) for d in found.agent_dirs],
    }
    return {bucket: items for bucket, items in out.items() if items}


def test_each_other_tools_provider_finds_its_files_at_both_levels_in_order(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = home / "src" / "repo"
    cwd = repo / "pkg"
    (repo / ".git").mkdir(parents=True)
    cwd.mkdir()
    _every_tools_files(home, repo, cwd)
    ctx = LoadContext.create(cwd, home, tmp_path / "agent")
    providers = {p.id: p for p in PROVIDERS}
    found = {tool: _summary(providers[tool].load(ctx), tmp_path) for tool in TOOLS}
    here = "home/src/repo/pkg"
    assert found == (
        {
            "claude": {
                "context_files": [
                    ("user", "home/.claude/CLAUDE.md", None),
                    ("project", f"{here}/.claude/CLAUDE.md", 0),
                ],
                "system_prompts": [("user", "home/.claude/SYSTEM.md")],
                "skills": [
                    ("user", "claude-user", "home/.claude/skills/cu/SKILL.md"),
                    ("project", "claude-cwd", f"{here}/.claude/skills/cc/SKILL.md"),
                    ("project", "claude-repo", "home/src/repo/.claude/skills/cr/SKILL.md"),
                ],
                "commands": [
                    ("user", "cmd", "home/.claude/commands/cmd.md"),
                    ("project", "cmd", f"{here}/.claude/commands/cmd.md"),
                ],
            },
            "codex": {
                "context_files": [("user", "home/.codex/AGENTS.md", None)],
                "skills": [
                    ("user", "codex-home", "home/.codex/skills/s/SKILL.md"),
                    ("project", "codex-pkg", f"{here}/.codex/skills/s/SKILL.md"),
                ],
                "commands": [
                    ("user", "named-command", "home/.codex/commands/c.md"),
                    ("project", "named-command", f"{here}/.codex/commands/c.md"),
                ],
                "agent_dirs": [("project", f"{here}/.codex/agents"), ("user", "home/.codex/agents")],
            },
            "gemini": {
                "context_files": [
                    ("user", "home/.gemini/GEMINI.md", None),
                    ("project", f"{here}/.gemini/GEMINI.md", -1),
                ],
                "system_prompts": [
                    ("user", "home/.gemini/system.md"),
                    ("project", f"{here}/.gemini/system.md"),
                ],
                "agent_dirs": [("project", f"{here}/.gemini/agents"), ("user", "home/.gemini/agents")],
            },
            "opencode": {
                "context_files": [("user", "home/.config/opencode/AGENTS.md", None)],
                "skills": [
                    ("user", "oc-opencode", "home/.config/opencode/skills/s/SKILL.md"),
                    ("project", "oc-.opencode", f"{here}/.opencode/skills/s/SKILL.md"),
                ],
                "commands": [
                    ("user", "oc-named", "home/.config/opencode/commands/c.md"),
                    ("project", "oc-named", f"{here}/.opencode/commands/c.md"),
                ],
            },
            "github": {"context_files": [("project", f"{here}/.github/copilot-instructions.md", -1)]},
            "cursor": {
                "rules": [
                    ("user", "u", "home/.cursor/rules/u.mdc"),
                    ("project", "p", f"{here}/.cursor/rules/p.md"),
                ]
            },
            "cline": {"rules": [("project", "nearest", "home/src/repo/.clinerules/nearest.md")]},
            "windsurf": {
                "rules": [
                    ("user", "global_rules", "home/.codeium/windsurf/memories/global_rules.md"),
                    ("project", "w", f"{here}/.windsurf/rules/w.md"),
                ]
            },
        }
    )
