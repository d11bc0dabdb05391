"""Run scenarios against an agent command and build the report (text for people, JSON for CI).

For every scenario a fresh temporary workspace is made: ``agent/models.yml`` points the
provider ``fake`` at a fresh fake LLM server, ``PI_CODING_AGENT_DIR`` names that
directory, provider key variables are removed, and the agent runs in ``proj/`` with
``<agent-cmd> --model fake/fake-model --no-tools --no-session``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xcsh.conformance.driver import AgentProcess, Difference, ScenarioAborted, ScenarioContext
from xcsh.conformance.scenarios import SCENARIOS, Scenario
from xcsh.testing.fake_llm import FakeLLM

BASE_ARGS = ("--model", "fake/fake-model", "--no-tools", "--no-session")
PROVIDER_KEY_VARS = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "CEREBRAS_API_KEY",
    "PI_RPC_EMIT_TITLE",
)


def models_yml(base_url: str) -> str:
    """The models file of scenarios.md §0.1, pointing at the fake server."""
    return f"""providers:
  fake:
    baseUrl: {base_url}/v1
    apiKey: test-key
    api: openai-completions
    models:
      - id: fake-model
        reasoning: false
        contextWindow: 128000
        maxTokens: 4096
      - id: fake-reasoner
        reasoning: true
        thinking: {{ minLevel: minimal, maxLevel: high, mode: effort }}
        contextWindow: 128000
        maxTokens: 4096
"""


@dataclass(slots=True)
class ScenarioResult:
    name: str
    summary: str
    passed: bool
    differences: list[Difference] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    noise: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "summary": self.summary,
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "differences": [d.as_json() for d in self.differences],
        }
        if self.error:
            out["error"] = self.error
        if self.noise:
            out["nonFrameLines"] = self.noise[:20]
        return out


@dataclass(slots=True)
class Report:
    agent_cmd: str
    results: list[ScenarioResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def as_json(self) -> dict[str, Any]:
        return {
            "agentCmd": self.agent_cmd,
            "passed": self.passed,
            "counts": {
                "passed": sum(r.passed for r in self.results),
                "failed": sum(not r.passed for r in self.results),
            },
            "scenarios": [r.as_json() for r in self.results],
        }


def select(names: Sequence[str] = ()) -> list[Scenario]:
    """The scenarios named (all when empty); unknown names raise ``KeyError``."""
    if not names:
        return list(SCENARIOS)
    by_name = {s.name: s for s in SCENARIOS}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise KeyError(", ".join(missing))
    return [by_name[n] for n in names]


def agent_env(agent_dir: Path, base: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in PROVIDER_KEY_VARS}
    env["PI_CODING_AGENT_DIR"] = str(agent_dir)
    env["XCSH_DISABLED_PROVIDERS"] = "local"
    env["PYTHONUNBUFFERED"] = "1"
    return env


async def run_scenario(
    scenario: Scenario, agent_cmd: Sequence[str], *, timeout: float, env: Mapping[str, str]
) -> ScenarioResult:
    """Run one scenario in a fresh workspace with a fresh fake LLM server."""
    started = time.monotonic()
    result = ScenarioResult(scenario.name, scenario.summary, passed=False)
    with tempfile.TemporaryDirectory(prefix="xcsh-conformance-") as tmp, FakeLLM() as llm:
        root = Path(tmp)
        agent_dir, proj = root / "agent", root / "proj"
        agent_dir.mkdir()
        proj.mkdir()
        (agent_dir / "models.yml").write_text(models_yml(llm.base_url))
        argv = [*agent_cmd, *BASE_ARGS, *scenario.args]
        try:
            agent = await AgentProcess.start(argv, cwd=str(proj), env=agent_env(agent_dir, env))
        except OSError as exc:
            result.error = f"cannot start {shlex.join(argv)}: {exc}"
            result.seconds = time.monotonic() - started
            return result
        ctx = ScenarioContext(agent, llm, timeout)
        try:
            await scenario.run(ctx)
        except ScenarioAborted as exc:
            result.error = str(exc)
        finally:
            await agent.close()
        if llm.problems:
            result.error = "; ".join([*([result.error] if result.error else []), *llm.problems])
        result.differences = ctx.differences
        result.noise = agent.noise
        result.passed = result.error is None and not ctx.differences and not agent.noise
        if agent.noise and result.error is None:
            result.error = "the agent wrote lines on stdout that are not JSON objects"
    result.seconds = time.monotonic() - started
    return result


async def run_all(
    agent_cmd: str,
    *,
    names: Sequence[str] = (),
    timeout: float = 15.0,
    env: Mapping[str, str] | None = None,
    jobs: int = 2,
) -> Report:
    """Run the selected scenarios against ``agent_cmd`` (a shell-style command), ``jobs`` at a
    time (each has its own workspace and fake server); results keep the scenarios' order."""
    argv = shlex.split(agent_cmd)
    base = dict(os.environ) if env is None else dict(env)
    limit = asyncio.Semaphore(max(1, jobs))

    async def one(scenario: Scenario) -> ScenarioResult:
        async with limit:
            return await run_scenario(scenario, argv, timeout=timeout, env=base)

    results = await asyncio.gather(*(one(s) for s in select(names)))
    return Report(agent_cmd, list(results))


def format_report(report: Report) -> str:
    """One line per scenario; under a failure, the frames that differed (expected, then actual)."""
    import json

    lines = []
    for r in report.results:
        mark = "PASS" if r.passed else "FAIL"
        lines.append(f"{mark}  {r.name:<28} {r.summary} ({r.seconds:.2f}s)")
        if r.error:
            lines.append(f"      error: {r.error}")
        for d in r.differences:
            lines.append(f"      at {d.step}")
            lines.append(f"        expected: {json.dumps(d.as_json()['expected'], ensure_ascii=False)}")
            lines.append(f"        actual:   {json.dumps(d.actual, ensure_ascii=False)}")
    counts = report.as_json()["counts"]
    lines.append(f"{counts['passed']} passed, {counts['failed']} failed")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    """``xcsh conformance``: exit 0 when every scenario passed, 1 otherwise, 2 on bad usage."""
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(
        prog="xcsh conformance",
        description="Run black-box RPC protocol scenarios against an agent, on the shipped fake LLM server.",
    )
    parser.add_argument("--agent-cmd", required=True, help='the agent command, e.g. "xcsh --mode rpc"')
    parser.add_argument("--scenario", action="append", default=[], help="run only this scenario (repeatable)")
    parser.add_argument("--report", help="write the JSON report to this file ('-' for stdout)")
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for each expected frame")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios run at the same time (default 2)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = parser.parse_args(list(argv))
    if args.list:
        for s in SCENARIOS:
            sys.stdout.write(f"{s.name:<28} {s.summary}\n")
        return 0
    try:
        select(args.scenario)
    except KeyError as exc:
        sys.stderr.write(f"unknown scenario(s): {exc.args[0]}\n")
        return 2
    report = asyncio.run(run_all(args.agent_cmd, names=args.scenario, timeout=args.timeout, jobs=args.jobs))
    data = json.dumps(report.as_json(), indent=2, ensure_ascii=False)
    if args.report == "-":
        sys.stdout.write(data + "\n")
    else:
        sys.stdout.write(format_report(report))
        if args.report:
            Path(args.report).write_text(data + "\n", encoding="utf-8")
    return 0 if report.passed else 1
