"""A minimal RPC host for benchmarks: raw bytes in, cheap frame classification, few allocations.

The probes must measure the agent, not the host, so this host never parses a streamed frame:
it reads stdout in large chunks, splits lines on LF and classifies each line by byte search
(the frame ``type`` and, for ``message_update``, the ``assistantMessageEvent`` type). A
``response`` is matched to its request by the id at its start (every agent writes ``id`` first)
and parsed only when a probe reads it: a ``get_state`` answer is 0.7 KB from one agent and
25 KB from another, and parsing it inside the timed round trip measured the host.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

_EVENT = b'"assistantMessageEvent":{"type":"'
_TYPE = b'"type":"'
_ID = b'{"id":"'


class Response(Mapping[str, Any]):
    """A response frame, parsed on first access (``raw`` is the line as read)."""

    def __init__(self, raw: bytes, frame: dict[str, Any] | None = None) -> None:
        self.raw = raw
        self._frame = frame

    def _parsed(self) -> dict[str, Any]:
        if self._frame is None:
            self._frame = json.loads(self.raw)
        return self._frame

    def __getitem__(self, key: str) -> Any:
        return self._parsed()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._parsed())

    def __len__(self) -> int:
        return len(self._parsed())

    def __repr__(self) -> str:
        return repr(self._parsed())


def response_id(line: bytes) -> tuple[str | None, dict[str, Any] | None]:
    """The id of a response line, read from its start when it is there (else the line is parsed)."""
    if line.startswith(_ID):
        end = line.find(b'"', len(_ID))
        if end > 0 and b"\\" not in line[len(_ID) : end]:
            return line[len(_ID) : end].decode(), None
    frame = json.loads(line)
    return str(frame.get("id")), frame


def classify(line: bytes) -> str:
    """``message_update:<event type>`` or the frame's ``type`` (``?`` if it cannot be told)."""
    if line.startswith(b'{"type":"message_update"'):
        at = line.find(_EVENT)
        if at < 0:
            return "message_update"
        start = at + len(_EVENT)
        return "message_update:" + line[start : line.index(b'"', start)].decode()
    at = line.find(_TYPE, 0, 400)
    if at < 0:
        return "?"
    start = at + len(_TYPE)
    return line[start : line.index(b'"', start)].decode()


class Host:
    """One spawned agent in RPC mode."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.counts: dict[str, int] = {}
        self.bytes_read = 0
        self._waiters: list[tuple[str, asyncio.Future[float]]] = []
        self._pending: dict[str, asyncio.Future[Response]] = {}
        self._ids = itertools.count(1)
        self._reader = asyncio.ensure_future(self._read())
        self.on_line: Callable[[str, bytes], None] | None = None

    @classmethod
    async def start(cls, argv: list[str], *, cwd: Path, env: dict[str, str]) -> Host:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=1 << 20,
        )
        return cls(process)

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        buffer = b""
        while True:
            chunk = await stdout.read(1 << 20)
            if not chunk:
                break
            now = time.perf_counter()
            self.bytes_read += len(chunk)
            buffer += chunk
            start = 0
            while True:
                end = buffer.find(b"\n", start)
                if end < 0:
                    break
                self._line(buffer[start:end], now)
                start = end + 1
            buffer = buffer[start:]
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(EOFError("agent stdout closed"))

    def _line(self, line: bytes, now: float) -> None:
        kind = classify(line)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind == "response":
            cid, frame = response_id(line)
            future = self._pending.pop(str(cid), None)
            if future is not None and not future.done():
                future.set_result(Response(line, frame))
        if self.on_line is not None:
            self.on_line(kind, line)
        still = []
        for wanted, future in self._waiters:
            if wanted == kind and not future.done():
                future.set_result(now)
            elif not future.done():
                still.append((wanted, future))
        self._waiters = still

    def send(self, frame: dict[str, Any]) -> asyncio.Future[Response]:
        """Write a command; the future resolves to its response frame (parsed when read)."""
        cid = f"b{next(self._ids)}"
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._pending[cid] = future
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps({**frame, "id": cid}).encode() + b"\n")
        return future

    def expect(self, kind: str) -> asyncio.Future[float]:
        """A future resolving to the read time of the next frame of ``kind`` (register before sending)."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiters.append((kind, future))
        return future

    def cpu_seconds(self) -> float:
        """User + system CPU of the agent process so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0.0

    async def close(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()
