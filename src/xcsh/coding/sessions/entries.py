"""Session file wire types (v3), ids, timestamps, and line (de)serialisation.

The entries' TypedDicts are in :mod:`xcsh.coding.sessions.entry_types` (they name the agent's
message types, which a fresh process does not need before its first answer: docs/performance.md,
"Sixth session: start-up"). At run time an entry is a plain dict (:data:`SessionEntry`) because
readers must carry unknown entry types through unchanged.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Container
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from xcsh.coding.sessions.blobs import (
    BlobStore,
    externalize_data_url,
    externalize_image_data,
    is_blob_ref,
    is_image_data_url,
)

if TYPE_CHECKING:
    from xcsh.coding.sessions.entry_types import SessionHeader

CURRENT_SESSION_VERSION = 3
MAX_PERSIST_CHARS = 500_000
TRUNCATION_NOTICE = "\n\n[Session persistence truncated large content]"
SIGNATURE_KEYS = frozenset({"thinkingSignature", "thoughtSignature", "textSignature"})
TRANSIENT_KEYS = frozenset({"partialJson", "jsonlEvents"})
BLOB_EXTERNALIZE_THRESHOLD = 1024

# Any entry as read from or written to a file (known or unknown type).
SessionEntry = dict[str, Any]


class SessionError(Exception):
    """Base class of the session store's errors."""


class NotASessionError(SessionError):
    """The file has content but is not a session file; it was left untouched."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is not a session file (it has content but no session header); "
            "refusing to open it so that nothing in it is overwritten"
        )
        self.path = path


# --------------------------------------------------------------------------- ids and time

_snowflake_lock = threading.Lock()
_snowflake_last = 0
_snowflake_node = int.from_bytes(os.urandom(2), "big") & 0x3FF  # 10 random bits


def new_session_id() -> str:
    """A 16-hex-digit, time-ordered id: 42 bits of epoch ms, 10 node bits, 12 sequence bits.

    Strictly increasing within a process, so ids sort by creation order.
    """
    global _snowflake_last
    with _snowflake_lock:
        candidate = (time.time_ns() // 1_000_000) << 22 | _snowflake_node << 12
        value = max(candidate, _snowflake_last + 1)
        _snowflake_last = value
    return f"{value & 0xFFFF_FFFF_FFFF_FFFF:016x}"


def generate_entry_id(existing: Container[str]) -> str:
    """An 8-hex-digit entry id not in ``existing`` (falls back to a 16-hex snowflake)."""
    for _ in range(100):
        candidate = os.urandom(4).hex()  # as uuid4().hex[-8:] was: 32 random bits, lowercase hex
        if candidate not in existing:
            return candidate
    return new_session_id()


_second: tuple[int, str] = (-1, "")  # the last whole second iso_now formatted, and its text


def iso_now(ns: int | None = None) -> str:
    """Current UTC time (or ``ns`` nanoseconds since the epoch) as ``2026-07-02T18:38:56.123Z``
    (milliseconds truncated, as ``datetime.now``'s ``isoformat`` wrote it).

    The date and time of day are formatted once per second: two session entries per prompt
    ask for it, and ``datetime``'s ``isoformat`` took a few microseconds each time.
    """
    global _second
    second, rest = divmod(time.time_ns() if ns is None else ns, 1_000_000_000)
    cached, text = _second
    if cached != second:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second = (second, text)
    return f"{text}.{rest // 1_000_000:03d}Z"


def iso_to_epoch_ms(timestamp: str) -> int:
    """Epoch milliseconds of an ISO-8601 timestamp (0 when it cannot be parsed)."""
    try:
        parsed = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def file_timestamp(iso_timestamp: str) -> str:
    """The file-name form of an ISO timestamp (``:`` and ``.`` become ``-``)."""
    return iso_timestamp.replace(":", "-").replace(".", "-")


# --------------------------------------------------------------------------- write transforms


def _truncate(value: str) -> str:
    limit = max(0, MAX_PERSIST_CHARS - len(TRUNCATION_NOTICE))
    return value[:limit] + TRUNCATION_NOTICE


def _is_image_block(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") == "image" and isinstance(value.get("data"), str)


def _prepare(value: Any, key: str | None, blobs: BlobStore | None) -> Any:
    """Copy-on-write walk applying the §4 transforms; returns ``value`` itself when unchanged."""
    if isinstance(value, str):
        if key == "image_url" and blobs is not None and is_image_data_url(value):
            return externalize_data_url(blobs, value)
        if len(value) > MAX_PERSIST_CHARS:
            # A cut signature would be rejected by the provider; an empty one is simply dropped.
            return "" if key in SIGNATURE_KEYS else _truncate(value)
        return value
    if isinstance(value, list):
        changed = False
        items: list[Any] = []
        for item in value:
            new_item = _prepare_list_item(item, key, blobs)
            changed = changed or new_item is not item
            items.append(new_item)
        return items if changed else value
    if isinstance(value, dict):
        changed = False
        out: dict[str, Any] = {}
        for child_key, child in value.items():
            if child_key in TRANSIENT_KEYS:
                changed = True
                continue
            new_child = _prepare(child, child_key, blobs)
            changed = changed or new_child is not child
            out[child_key] = new_child
        if not changed:
            return value
        content = out.get("content")
        line_count = out.get("lineCount")
        if (
            isinstance(content, str)
            and content is not value.get("content")
            and isinstance(line_count, int | float)
            and not isinstance(line_count, bool)
        ):
            out["lineCount"] = len(content.split("\n"))
        return out
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON.stringify writes null; NaN would make the line unreadable elsewhere
    return value


def _prepare_list_item(item: Any, key: str | None, blobs: BlobStore | None) -> Any:
    if key == "content" and _is_image_block(item):
        data: str = item["data"]
        if is_blob_ref(data) or blobs is None:
            # Inline images are never cut: a truncated base64 payload is a broken image.
            return item
        if len(data) >= BLOB_EXTERNALIZE_THRESHOLD:
            return {**item, "data": externalize_image_data(blobs, data)}
        return item
    return _prepare(item, key, blobs)


def prepare_for_persistence(entry: SessionEntry, blobs: BlobStore | None = None) -> SessionEntry:
    """``entry`` with the write transforms of session-format §4 applied (the input is not mutated).

    Strings over 500 000 characters are cut with the truncation notice (signature
    fields are emptied instead), ``partialJson``/``jsonlEvents`` keys are dropped,
    ``lineCount`` follows a cut ``content``, and with a blob store, image blocks of
    at least 1024 base64 characters and ``image_url`` data URLs become blob refs.
    """
    result: SessionEntry = _prepare(entry, None, blobs)
    return result


_json_encoder: Any = None  # json.dumps(ensure_ascii=False, separators=(",", ":")) builds one per call


def _dumps(obj: Any) -> str:
    global _json_encoder
    if _json_encoder is None:
        import json  # with the first entry written, not at start-up

        _json_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    line: str = _json_encoder.encode(obj)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be UTF-8; their \\uXXXX escape is what JSON.stringify writes.
        line = line.encode("utf-8", "backslashreplace").decode("utf-8")
    return line


def _untouched(line: str, blobs: BlobStore | None) -> bool:
    """Whether the write transforms leave the value encoded as ``line`` (compact JSON) as it is.

    Each transform has a mark in the line: a string over the limit makes the line longer than
    it, a dropped key is written ``"key":`` (a quote inside a string is escaped, so that text
    is never part of one), a non-finite number ``NaN``/``Infinity``, and with a blob store an
    image block ``"type":"image"`` and a data URL its ``"image_url":`` key. A mark that is only
    text inside a string costs the walk, never a different line.
    """
    if len(line) > MAX_PERSIST_CHARS or "NaN" in line or "Infinity" in line:
        return False
    if any(f'"{key}":' in line for key in TRANSIENT_KEYS):
        return False
    return blobs is None or ('"type":"image"' not in line and '"image_url":' not in line)


def serialize_entry(entry: SessionEntry | SessionHeader, blobs: BlobStore | None = None) -> str:
    """One compact JSON line (no trailing newline) for a header or entry, after the write transforms.

    The entry is encoded as it is first; it is walked for the transforms
    (:func:`prepare_for_persistence`) only when the line shows one may apply (:func:`_untouched`),
    which gives the same line.
    """
    line = _dumps(entry)
    if _untouched(line, blobs):
        return line
    return _dumps(prepare_for_persistence(dict(entry), blobs))


def parse_line(line: str | bytes) -> dict[str, Any] | None:
    """The JSON object on ``line``, or None when the line is blank, invalid, or not an object."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    except UnicodeDecodeError:
        return None
    if not text.strip():
        return None
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
        value = _parse_slow(text)
    return value if isinstance(value, dict) else None


def _parse_slow(text: str) -> Any:
    """``json.loads``'s value for what msgspec refuses (NaN and Infinity literals, ``1e400``, a lone
    surrogate escape, nesting too deep for it), or None when that fails too: so a line gives the
    value ``json.loads`` gives, whichever decoder reads it (a session's lines are read with msgspec,
    ~4× faster: docs/performance.md, "Fifth session: long sessions")."""
    import json  # the rare path: not paid by a session read

    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None


def is_valid_header(obj: object) -> bool:
    """True when ``obj`` is a session header (``type`` "session" and a string ``id``)."""
    return isinstance(obj, dict) and obj.get("type") == "session" and isinstance(obj.get("id"), str)


def new_header(
    cwd: str, *, session_id: str | None = None, parent_session: str | None = None
) -> SessionHeader:
    """A fresh v3 header stamped now."""
    header: SessionHeader = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session_id or new_session_id(),
        "timestamp": iso_now(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


def session_file_name(header: SessionHeader) -> str:
    """``<timestamp>_<sessionId>.jsonl`` for a header."""
    return f"{file_timestamp(header['timestamp'])}_{header['id']}.jsonl"


__all__ = [
    "CURRENT_SESSION_VERSION",
    "MAX_PERSIST_CHARS",
    "TRUNCATION_NOTICE",
    "SessionEntry",
    "SessionError",
    "file_timestamp",
    "generate_entry_id",
    "is_valid_header",
    "iso_now",
    "iso_to_epoch_ms",
    "new_header",
    "new_session_id",
    "parse_line",
    "prepare_for_persistence",
    "serialize_entry",
    "session_file_name",
]
