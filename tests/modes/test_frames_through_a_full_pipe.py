"""Frames larger than the stdout pipe go out whole and in order while the host drains it."""

from __future__ import annotations

import os
import threading
from typing import Any

from xcsh.modes.rpc.stdio import FrameWriter
from xcsh.rpc.jsonl import encode_frame


def _update(arguments: str) -> dict[str, Any]:
    call = {"type": "toolCall", "id": "c1", "name": "write", "arguments": {"content": arguments[9:]}}
    call["partialJson"] = arguments
    message = {"role": "assistant", "content": [{"type": "text", "text": "é" * 600}, call]}
    event = {"type": "toolcall_delta", "contentIndex": 1, "delta": arguments[-7:], "partial": message}
    return {"type": "message_update", "assistantMessageEvent": event, "message": message}


def test_frames_larger_than_the_pipe_arrive_whole_and_in_order() -> None:
    """Each long partial message's frame is larger than the pipe, so a write takes part of it and
    the writer waits for room and writes the rest, with small frames between them."""
    out_r, out_w = os.pipe()
    os.set_blocking(out_w, False)
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(out_r, 4096):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    writer = FrameWriter(out_w)
    expected = bytearray()
    text = '{"content":"'
    try:
        for step in range(12):
            text += f'line {step}\\t"quoted"\\n' * 3000
            frame = _update(text)
            expected += encode_frame(frame)
            writer.write(frame)
            small = {"type": "small", "n": step}
            expected += encode_frame(small)
            writer.write(small)
    finally:
        os.close(out_w)
        reader.join(10)
        os.close(out_r)
    assert not reader.is_alive()
    assert len(expected) > 12 * 2 * 65536
    assert received == expected
