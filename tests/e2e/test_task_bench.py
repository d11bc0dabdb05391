"""The task benchmark's harness: its checks judge outcomes, and its command measures a model.

The model here is the fake LLM server; the real embedded model is only ever benchmarked.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import Workspace
from xcsh.testing import script
from xcsh.testing.fake_llm import FakeLLM

BENCH = Path(__file__).resolve().parents[2] / "bench"
TASKS = sorted(p.name for p in (BENCH / "tasks").iterdir() if (p / "task.json").is_file())
RUN_TIMEOUT_S = 120


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("task_bench", BENCH / "task_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["task_bench"] = module
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_has_at_least_twelve_tasks_of_every_kind_the_issue_names() -> None:
    bench = load_bench()
    kinds = {task.kind for task in bench.load_tasks(None)}
    assert len(TASKS) >= 12
    assert kinds == {"bugfix", "feature", "config", "refactor", "question", "repair"}


@pytest.mark.parametrize("name", TASKS)
def test_a_task_check_fails_on_the_untouched_repo_and_passes_on_the_reference_solution(
    name: str, tmp_path: Path
) -> None:
    bench = load_bench()
    task = next(t for t in bench.load_tasks([name]))
    untouched = tmp_path / "a" / "repo"
    shutil.copytree(task.folder / "repo", untouched)
    assert bench.check(task, untouched, "I could not find it.")[0] is False
    solved = tmp_path / "b" / "repo"
    shutil.copytree(task.folder / "repo", solved)
    if (task.folder / "solution").is_dir():
        shutil.copytree(task.folder / "solution", solved, dirs_exist_ok=True)
    answer_file = task.folder / "solution.answer"
    answer = answer_file.read_text(encoding="utf-8") if answer_file.exists() else "Done."
    passed, output = bench.check(task, solved, answer)
    assert passed, output


def test_the_benchmark_command_reports_pass_rate_time_and_tokens_per_task(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    settings = (BENCH / "tasks" / "config-constant" / "solution" / "settings.py").read_text(encoding="utf-8")
    fake_llm.script(
        # repetition 1: the model rewrites the file and answers
        script.tool_calls(("c1", "write", {"path": "settings.py", "content": settings}), usage=(300, 40)),
        script.text("MAX_RETRIES is now 5.", usage=(350, 10)),
        # repetition 2: it claims success without changing anything
        script.text("Done, MAX_RETRIES is 5.", usage=(200, 8)),
    )
    out = tmp_path / "result.json"
    command = [
        sys.executable,
        str(BENCH / "task_bench.py"),
        "--model",
        "fake/fake-model",
        "--tasks",
        "config-constant",
        "--reps",
        "2",
        "--out",
        str(out),
    ]
    done = subprocess.run(
        command, env=workspace.env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "pass rate 50.0%" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["model"] == "fake/fake-model" and report["reps"] == 2
    assert report["summary"]["passed"] == 1 and report["summary"]["runs"] == 2
    first, second = report["runs"]
    assert (first["passed"], first["tokens"], first["tool_calls"], first["turns"]) == (
        True,
        700,
        ["write"],
        2,
    )
    assert first["cached_tokens"] == 0  # the fake server reports no prompt cache
    assert first["transcript"][0].startswith('call write {"path": "settings.py"')
    assert first["transcript"][1:] == [
        f"result write: Successfully wrote {len(settings)} bytes to settings.py",
        "text MAX_RETRIES is now 5.",
    ]
    assert (second["passed"], second["tokens"], second["tool_calls"]) == (False, 208, [])
    assert "settings: 2" in second["check_output"]
    row = report["summary"]["tasks"]["config-constant"]
    assert row["passed"] == 1 and row["runs"] == 2 and row["median_tokens"] == 454
    assert row["median_seconds"] is not None and report["machine"]["cpus"] >= 1
