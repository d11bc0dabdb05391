"""The YAML reader of config files and front matter refuses alias bombs and self-references."""

from __future__ import annotations

import pytest
import yaml

from xcsh.coding.yaml_load import MAX_EXPANDED_NODES, safe_load


def test_ordinary_anchors_aliases_and_merge_keys_still_load() -> None:
    text = "base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\nboth: [*b, *b]\n"
    assert safe_load(text) == {"base": {"x": 1}, "child": {"x": 1, "y": 2}, "both": [{"x": 1}, {"x": 1}]}


def test_nested_aliases_expanding_past_the_cap_are_refused() -> None:
    lines = ["l0: &l0 [" + ", ".join("1" for _ in range(10)) + "]"]
    for level in range(1, 7):  # 10**6 nodes expanded
        lines.append(f"l{level}: &l{level} [" + ", ".join(f"*l{level - 1}" for _ in range(10)) + "]")
    assert MAX_EXPANDED_NODES < 10**6
    with pytest.raises(yaml.YAMLError, match="alias bomb"):
        safe_load("\n".join(lines))


def test_an_alias_to_a_node_containing_it_is_refused() -> None:
    with pytest.raises(yaml.YAMLError, match="contains it"):
        safe_load("a: &a [1, {b: *a}]\n")


def test_a_document_nested_deeper_than_the_parser_follows_is_a_yaml_error() -> None:
    with pytest.raises(yaml.YAMLError, match="nested too deeply"):
        safe_load("a: " + "[" * 5000 + "]" * 5000 + "\n")
