"""The package's layers import only downwards: ai → agent → coding → modes → cli."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "xcsh"

# layer → the xcsh packages it may import
ALLOWED: dict[str, set[str]] = {
    "ai": {"ai"},
    "agent": {"ai", "agent"},
    "coding": {"ai", "agent", "coding"},
    "modes": {"ai", "agent", "coding", "modes", "rpc"},
    "cli": {"ai", "agent", "coding", "modes", "rpc", "cli", "conformance"},
    "testing": {"ai", "testing"},
    # the conformance kit drives agents as black boxes: fake server, framing, nothing else
    "conformance": {"ai", "testing", "rpc", "conformance"},
}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [n for n in names if n == "xcsh" or n.startswith("xcsh.")]


def _violations(root: Path = SRC) -> list[str]:
    problems: list[str] = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if len(rel.parts) < 2:
            continue
        layer = rel.parts[0]
        for name in _imports(path):
            parts = name.split(".")
            if len(parts) < 2 or name == "xcsh.version":  # the package root and its version leaf
                continue
            target = parts[1]
            if layer == "rpc":
                # the client sits beside the layers and may only import wire types
                # (ai/events.py is the assistant-event wire types; it imports only ai/types.py)
                ok = target == "rpc" or (parts[-1] == "types") or name in {"xcsh", "xcsh.ai.events"}
                if target == "rpc" or ok:
                    continue
                problems.append(f"{rel}: rpc imports non-type module {name}")
                continue
            allowed = ALLOWED.get(layer)
            if allowed is not None and target not in allowed and target != "__init__":
                problems.append(f"{rel}: layer '{layer}' imports upward/sideways from {name}")
    return problems


def test_no_module_imports_a_higher_layer() -> None:
    assert _violations() == []


def test_checker_reports_upward_imports_and_rpc_imports_of_behaviour(tmp_path: Path) -> None:
    (tmp_path / "ai").mkdir()
    (tmp_path / "ai" / "ok.py").write_text("from xcsh.ai.types import Model\n")
    (tmp_path / "ai" / "bad.py").write_text("def f():\n    from xcsh.coding.session import AgentSession\n")
    (tmp_path / "rpc").mkdir()
    (tmp_path / "rpc" / "client.py").write_text("import xcsh.agent.loop\nfrom xcsh.ai.types import Model\n")
    assert sorted(_violations(tmp_path)) == [
        "ai/bad.py: layer 'ai' imports upward/sideways from xcsh.coding.session",
        "rpc/client.py: rpc imports non-type module xcsh.agent.loop",
    ]
