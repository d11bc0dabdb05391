"""RPC stdio: reading stdin on the loop while frames wait for room on a full stdout."""

from __future__ import annotations

import asyncio
import os
import threading

from xcsh.modes.rpc.stdio import FrameWriter, StdinReader

BOUND_S = 20.0


def drain(fd: int, into: bytearray) -> None:
    while chunk := os.read(fd, 1 << 16):
        into.extend(chunk)


def test_input_taken_while_a_frame_waited_for_room_does_not_block_the_next_read() -> None:
    # One loop turn: a frame bigger than the stdout pipe is written while the loop has
    # already seen stdin readable. The writer takes that input while it waits for room,
    # so the loop's read that follows in the same turn finds stdin empty.
    loop = asyncio.new_event_loop()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    delivered: list[bytes | None] = []
    reader = StdinReader(loop, in_r)
    writer = FrameWriter(out_w, stdin=reader)
    reader.attach(delivered.append)
    os.write(in_w, b'{"type":"get_state"}\n')
    written = bytearray()
    drainer = threading.Thread(target=drain, args=(out_r, written), daemon=True)
    drainer.start()
    loop.call_soon(writer.write, {"type": "response", "data": "x" * (4 << 20)})
    loop.call_soon(loop.stop)
    turn = threading.Thread(target=loop.run_forever, daemon=True)
    turn.start()
    turn.join(BOUND_S)
    try:
        assert not turn.is_alive(), "the loop blocked reading an empty stdin"
        loop.call_soon(loop.stop)
        loop.run_forever()  # the held input is delivered on the next turn
        assert delivered == [b'{"type":"get_state"}\n']
    finally:
        os.close(in_w)  # unblocks a read that hung, so the threads end
        turn.join(BOUND_S)
        os.close(out_w)
        drainer.join(BOUND_S)
        loop.close()
        os.close(in_r)
        os.close(out_r)
    assert len(written) > 4 << 20
