"""Benchmark: where the instructions of spawn → first ``get_state`` answer go, counted by valgrind.

Run as ``python bench/startup_instructions.py [TREE ...]`` (default: this checkout; a TREE holds
``src/xcsh``, e.g. ``git archive <rev> src | tar -x -C DIR``). Needs ``valgrind`` on the PATH.
Each figure is the instruction count of one process (``valgrind --tool=cachegrind
--cache-sim=no``, ``PYTHONHASHSEED=0``: deterministic to ~0.01 %, unlike wall or CPU time on a
shared machine), in one agent dir with the bench's ``models.yml`` and a warm YAML cache:

- ``interpreter``: ``python -c pass``;
- ``floor``: ``bench/floor_agent.py`` answering one ``get_state``, to its exit;
- ``stdlib + msgspec``: importing what any asyncio + msgspec agent started with ``-m`` imports;
- per tree, xcsh run by this file as a wrapper that leaves (``os._exit``) at a phase:
  ``imports`` (``create_session`` is called: every module-level import done, flags parsed, the
  loop running), ``session`` (``create_session`` returned), ``answer`` (the answer's frame
  written), then the whole run to ``exit`` (``python -m xcsh``, stdin closed after the command)
  and a ``first start`` in a fresh agent dir (to the answer: cold YAML cache, so PyYAML runs).

The wrapper (:data:`WRAPPER`, run with ``python -c``; it pauses the collector as the entry point
does, then imports ``xcsh.coding.factory`` before the flags are parsed, which ``python -m xcsh``
does a little later) replaces
``create_session`` and ``os.write`` in the measured process only, to know when a phase is reached. Bytecode is whatever each tree has: compile it
first (``python -m compileall -q TREE/src/xcsh``). Nothing is asserted. docs/performance.md,
"Seventh session: start-up".
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS_YML = (
    "providers:\n  fake:\n    baseUrl: http://127.0.0.1:9/v1\n    apiKey: k\n    api: openai-completions\n"
    "    models:\n      - id: fake-model\n        contextWindow: 10000000\n        maxTokens: 4096\n"
    "        reasoning: false\n"
)
GET_STATE = b'{"type":"get_state","id":"s"}\n'
STDLIB = "import gc; gc.disable(); import asyncio, json, os, sys, pathlib, typing, msgspec, runpy, importlib.util, copy"
PHASES = ("imports", "session", "answer")


# Run with ``python -c`` in the measured process (a small program: the interpreter compiles it on
# every run): runs xcsh with ``sys.argv[2:]`` and leaves when the phase ``sys.argv[1]`` is reached.
WRAPPER = """
import os, runpy, sys
from xcsh.modes.rpc.gc_pause import pause
pause()  # as xcsh.cli.entry does before the CLI's imports
import xcsh.coding.factory as factory
phase, create, write = sys.argv[1], factory.create_session, os.write
def create_session(options):
    if phase == "imports":
        os._exit(0)
    session = create(options)
    if phase == "session":
        os._exit(0)
    return session
def answered(fd, data):
    written = write(fd, data)
    if b'"id":"s"' in bytes(data):
        os._exit(0)
    return written
factory.create_session, os.write = create_session, answered
sys.argv = ["xcsh", *sys.argv[2:]]
runpy.run_module("xcsh", run_name="__main__", alter_sys=True)
"""


def count(argv: list[str], *, cwd: Path, env: dict[str, str]) -> int:
    """Instructions of one run of ``argv`` (under valgrind), the command written to its stdin."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cachegrind.out"
        command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}", *argv]
        done = subprocess.run(command, input=GET_STATE, capture_output=True, cwd=cwd, env=env, timeout=300)
    found = re.search(rb"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no count from valgrind: {done.stderr[-500:]!r}")
    return int(found.group(1).replace(b",", b""))


def workspace(root: Path) -> dict[str, str]:
    for name in ("agent", "project", "sessions"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "agent" / "models.yml").write_text(MODELS_YML)
    env = dict(os.environ, PYTHONHASHSEED="0", PI_CODING_AGENT_DIR=str(root / "agent"))
    env["XCSH_DISABLED_PROVIDERS"] = "local"
    # Under valgrind a start takes seconds: the collector's resume (1 s after the loop starts) and
    # the idle warm-up (50 ms of quiet) would then run before the answer or the exit, which they
    # never do in a start of ~70 ms; keep both out of the counts.
    env["XCSH_GC_RESUME_MS"] = "600000"
    env["XCSH_WARM"] = "0"
    return env


def xcsh_args(root: Path) -> list[str]:
    return ["--mode", "rpc", "--model", "fake/fake-model", "--session-dir", str(root / "sessions")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", default=[str(HERE.parent)])
    options = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    root = Path(tempfile.mkdtemp(prefix="bench-startup-instr-"))
    env = workspace(root)
    rows: list[tuple[str, int]] = []
    try:
        rows.append(
            ("interpreter (python -c pass)", count([sys.executable, "-c", "pass"], cwd=root, env=env))
        )
        floor = [sys.executable, str(HERE / "floor_agent.py")]
        rows.append(("floor agent, to its exit", count(floor, cwd=root / "project", env=env)))
        rows.append(("stdlib + msgspec imports", count([sys.executable, "-c", STDLIB], cwd=root, env=env)))
        for tree in (Path(t).resolve() for t in options.trees):
            tree_env = dict(env, PYTHONPATH=str(tree / "src"))
            subprocess.run(  # the YAML cache warm, as on any start after the first
                [sys.executable, "-m", "xcsh", *xcsh_args(root)],
                input=GET_STATE,
                capture_output=True,
                cwd=root / "project",
                env=tree_env,
                timeout=60,
            )
            for phase in PHASES:
                argv = [sys.executable, "-c", WRAPPER, phase, *xcsh_args(root)]
                rows.append((f"{tree.name}: {phase}", count(argv, cwd=root / "project", env=tree_env)))
            argv = [sys.executable, "-m", "xcsh", *xcsh_args(root)]
            rows.append((f"{tree.name}: exit", count(argv, cwd=root / "project", env=tree_env)))
            fresh = root / "fresh"
            shutil.rmtree(fresh, ignore_errors=True)
            fresh_env = dict(workspace(fresh), PYTHONPATH=str(tree / "src"))
            argv = [sys.executable, "-c", WRAPPER, "answer", *xcsh_args(fresh)]
            rows.append(
                (f"{tree.name}: first start, answer", count(argv, cwd=fresh / "project", env=fresh_env))
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    width = max(len(name) for name, _ in rows)
    for name, instructions in rows:
        print(f"{name:<{width}}  {instructions / 1e6:9.2f} M")


if __name__ == "__main__":
    main()
