"""The agent under fuzzing: `xcsh --mode rpc` on raw pipes (:class:`Proc`, used by `scripts/fuzz_rpc.py`).

Reader threads keep every stdout frame (each checked against the protocol schema as it
arrives; non-JSON lines, non-objects and violations are kept in ``bad``) and stderr; ``send``
remembers what was sent: the lines, each string id's command type and order, and the prompts
whose message carries their ``#<id>#`` mark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from conftest import Workspace
from xcsh.rpc.schema import FrameChecker

PY = sys.executable


class Proc:
    def __init__(self, ws: Workspace, args: list[str]) -> None:
        env = dict(ws.env)
        self.p = subprocess.Popen(
            [PY, "-P", "-m", "xcsh", "--mode", "rpc", *args],
            cwd=ws.proj,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.frames: list[dict[str, Any]] = []
        self.bad: list[str] = []
        self.stderr = bytearray()
        self.cond = threading.Condition()
        self.checker = FrameChecker()
        self.paused = threading.Event()
        self.paused.set()
        self.on_frame: list[Any] = []
        self.sent: list[bytes] = []
        self.types: dict[str, str] = {}  # id -> type of each command sent with a string id
        self.order: list[str] = []  # string ids in the order sent
        self.marked: set[str] = set()  # ids of prompts whose message carries "#<id>#"
        threading.Thread(target=self._out, daemon=True).start()
        threading.Thread(target=self._err, daemon=True).start()

    def _out(self) -> None:
        buf = b""
        while True:
            self.paused.wait()
            chunk = os.read(self.p.stdout.fileno(), 1 << 16)
            if not chunk:
                if buf:
                    self.bad.append(f"trailing bytes without newline: {buf[:200]!r}")
                with self.cond:
                    self.cond.notify_all()
                return
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                try:
                    frame = json.loads(line)
                except Exception as exc:
                    self.bad.append(f"non-JSON stdout line {line[:200]!r}: {exc}")
                    continue
                if not isinstance(frame, dict):
                    self.bad.append(f"non-object frame {line[:200]!r}")
                    continue
                try:
                    v = self.checker.violations(frame) if len(line) < (1 << 20) else []
                except BaseException as exc:
                    v = [f"checker raised {exc!r}"]
                if v:
                    self.bad.append(f"schema violation {v[:3]} in {line[:300]!r}")
                for cb in self.on_frame:
                    try:
                        cb(frame)
                    except Exception as exc:
                        self.bad.append(f"callback error {exc!r}")
                with self.cond:
                    self.frames.append(frame)
                    self.cond.notify_all()

    def _err(self) -> None:
        while True:
            chunk = os.read(self.p.stderr.fileno(), 1 << 16)
            if not chunk:
                return
            self.stderr += chunk

    def send(self, data: bytes) -> None:
        self.sent.append(data[:300])
        for line in data.split(b"\n"):
            if b'"id"' in line and len(line) < (1 << 16):
                try:
                    frame = json.loads(line)
                except ValueError:
                    continue
                if isinstance(frame, dict) and isinstance(frame.get("id"), str):
                    kind = str(frame.get("type"))
                    self.order.append(frame["id"])
                    if f"#{frame['id']}#" in str(frame.get("message")):
                        self.marked.add(frame["id"])
                    if self.types.setdefault(frame["id"], kind) != kind:
                        self.types[frame["id"]] = ""  # one id sent with several types: not checked
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def after(self, cid: str, k: int) -> list[str]:
        i = self.order.index(cid)
        return self.order[i + 1 : i + 1 + k]

    def wait_for(self, pred: Any, since: int = 0, timeout: float = 60) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for f in self.frames[since:]:
                    if pred(f):
                        return f
                left = deadline - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    return None
                self.cond.wait(min(left, 1))
