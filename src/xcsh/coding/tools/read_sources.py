"""What ``read`` can open besides plain text files: URLs, archives, SQLite databases, notebooks, PDFs.

Each reader returns text (paged by ``read`` like a file, without line anchors,
since none of these can be edited by anchor) plus ``details``; failures raise
ToolError. Limits follow the reference:

- URLs (``http://``/``https://``): ``timeout`` seconds (default 20, clamped 1-45)
  for the whole download (connecting, headers and body; an abort ends it too), at most
  50 MiB read; HTML becomes Markdown (markdownify,
  the ``tools`` extra), other text is shown as is, at most 500 000 characters.
  The text starts with ``URL:`` and ``Content-Type:`` lines. Loopback hosts are
  reached directly, other hosts through the environment's proxy settings.
- Archives: ``a.zip``, ``a.tar``, ``a.tar.gz``/``a.tgz`` list their top level
  (``name/`` for directories, ``name (size)`` for files, max 500 entries);
  ``a.zip:dir/`` lists a directory inside, ``a.zip:dir/file`` reads a member
  (text only; binary members are named, not shown).
- SQLite (``.sqlite``, ``.sqlite3``, ``.db``, ``.db3`` with the SQLite magic),
  opened read-only: ``db.sqlite`` lists tables with row counts; ``db.sqlite:table``
  shows its schema and 5 sample rows; ``db.sqlite:table:key`` one row by primary key
  (or rowid); ``db.sqlite:table?limit=&offset=&order=&where=`` a page of rows
  (limit default 20, max 500); ``db.sqlite?q=SELECT …`` one read-only query
  (500 rows max). Tables are drawn as ``| a | b |`` rows, cells cut at 40 characters.
- Notebooks (``.ipynb``): each cell as ``# %% [code] cell N`` / ``# %% [markdown]
  cell N`` followed by its source, code outputs' text after ``# output:``.
- PDFs: the text of each page (pypdf, the ``tools`` extra) after ``--- page N ---``.

The standard-library modules behind URLs, archives and databases (``urllib.request`` with
``http.client`` and ``email``, ``zipfile``, ``tarfile``, ``sqlite3``, ``ipaddress``) are
imported by the reader that needs them, not at start-up (docs/performance.md, profile 16).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xcsh.coding.tools.errors import ToolError
from xcsh.coding.tools.optional import require
from xcsh.coding.tools.truncate import format_size
from xcsh.coding.tools.url_body import read_body

if TYPE_CHECKING:
    import sqlite3
    import urllib.request

    from xcsh.ai.abort import AbortSignal

URL_TIMEOUT_DEFAULT = 20.0
URL_TIMEOUT_MIN = 1.0
URL_TIMEOUT_MAX = 45.0
URL_MAX_BYTES = 50 * 1024 * 1024
URL_MAX_CHARS = 500_000
ARCHIVE_MAX_ENTRIES = 500
ARCHIVE_MAX_MEMBER_BYTES = 20 * 1024 * 1024
SQLITE_DEFAULT_LIMIT = 20
SQLITE_MAX_LIMIT = 500
SQLITE_SAMPLE_ROWS = 5
SQLITE_CELL_WIDTH = 40
_SQLITE_MAGIC = b"SQLite format 3\x00"
_ARCHIVE_RE = re.compile(r"\.(?:zip|tar|tar\.gz|tgz)(?=:|$)", re.IGNORECASE)
_INVISIBLE_RE = re.compile(
    r"<(script|style|noscript|template|head)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_SQLITE_RE = re.compile(r"\.(?:sqlite3?|db3?)(?=[:?]|$)", re.IGNORECASE)


@dataclass(slots=True)
class Converted:
    """Text to page through, and what ``details`` should say about its source."""

    text: str
    details: dict[str, Any]


def is_url(path: str) -> bool:
    return path.startswith(("http://", "https://"))


# ── URLs ──────────────────────────────────────────────────────────────────


def _opener(host: str) -> urllib.request.OpenerDirector:
    import ipaddress
    import urllib.request

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({})] if loopback else []
    return urllib.request.build_opener(*handlers)


def clamp_timeout(raw: object) -> float:
    if raw is None:
        return URL_TIMEOUT_DEFAULT
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ToolError("timeout must be a number of seconds")
    return max(URL_TIMEOUT_MIN, min(URL_TIMEOUT_MAX, float(raw)))


def html_to_markdown(html: str) -> str:
    markdownify = require("markdownify", "markdownify", "read (HTML pages)")
    html = _INVISIBLE_RE.sub("", html)
    text = str(markdownify.markdownify(html, heading_style="ATX"))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def read_url(url: str, timeout: float, signal: AbortSignal | None = None) -> Converted:
    """Fetch ``url`` within ``timeout`` seconds in all (connecting, headers and the whole body)
    and the size cap; HTML is converted to Markdown. ``signal`` aborts the download."""
    import urllib.error
    import urllib.request

    parsed = urllib.parse.urlsplit(url)
    if not parsed.hostname:
        raise ToolError(f"Invalid URL: {url}")
    request = urllib.request.Request(
        url, headers={"User-Agent": "xcsh", "Accept": "text/html, text/*;q=0.9, */*;q=0.5"}
    )
    deadline = time.monotonic() + timeout
    try:
        with _opener(parsed.hostname).open(request, timeout=timeout) as response:
            status = int(response.status)
            final_url = str(response.geturl())
            content_type = str(response.headers.get("Content-Type", ""))
            body = read_body(response, deadline, signal, URL_MAX_BYTES)
    except urllib.error.HTTPError as exc:
        raise ToolError(f"Fetching {url} failed: HTTP {exc.code} {exc.reason}") from exc
    except TimeoutError as exc:
        raise ToolError(
            f"Fetching {url} timed out after {timeout:g}s. Retry with a larger timeout (max 45)."
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ToolError(f"Fetching {url} failed: {reason}") from exc
    if len(body) > URL_MAX_BYTES:
        raise ToolError(f"{url} is larger than {format_size(URL_MAX_BYTES)}; not read.")
    mime = content_type.split(";")[0].strip().lower()
    charset_match = re.search(r"charset=([\w-]+)", content_type, re.IGNORECASE)
    charset = charset_match.group(1) if charset_match else "utf-8"
    if (
        mime.startswith("image/")
        or (mime and not (mime.startswith("text/") or "json" in mime or "xml" in mime))
    ) and b"\0" in body[:8192]:
        raise ToolError(
            f"{url} is {mime or 'binary'} ({format_size(len(body))}); it cannot be shown as text."
        )
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    if mime in ("text/html", "application/xhtml+xml") or (
        not mime and text.lstrip()[:15].lower().startswith("<!doctype html")
    ):
        text = html_to_markdown(text)
    notice = ""
    if len(text) > URL_MAX_CHARS:
        text = text[:URL_MAX_CHARS]
        notice = f"\n\n[Page cut at {URL_MAX_CHARS} characters]"
    header = f"URL: {final_url}\nContent-Type: {content_type or 'unknown'}\n\n"
    details = {
        "kind": "url",
        "url": url,
        "finalUrl": final_url,
        "contentType": content_type,
        "status": status,
    }
    return Converted(header + text + notice, details)


# ── archives ──────────────────────────────────────────────────────────────


def split_archive(cwd_path: Path, raw: str) -> tuple[Path, str] | None:
    """``(archive file, inner path)`` when ``raw`` names an existing archive (optionally ``:member``)."""
    for match in _ARCHIVE_RE.finditer(raw):
        candidate = raw[: match.end()]
        inner = raw[match.end() + 1 :] if match.end() < len(raw) else ""
        path = Path(candidate) if Path(candidate).is_absolute() else cwd_path / candidate
        if path.is_file():
            return path, inner.strip("/")
    return None


def _archive_entries(path: Path) -> dict[str, tuple[bool, int]]:
    """All member paths → (is directory, size); parent directories are implied."""
    import tarfile
    import zipfile

    entries: dict[str, tuple[bool, int]] = {}
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for info in archive.infolist():
                    entries[info.filename.rstrip("/")] = (info.is_dir(), info.file_size)
        else:
            with tarfile.open(path) as archive:
                for member in archive.getmembers():
                    name = member.name.removeprefix("./").rstrip("/")
                    if name and name != ".":
                        entries[name] = (member.isdir(), member.size)
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        raise ToolError(f"Cannot open archive {path.name}: {exc}") from exc
    for name in list(entries):
        parts = name.split("/")
        for depth in range(1, len(parts)):
            entries.setdefault("/".join(parts[:depth]), (True, 0))
    return entries


def _member_bytes(path: Path, name: str) -> bytes:
    import tarfile
    import zipfile

    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive, archive.open(name) as handle:
            return handle.read(ARCHIVE_MAX_MEMBER_BYTES + 1)
    with tarfile.open(path) as tar:
        member = tar.getmember(name) if name in tar.getnames() else tar.getmember("./" + name)
        extracted = tar.extractfile(member)
        if extracted is None:
            raise ToolError(f"{name} is not a regular file")
        data: bytes = extracted.read(ARCHIVE_MAX_MEMBER_BYTES + 1)
        return data


def read_archive(path: Path, shown: str, inner: str) -> Converted:
    entries = _archive_entries(path)
    details: dict[str, Any] = {"kind": "archive", "archive": shown, "member": inner}
    if inner and inner in entries and not entries[inner][0]:
        data = _member_bytes(path, inner)
        if len(data) > ARCHIVE_MAX_MEMBER_BYTES:
            raise ToolError(
                f"{shown}:{inner} is larger than {format_size(ARCHIVE_MAX_MEMBER_BYTES)}; extract it with bash."
            )
        if b"\0" in data[:8192]:
            return Converted(
                f"[Cannot read binary archive entry '{inner}' ({format_size(len(data))})]", details
            )
        return Converted(data.decode("utf-8", errors="replace"), details)
    if inner and inner not in entries:
        raise ToolError(f"Path '{inner}' not found inside {shown}")
    prefix = f"{inner}/" if inner else ""
    children = sorted(
        (name[len(prefix) :], info)
        for name, info in entries.items()
        if name.startswith(prefix) and "/" not in name[len(prefix) :] and name != inner
    )
    children.sort(key=lambda item: item[0].lower())
    lines = [
        f"{name}/" if is_dir else (f"{name} ({format_size(size)})" if size else name)
        for name, (is_dir, size) in children
    ]
    if len(lines) > ARCHIVE_MAX_ENTRIES:
        hidden = len(lines) - ARCHIVE_MAX_ENTRIES
        lines = [
            *lines[:ARCHIVE_MAX_ENTRIES],
            f"\n[{ARCHIVE_MAX_ENTRIES} entries limit reached; {hidden} more]",
        ]
    return Converted("\n".join(lines) if lines else "(empty archive directory)", details)


# ── SQLite ────────────────────────────────────────────────────────────────


def split_sqlite(cwd_path: Path, raw: str) -> tuple[Path, str, str] | None:
    """``(database, selector, query string)`` when ``raw`` names an existing SQLite file."""
    for match in _SQLITE_RE.finditer(raw):
        candidate = raw[: match.end()]
        rest = raw[match.end() :]
        path = Path(candidate) if Path(candidate).is_absolute() else cwd_path / candidate
        if not path.is_file():
            continue
        try:
            with path.open("rb") as handle:
                if handle.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
                    continue
        except OSError:
            continue
        selector, _, query = rest.partition("?")
        return path, selector.lstrip(":"), query
    return None


def _cell(value: object) -> str:
    if value is None:
        text = "NULL"
    elif isinstance(value, bytes):
        text = f"<BLOB {format_size(len(value))}>"
    else:
        text = str(value).replace("\n", "\\n").replace("\t", " ")
    return text if len(text) <= SQLITE_CELL_WIDTH else text[: SQLITE_CELL_WIDTH - 1] + "…"


def _table(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    if not rows:
        return "(no rows)"
    cells = [[_cell(c) for c in columns], *[[_cell(v) for v in row] for row in rows]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    rendered = ["| " + " | ".join(v.ljust(widths[i]) for i, v in enumerate(line)) + " |" for line in cells]
    rendered.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(rendered)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _int_param(params: dict[str, list[str]], name: str, default: int, minimum: int) -> int:
    raw = params.get(name, [None])[0]
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) < minimum:
        raise ToolError(f"SQLite {name} must be an integer >= {minimum}; got '{raw}'")
    return int(raw)


def read_sqlite(path: Path, shown: str, selector: str, query: str) -> Converted:
    import sqlite3

    params = urllib.parse.parse_qs(query, keep_blank_values=True)
    details: dict[str, Any] = {"kind": "sqlite", "database": shown}
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=3)
    except sqlite3.Error as exc:
        raise ToolError(f"Cannot open {shown}: {exc}") from exc
    try:
        return Converted(_sqlite_text(db, shown, selector, params), details)
    except sqlite3.Error as exc:
        raise ToolError(f"SQLite error in {shown}: {exc}") from exc
    finally:
        db.close()


def _sqlite_text(db: sqlite3.Connection, shown: str, selector: str, params: dict[str, list[str]]) -> str:
    if "q" in params:
        if selector or len(params) > 1:
            raise ToolError("A q= query cannot be combined with a table selector or other parameters")
        sql = params["q"][0].strip()
        if not re.match(r"^(select|with|pragma|explain)\b", sql, re.IGNORECASE):
            raise ToolError("Only read-only queries (SELECT, WITH, PRAGMA, EXPLAIN) are allowed")
        cursor = db.execute(sql)
        rows = cursor.fetchmany(SQLITE_MAX_LIMIT + 1)
        columns = [d[0] for d in cursor.description or []]
        more = len(rows) > SQLITE_MAX_LIMIT
        text = _table(columns, rows[:SQLITE_MAX_LIMIT])
        return text + (f"\n[Showing the first {SQLITE_MAX_LIMIT} rows]" if more else "")
    tables = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name COLLATE NOCASE"
        )
    ]
    if not selector:
        if params:
            raise ToolError(
                "SQLite query parameters need a table selector (db.sqlite:table?limit=10) or q=SELECT …"
            )
        if not tables:
            return "(no tables)"
        return "\n".join(
            f"{t} ({db.execute(f'SELECT COUNT(*) FROM {_quote(t)}').fetchone()[0]} rows)" for t in tables
        )
    table, _, key = selector.partition(":")
    if table not in tables:
        raise ToolError(f"No table '{table}' in {shown}. Tables: {', '.join(tables) or '(none)'}")
    info = list(db.execute(f"PRAGMA table_info({_quote(table)})"))
    columns = [row[1] for row in info]
    if key:
        if params:
            raise ToolError("A row lookup (table:key) cannot be combined with query parameters")
        pk = [row[1] for row in info if row[5]]
        column = _quote(pk[0]) if len(pk) == 1 else "rowid"
        found = db.execute(f"SELECT * FROM {_quote(table)} WHERE {column} = ? LIMIT 1", (key,)).fetchone()
        if found is None and key.lstrip("-").isdigit():
            found = db.execute(
                f"SELECT * FROM {_quote(table)} WHERE {column} = ? LIMIT 1", (int(key),)
            ).fetchone()
        if found is None:
            raise ToolError(f"No row with key '{key}' in {table}")
        return "\n".join(f"{c}: {_cell(v)}" for c, v in zip(columns, found, strict=False))
    if not params:
        create = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        sample = list(db.execute(f"SELECT * FROM {_quote(table)} LIMIT {SQLITE_SAMPLE_ROWS}"))
        return f"{create[0] if create else table}\n\nSample rows:\n{_table(columns, sample)}"
    unknown = set(params) - {"limit", "offset", "order", "where"}
    if unknown:
        raise ToolError(f"Unsupported SQLite query parameter '{sorted(unknown)[0]}'")
    limit = min(_int_param(params, "limit", SQLITE_DEFAULT_LIMIT, 1), SQLITE_MAX_LIMIT)
    offset = _int_param(params, "offset", 0, 0)
    where = params.get("where", [""])[0].strip()
    order = params.get("order", [""])[0].strip()
    clause = f" WHERE {where}" if where else ""
    if order:
        name, _, direction = order.partition(" ")
        if name not in columns or direction.strip().lower() not in ("", "asc", "desc"):
            raise ToolError(f"order must be a column of {table}, optionally followed by asc or desc")
        clause_order = f" ORDER BY {_quote(name)} {direction.strip().upper()}"
    else:
        clause_order = ""
    total = db.execute(f"SELECT COUNT(*) FROM {_quote(table)}{clause}").fetchone()[0]
    rows = list(
        db.execute(f"SELECT * FROM {_quote(table)}{clause}{clause_order} LIMIT ? OFFSET ?", (limit, offset))
    )
    text = _table(columns, rows)
    shown_to = offset + len(rows)
    if shown_to < total:
        text += f'\n[{total - shown_to} more rows; use "{table}?limit={limit}&offset={shown_to}" to continue]'
    return text


# ── notebooks and PDFs ────────────────────────────────────────────────────


def read_notebook(path: Path, shown: str) -> Converted:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ToolError(f"Cannot read {shown} as a notebook: {exc}") from exc
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ToolError(f"Invalid notebook structure (no cells list): {shown}")
    parts: list[str] = []
    for index, cell in enumerate(cells):
        kind = cell.get("cell_type", "code")
        source = cell.get("source", "")
        parts.append(
            f"# %% [{kind}] cell {index}\n" + ("".join(source) if isinstance(source, list) else str(source))
        )
        outputs: list[str] = []
        for output in cell.get("outputs", []) or []:
            text = output.get("text") or (output.get("data") or {}).get("text/plain")
            if text:
                outputs.append("".join(text) if isinstance(text, list) else str(text))
            elif output.get("output_type") == "error":
                outputs.append(f"{output.get('ename')}: {output.get('evalue')}")
        if outputs:
            parts.append("# output:\n" + "\n".join(o.rstrip("\n") for o in outputs))
    return Converted(
        "\n\n".join(parts) if parts else "(empty notebook)", {"kind": "notebook", "cells": len(cells)}
    )


def read_pdf(path: Path, shown: str) -> Converted:
    pypdf = require("pypdf", "pypdf", "read (PDF files)")
    try:
        reader = pypdf.PdfReader(str(path))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:
        raise ToolError(f"Cannot read {shown} as a PDF: {exc}") from exc
    text = "\n\n".join(f"--- page {i} ---\n{t.strip()}" for i, t in enumerate(pages, 1))
    return Converted(text or "(no text in PDF)", {"kind": "pdf", "pages": len(pages)})
