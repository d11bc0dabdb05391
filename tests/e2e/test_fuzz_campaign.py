"""A short seeded run of the RPC fuzzer (scripts/fuzz_rpc.py) in CI.

Each seed drives one real ``xcsh --mode rpc`` process with the same sequence of commands,
junk lines, races, dialogs, host-tool results and scripted model replies (held, cut, garbage,
HTTP errors) every time, on the wire the seed picks (chat, Anthropic, Responses). The run's
report must list no problem: the process stayed alive and answered every barrier, every stdout
line was a frame matching the protocol schema, every command was answered once (with
``--protocol-fixes``, every id), each model request was a valid conversation, events were
balanced, no accepted prompt was lost, no traceback reached stderr, the exit at EOF was clean
and every session file parses with unique ids and earlier parents. The nine defects of the
earlier rounds each have their own test (test_fuzz_regressions.py and the files named in
docs/testing.md); this catches regressions of the invariants they broke.

Seeds were chosen to cover the three wires, a stdin that ends mid-run and the protocol fixes,
and to take a few seconds each. Everything the process writes stays under the run's tmp dir
(home, caches and temporary files included). Longer campaigns: docs/testing.md.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"

# (seed, steps, --protocol-fixes); seed % 3 picks the wire: 0 chat, 1 Anthropic, 2 Responses
# (seed 4 became 7: since an abort also stops the prompts written before it, seed 4's prompts all
# end before their runs and it no longer reaches the model)
CAMPAIGN = [(3, 40, False), (7, 40, False), (5, 40, False), (12, 40, True)]


def _fuzzer() -> ModuleType:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module("fuzz_rpc")


@pytest.mark.parametrize(("seed", "steps", "fixes"), CAMPAIGN, ids=[f"seed{c[0]}" for c in CAMPAIGN])
def test_a_short_seeded_fuzz_campaign_finds_no_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, steps: int, fixes: bool
) -> None:
    fuzz_rpc = _fuzzer()
    monkeypatch.setattr(fuzz_rpc, "FIXES", fixes)
    root = tmp_path / "run"
    root.mkdir()
    report = fuzz_rpc.run(seed, steps, root)
    assert report["problems"] == [], report
    assert report["requests"] > 0 and report["frames"] > report["commands"] // 2  # it did run
