"""A calibration agent for the probes: the least any Python agent must do on each probe's path.

Not a product: ``bench_probes.py --agents floor`` runs it beside xcsh and the peers so a table
shows how much of each figure is the harness (the probes' host and fake LLM), the interpreter and
the pipes rather than the agent. It starts ``asyncio`` only (no other import), answers
``get_state`` with a fixed 40-byte payload, and for ``prompt`` posts the text to the fake LLM over
one kept-alive loopback socket (HTTP/1.1 written and read by hand, only as far as the fake LLM's
chunked SSE needs), writes one ``text_delta`` frame on the first data line and ``agent_end`` at
the stream's end. No session file, no tools, no model catalogue, no validation: it measures the
floor under a real agent, and nothing it does is an example of how xcsh is built.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any


def _endpoint() -> tuple[str, int, str, str]:
    """(host, port, path, api) from the models file the bench wrote into the agent dir."""
    text = (Path(os.environ["PI_CODING_AGENT_DIR"]) / "models.yml").read_text()
    fields = dict(
        line.strip().split(": ", 1)
        for line in text.splitlines()
        if line.strip().startswith(("baseUrl:", "api:"))
    )
    url = fields["baseUrl"].removeprefix("http://")
    hostport, _, prefix = url.partition("/")
    host, _, port = hostport.partition(":")
    path = "/" + prefix + ("/chat/completions" if fields["api"] == "openai-completions" else "/v1/messages")
    return host, int(port), path.replace("//", "/"), fields["api"]


class Floor:
    def __init__(self, out: Any) -> None:
        self.out = out
        self.host, self.port, self.path, self.api = _endpoint()
        self.conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.streaming = False
        self.history: list[dict[str, str]] = []

    def write(self, frame: dict[str, Any]) -> None:
        self.out.write(json.dumps(frame, separators=(",", ":")).encode() + b"\n")

    async def prompt(self, text: str) -> None:
        self.history.append({"role": "user", "content": text})
        body = {"model": "fake-model", "stream": True, "max_tokens": 4096, "messages": self.history}
        payload = json.dumps(body).encode()
        if self.conn is None:
            self.conn = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.conn
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        writer.write(head.encode() + payload)
        while (await reader.readline()) not in (b"\r\n", b""):
            pass  # status line and headers: the fake LLM answers 200, chunked
        answer, buffer, first = [], b"", True
        while True:
            size = int((await reader.readline()).strip() or b"0", 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            buffer += chunk[:-2]
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                delta = _delta(json.loads(line[6:]))
                if delta:
                    answer.append(delta)
                    if first:
                        first = False
                        self.write(
                            {
                                "type": "message_update",
                                "assistantMessageEvent": {"type": "text_delta", "delta": delta},
                            }
                        )
        self.history.append({"role": "assistant", "content": "".join(answer)})
        self.streaming = False
        self.write({"type": "agent_end", "messages": []})

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        tasks = set()
        while line := await reader.readline():
            command = json.loads(line)
            kind, cid = command.get("type"), command.get("id")
            if kind == "get_state":
                self.write(
                    {
                        "id": cid,
                        "type": "response",
                        "command": kind,
                        "success": True,
                        "data": {"isStreaming": self.streaming},
                    }
                )
            elif kind == "prompt":
                self.streaming = True
                self.write({"id": cid, "type": "response", "command": kind, "success": True})
                task = asyncio.ensure_future(self.prompt(command["message"]))
                tasks.add(task)
                task.add_done_callback(tasks.discard)


def _delta(event: dict[str, Any]) -> str:
    if "choices" in event:  # OpenAI chat
        choices = event["choices"]
        return str(choices[0].get("delta", {}).get("content") or "") if choices else ""
    if event.get("type") == "content_block_delta":  # Anthropic
        return str(event["delta"].get("text", ""))
    return ""


def main() -> None:
    with open(sys.stdout.fileno(), "wb", buffering=0, closefd=False) as out:  # one write per frame
        asyncio.run(Floor(out).serve())


if __name__ == "__main__":
    main()
