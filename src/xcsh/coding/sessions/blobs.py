"""Content-addressed blob store for images externalised from session files.

A blob is stored at ``<dir>/<sha256 hex>`` (no extension) and referenced from an
entry as ``blob:sha256:<hex>``. Image blocks store the decoded image bytes;
``image_url`` data URLs store the whole URL as UTF-8 so it can be restored
verbatim.
"""

from __future__ import annotations

import base64
import binascii
import logging
from pathlib import Path
from typing import Any

from xcsh.ai.patterns import LazyPattern
from xcsh.coding.private_fs import write_private_file

logger = logging.getLogger(__name__)

BLOB_PREFIX = "blob:sha256:"
# Only a canonical hash may name a file: anything else could walk out of the blob dir.
_HASH_RE = LazyPattern(r"^[0-9a-f]{64}$")


class BlobStore:
    """Blobs in one directory; writes are idempotent, durable and atomic."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def put(self, data: bytes) -> str:
        """Store ``data`` (if not already present) and return its SHA-256 hex digest."""
        import hashlib  # only when an image is stored

        digest = hashlib.sha256(data).hexdigest()
        target = self.directory / digest
        if target.exists():
            return digest
        write_private_file(target, data, sync_dir=True)
        return digest

    def get(self, digest: str) -> bytes | None:
        """The bytes of blob ``digest``, or None when it is missing or the digest is malformed."""
        if not _HASH_RE.match(digest):
            return None
        try:
            return (self.directory / digest).read_bytes()
        except FileNotFoundError:
            return None


def is_blob_ref(value: str) -> bool:
    """True for a well-formed ``blob:sha256:<64 hex>`` reference."""
    return parse_blob_ref(value) is not None


def parse_blob_ref(value: str) -> str | None:
    """The hex digest of a blob reference, or None when ``value`` is not one."""
    if not value.startswith(BLOB_PREFIX):
        return None
    digest = value[len(BLOB_PREFIX) :]
    return digest if _HASH_RE.match(digest) else None


def make_blob_ref(digest: str) -> str:
    return f"{BLOB_PREFIX}{digest}"


def is_image_data_url(value: str) -> bool:
    return value.startswith("data:image/") and ";base64," in value


def externalize_image_data(store: BlobStore, data: str) -> str:
    """Store base64 image data and return its reference (references pass through)."""
    if is_blob_ref(data):
        return data
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return data  # not base64: keep it inline rather than lose it
    return make_blob_ref(store.put(raw))


def externalize_data_url(store: BlobStore, url: str) -> str:
    """Store a data URL verbatim (UTF-8) and return its reference."""
    if is_blob_ref(url):
        return url
    return make_blob_ref(store.put(url.encode("utf-8")))


def _referenced_bytes(store: BlobStore, data: str) -> bytes | None:
    """The blob ``data`` refers to; None when it is no reference or the blob is missing (logged)."""
    digest = parse_blob_ref(data)
    if digest is None:
        return None
    raw = store.get(digest)
    if raw is None:
        logger.warning("blob %s referenced by the session is missing", digest)
    return raw


def resolve_image_data(store: BlobStore, data: str) -> str:
    """Base64 of the referenced blob; the reference itself when the blob is missing."""
    raw = _referenced_bytes(store, data)
    return data if raw is None else base64.b64encode(raw).decode("ascii")


def resolve_data_url(store: BlobStore, data: str) -> str:
    """The data URL stored under a reference; the reference itself when missing."""
    raw = _referenced_bytes(store, data)
    return data if raw is None else raw.decode("utf-8", errors="replace")


def _resolve_image_urls(value: Any, store: BlobStore) -> None:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            url = current.get("image_url")
            if isinstance(url, str) and url.startswith(BLOB_PREFIX):
                current["image_url"] = resolve_data_url(store, url)
            stack.extend(v for v in current.values() if isinstance(v, dict | list))
        elif isinstance(current, list):
            stack.extend(v for v in current if isinstance(v, dict | list))


def resolve_entry_blobs(entry: dict[str, Any], store: BlobStore) -> None:
    """Replace blob references in a loaded entry by their data, in place.

    Covers image blocks in ``message`` and ``custom_message`` content and every
    ``image_url`` string anywhere in the entry. Callers may skip entries whose
    raw line does not contain :data:`BLOB_PREFIX`.
    """
    content: Any = None
    if entry.get("type") == "message" and isinstance(entry.get("message"), dict):
        content = entry["message"].get("content")
    elif entry.get("type") == "custom_message":
        content = entry.get("content")
    if isinstance(content, list):
        for block in content:
            if (
                isinstance(block, dict)
                and block.get("type") == "image"
                and isinstance(block.get("data"), str)
            ):
                block["data"] = resolve_image_data(store, block["data"])
    _resolve_image_urls(entry, store)
