"""Output capture for shell commands: decoding, sanitising, counting and tail retention.

- Output is decoded as UTF-8 with invalid bytes replaced, ANSI/OSC escape
  sequences and other control characters (except tab and newline; CR is dropped)
  removed, then streamed to ``on_output`` in sanitised chunks.
- Only the last 51 200 bytes are kept (whole lines, unless one line alone is
  larger); when more was produced the full sanitised output is spilled to a temp
  file (``OutputCapture.spill_path``), up to :data:`SPILL_LIMIT_BYTES`: past that the
  file ends with a line saying the rest was not saved (``spill_capped``). Line counts
  follow rpc-protocol §5.8: newline count + 1, 0 for no output.
- Spill files live in one private directory per process, removed when the session ends
  (``xcsh.coding.bash.spill``).
"""

from __future__ import annotations

import codecs
import re
from collections import deque
from collections.abc import Callable
from typing import IO

from xcsh.coding.bash import OUTPUT_LIMIT_BYTES as OUTPUT_LIMIT_BYTES  # its old home
from xcsh.coding.bash.spill import new_spill_file

_MAX_PENDING_CHARS = 8192
SPILL_LIMIT_BYTES = 50 * 1024 * 1024
"""The most of one command's output kept in its spill file."""


_ESCAPE_RE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC … BEL/ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS/SOS/PM/APC
    r"|\x1b[ -/]*[0-~]?"  # other ESC sequences (and a lone ESC)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufff9-\ufffb]")


def sanitize_output(text: str) -> str:
    """Remove terminal escape sequences and control characters (tab and newline stay)."""
    return _CONTROL_RE.sub("", _ESCAPE_RE.sub("", text))


def count_lines(text: str) -> int:
    """Newline count + 1, or 0 for empty text (rpc-protocol §5.8)."""
    return text.count("\n") + 1 if text else 0


def utf8_len(text: str) -> int:
    """Length of ``text`` in UTF-8 bytes."""
    return len(text.encode("utf-8"))


class OutputCapture:
    """Decode, sanitise, count and tail-buffer a byte stream; spill everything to a file past the limit."""

    def __init__(
        self,
        *,
        limit_bytes: int = OUTPUT_LIMIT_BYTES,
        on_output: Callable[[str], None] | None = None,
        spill_limit_bytes: int = SPILL_LIMIT_BYTES,
    ):
        self._limit = limit_bytes
        self._spill_limit = spill_limit_bytes
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._chunks: deque[tuple[str, int]] = deque()
        self._kept_bytes = 0
        self._spill: IO[str] | None = None
        self.total_bytes = 0
        self.total_newlines = 0
        self.spill_path: str | None = None
        self.spill_capped = False
        self._spilled = 0

    def feed(self, data: bytes) -> None:
        text = self._pending + self._decoder.decode(data)
        # Sanitise whole lines only, so an escape sequence split across reads is still recognised.
        cut = text.rfind("\n")
        if cut < 0 and len(text) < _MAX_PENDING_CHARS:
            self._pending = text
            return
        if cut < 0:
            cut = len(text) - 1
        self._pending = text[cut + 1 :]
        self._emit(sanitize_output(text[: cut + 1]))

    def finish(self) -> None:
        text = self._pending + self._decoder.decode(b"", final=True)
        self._pending = ""
        if text:
            self._emit(sanitize_output(text))
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def _emit(self, text: str) -> None:
        if not text:
            return
        size = utf8_len(text)
        self.total_bytes += size
        self.total_newlines += text.count("\n")
        self._chunks.append((text, size))
        self._kept_bytes += size
        if self._spill is not None:
            self._write_spill(text, size)
        elif self.total_bytes > self._limit and not self.spill_capped:
            try:
                fd, path = new_spill_file()
            except OSError:
                self.spill_capped = True  # no temp space: the tail is still returned
            else:
                self._spill = open(fd, "w", encoding="utf-8")  # noqa: SIM115 - closed in finish()
                self.spill_path = path
                for chunk, chunk_size in self._chunks:
                    if self._spill is None:
                        break
                    self._write_spill(chunk, chunk_size)
        while len(self._chunks) > 1 and self._kept_bytes - self._chunks[0][1] >= self._limit:
            self._kept_bytes -= self._chunks.popleft()[1]
        if self._on_output is not None:
            self._on_output(text)

    def _write_spill(self, text: str, size: int) -> None:
        assert self._spill is not None
        if self._spilled + size > self._spill_limit:
            self.spill_capped = True
            self._spill.write(
                f"\n[xcsh: output past {self._spill_limit / (1024 * 1024):.1f}MB was not saved]\n"
            )
            self._spill.close()
            self._spill = None
            return
        try:
            self._spill.write(text)
        except OSError:  # disk full: keep what is there, stop saving
            self.spill_capped = True
            self._spill.close()
            self._spill = None
            return
        self._spilled += size

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self._limit

    def tail(self) -> str:
        """The retained text: the last ``limit`` bytes, starting at a line boundary when possible."""
        text = "".join(chunk for chunk, _ in self._chunks)
        data = text.encode("utf-8")
        if len(data) <= self._limit:
            return text
        start = len(data) - self._limit
        if data[start - 1] != 0x0A:
            newline = data.find(b"\n", start)
            if newline != -1 and newline + 1 < len(data):
                start = newline + 1
        while start < len(data) and data[start] & 0xC0 == 0x80:
            start += 1
        return data[start:].decode("utf-8")
