"""Discovery of the files that shape the agent: context files, SYSTEM.md, skills, prompt
templates, slash commands, rules and subagent folders — xcsh's own and other agents'.

``discover(LoadContext.create(cwd, home, agent_dir))`` returns a :class:`Discovered`;
docs/context.md lists every location, its precedence and how to turn it off.
"""

from xcsh.coding.discovery.base import (
    AgentDir,
    CommandFile,
    ContextFile,
    LoadContext,
    SkillFile,
    Source,
    SystemPromptFile,
)
from xcsh.coding.discovery.frontmatter import parse_front_matter
from xcsh.coding.discovery.registry import Discovered, discover, ordered_providers

__all__ = [
    "AgentDir",
    "CommandFile",
    "ContextFile",
    "Discovered",
    "LoadContext",
    "SkillFile",
    "Source",
    "SystemPromptFile",
    "discover",
    "ordered_providers",
    "parse_front_matter",
]
