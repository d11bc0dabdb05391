"""Slash commands that ship with xcsh, offered after the discovered ones (a user's or project's
``commands/<name>.md`` of the same name replaces one): as in the reference, ``/init`` asks the
model to write the project's ``XCSH.md``. The text is xcsh's own."""

from __future__ import annotations

INIT = """\
Study this repository and write `XCSH.md` at its root: a short guide for a coding agent that \
starts work here knowing nothing about the project.

Survey before you write. When the `task` tool is available, hand separate areas to subagents \
that run in parallel (the main sources, the tests, build and configuration, scripts and \
documentation); otherwise read them yourself. Read any README, CONTRIBUTING, AGENTS.md or \
CLAUDE.md and keep what is still true. When `XCSH.md` exists already, improve it rather than \
starting over.

Cover what applies to this codebase, and leave the rest out:
- what the project is for, in two or three sentences;
- how it is organised: the main folders and modules, and how data moves between them;
- the exact commands to install, build, run, test, lint and format;
- the conventions the code keeps (naming, formatting, error handling, logging, concurrency, \
dependencies), with a short example where one helps;
- the files that matter: entry points, configuration, generated files nobody should edit;
- required tools and versions (runtime, package manager) and what must not be swapped;
- how the tests are arranged and what a change needs before it is finished.

Use Markdown with one heading per section. Be brief and concrete: paths, commands and names, \
not general advice; skip what the layout of the code already makes obvious. Write the file \
with your file tools, then say in a line or two what it covers.
"""

BUNDLED: tuple[tuple[str, str, str], ...] = (
    ("init", "Write XCSH.md, a guide to this codebase for the agent", INIT),
)
"""``(name, description, body)`` of each bundled command."""
