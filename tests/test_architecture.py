"""The project's structure: no import cycles, only the session core changes session or agent state,
and no module grows past the size that asks for a split."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "xcsh"

# ---------------------------------------------------------------------------- import cycles


def _module_names(root: Path) -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports anywhere (top level, functions, TYPE_CHECKING)."""
    modules = _module_names(root)
    package = root.name

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(resolve(a.name) for a in node.names if a.name.split(".")[0] == package)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != package:
                    continue
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.add(full if full in modules else resolve(node.module))
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_of_the_package_takes_part_in_an_import_cycle() -> None:
    assert _cycles(_import_graph(SRC)) == []


def test_cycle_check_sees_type_checking_and_function_level_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "xcsh"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from xcsh.core.b import B\n"
    )
    (pkg / "core" / "b.py").write_text("def f():\n    from xcsh.core import c\n")
    (pkg / "core" / "c.py").write_text("import xcsh.core.a\n")
    (pkg / "core" / "d.py").write_text("from xcsh.core.a import A\n")
    assert _cycles(_import_graph(pkg)) == [["xcsh.core.a", "xcsh.core.b", "xcsh.core.c"]]


# ---------------------------------------------------------------------------- state ownership

# The session core: the only modules that may change session or agent state — the session
# and the collaborators it owns (features are never listed here).
CORE = {
    "coding/session.py",
    "coding/session_context.py",
    "coding/session_models.py",
    "coding/session_queues.py",
    "coding/session_runs.py",
    "coding/session_switching.py",
    "coding/session_tools.py",
}
# the layers that can reach a session or an agent at all (tests/test_layers.py keeps the
# others — ai, testing, rpc, conformance — from importing them)
SCANNED_LAYERS = {"coding", "modes", "cli"}
# names through which code reaches a session or an agent
OWNER_NAMES = {"session", "_session", "agent", "_agent"}
MUTATORS = {
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "clear",
    "update",
    "setdefault",
    "popitem",
    "sort",
    "reverse",
    "add",
    "discard",
}
# registration seams: features add callbacks to the session's hook lists
SEAMS = {"hooks"}


def _chain(node: ast.expr) -> list[str]:
    """``a.b.c[0].d`` → ``["a", "b", "c", "d"]`` (names and attributes, outermost last)."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript | ast.Call):
            node = node.value if isinstance(node, ast.Subscript) else node.func
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        else:
            break
    return parts[::-1]


def _reaches_owner(chain: list[str]) -> bool:
    """True when the chain goes through a session/agent object and not into a registration seam."""
    for position, name in enumerate(chain):
        if name in OWNER_NAMES:
            rest = chain[position + 1 :]
            return not (rest and rest[0] in SEAMS)
    return False


def _state_writes(path: Path, rel: str) -> list[str]:
    problems: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:
            if isinstance(target, ast.Attribute | ast.Subscript):
                owner = target.value
                if _reaches_owner(_chain(owner)):
                    problems.append(f"{rel}:{node.lineno}: assigns {ast.unparse(target)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and _reaches_owner(_chain(node.func.value))
        ):
            problems.append(f"{rel}:{node.lineno}: mutates {ast.unparse(node.func)}")
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and _chain(node.value)[-1:] in ([n] for n in OWNER_NAMES)
        ):
            problems.append(f"{rel}:{node.lineno}: reads private {ast.unparse(node)}")
    return sorted(problems, key=lambda p: (p.split(":")[0], int(p.split(":")[1])))


def _outside_core_writes(root: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in CORE or rel.split("/")[0] not in SCANNED_LAYERS:
            continue
        problems.extend(_state_writes(path, rel))
    return problems


def test_no_module_outside_the_session_core_changes_session_or_agent_state() -> None:
    assert _outside_core_writes(SRC) == []


def test_state_scan_reports_assignments_mutations_and_private_access(tmp_path: Path) -> None:
    (tmp_path / "coding").mkdir()
    (tmp_path / "coding" / "session.py").write_text("def f(session):\n    session.agent.model = 1\n")
    (tmp_path / "coding" / "feature.py").write_text(
        "class F:\n"
        "    def __init__(self, session):\n"
        "        self._session = session\n"
        "        session.hooks.commands.append(self)\n"
        "    def run(self):\n"
        "        self._session.store = None\n"
        "        self._session.messages.append(1)\n"
        "        del self._session.agent.messages[1:]\n"
        "        self._session._busy\n"
    )
    (tmp_path / "modes").mkdir()
    (tmp_path / "modes" / "rpc.py").write_text(
        "def h(server):\n    server.session.agent.steering.mode = 'all'\n"
    )
    assert _outside_core_writes(tmp_path) == [
        "coding/feature.py:6: assigns self._session.store",
        "coding/feature.py:7: mutates self._session.messages.append",
        "coding/feature.py:8: assigns self._session.agent.messages[1:]",
        "coding/feature.py:9: reads private self._session._busy",
        "modes/rpc.py:2: assigns server.session.agent.steering.mode",
    ]


# ---------------------------------------------------------------------------- module size

# A module past this many lines does more than one thing and is split along a real seam
# (HELPERS/style: small modules that each do one thing). Tests count too: a test module is
# read and changed as often as the code it covers, and the long ones were scenario files
# holding several behaviours at once.
MAX_LINES = 500
# every Python module of the project; bench/tasks holds the benchmark's task repositories
# (the code the agent under test is asked to fix), which are data, not modules of ours
SIZED = ("src", "tests", "bench", "scripts", "examples")
NOT_SIZED = ("bench/tasks/",)


def _oversized(root: Path, limit: int = MAX_LINES) -> list[str]:
    found: list[str] = []
    for folder in SIZED:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(NOT_SIZED):
                continue
            with path.open("rb") as handle:
                count = sum(1 for _ in handle)
            if count > limit:
                found.append(f"{rel}: {count} lines")
    return found


def test_no_module_of_the_project_is_longer_than_the_split_size() -> None:
    assert _oversized(ROOT) == []


def test_size_check_counts_source_test_and_script_modules_but_not_task_repositories(tmp_path: Path) -> None:
    long = "x = 1\n" * 6
    for rel in (
        "src/xcsh/a.py",
        "tests/e2e/test_b.py",
        "scripts/c.py",
        "bench/tasks/t/repo/d.py",
        "docs/e.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(long)
    (tmp_path / "src" / "xcsh" / "short.py").write_text("x = 1\n" * 5)
    assert _oversized(tmp_path, limit=5) == [
        "src/xcsh/a.py: 6 lines",
        "tests/e2e/test_b.py: 6 lines",
        "scripts/c.py: 6 lines",
    ]
