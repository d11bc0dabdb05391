"""The search engines the find/grep tool tests run on: ripgrep (when installed) and the pure-Python walk.

Import as ``coding.tools.engines`` and bind the fixture with ``use_ripgrep = engines.use_ripgrep``.
"""

from __future__ import annotations

import pytest

from xcsh.coding.tools.find import find_ripgrep

ENGINES = [
    pytest.param(
        True, id="ripgrep", marks=pytest.mark.skipif(find_ripgrep() is None, reason="rg not installed")
    ),
    pytest.param(False, id="python"),
]


@pytest.fixture(params=ENGINES)
def use_ripgrep(request: pytest.FixtureRequest) -> bool:
    """Each test once per engine: True for ripgrep, False for the Python fallback."""
    return bool(request.param)
