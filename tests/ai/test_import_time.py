"""Importing the ai layer must not pull in any provider SDK or HTTP stack (they load on first call)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("anthropic", "openai", "google.genai", "httpx", "httpx2")


def imported_modules(statement: str) -> set[str]:
    """Module names ``python -X importtime`` reports while running ``statement``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    names: set[str] = set()
    for line in done.stderr.splitlines():
        # "import time:      self [us] | cumulative | imported package"
        if not line.startswith("import time:"):
            continue
        name = line.rsplit("|", 1)[-1].strip()
        if name and name != "imported package":
            names.add(name)
    return names


def heavy_among(names: set[str]) -> list[str]:
    return sorted(n for n in names for heavy in HEAVY if n == heavy or n.startswith(heavy + "."))


def test_importtime_output_is_parsed_into_module_names() -> None:
    names = imported_modules("import json, httpx2")
    assert "json" in names
    assert "httpx2" in heavy_among(names)
    assert heavy_among({"httpx", "httpx._client", "openai_like", "google.genai.types"}) == [
        "google.genai.types",
        "httpx",
        "httpx._client",
    ]


@pytest.mark.parametrize(
    "module",
    [
        "xcsh.ai",
        "xcsh.ai.registry",
        "xcsh.ai.clients",
        "xcsh.ai.errors",
        "xcsh.ai.providers.anthropic_messages",
        "xcsh.ai.providers.openai_completions",
        "xcsh.ai.providers.openai_responses",
        "xcsh.ai.transport",
    ],
)
def test_importing_the_ai_layer_loads_no_provider_sdk(module: str) -> None:
    names = imported_modules(f"import {module}")
    assert module in names
    assert heavy_among(names) == []
