"""The task benchmark: can an agent model finish small, real coding tasks?

Each task in ``bench/tasks/<name>/`` is a tiny repository (``repo/``), a prompt
(``task.json``) and a check (``check.py``, run in the work dir after the agent has
finished; exit 0 = pass). Question tasks are checked on the agent's final answer, which
the check reads from the file named by ``XCSH_BENCH_ANSWER``. Hidden files the check
needs (pristine copies of tests) stay in the task folder, outside the agent's reach.

For every task and repetition the repository is copied to a fresh temporary directory,
``xcsh --mode rpc --no-session [--model M]`` is started there through the project's RPC
client, the prompt is sent, and the run is awaited (bounded by ``--timeout``). The wall
time includes starting the agent (and, for the embedded model, loading it), as a user
would see it. Tokens are the sum of input and output tokens over the run's assistant
messages; ``cached_tokens`` is the part of the input the server's prompt cache served.

    python bench/task_bench.py                              # default model, 1 repetition
    python bench/task_bench.py --model local/qwen2.5-coder-1.5b-instruct --reps 3
    python bench/task_bench.py --tasks fix-two-bugs,config-json --out /tmp/r.json

Needs only the package (the README's first command's environment): no dev tools.
Prints a table (pass rate, median time and tokens per task) and writes JSON
(default ``bench/results/tasks.json``). Never asserts: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xcsh.rpc.client import RpcClient

HERE = Path(__file__).resolve().parent
TASKS_DIR = HERE / "tasks"
CHECK_TIMEOUT_S = 60


@dataclass(slots=True)
class Task:
    name: str
    kind: str
    prompt: str
    folder: Path


@dataclass(slots=True)
class Run:
    task: str
    rep: int
    passed: bool
    seconds: float
    tokens: int
    input_tokens: int
    output_tokens: int
    turns: int
    cached_tokens: int = 0
    tool_calls: list[str] = field(default_factory=list)
    tool_errors: int = 0
    stop_reason: str | None = None
    error: str | None = None
    answer: str = ""
    check_output: str = ""
    transcript: list[str] = field(default_factory=list)


def load_tasks(selected: list[str] | None) -> list[Task]:
    tasks = []
    for folder in sorted(p for p in TASKS_DIR.iterdir() if (p / "task.json").is_file()):
        if selected and folder.name not in selected:
            continue
        meta = json.loads((folder / "task.json").read_text(encoding="utf-8"))
        tasks.append(Task(folder.name, meta["kind"], meta["prompt"], folder))
    unknown = set(selected or []) - {t.name for t in tasks}
    if unknown:
        raise SystemExit(f"unknown task(s): {', '.join(sorted(unknown))}")
    return tasks


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message.get("content", []) if b.get("type") == "text")


async def run_agent(task: Task, workdir: Path, args: list[str], timeout: float) -> dict[str, Any]:
    """Run the task's prompt in ``workdir``; returns the messages the run produced (even if cut short)."""
    started = time.monotonic()
    out: dict[str, Any] = {"messages": [], "error": None}
    client: RpcClient | None = None
    try:
        async with asyncio.timeout(timeout + 60):  # bounds start-up and shutdown too
            async with RpcClient.spawn(
                args=args, cwd=workdir, timeout=timeout, stderr=subprocess.DEVNULL
            ) as client:
                await client.prompt_and_wait(task.prompt, timeout=timeout)
    except TimeoutError:
        out["error"] = f"timed out after {timeout:.0f}s"
    except Exception as exc:  # the benchmark records the failure and goes on
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = time.monotonic() - started
    if client is not None:
        # every finished message, whether or not the run reached agent_end
        out["messages"] = [
            f["message"]
            for f in client.frames
            if f.get("type") == "message_end" and f["message"].get("role") in ("assistant", "toolResult")
        ]
    return out


def transcript(messages: list[dict[str, Any]], limit: int = 600) -> list[str]:
    """One short line per tool call, tool result and answer: what to read when a run fails."""
    lines = []
    for m in messages:
        if m.get("role") == "assistant":
            for b in m.get("content", []):
                if b.get("type") == "toolCall":
                    lines.append(f"call {b['name']} {json.dumps(b.get('arguments'))[:limit]}")
                elif b.get("type") == "text" and b.get("text"):
                    lines.append(f"text {b['text'][:limit]}")
        else:
            status = "error" if m.get("isError") else "result"
            lines.append(f"{status} {m.get('toolName')}: {_text(m)[:limit]}")
    return lines


def check(task: Task, workdir: Path, answer: str) -> tuple[bool, str]:
    answer_file = workdir.parent / "answer.txt"
    answer_file.write_text(answer, encoding="utf-8")
    env = {**os.environ, "XCSH_BENCH_ANSWER": str(answer_file)}
    try:
        done = subprocess.run(
            [sys.executable, str(task.folder / "check.py")],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return False, "check timed out"
    return done.returncode == 0, (done.stdout + done.stderr).strip()[-600:]


async def run_once(task: Task, rep: int, args: list[str], timeout: float) -> Run:
    with tempfile.TemporaryDirectory(prefix=f"xcsh-bench-{task.name}-") as tmp:
        workdir = Path(tmp) / "repo"
        shutil.copytree(task.folder / "repo", workdir)
        result = await run_agent(task, workdir, args, timeout)
        messages = result["messages"]
        assistants = [m for m in messages if m.get("role") == "assistant"]
        answer = _text(assistants[-1]) if assistants else ""
        passed, check_output = check(task, workdir, answer)
    usage = [m.get("usage") or {} for m in assistants]
    input_tokens = sum(int(u.get("input", 0)) + int(u.get("cacheRead", 0)) for u in usage)
    output_tokens = sum(int(u.get("output", 0)) for u in usage)
    cached_tokens = sum(int(u.get("cacheRead", 0)) for u in usage)
    calls = [b["name"] for m in assistants for b in m.get("content", []) if b.get("type") == "toolCall"]
    errors = sum(1 for m in messages if m.get("role") == "toolResult" and m.get("isError"))
    return Run(
        task=task.name,
        rep=rep,
        passed=passed,
        seconds=round(result["seconds"], 2),
        tokens=input_tokens + output_tokens,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        turns=len(assistants),
        cached_tokens=cached_tokens,
        tool_calls=calls,
        tool_errors=errors,
        stop_reason=assistants[-1].get("stopReason") if assistants else None,
        error=result["error"] or (assistants[-1].get("errorMessage") if assistants else None),
        answer=answer[-400:],
        check_output=check_output,
        transcript=transcript(messages),
    )


def summarize(tasks: list[Task], runs: list[Run]) -> dict[str, Any]:
    per_task = {}
    for task in tasks:
        mine = [r for r in runs if r.task == task.name]
        per_task[task.name] = {
            "kind": task.kind,
            "passed": sum(r.passed for r in mine),
            "runs": len(mine),
            "median_seconds": round(statistics.median(r.seconds for r in mine), 1) if mine else None,
            "median_tokens": int(statistics.median(r.tokens for r in mine)) if mine else None,
        }
    return {
        "pass_rate": round(sum(r.passed for r in runs) / len(runs), 3) if runs else 0.0,
        "passed": sum(r.passed for r in runs),
        "runs": len(runs),
        "median_seconds": round(statistics.median(r.seconds for r in runs), 1) if runs else None,
        "median_tokens": int(statistics.median(r.tokens for r in runs)) if runs else None,
        "tasks": per_task,
    }


def print_table(summary: dict[str, Any], model: str) -> None:
    print(f"\nmodel: {model}")
    print(f"{'task':<22} {'kind':<9} {'pass':>6} {'median s':>9} {'median tokens':>14}")
    for name, row in summary["tasks"].items():
        print(
            f"{name:<22} {row['kind']:<9} {row['passed']:>3}/{row['runs']:<2} "
            f"{row['median_seconds']:>9} {row['median_tokens']:>14}"
        )
    print(
        f"{'all':<22} {'':<9} {summary['passed']:>3}/{summary['runs']:<2} "
        f"{summary['median_seconds']:>9} {summary['median_tokens']:>14}"
    )
    # one decimal: 25/42 is 59.5 %, which must not print as 60 %
    print(f"pass rate {summary['pass_rate'] * 100:.1f}%, median {summary['median_seconds']} s per task")


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="model selector as for xcsh --model (default: xcsh's default model)")
    parser.add_argument("--reps", type=int, default=1, help="repetitions of every task (default 1)")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per task run")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "tasks.json", help="JSON output path")
    parser.add_argument(
        "--label", default="", help="a note stored in the JSON (e.g. which change is measured)"
    )
    parser.add_argument("xcsh_args", nargs="*", help="extra xcsh arguments, after --")
    options = parser.parse_args()
    tasks = load_tasks(options.tasks.split(",") if options.tasks else None)
    args = ["--no-session", *(["--model", options.model] if options.model else []), *options.xcsh_args]
    load_before = os.getloadavg()
    started = time.time()
    runs: list[Run] = []

    def write_report() -> dict[str, Any]:
        # rewritten after every run, so an interrupted benchmark still leaves its results
        summary = summarize(tasks, runs)
        report = {
            "model": options.model or "(default)",
            "label": options.label,
            "xcsh_args": args,
            "reps": options.reps,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "wall_seconds": round(time.time() - started, 1),
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "loadavg_before": [round(x, 2) for x in load_before],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                "local_threads": os.environ.get("XCSH_LOCAL_THREADS") or "default",
            },
            "summary": summary,
            "runs": [asdict(r) for r in runs],
        }
        options.out.parent.mkdir(parents=True, exist_ok=True)
        options.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        return summary

    for rep in range(1, options.reps + 1):
        for task in tasks:
            run = await run_once(task, rep, args, options.timeout)
            runs.append(run)
            status = "pass" if run.passed else "FAIL"
            note = f" ({run.error})" if run.error else ""
            print(
                f"[rep {rep}] {task.name:<22} {status} {run.seconds:6.1f}s {run.tokens:6d} tok "
                f"tools={','.join(run.tool_calls) or '-'}{note}",
                flush=True,
            )
            write_report()
    print_table(write_report(), options.model or "(default)")
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
