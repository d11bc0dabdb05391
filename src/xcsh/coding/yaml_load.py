"""PyYAML's ``safe_load`` for the YAML xcsh reads from files, refusing alias bombs.

A YAML alias (``*name``) reuses an anchored node without copying it, so a few hundred bytes
of nested aliases (a "billion laughs" file) describe a tree of billions of nodes. PyYAML builds
the shared structure quickly, but everything that walks it afterwards (settings flattening, the
parse cache, a comparison) takes exponential time, and an alias of a node that contains itself
makes such a walk endless. Config files, front matter and ``models.yml`` come from
repositories as well as from the user, so :func:`safe_load` counts, before anything is built,
how many nodes the document has with every alias expanded, and refuses a document that has
more than :data:`MAX_EXPANDED_NODES` or an alias of a node that contains it. Ordinary aliases
(``<<: *defaults`` merge keys, a repeated list) still load. The count follows the shared node
graph once per node, so it costs about as much as composing.

``yaml`` is imported on the first call (start-ups that read only cached parses never pay it).
"""

from __future__ import annotations

from typing import Any

MAX_EXPANDED_NODES = 100_000
"""The most nodes a document may have with its aliases expanded (a large real config has a few thousand)."""

_loader: Any = None


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, but a document whose aliases expand past
    :data:`MAX_EXPANDED_NODES` nodes, or that refers to itself, raises a ``yaml.YAMLError``
    (a ``ComposerError`` whose problem says why), and so does one nested deeper than PyYAML's
    recursive parser follows (``[[[…]]]`` a few thousand levels deep, which would otherwise
    raise ``RecursionError`` out of every caller). Other errors are PyYAML's own."""
    loader_class = _loader or _make_loader()
    loader = loader_class(text)
    try:
        return loader.get_single_data()
    except RecursionError as exc:
        import yaml

        raise yaml.YAMLError("the document is nested too deeply to read") from exc
    finally:
        loader.dispose()


def _make_loader() -> Any:
    global _loader
    import yaml
    from yaml.composer import ComposerError
    from yaml.nodes import MappingNode, Node, SequenceNode

    class BoundedLoader(yaml.SafeLoader):
        """A SafeLoader that checks the expanded size of each document it composes."""

        aliases_seen = False

        def compose_node(self, parent: Node | None, index: Any) -> Node | None:
            if self.check_event(yaml.AliasEvent):
                self.aliases_seen = True
            return super().compose_node(parent, index)

        def compose_document(self) -> Node | None:
            node = super().compose_document()
            if node is not None and self.aliases_seen:
                _check_expanded_size(node)
            return node

    def _check_expanded_size(root: Node) -> None:
        sizes: dict[int, int] = {}
        open_nodes: set[int] = set()

        def children(node: Node) -> list[Node]:
            if isinstance(node, SequenceNode):
                return list(node.value)
            if isinstance(node, MappingNode):
                return [part for pair in node.value for part in pair]
            return []

        # iterative post-order walk with a memo per shared node (recursion would hit Python's limit)
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            key = id(node)
            if done:
                open_nodes.discard(key)
                size = 1 + sum(sizes[id(child)] for child in children(node))
                if size > MAX_EXPANDED_NODES:
                    raise ComposerError(
                        None,
                        None,
                        f"aliases expand this document past {MAX_EXPANDED_NODES} nodes (refused as an alias bomb)",
                        node.start_mark,
                    )
                sizes[key] = size
                continue
            if key in sizes:
                continue
            if key in open_nodes:
                raise ComposerError(
                    None, None, "an alias refers to a node that contains it (refused)", node.start_mark
                )
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children(node) if id(child) not in sizes)

    _loader = BoundedLoader
    return BoundedLoader
