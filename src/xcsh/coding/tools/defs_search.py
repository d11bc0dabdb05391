"""What the model is told about the search and run tools (``bash``, ``grep``, ``find``,
``ast_grep``, ``ast_edit``, ``calc``): descriptions and JSON parameter schemas, apart from the
code that runs them (see :mod:`xcsh.coding.tools.defs_files`).
"""

from __future__ import annotations

from typing import Any

from xcsh.coding.bash import OUTPUT_LIMIT_BYTES
from xcsh.coding.tools.truncate import format_size

# ---- bash
DEFAULT_TIMEOUT_S = 300.0
MIN_TIMEOUT_S = 1.0
MAX_TIMEOUT_S = 3600.0

BASH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash command to run (passed to `bash -c`)."},
        "description": {
            "type": "string",
            "description": "A few words saying what the command does, shown to the user.",
        },
        "timeout": {
            "type": "number",
            "description": f"Timeout in seconds (default {int(DEFAULT_TIMEOUT_S)}, "
            f"allowed {int(MIN_TIMEOUT_S)}-{int(MAX_TIMEOUT_S)}).",
        },
        "cwd": {
            "type": "string",
            "description": "Directory to run in, relative to the working directory or absolute. "
            "Default: the working directory.",
        },
        "env": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Extra environment variables for this command (name → value).",
        },
        "head": {"type": "integer", "minimum": 1, "description": "Return only the first N lines of output."},
        "tail": {"type": "integer", "minimum": 1, "description": "Return only the last N lines of output."},
    },
    "required": ["command"],
    "additionalProperties": False,
}
BASH_DESCRIPTION = (
    "Run a shell command with bash and return its combined stdout and stderr. Each call starts a fresh shell "
    "in the working directory (or `cwd`); `cd` and exported variables do not carry over to the next call. "
    "Stdin is empty, so interactive programs will not wait for input; pagers are disabled. "
    f"Output longer than {format_size(OUTPUT_LIMIT_BYTES)} keeps only its end, and the full output is saved "
    "to a file named in the result. Use `head`/`tail` to keep only some lines. A non-zero exit status is "
    "reported as an error together with the output. Prefer the `read`, `grep`, `find` and `edit` tools over "
    "cat, grep, find or sed for files."
)


# ---- grep
GREP_DEFAULT_LIMIT = 20
GREP_DEFAULT_CONTEXT = 3

GREP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Regular expression to search for (ripgrep syntax)."},
        "path": {
            "type": "string",
            "description": "File or directory to search (default: the working directory).",
        },
        "glob": {
            "type": "string",
            "description": "Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'.",
        },
        "type": {
            "type": "string",
            "description": "Only search files of this type, e.g. 'py', 'js', 'rust', 'md'.",
        },
        "i": {"type": "boolean", "description": "Case-insensitive search."},
        "pre": {
            "type": "integer",
            "minimum": 0,
            "description": f"Context lines before each match (default {GREP_DEFAULT_CONTEXT}).",
        },
        "post": {
            "type": "integer",
            "minimum": 0,
            "description": f"Context lines after each match (default {GREP_DEFAULT_CONTEXT}).",
        },
        "multiline": {"type": "boolean", "description": "Allow the pattern to match across lines."},
        "gitignore": {"type": "boolean", "description": "Skip files ignored by .gitignore (default true)."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of matches to show (default {GREP_DEFAULT_LIMIT}).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "description": "Skip this many matches first (for paging).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}
GREP_DESCRIPTION = (
    "Search file contents with a regular expression (ripgrep). Returns matching lines as 'path:line:text' with "
    "context lines as 'path-line-text' and '--' between separate groups. Respects .gitignore. Narrow the search "
    "with `path`, `glob` or `type`; page through many matches with `limit` and `offset`. "
    "Prefer this over running grep or rg in bash."
)
GREP_ANCHOR_NOTE = " Here `line` is the line's anchor `N#ID` (as `read` shows it), usable directly in `edit`."


# ---- find
DEFAULT_FIND_LIMIT = 1000

FIND_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob to match, optionally starting with a directory: '*.py', 'src/**/*.ts', "
            "'docs/*.md'. Separate several patterns with commas.",
        },
        "hidden": {"type": "boolean", "description": "Include hidden files and directories (default true)."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of paths to return (default {DEFAULT_FIND_LIMIT}).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}
FIND_DESCRIPTION = (
    "Find files by glob pattern, newest first. A pattern without '/' matches file names at any depth "
    "('*.py'); with '/' it matches paths below its leading directory ('src/**/test_*.py'). "
    "Files ignored by .gitignore and the .git directory are skipped. Returns one path per line."
)


# ---- ast_tools
AST_DEFAULT_LIMIT = 50

_AST_COMMON: dict[str, Any] = {
    "lang": {
        "type": "string",
        "description": "Language (e.g. python, typescript); default: from each file's extension.",
    },
    "path": {
        "type": "string",
        "description": "File or directory to search (default: the working directory).",
    },
    "glob": {
        "type": "string",
        "description": "Only files matching this glob, relative to path (e.g. '**/*.py').",
    },
    "sel": {"type": "string", "description": "Accepted for compatibility; not used."},
}

AST_GREP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pat": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "ast-grep patterns, e.g. 'print($X)' or 'def $NAME($$$ARGS): $$$BODY'.",
        },
        **_AST_COMMON,
        "limit": {"type": "number", "description": f"Max matches shown (default {AST_DEFAULT_LIMIT})."},
        "offset": {"type": "number", "description": "Skip this many matches first (default 0)."},
        "context": {"type": "number", "description": "Lines of context around each match (default 0)."},
    },
    "required": ["pat"],
    "additionalProperties": False,
}

AST_EDIT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ops": {
            "type": "array",
            "minItems": 1,
            "description": "Rewrites, applied in order: each match of pat becomes out.",
            "items": {
                "type": "object",
                "properties": {
                    "pat": {"type": "string", "description": "ast-grep pattern to match."},
                    "out": {
                        "type": "string",
                        "description": "Replacement; $X / $$$ARGS insert what the pattern captured.",
                    },
                },
                "required": ["pat", "out"],
                "additionalProperties": False,
            },
        },
        **_AST_COMMON,
        "limit": {"type": "number", "description": "Max total replacements."},
    },
    "required": ["ops"],
    "additionalProperties": False,
}
AST_GREP_DESCRIPTION = (
    "Search code by syntax tree (ast-grep), not text: a pattern is code with metavariables — $X matches one "
    "node, $$$ARGS any number — so 'foo($X)' finds every call of foo with one argument regardless of "
    "formatting. Prefer it over grep for code structure (calls, definitions, imports). Matches are shown "
    "with line anchors and the captured metavariables."
)
AST_EDIT_DESCRIPTION = (
    "Rewrite code by syntax tree (ast-grep): every match of `pat` is replaced by `out`, where $X / $$$ARGS "
    "in `out` insert what the pattern captured (e.g. pat 'print($X)' out 'logger.info($X)'). Changes are "
    "written immediately; the result lists each replacement. Use for mechanical, structure-aware renames and "
    "refactors across files; use `edit` for one-off changes."
)


# ---- calc

CALC_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "calculations": {
            "type": "array",
            "description": "Calculations to evaluate, in order.",
            "items": {
                "type": "object",
                "properties": {
                    "expression": {
                        "type": "string",
                        "description": "Arithmetic expression, e.g. '(17 * 3) / 4'.",
                    },
                    "prefix": {"type": "string", "description": "Text put before the result."},
                    "suffix": {"type": "string", "description": "Text put after the result."},
                },
                "required": ["expression", "prefix", "suffix"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["calculations"],
    "additionalProperties": False,
}
CALC_DESCRIPTION = (
    "Evaluate arithmetic exactly instead of doing it in your head. Supports + - * / // % ** (or ^), "
    "parentheses, decimal, hex (0x), binary (0b) and octal (0o) numbers, pi, e, and sqrt, abs, round, "
    "floor, ceil, log, log2, log10, exp, sin, cos, tan, min, max. Returns one line per calculation: "
    "prefix + result + suffix."
)


# ---- python (registered by xcsh.coding.tool_features)

PYTHON_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cells": {
            "type": "array",
            "minItems": 1,
            "description": "Cells to run in order in the persistent kernel.",
            "items": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "Python code to run."},
                    "title": {"type": "string", "description": "Short label for the cell, e.g. 'load data'."},
                },
                "required": ["code"],
                "additionalProperties": False,
            },
        },
        "timeout": {"type": "number", "description": "Seconds per cell (default 30, max 600)."},
        "cwd": {"type": "string", "description": "Working directory for the cells (default: the session's)."},
        "reset": {
            "type": "boolean",
            "description": "Restart the kernel (clearing all state) before running.",
        },
    },
    "required": ["cells"],
    "additionalProperties": False,
}

PYTHON_DESCRIPTION = (
    "Run Python in a persistent IPython kernel: variables, imports and functions stay defined between "
    "calls for the whole session. Pass one or more cells; they run in order and stop at the first error "
    "(earlier cells' effects persist, so fix and re-run only the failing one). The last expression of a "
    "cell is shown like in Jupyter; plots and PNG results come back as images. Use it for data work, "
    "quick experiments and calculations; use bash for shell commands. `reset: true` starts a fresh kernel."
)


def grep_description(hashline: bool) -> str:
    """``grep``'s description; with ``hashline`` it says that match lines carry anchors."""
    return GREP_DESCRIPTION + (GREP_ANCHOR_NOTE if hashline else "")
