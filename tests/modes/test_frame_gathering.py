"""Small frames written in one loop turn reach stdout together at the end of the turn, in order."""

from __future__ import annotations

import asyncio
import os
import select

from xcsh.modes.rpc.stdio import GATHER_FRAME_MAX, FrameWriter, flush_frames


def _readable(fd: int) -> bytes:
    out = b""
    while select.select([fd], [], [], 0)[0]:
        out += os.read(fd, 1 << 20)
    return out


def test_small_frames_of_one_loop_turn_are_written_together_and_a_large_one_keeps_its_place() -> None:
    loop = asyncio.new_event_loop()
    out_r, out_w = os.pipe()
    writer = FrameWriter(out_w, loop=loop)
    during: list[bytes] = []
    big = "x" * GATHER_FRAME_MAX

    def turn_one() -> None:
        writer.write({"type": "agent_start"})
        writer.write({"type": "turn_start"})
        during.append(_readable(out_r))  # gathered, not written yet
        writer.write({"type": "response", "data": big})  # large: what was gathered, then itself
        during.append(_readable(out_r))
        writer.write({"type": "turn_end"})
        during.append(_readable(out_r))

    try:
        loop.call_soon(turn_one)
        loop.call_soon(loop.stop)
        loop.run_forever()
        during.append(_readable(out_r))  # before the next turn's flush
        loop.call_soon(loop.stop)
        loop.run_forever()
        after = _readable(out_r)
    finally:
        loop.close()
        os.close(out_r)
        os.close(out_w)
    assert during[0] == b""
    assert during[1] == (
        b'{"type":"agent_start"}\n{"type":"turn_start"}\n{"type":"response","data":"' + big.encode() + b'"}\n'
    )
    # stop() ends the loop after the current batch: the flush scheduled in it runs in the next turn
    assert during[2:] == [b"", b""] and after == b'{"type":"turn_end"}\n'


def test_an_agent_end_is_written_at_once_with_the_frames_gathered_before_it() -> None:
    """The host waits for ``agent_end``: what the session does after a run in the same loop turn
    (compaction checks, the provider reading the rest of its HTTP answer) must not hold it back."""
    loop = asyncio.new_event_loop()
    out_r, out_w = os.pipe()
    writer = FrameWriter(out_w, loop=loop)
    during: list[bytes] = []

    def turn() -> None:
        writer.write({"type": "turn_end"})
        during.append(_readable(out_r))  # gathered
        writer.write({"type": "agent_end", "messages": []})
        during.append(_readable(out_r))  # written with it, before the turn ends
        writer.write({"type": "auto_compaction_start"})
        during.append(_readable(out_r))  # gathering goes on after it

    try:
        loop.call_soon(turn)
        loop.call_soon(loop.stop)
        loop.run_forever()
        loop.call_soon(loop.stop)
        loop.run_forever()
        after = _readable(out_r)
    finally:
        loop.close()
        os.close(out_r)
        os.close(out_w)
    assert during == [b"", b'{"type":"turn_end"}\n{"type":"agent_end","messages":[]}\n', b""]
    assert after == b'{"type":"auto_compaction_start"}\n'


def test_gathered_frames_are_written_by_flush_frames_before_the_process_leaves() -> None:
    loop = asyncio.new_event_loop()
    out_r, out_w = os.pipe()
    writer = FrameWriter(out_w, loop=loop)
    seen: list[bytes] = []

    def last_turn() -> None:
        writer.write({"type": "response", "command": "shutdown", "success": True})
        seen.append(_readable(out_r))
        flush_frames()  # what os._exit callers do
        seen.append(_readable(out_r))

    try:
        loop.call_soon(last_turn)
        loop.call_soon(loop.stop)
        loop.run_forever()
    finally:
        loop.close()
        os.close(out_r)
        os.close(out_w)
    assert seen == [b"", b'{"type":"response","command":"shutdown","success":true}\n']


def test_frames_from_another_thread_or_without_a_loop_are_written_at_once() -> None:
    out_r, out_w = os.pipe()
    loop = asyncio.new_event_loop()
    try:
        FrameWriter(out_w, loop=loop).write({"type": "ready"})  # the loop is not running here
        FrameWriter(out_w).write({"type": "agent_end"})
        assert _readable(out_r) == b'{"type":"ready"}\n{"type":"agent_end"}\n'
    finally:
        loop.close()
        os.close(out_r)
        os.close(out_w)
