"""Every discovery source, end to end: real files under a temporary project and home, checked in
the system prompt the fake LLM receives and in ``get_state.systemPrompt`` (docs/context.md)."""

from __future__ import annotations

import pytest

from conftest import Workspace
from e2e.context_tree import Tree, skill, system_prompt_of
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

ALWAYS = "---\nalwaysApply: true\n---\n{text}\n"
LISTED = "---\ndescription: {text}\nglobs: ['*.py']\n---\nRule body\n"

# source → ({path template: content}, texts the system prompt must contain)
# placeholders: {home} (HOME), {agent} (PI_CODING_AGENT_DIR), {proj} (repo root), {cwd} (proj/pkg)
SOURCES: dict[str, tuple[dict[str, str], list[str]]] = {
    "xcsh": (
        {
            "{agent}/XCSH.md": "NATIVE-USER-CONTEXT",
            "{cwd}/.xcsh/XCSH.md": "NATIVE-PROJECT-CONTEXT",
            "{agent}/skills/alpha/SKILL.md": skill("alpha", "ALPHA-SKILL"),
            "{proj}/.xcsh/skills/beta/SKILL.md": skill("beta", "BETA-SKILL"),
            "{cwd}/.xcsh/rules/always.md": ALWAYS.format(text="NATIVE-ALWAYS-RULE"),
            "{agent}/rules/listed.md": LISTED.format(text="NATIVE-LISTED-RULE"),
        },
        [
            "NATIVE-USER-CONTEXT",
            "NATIVE-PROJECT-CONTEXT",
            "ALPHA-SKILL",
            "BETA-SKILL",
            "NATIVE-ALWAYS-RULE",
            "NATIVE-LISTED-RULE",
            'applies-to="*.py"',
            "{agent}/skills/alpha/SKILL.md",
        ],
    ),
    "XCSH.md and AGENTS.md walking up": (
        {"{proj}/XCSH.md": "ROOT-XCSH-MD", "{cwd}/AGENTS.md": "PACKAGE-AGENTS-MD"},
        ['<context-file path="{proj}/XCSH.md">\nROOT-XCSH-MD', "PACKAGE-AGENTS-MD"],
    ),
    "agents standard": (
        {
            "{home}/.agents/AGENTS.md": "AGENTS-USER-CONTEXT",
            "{proj}/.agent/SYSTEM.md": "AGENTS-SYSTEM-CUSTOMISATION",
            "{proj}/.agents/skills/gamma/SKILL.md": skill("gamma", "GAMMA-SKILL"),
            "{home}/.agent/rules/r.md": LISTED.format(text="AGENTS-LISTED-RULE"),
        },
        ["AGENTS-USER-CONTEXT", "AGENTS-SYSTEM-CUSTOMISATION", "GAMMA-SKILL", "AGENTS-LISTED-RULE"],
    ),
    "claude": (
        {
            "{home}/.claude/CLAUDE.md": "CLAUDE-USER-CONTEXT",
            "{cwd}/.claude/CLAUDE.md": "CLAUDE-PROJECT-CONTEXT",
            "{home}/.claude/skills/delta/SKILL.md": skill("delta", "DELTA-SKILL"),
        },
        ["CLAUDE-USER-CONTEXT", "CLAUDE-PROJECT-CONTEXT", "DELTA-SKILL"],
    ),
    "codex": (
        {
            "{home}/.codex/AGENTS.md": "CODEX-USER-CONTEXT",
            "{cwd}/.codex/skills/eps/SKILL.md": skill("eps", "EPS-SKILL"),
        },
        ["CODEX-USER-CONTEXT", "EPS-SKILL"],
    ),
    "gemini": (
        {
            "{home}/.gemini/GEMINI.md": "GEMINI-USER-CONTEXT",
            "{cwd}/.gemini/GEMINI.md": "GEMINI-PROJECT-CONTEXT",
            "{cwd}/.gemini/system.md": "GEMINI-SYSTEM-CUSTOMISATION",
        },
        ["GEMINI-USER-CONTEXT", "GEMINI-PROJECT-CONTEXT", "GEMINI-SYSTEM-CUSTOMISATION"],
    ),
    "opencode": (
        {
            "{home}/.config/opencode/AGENTS.md": "OPENCODE-USER-CONTEXT",
            "{cwd}/.opencode/skills/zeta/SKILL.md": skill("zeta", "ZETA-SKILL"),
        },
        ["OPENCODE-USER-CONTEXT", "ZETA-SKILL"],
    ),
    "cursor": (
        {
            "{home}/.cursor/rules/user.mdc": ALWAYS.format(text="CURSOR-USER-ALWAYS"),
            "{cwd}/.cursor/rules/py.mdc": LISTED.format(text="CURSOR-PROJECT-LISTED"),
        },
        ["CURSOR-USER-ALWAYS", "CURSOR-PROJECT-LISTED"],
    ),
    "windsurf": (
        {
            "{home}/.codeium/windsurf/memories/global_rules.md": ALWAYS.format(text="WINDSURF-GLOBAL"),
            "{cwd}/.windsurf/rules/w.md": LISTED.format(text="WINDSURF-PROJECT-LISTED"),
        },
        ["WINDSURF-GLOBAL", "WINDSURF-PROJECT-LISTED"],
    ),
    "cline": ({"{proj}/.clinerules": ALWAYS.format(text="CLINE-RULES")}, ["CLINE-RULES"]),
    "copilot": (
        {"{cwd}/.github/copilot-instructions.md": "COPILOT-INSTRUCTIONS"},
        ["COPILOT-INSTRUCTIONS"],
    ),
}


# sources that cannot shadow each other share one process (rules only, and a cwd-level file)
GROUPS = [
    *([name] for name in SOURCES if name not in ("cursor", "windsurf", "cline", "copilot")),
    ["cursor", "windsurf", "cline", "copilot"],
]


@pytest.mark.parametrize("group", GROUPS, ids=[" + ".join(g) for g in GROUPS])
async def test_each_source_reaches_the_model_and_get_state(
    workspace: Workspace, fake_llm: FakeLLM, group: list[str]
) -> None:
    tree = Tree(workspace)
    expected: list[str] = []
    for source in group:
        tree.write(SOURCES[source][0])
        expected += SOURCES[source][1]
    fake_llm.script(script.text("ok"))
    async with tree.spawn() as client:
        state = await client.get_state()
        await client.prompt_and_wait("hi")
    sent = system_prompt_of(fake_llm.requests[0].json)
    assert sent == state["systemPrompt"]
    for text in expected:
        assert tree.fill(text) in sent, f"{tree.fill(text)!r} missing"


async def test_nothing_discovered_leaves_only_the_base_sections(workspace: Workspace) -> None:
    tree = Tree(workspace)
    async with tree.spawn() as client:
        prompt = (await client.get_state())["systemPrompt"]
    assert prompt.startswith("You are xcsh") and "Available tools:" in prompt
    assert f"Current working directory: {tree.cwd}" in prompt
    for absent in ("<context-file", "# Skills", "# Rules", "# Language"):
        assert absent not in prompt
