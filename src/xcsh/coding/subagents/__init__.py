"""Subagents: the ``task`` tool's agent definitions, child sessions and the tool itself.

``agents`` holds the bundled definitions and loads discovered ``agents/`` folders;
``child`` runs one child agent in-process; ``tool`` is the ``task`` tool.
See docs/tools.md ("task").
"""
