"""PyYAML's result for a config file, kept so an unchanged file is not parsed (nor ``yaml`` imported).

Importing ``yaml`` costs a start-up ~6–10 ms (mostly compiling its regular expressions),
far more than reading a ``models.yml`` or ``config.yml``. :func:`read_yaml_file` therefore
keeps, per config file, the file's bytes and what PyYAML made of them, encoded with msgspec
(MessagePack) in the agent directory's ``cache/yaml/``, and returns the kept result while
the file holds exactly those bytes. PyYAML stays the only YAML reader: a file that changed
in any way is parsed again. docs/decisions.md ("A cache of parsed YAML config files").

Contract:

- *Key:* the file's whole content, compared byte for byte (the file is read on every call;
  a config file is small), plus the identity of the installed PyYAML (its ``__init__.py``:
  path, size, modification time), so an upgrade re-parses. No timestamp of the config
  file is trusted, so an edit in the same clock tick as a read is still seen.
- ``parse`` must be a function of the text alone (``yaml.safe_load`` and the caller's error
  conversion); its result is stored only when it returns.
- *Exactness:* an entry is stored only when decoding it gives back the same values of the
  same types in the same order (no dates, sets, NaN, sub-trees shared by a YAML alias,
  numbers MessagePack cannot hold …); otherwise the file is simply parsed each time.
- *Many processes:* each config file has its own cache file, replaced atomically (temporary
  file + rename), so a reader sees a whole old entry, a whole new one, or none. An
  unreadable, truncated, foreign or stale cache file is ignored (and replaced). Failing to
  write (a read-only agent dir) is ignored.
- Reading the config file raises what reading it raises (``OSError``, ``UnicodeDecodeError``);
  a file that is not a regular file or is larger than :data:`MAX_CONFIG_BYTES` raises
  :class:`ConfigFileRefused` (an ``OSError``) before anything of it is read.
"""

# No ``from __future__ import annotations``: msgspec resolves the entry classes' annotations
# when a start first decodes an entry, and string annotations would each be compiled then.

import binascii
import contextlib
import os
import stat
from collections.abc import Callable
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

import msgspec

from xcsh.coding.private_fs import make_private_dirs, open_private, write_fully

FORMAT = 1
"""Stored in every entry; entries of another format are ignored."""

Parser = tuple[str, int, int]
"""The installed PyYAML: its ``__init__.py`` path, size and ``st_mtime_ns``."""


def cache_dir_for(agent_dir: Path) -> Path:
    """The agent directory's cache of parsed config files."""
    return agent_dir / "cache" / "yaml"


class _Entry(msgspec.Struct, array_like=True):
    format: int
    path: str
    parser: Parser
    source: bytes
    data: Any


def cache_file(cache_dir: Path, path: str) -> Path:
    """Where the entry for the config file at ``path`` (absolute) is kept."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(path))[:40]
    return cache_dir / f"{binascii.crc32(path.encode('utf-8', 'surrogateescape')):08x}-{name}.msgpack"


MAX_CONFIG_BYTES = 256 * 1024
"""The largest config file read (``config.yml``, ``models.yml``), as for discovered files: a
project's file is ignored past it, a user's stops start-up (docs/context.md)."""


class ConfigFileRefused(OSError):
    """A config file that is not a regular file, or is larger than :data:`MAX_CONFIG_BYTES`."""


def read_config_bytes(path: str | Path) -> bytes:
    """The bytes of the config file at ``path``; raises :class:`ConfigFileRefused` for a file
    that is not a regular one (a FIFO or device is opened without waiting, never read) or is
    larger than :data:`MAX_CONFIG_BYTES` (also when it grows while read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb", closefd=True) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigFileRefused("not a regular file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigFileRefused(
                f"{info.st_size} bytes, larger than the {MAX_CONFIG_BYTES // 1024} KiB allowed"
            )
        raw = handle.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigFileRefused(f"larger than the {MAX_CONFIG_BYTES // 1024} KiB allowed")
    return raw


def read_yaml_file(path: Path, parse: Callable[[str], Any], cache_dir: Path | None) -> Any:
    """``parse(text of path)``, or the kept result of that call while ``path`` holds the same bytes.

    ``text`` is the file decoded as UTF-8 with universal newlines (as ``Path.read_text``).
    ``cache_dir`` None: nothing is kept or looked up.
    """
    absolute = os.path.abspath(path)
    raw = read_config_bytes(absolute)
    entry_file = cache_file(cache_dir, absolute) if cache_dir is not None else None
    parser = _parser() if entry_file is not None else None
    if entry_file is not None and parser is not None:
        entry = _lookup(entry_file)
        if entry is not None and entry.path == absolute and entry.parser == parser and entry.source == raw:
            return entry.data
    data = parse(raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"))
    if entry_file is not None and parser is not None:
        _store(entry_file, _Entry(FORMAT, absolute, parser, raw, data))
    return data


def forget(path: Path, cache_dir: Path | None) -> None:
    """Drop the entry kept for the config file at ``path`` (call when the file is gone: an entry
    holds the file's bytes, credentials included, and must not outlive it)."""
    if cache_dir is None:
        return
    with contextlib.suppress(OSError):
        os.unlink(cache_file(cache_dir, os.path.abspath(path)))


def _parser() -> Parser | None:
    """The installed PyYAML's identity, found without importing it (None: not a plain file)."""
    try:
        spec = PathFinder.find_spec("yaml")
        origin = spec.origin if spec is not None else None
        if origin is None:
            return None
        st = os.stat(origin)
    except (OSError, ImportError, ValueError):
        return None
    return (origin, st.st_size, st.st_mtime_ns)


def _lookup(entry_file: Path) -> _Entry | None:
    try:
        with open(entry_file, "rb") as handle:
            blob = handle.read()
    except OSError:
        return None
    try:
        entry = msgspec.msgpack.decode(blob, type=_Entry)
    except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
        return None
    return entry if entry.format == FORMAT else None


def _store(entry_file: Path, entry: _Entry) -> None:
    try:
        blob = msgspec.msgpack.encode(entry)
        back = msgspec.msgpack.decode(blob, type=_Entry)
    except (msgspec.EncodeError, msgspec.DecodeError, ValueError, TypeError, OverflowError, RecursionError):
        return
    if not same_values(entry.data, back.data, set()):
        return
    write_atomically(entry_file, blob)


def write_atomically(target: Path, blob: bytes) -> None:
    """Replace ``target`` with ``blob`` (temporary file + rename, mode 0600); errors are ignored."""
    tmp = target.with_name(f".{target.name}.{os.urandom(6).hex()}.tmp")
    try:
        make_private_dirs(target.parent)
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except OSError:
        return
    try:
        try:
            write_fully(fd, blob)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def same_values(original: Any, decoded: Any, seen: set[int]) -> bool:
    """Whether ``decoded`` has the values and exact types of ``original``, in the same order,
    and ``original`` shares no container between two places (``seen``: containers met so far)."""
    if type(original) is not type(decoded):
        return False
    if isinstance(original, (dict, list)):
        if id(original) in seen or len(original) != len(decoded):
            return False
        seen.add(id(original))
        if isinstance(original, dict):
            return all(
                same_values(k1, k2, seen) and same_values(v1, v2, seen)
                for (k1, v1), (k2, v2) in zip(original.items(), decoded.items(), strict=True)
            )
        return all(same_values(a, b, seen) for a, b in zip(original, decoded, strict=True))
    if isinstance(original, float) and original != original:
        return False
    return bool(original == decoded)


class TextCache:
    """PyYAML's results for short YAML texts (markdown front matter), kept in one file.

    A session start parses the front matter of every skill, agent, rule and command file it
    discovers; with this cache an unchanged text is not parsed again, so a start finding only
    known front matter does not import ``yaml``. Keyed by the exact text given to PyYAML (and
    the installed PyYAML, as above); each lookup decodes a fresh value. New results are kept
    in memory until :meth:`flush`, which replaces the file atomically with the texts used since
    it was opened first, then earlier ones, at most :data:`TEXT_ENTRIES`. A missing, corrupt or
    foreign file is an empty cache; failing to write is ignored.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries: dict[str, bytes] | None = None
        self._used: dict[str, bytes] = {}
        self._changed = False

    def _load(self) -> dict[str, bytes]:
        if self._entries is None:
            self._entries = {}
            parser = _parser()
            try:
                with open(self.path, "rb") as handle:
                    stored = msgspec.msgpack.decode(handle.read(), type=_TextEntries)
                if stored.format == FORMAT and parser is not None and stored.parser == parser:
                    self._entries = stored.entries
            except (OSError, msgspec.DecodeError, ValueError, TypeError, RecursionError):
                pass
        return self._entries

    def parse(self, text: str, parse: Callable[[str], Any]) -> Any:
        """``parse(text)``, or its kept result for exactly this ``text``."""
        entries = self._load()
        kept = entries.get(text)
        if kept is not None:
            try:
                value = msgspec.msgpack.decode(kept)
            except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
                pass
            else:
                self._used[text] = kept
                return value
        value = parse(text)
        try:
            fresh = msgspec.msgpack.encode(value)
            exact = same_values(value, msgspec.msgpack.decode(fresh), set())
        except (
            msgspec.EncodeError,
            msgspec.DecodeError,
            ValueError,
            TypeError,
            OverflowError,
            RecursionError,
        ):
            return value
        if exact:
            entries[text] = self._used[text] = fresh
            self._changed = True
        return value

    def flush(self) -> None:
        """Write the kept results if any is new (the texts used first, then the rest)."""
        parser = _parser()
        if not self._changed or parser is None:
            return
        self._changed = False
        kept = dict(self._used)
        for text, blob in (self._entries or {}).items():
            if len(kept) >= TEXT_ENTRIES:
                break
            kept.setdefault(text, blob)
        write_atomically(self.path, msgspec.msgpack.encode(_TextEntries(FORMAT, parser, kept)))


TEXT_ENTRIES = 2000
"""At most this many texts are kept in a :class:`TextCache` file."""


class _TextEntries(msgspec.Struct, array_like=True):
    format: int
    parser: Parser
    entries: dict[str, bytes]
