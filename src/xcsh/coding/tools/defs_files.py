"""What the model is told about the file tools (``read``, ``write``, ``edit`` in both modes,
``notebook``, ``ls``): descriptions and JSON parameter schemas, apart from the code that runs them.

The session's tool list (``dumpTools``, the system prompt) is built from these at start-up;
the implementation modules are imported when a tool first runs (:mod:`xcsh.coding.tools`).
Each implementation builds its :class:`~xcsh.agent.tool.AgentTool` from the same values.
"""

from __future__ import annotations

from typing import Any, Literal

from xcsh.coding.tools.truncate import MAX_BYTES, MAX_LINES, format_size

Numbering = Literal["none", "number", "hash"]


# ---- read
DEFAULT_READ_LINES = 300

READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File or directory (relative or absolute), archive member (a.zip:dir/file), "
            "SQLite selector (db.sqlite:table, db.sqlite:table?limit=10&where=..., db.sqlite?q=SELECT ...), "
            "or an http(s) URL.",
        },
        "sel": {
            "type": "string",
            "description": (
                "Optional line selection: 'L50' (from line 50), 'L50-L120' (a range), 'L50-' (to the end), "
                f"or 'raw' (whole file). Default: the first {DEFAULT_READ_LINES} lines."
            ),
        },
        "timeout": {"type": "number", "description": "Seconds to wait for a URL (default 20, max 45)."},
    },
    "required": ["path"],
    "additionalProperties": False,
}

READ_SHOWN_AS: dict[str, str] = {
    "none": "Text is returned exactly as stored (no line numbers), ",
    "number": "Each line is shown as `N:text` (N = line number; the prefix is not part of the file), ",
    "hash": "Each line is shown as `N#ID:text`, where `N#ID` is the line's anchor for `edit` "
    "(the prefix is not part of the file), ",
}
READ_DESCRIPTION = (
    "Read a file or list a directory. {shown}"
    f"{DEFAULT_READ_LINES} lines by default and at most {MAX_LINES} lines or {format_size(MAX_BYTES)} per call; "
    "when more remains the result ends with a notice telling which `sel` continues it. "
    "Use `sel` to read a line range (e.g. 'L200-L260'). Directories are listed one entry per line, "
    "directories ending with '/'. PNG, JPEG, GIF and WebP images are returned as images. "
    "Also reads web pages (http/https URLs, HTML as Markdown), zip/tar archives (list, or a.zip:path/in/archive), "
    "SQLite databases (tables, schema, rows, read-only queries), Jupyter notebooks and PDFs as text. "
    "Prefer this over `cat`, `head` or `sed` in bash."
)


# ---- write

WRITE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File to write, relative to the working directory or absolute.",
        },
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}
WRITE_DESCRIPTION = (
    "Write a file, creating it (and any missing parent directories) or replacing its whole content. "
    "Use it for new files or complete rewrites; prefer `edit` for changing part of an existing file. "
    "The content is written exactly as given."
)


# ---- edit

EDIT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": "Replacements to apply, in order. All are checked before any file is written.",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to edit (relative or absolute)."},
                    "old_text": {
                        "type": "string",
                        "description": "Exact text to find, copied from the file including indentation. "
                        "It must occur exactly once unless `all` is true.",
                    },
                    "new_text": {"type": "string", "description": "Text that replaces old_text."},
                    "all": {
                        "type": "boolean",
                        "description": "Replace every occurrence instead of requiring a unique match.",
                    },
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["edits"],
    "additionalProperties": False,
}
EDIT_DESCRIPTION = (
    "Edit files by replacing text. Each edit replaces `old_text` with `new_text` in `path`. "
    "`old_text` must match the file exactly (copy it from `read` output) and be unique in the file: "
    "include enough surrounding lines, or set `all` to replace every occurrence. If there is no exact match, "
    "a match that differs only in whitespace is accepted. If any edit fails, no file is changed and the error "
    "shows the closest text found. Use `write` to create files."
)


# ---- edit_hashline
_ANCHOR = {"type": "string", "description": 'Anchor "N#ID" copied from read output.'}

HASHLINE_EDIT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": "Edits to apply. Anchors refer to the file as last read; all are checked before any file is written.",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to edit (relative or absolute)."},
                    "loc": {
                        "description": "Where the content goes.",
                        "anyOf": [
                            {"type": "string", "enum": ["append", "prepend"]},
                            {
                                "type": "object",
                                "properties": {"append": _ANCHOR},
                                "required": ["append"],
                                "additionalProperties": False,
                            },
                            {
                                "type": "object",
                                "properties": {"prepend": _ANCHOR},
                                "required": ["prepend"],
                                "additionalProperties": False,
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "range": {
                                        "type": "object",
                                        "properties": {
                                            "pos": {
                                                **_ANCHOR,
                                                "description": "First line replaced (inclusive).",
                                            },
                                            "end": {
                                                **_ANCHOR,
                                                "description": "Last line replaced (inclusive).",
                                            },
                                        },
                                        "required": ["pos", "end"],
                                        "additionalProperties": False,
                                    }
                                },
                                "required": ["range"],
                                "additionalProperties": False,
                            },
                        ],
                    },
                    "content": {
                        "description": "New lines (array of strings preferred); null removes the range.",
                        "anyOf": [
                            {"type": "array", "items": {"type": "string"}},
                            {"type": "string"},
                            {"type": "null"},
                        ],
                    },
                    "delete": {"type": "boolean", "description": "Delete the file."},
                    "move": {"type": "string", "description": "Rename the file to this path."},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["edits"],
    "additionalProperties": False,
}
HASHLINE_EDIT_DESCRIPTION = """Edit files by line anchors. `read` shows every line as `N#ID:text`; `N#ID` is that line's anchor.
Each edit is {path, loc, content}:
- loc {"range": {"pos": "N#ID", "end": "M#ID"}} replaces lines N..M (inclusive) with content; content null deletes them.
- loc {"append": "N#ID"} / {"prepend": "N#ID"} inserts content after / before line N.
- loc "append" / "prepend" inserts at the end / start of the file (creating a missing file).
content is the literal new lines as an array of strings, with the file's indentation (real tabs where the file uses tabs).
{path, delete: true} deletes a file; {path, move: "new/path"} renames it.
Copy anchors exactly from the latest read of the file. If the file changed since, the edit is refused and the error shows current anchors.
When content ends with a closing line (`}`, `)`, `]`), make sure `end` covers the original closing line, or it will be doubled.
The result shows the changed lines with their new anchors; re-read other parts of a file before editing them again."""


# ---- notebook
NOTEBOOK_ACTIONS = ("edit", "insert", "delete")

NOTEBOOK_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": list(NOTEBOOK_ACTIONS),
            "description": "What to do with the cell.",
        },
        "notebook_path": {"type": "string", "description": "Path to the .ipynb file (relative or absolute)."},
        "cell_index": {
            "type": "number",
            "description": "0-based index of the cell (for insert: the new cell's position).",
        },
        "content": {"type": "string", "description": "The cell's new source (required for edit and insert)."},
        "cell_type": {
            "type": "string",
            "enum": ["code", "markdown"],
            "description": "Type of an inserted cell (default: code).",
        },
    },
    "required": ["action", "notebook_path", "cell_index"],
    "additionalProperties": False,
}
NOTEBOOK_DESCRIPTION = (
    "Edit a Jupyter notebook (.ipynb) cell by cell: action 'edit' replaces the source of cell `cell_index`, "
    "'insert' adds a new code or markdown cell at that position, 'delete' removes it. Indexes are 0-based. "
    "Use `read` on the notebook first to see its cells; do not edit .ipynb JSON with `edit` or `write`."
)


# ---- ls
DEFAULT_LS_LIMIT = 500

LS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Directory to list, relative to the working directory or absolute. Default: the working directory.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of entries to return (default {DEFAULT_LS_LIMIT}).",
        },
    },
    "required": [],
    "additionalProperties": False,
}
LS_DESCRIPTION = (
    "List the entries of a directory, sorted alphabetically (case-insensitive). Directories end with '/'. "
    "Hidden files are included. Use `find` to search recursively by name and `read` to open a file."
)


def read_description(numbering: Numbering) -> str:
    """``read``'s description for how it shows lines (plain, numbered or with hashline anchors)."""
    return READ_DESCRIPTION.replace("{shown}", READ_SHOWN_AS[numbering])
