"""Drive one agent process for one scenario: send frames, expect frames, record differences.

The agent is a black box: a command line that reads JSON-lines commands on stdin and
writes frames on stdout. Nothing here imports the agent; only the fake LLM server and
the JSONL framing are shared with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xcsh.conformance.match import matches, printable
from xcsh.rpc.jsonl import LineSplitter, OversizedLine, decode_line, encode_frame
from xcsh.rpc.process import close_and_wait
from xcsh.testing.fake_llm import FakeLLM

Frame = dict[str, Any]


class ScenarioAborted(Exception):
    """A step cannot go on (a frame never came); the scenario fails at this point."""


@dataclass(slots=True)
class Difference:
    """One expectation that did not hold: what was expected, and the frame (if any) seen instead."""

    step: str
    expected: Any
    actual: Any

    def as_json(self) -> dict[str, Any]:
        return {"step": self.step, "expected": printable(self.expected), "actual": self.actual}


@dataclass(slots=True)
class AgentProcess:
    """The agent under test, with every frame it wrote (in order) and a read cursor."""

    process: asyncio.subprocess.Process
    frames: list[Frame] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    reader: asyncio.Task[None] | None = None
    ended: bool = False

    @classmethod
    async def start(cls, argv: Sequence[str], *, cwd: str, env: dict[str, str]) -> AgentProcess:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=env,
        )
        agent = cls(process)
        agent.reader = asyncio.ensure_future(agent._read())
        return agent

    async def _read(self) -> None:
        assert self.process.stdout is not None
        splitter = LineSplitter()
        while True:
            chunk = await self.process.stdout.read(1 << 16)
            lines = list(splitter.feed(chunk)) if chunk else list(splitter.finish())
            for line in lines:
                if isinstance(line, OversizedLine):
                    self.noise.append(f"<oversized line of {line.size} bytes>")
                    continue
                text = decode_line(line)
                if text is None:
                    continue
                try:
                    frame = json.loads(text)
                except json.JSONDecodeError:
                    self.noise.append(text)
                    continue
                if isinstance(frame, dict):
                    self.frames.append(frame)
                else:
                    self.noise.append(text)
            self.changed.set()
            if not chunk:
                self.ended = True
                self.changed.set()
                return

    def send(self, frame: Frame | bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame if isinstance(frame, bytes) else encode_frame(frame))

    async def close(self, timeout: float = 5.0) -> int | None:
        """Close stdin and wait for the exit (killing the process if it does not leave)."""
        await close_and_wait(self.process, timeout)
        if self.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.reader, timeout)
        return self.process.returncode

    async def wait_changed(self) -> None:
        self.changed.clear()
        await self.changed.wait()


@dataclass(slots=True)
class ScenarioContext:
    """What a scenario function works with: the agent, the fake LLM and the recorded differences."""

    agent: AgentProcess
    llm: FakeLLM
    timeout: float
    differences: list[Difference] = field(default_factory=list)
    cursor: int = 0

    # ---- sending ------------------------------------------------------------------------
    def send(self, frame: Frame | bytes) -> None:
        self.agent.send(frame)

    async def request(self, frame: Frame, step: str | None = None) -> Frame:
        """Send a command with an id and return its response (taken out of the event stream)."""
        self.send(frame)
        cid = frame["id"]
        found = await self.take(lambda f: f.get("type") == "response" and f.get("id") == cid, step or cid)
        return found

    async def take(self, predicate: Any, step: str) -> Frame:
        """The first not yet consumed frame satisfying ``predicate``, wherever it is; it is consumed."""
        async with self._bounded(step):
            while True:
                for index in range(len(self.agent.frames)):
                    if index not in self.agent.consumed and predicate(self.agent.frames[index]):
                        self.agent.consumed.add(index)
                        return self.agent.frames[index]
                if self.agent.ended:
                    raise ScenarioAborted(f"{step}: the agent's stdout ended")
                await self.agent.wait_changed()

    # ---- expecting ----------------------------------------------------------------------
    async def expect(
        self, step: str, patterns: Sequence[Any], *, skip: Sequence[str] = ("message_update",)
    ) -> list[Frame]:
        """The next frames (in order, ``skip`` types passed over) must match ``patterns``."""
        got: list[Frame] = []
        try:
            async with self._bounded(step):
                while len(got) < len(patterns):
                    frame = await self._next(skip)
                    got.append(frame)
        except ScenarioAborted:
            self._compare(step, patterns, got)
            raise
        self._compare(step, patterns, got)
        return got

    async def expect_unordered(self, step: str, patterns: Sequence[Any]) -> list[Frame]:
        """Frames matching each pattern must appear (any order, anywhere after the cursor)."""
        out = []
        for index, pattern in enumerate(patterns):
            try:
                out.append(await self.take(lambda f, p=pattern: matches(p, f), f"{step}[{index}]"))
            except ScenarioAborted:
                self.differences.append(Difference(f"{step}[{index}]", pattern, None))
                raise
        return out

    async def until(self, step: str, kind: str, *, skip: Sequence[str] = ()) -> list[Frame]:
        """Consume frames up to and including the next one of type ``kind``; returns them."""
        got: list[Frame] = []
        async with self._bounded(step):
            while True:
                frame = await self._next(skip)
                got.append(frame)
                if frame.get("type") == kind:
                    return got

    def check(self, step: str, pattern: Any, value: Any) -> bool:
        """Record a difference unless ``value`` matches ``pattern``."""
        if matches(pattern, value):
            return True
        self.differences.append(Difference(step, pattern, value))
        return False

    async def _next(self, skip: Sequence[str]) -> Frame:
        while True:
            while self.cursor < len(self.agent.frames):
                index = self.cursor
                self.cursor += 1
                frame = self.agent.frames[index]
                if index in self.agent.consumed or frame.get("type") in skip:
                    continue
                self.agent.consumed.add(index)
                return frame
            if self.agent.ended:
                raise ScenarioAborted("the agent's stdout ended")
            await self.agent.wait_changed()

    def _compare(self, step: str, patterns: Sequence[Any], got: list[Frame]) -> None:
        for index, pattern in enumerate(patterns):
            actual = got[index] if index < len(got) else None
            if not matches(pattern, actual):
                self.differences.append(Difference(f"{step}[{index}]", pattern, actual))

    @contextlib.asynccontextmanager
    async def _bounded(self, step: str) -> Any:
        try:
            async with asyncio.timeout(self.timeout):
                yield
        except TimeoutError:
            raise ScenarioAborted(f"{step}: no matching frame within {self.timeout:g}s") from None
