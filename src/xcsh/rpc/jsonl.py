"""JSON-lines framing for the RPC wire: LF-only splitting and compact output.

Never ``str.splitlines()``: U+2028/U+2029 and other Unicode separators are legal
inside JSON strings. A trailing ``\\r`` is tolerated on input.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import msgspec

DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024


def _finite(obj: Any) -> Any:
    """``obj`` with NaN and ±Infinity replaced by None (JSON has no such numbers)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


_encoder = msgspec.json.Encoder()


def encode_json(obj: Any) -> bytes:
    """Compact UTF-8 JSON as JavaScript's JSON.stringify writes it (no ASCII escaping).

    msgspec writes strings byte for byte as JSON.stringify does (same escapes, no escaping
    of non-ASCII) and non-finite numbers as ``null``. Values it cannot write — a lone
    surrogate, an integer beyond 64 bits, a type it does not know — take the slower
    standard-library path, which behaves like the fast one for everything both can write.
    ``msgspec.Raw`` values are spliced in unchanged (already-encoded JSON).
    """
    try:
        return _encoder.encode(obj)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        return _encode_slow(obj)
    except RecursionError:
        return encode_deep(obj)


_END = object()


def encode_deep(obj: Any) -> bytes:
    """:func:`encode_json` without recursion: the same bytes for a value nested past Python's limit.

    Both msgspec and the standard library recurse once per level of nesting, so a deep value (the
    ``get_tree`` answer of a long linear session nests two levels per entry) raised
    ``RecursionError`` and its command was never answered. Here dicts, lists and tuples are
    walked with an explicit stack; each run of neighbouring values that are not containers (with
    their keys) is written by one :func:`encode_json` call, so strings, numbers and the fallbacks
    are exactly the fast path's.
    """
    parts: list[bytes] = []
    stack: list[tuple[Iterator[tuple[bytes, Any]], bytes]] = []
    first: list[bool] = []

    def emit(head: bytes, value: Any) -> None:
        parts.append(head)
        if isinstance(value, dict):
            parts.append(b"{")
            stack.append((_dict_segments(value), b"}"))
            first.append(True)
        elif isinstance(value, (list, tuple)):
            parts.append(b"[")
            stack.append((_list_segments(value), b"]"))
            first.append(True)
        elif value is not _SEGMENT:
            parts.append(encode_json(value))

    emit(b"", obj)
    while stack:
        item = next(stack[-1][0], _END)
        if item is _END:
            parts.append(stack.pop()[1])
            first.pop()
            continue
        if first[-1]:
            first[-1] = False
        else:
            parts.append(b",")
        emit(*item)  # type: ignore[misc]
    return b"".join(parts)


_SEGMENT = object()  # marks a segment already written out (a run of items), not a value to write


def _dict_segments(value: dict[Any, Any]) -> Iterator[tuple[bytes, Any]]:
    """``(key and colon, container)`` per container value; ``(bytes, _SEGMENT)`` per run of other items."""
    run: dict[Any, Any] = {}
    for key, item in value.items():
        if isinstance(item, (dict, list, tuple)):
            if run:
                yield encode_json(run)[1:-1], _SEGMENT
                run = {}
            yield _key(key), item
        else:
            run[key] = item
    if run:
        yield encode_json(run)[1:-1], _SEGMENT


def _list_segments(value: list[Any] | tuple[Any, ...]) -> Iterator[tuple[bytes, Any]]:
    """``(b"", container)`` per container element; ``(bytes, _SEGMENT)`` per run of other elements."""
    run: list[Any] = []
    for item in value:
        if isinstance(item, (dict, list, tuple)):
            if run:
                yield encode_json(run)[1:-1], _SEGMENT
                run = []
            yield b"", item
        else:
            run.append(item)
    if run:
        yield encode_json(run)[1:-1], _SEGMENT


def _key(key: Any) -> bytes:
    """A dict key with its colon, as the whole-value encoders write it."""
    if isinstance(key, str):
        return encode_json(key) + b":"
    return encode_json({key: None})[1:-5]  # non-string keys: the encoder's own spelling, colon included


def _encode_slow(obj: Any) -> bytes:
    import json  # the rare path: not paid by a start-up

    def default(value: Any) -> Any:
        if isinstance(value, msgspec.Raw):
            return json.loads(bytes(value))
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default)
    except ValueError as exc:
        if "float" not in str(exc):
            raise  # e.g. a circular reference: a bug, not data
        obj = _finite(obj)
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=default)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # lone surrogates cannot be UTF-8; escape them as JSON.stringify does
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), default=default).encode("ascii")


def encode_frame(obj: Any) -> bytes:
    """One frame: :func:`encode_json` plus ``\\n``.

    A ``message_update`` repeats its partial message twice (``assistantMessageEvent.partial``
    and ``message``, the same object), and the long strings that grow from one update to the
    next (text, thinking, ``partialJson``, a tool call's string arguments) are encoded
    incrementally (:class:`GrowingStrings`) and spliced in as they are. The bytes are those of
    encoding the whole frame at once.
    """
    if isinstance(obj, dict) and obj.get("type") == "message_update":
        buffer = bytearray()
        encode_frame_into(obj, buffer)
        return bytes(buffer)
    return encode_json(obj) + b"\n"


def encode_frame_into(obj: Any, buffer: bytearray) -> None:
    """:func:`encode_frame` written into ``buffer`` (replacing its content): a writer that keeps
    one buffer for every frame avoids allocating (and faulting in) fresh memory per frame."""
    if isinstance(obj, dict) and obj.get("type") == "message_update":
        try:
            if _update_into(obj, buffer):
                return
        except RecursionError:  # a message nested past the encoders' recursion
            buffer[:] = encode_deep(obj)
            buffer.extend(b"\n")
            return
        obj = _share_encoded(obj)
    try:
        _encoder.encode_into(obj, buffer)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        buffer[:] = _encode_slow(obj)
    except RecursionError:
        buffer[:] = encode_deep(obj)
    buffer.extend(b"\n")


def _update_into(frame: dict[str, Any], buffer: bytearray) -> bool:
    """A ``message_update`` whose event's ``partial`` is its ``message``, written into ``buffer`` in
    one pass: the message (its growing strings spliced from their cached encodings) in both
    places. False, with ``buffer`` undefined, for another shape or what msgspec cannot write.

    One pass instead of encoding the message first and splicing its bytes twice: the message's
    bytes are not copied into a bytes object of their own, which grew by reallocation as it was
    written (docs/performance.md, "Eighth session").
    """
    event = frame.get("assistantMessageEvent")
    message = frame.get("message")
    if not isinstance(event, dict) or message is None or event.get("partial") is not message:
        return False
    try:
        shared = _with_growing_raw(message)
        _encoder.encode_into(
            {**frame, "assistantMessageEvent": {**event, "partial": shared}, "message": shared}, buffer
        )
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        return False
    buffer.extend(b"\n")
    return True


_GROWING_MIN = 512  # shorter strings are cheaper to encode again than to look up
_GROWING_FIELDS = ("text", "thinking", "partialJson")


class GrowingStrings:
    """The JSON encoding of strings that grow by appending, each extended by its new tail.

    JSON escapes character by character, so the encoding of ``old + tail`` is the encoding of
    ``old`` (without its closing quote) followed by that of ``tail`` (without its opening
    quote). One entry per slot (content block and field); a string that does not extend the
    slot's last one is encoded whole. Raises what msgspec raises for a value it cannot write
    (a lone surrogate): the caller then encodes the frame the standard way.
    """

    def __init__(self) -> None:
        # per slot: the last value and its encoding, extended in place (amortised O(tail))
        self._slots: dict[tuple[Any, ...], tuple[str, bytearray]] = {}

    def encode(self, slot: tuple[Any, ...], value: str) -> bytearray:
        """The encoding of ``value``; valid until the next call for ``slot`` (do not keep it)."""
        last = self._slots.get(slot)
        if last is not None:
            old, raw = last
            if value is old:
                return raw
            if len(value) > len(old) and value.startswith(old):
                try:
                    raw.append(0)  # msgspec writes into a buffer even when it then cannot resize it
                except BufferError:  # an earlier result is still referenced: start a new buffer
                    raw = bytearray(raw)
                else:
                    del raw[-1]
                # the tail's encoding is written over the last character and the closing quote
                # (its opening quote lands on the last character, which is put back): no bytes
                # object for the tail (raw holds at least the two quotes)
                end = len(raw) - 2
                last_byte = raw[end]
                self._slots.pop(slot)  # raw is half-written if the tail cannot be encoded
                _encoder.encode_into(value[len(old) :], raw, end)
                raw[end] = last_byte
                self._slots[slot] = (value, raw)
                return raw
        raw = bytearray(_encoder.encode(value))
        self._slots[slot] = (value, raw)
        return raw


_growing = GrowingStrings()


def _with_growing_raw(message: Any) -> Any:
    """``message`` (shallow copies) with its long growing strings as pre-encoded ``msgspec.Raw``."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    blocks: list[Any] = []
    for index, block in enumerate(content):
        if isinstance(block, dict):
            swapped = None
            for field in _GROWING_FIELDS:
                value = block.get(field)
                if isinstance(value, str) and len(value) >= _GROWING_MIN:
                    swapped = swapped if swapped is not None else dict(block)
                    swapped[field] = msgspec.Raw(_growing.encode((index, field), value))
            arguments = block.get("arguments")
            if isinstance(arguments, dict):
                changed = None
                for key, value in arguments.items():
                    if isinstance(value, str) and len(value) >= _GROWING_MIN:
                        changed = changed if changed is not None else dict(arguments)
                        changed[key] = msgspec.Raw(_growing.encode((index, "arguments", key), value))
                if changed is not None:
                    swapped = swapped if swapped is not None else dict(block)
                    swapped["arguments"] = changed
            block = swapped if swapped is not None else block
        blocks.append(block)
    return {**message, "content": blocks}


def _share_encoded(frame: dict[str, Any]) -> dict[str, Any]:
    """``frame`` with its partial message encoded once and spliced into both places (the path of
    a message msgspec cannot write whole: that message alone takes the standard way)."""
    event = frame.get("assistantMessageEvent")
    message = frame.get("message")
    if not isinstance(event, dict) or message is None or event.get("partial") is not message:
        return frame
    try:
        encoded = _encoder.encode(_with_growing_raw(message))
    except (TypeError, ValueError, OverflowError):  # what msgspec cannot write: the standard way
        encoded = encode_json(message)
    raw = msgspec.Raw(encoded)
    shared = dict(frame)
    shared["assistantMessageEvent"] = {**event, "partial": raw}
    shared["message"] = raw
    return shared


class OversizedLine(msgspec.Struct, frozen=True):
    """Marker for an input line that exceeded the size limit and was discarded."""

    size: int


class LineSplitter:
    """Incremental LF splitter over raw bytes, with a per-line size limit."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._buffer = bytearray()
        self._max = max_line_bytes
        self._discarding = 0

    def feed(self, data: bytes) -> Iterator[bytes | OversizedLine]:
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                rest = data[start:]
                if self._discarding:
                    self._discarding += len(rest)
                else:
                    self._buffer += rest
                    if len(self._buffer) > self._max:
                        self._discarding = len(self._buffer)
                        self._buffer.clear()
                return
            piece = data[start:newline]
            start = newline + 1
            if self._discarding:
                size = self._discarding + len(piece)
                self._discarding = 0
                yield OversizedLine(size)
                continue
            if self._buffer:
                self._buffer += piece
                line = bytes(self._buffer)
                self._buffer.clear()
            else:
                line = bytes(piece)
            if len(line) > self._max:
                yield OversizedLine(len(line))
            else:
                yield line

    def finish(self) -> Iterator[bytes | OversizedLine]:
        """The last line when input ended without a newline."""
        if self._discarding:
            size, self._discarding = self._discarding, 0
            yield OversizedLine(size)
        elif self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            yield line


def decode_frame(text: str) -> Any:
    """The JSON value of one inbound line exactly as ``json.loads`` gives it, errors included.

    msgspec decodes what it can (the same values: correctly rounded floats, the last of
    duplicate keys in the first one's place, the same integer digit limit); anything it
    refuses — NaN/Infinity literals, ``1e400``, a lone surrogate escape, bad JSON, too deep —
    goes to ``json.loads``, which gives its value or raises its error (``JSONDecodeError``
    with its text, ``RecursionError``, ``ValueError`` for too many digits). So the standard
    library's JSON module is imported only when a line needs it, not to answer valid frames.
    """
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):  # the last: a lone surrogate
        import json

        return json.loads(text)


def decode_line(line: bytes) -> str | None:
    """Bytes of one line → text, or None for a blank line. Raises ``UnicodeDecodeError``."""
    if line.endswith(b"\r"):
        line = line[:-1]
    text = line.decode("utf-8")
    return text if text.strip() else None
