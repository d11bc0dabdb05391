"""Benchmark: spawn → first ``get_state`` answer of ``xcsh --mode rpc``, A/B between source trees.

Run as ``python bench/bench_startup.py [--runs N] [TREE ...]`` (default: this checkout). Each TREE
is a directory holding ``src/xcsh`` (a checkout, or ``git archive <rev> src | tar -x -C DIR``);
its xcsh runs through ``PYTHONPATH`` with this interpreter. The trees take turns, N spawns
each, in one agent directory (a fake provider in ``models.yml``, never contacted) with sessions
in a tmp folder. Prints, per tree, the median and minimum of the wall time to the answer and of
the child's CPU (user + system from ``getrusage``, start-up to exit), which a busy machine
disturbs far less than wall time. Bytecode is whatever each tree has: compile it first
(``python -m compileall -q TREE/src/xcsh``) to measure xcsh as installed. Nothing is asserted.
docs/performance.md, profile 19.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODELS_YML = (
    "providers:\n  fake:\n    baseUrl: http://127.0.0.1:9/v1\n    apiKey: k\n    api: openai-completions\n"
    "    models:\n      - id: fake-model\n        contextWindow: 100000\n        maxTokens: 4096\n"
    "        reasoning: false\n"
)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def spawn_once(tree: Path, root: Path) -> tuple[float, float]:
    """(ms to the first answer, ms of the child's CPU) for one spawn of ``tree``'s xcsh."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), PI_CODING_AGENT_DIR=str(root / "agent"))
    env["XCSH_DISABLED_PROVIDERS"] = "local"
    argv = [sys.executable, "-m", "xcsh", "--mode", "rpc", "--model", "fake/fake-model"]
    argv += ["--session-dir", str(root / "sessions")]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root / "project", env=env
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(b'{"type":"get_state","id":"s"}\n')
    child.stdin.flush()
    while True:
        line = child.stdout.readline()
        if not line or line.startswith(b'{"id":"s"'):
            break
    wall = time.perf_counter() - t0
    child.stdin.close()
    child.wait(timeout=30)
    if not line:
        raise RuntimeError(f"{tree}: no answer (exit code {child.returncode})")
    return wall * 1000, (_children_cpu() - cpu0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", default=[str(Path(__file__).resolve().parents[1])])
    parser.add_argument("--runs", type=int, default=10)
    options = parser.parse_args()
    trees = [Path(t).resolve() for t in options.trees]
    root = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    for name in ("agent", "project", "sessions"):
        (root / name).mkdir()
    (root / "agent" / "models.yml").write_text(MODELS_YML)
    figures: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    for _ in range(options.runs):
        for tree in trees:
            figures[tree].append(spawn_once(tree, root))
    for tree, runs in figures.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"{tree}: answer {statistics.median(walls):.1f} ms median (min {min(walls):.1f}), "
            f"CPU {statistics.median(cpus):.1f} ms median (min {min(cpus):.1f}), {len(runs)} runs"
        )


if __name__ == "__main__":
    main()
