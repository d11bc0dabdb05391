"""The YAML subset read without PyYAML gives exactly what ``yaml.safe_load`` gives, or defers to it."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest
import yaml

from conftest import fake_models_yml
from xcsh.coding.yaml_subset import _NotSubset, load_subset, safe_load

KEYS = ["id", "api", "baseUrl", "a.b", "x-y", "_k", "models", "yes", "on", "null", "Off", "e1", "inf", "y"]
WORDS = [
    "yes",
    "No",
    "ON",
    "off",
    "TRUE",
    "false",
    "null",
    "~",
    "Null",
    "NULL",
    "y",
    "n",
    "~x",
    "0",
    "12",
    "-3",
    "+4",
    "007",
    "0x1F",
    "0o7",
    "0b101",
    "1_000",
    "1:20",
    "3.5",
    ".5",
    "-.inf",
    ".NaN",
    "1e3",
    "2001-12-14",
    "2001-12-14 21:59:43.10 -5",
    "http://127.0.0.1:8080/v1",
    "gpt-4.1",
    "a b  c",
    "a: b",
    "a #b",
    "a#b",
    "hello   # a comment",
    "'quoted'",
    "'it''s'",
    "'a' # c",
    "'open",
    '"dq"',
    '"d\\q"',
    '"dq" # c',
    '"dq" x',
    "[1, 2]",
    "{a: 1}",
    "&anchor x",
    "*alias",
    "!tag x",
    "|",
    ">",
    "-x",
    "?q",
    "@x",
    "%x",
    "`x",
    "<<",
    "=",
    "a,b",
    "path/to/file",
    "x:",
    "x:y",
    "k=v",
    "!",
    "#",
    "o'clock",
    'say "hi"',
    "a\\b",
    "fake-model",
    "_",
    "-",
    "- x",
]


PLAIN = ["fake", "openai-completions", "http://127.0.0.1:8080/v1", "12", "0", "true", "a b c", "'q'", "x"]


def word(rng: random.Random) -> str:
    return rng.choice(WORDS) if rng.random() < 0.3 else rng.choice(PLAIN)


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (``True == 1`` does not count)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def document(rng: random.Random, depth: int = 0, indent: int = 0) -> list[str]:
    """Lines of a random block collection (sometimes with an odd indentation or a stray line)."""
    pad = " " * indent
    lines: list[str] = []
    if rng.random() < 0.35 and depth > 0:
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.4 and depth < 3:
                inner = document(rng, depth + 1, indent + 2)
                first = inner[0].lstrip(" ")
                if first.startswith("- "):
                    lines.append(f"{pad}-")
                    lines.extend(inner)
                else:
                    lines.append(f"{pad}- {first}")
                    lines.extend(inner[1:])
            else:
                lines.append(f"{pad}- {word(rng)}")
        return lines
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(KEYS) if rng.random() < 0.3 else rng.choice(KEYS[:7])
        if rng.random() < 0.4 and depth < 3:
            lines.append(f"{pad}{key}:")
            step = rng.choice([2, 2, 4, 0]) if depth < 3 else 2
            lines.extend(document(rng, depth + 1, indent + step))
        elif rng.random() < 0.1:
            lines.append(f"{pad}{key}:")
        else:
            lines.append(f"{pad}{key}: {word(rng)}")
        if rng.random() < 0.1:
            lines.append(rng.choice(["", "# a comment", f"{pad}  # indented comment", "   "]))
        if rng.random() < 0.03:
            lines.append(f"{pad} {rng.choice(KEYS)}: odd")
    return lines


def test_every_generated_document_the_subset_reads_is_read_as_pyyaml_reads_it() -> None:
    rng = random.Random(20261202)
    read = deferred = 0
    for _ in range(6000):
        text = "\n".join(document(rng)) + rng.choice(["\n", "", "\r\n"])
        try:
            ours = load_subset(text)
        except _NotSubset:
            deferred += 1
            continue
        read += 1
        theirs = yaml.safe_load(text)
        assert same(ours, theirs), text
    assert read > 1500 and deferred > 1500  # both paths were exercised


@pytest.mark.parametrize(
    "text",
    [
        fake_models_yml("http://127.0.0.1:8123", api="anthropic-messages").split("      - id: fake-reasoner")[
            0
        ],
        (  # the bench's models.yml (bench/agents.py)
            "providers:\n  fake:\n    baseUrl: http://127.0.0.1:8123/v1\n    apiKey: k\n"
            "    api: openai-completions\n    models:\n      - id: fake-model\n"
            "        contextWindow: 10000000\n        maxTokens: 4096\n        reasoning: false\n"
        ),
        "defaultModel: fake/fake-model\ncompaction:\n  enabled: true\n  reserveTokens: 16384\n",
        "# only a comment\n\n",
        "list:\n- a\n- b: 1\n  c: 'x y'\n-   d: \"z\"\n",
    ],
)
def test_common_config_files_are_read_without_pyyaml_and_as_pyyaml_reads_them(text: str) -> None:
    assert same(load_subset(text), yaml.safe_load(text))


def test_a_document_outside_the_subset_is_pyyamls_and_so_are_its_errors() -> None:
    text = "a: [1, 2.5]\nb: &x {c: 2001-12-14}\nd: *x\n"
    assert same(safe_load(text), yaml.safe_load(text))
    with pytest.raises(yaml.YAMLError):
        safe_load("a: [unclosed\n")
    with pytest.raises(yaml.YAMLError):
        safe_load("a: b\n c: d\n")  # an odd indentation the subset defers


def test_reading_a_models_file_of_the_subset_imports_no_pyyaml() -> None:
    program = (
        "import sys\nfrom xcsh.coding.yaml_subset import safe_load\n"
        "assert safe_load('providers:\\n  fake:\\n    api: x\\n') == {'providers': {'fake': {'api': 'x'}}}\n"
        "print('yaml' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["False"]
