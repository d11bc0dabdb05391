"""Session persistence: the on-disk JSONL entry tree, its store, and context rebuilding.

Import from the submodules (``store``, ``context``, ``entries``, ``listing`` …);
this package re-exports nothing so importing it stays cheap.
"""
