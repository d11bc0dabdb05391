"""Shell execution for the user ``!bash`` command and the ``bash`` tool.

``capture`` decodes, sanitises and tail-limits output; ``process`` runs one shell in
its own process group with abort/timeout kill; ``session`` keeps the persistent
shell state (cwd, exported variables) of user bash; ``wire`` builds the protocol
dicts and the model's view of a run. Import from the submodules; this package
re-exports nothing. It holds the one constant the ``bash`` tool's description quotes, so
building that description imports no capture code.
"""

OUTPUT_LIMIT_BYTES = 51_200
"""Output kept per command (whole lines from the end); more is spilled to a file."""
