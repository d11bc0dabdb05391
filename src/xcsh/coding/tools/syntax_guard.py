"""Refuse a change that breaks a file's syntax (for small models' ``edit`` and ``write``).

A small model often writes an edit that leaves the file unparsable (a body put on the
``def`` line, a half-deleted JSON object) and then spends its turns on the resulting
errors. For the file kinds checked here (``.py`` by ``compile``, ``.json`` by
``json.loads``), a change that turns a file that parsed into one that does not is
refused, nothing is written, and the error names the problem and shows the lines around
it as they would be. Files that did not parse before, and other kinds, are not checked.
"""

from __future__ import annotations

import json
from pathlib import Path

_CONTEXT = 3


def _problem(suffix: str, text: str) -> tuple[str, int] | None:
    """(message, 1-based line) of the first syntax error of ``text``, or None when it parses."""
    if suffix == ".py":
        try:
            compile(text, "<edited>", "exec", dont_inherit=True)
        except SyntaxError as exc:
            return f"SyntaxError: {exc.msg}", exc.lineno or 1
        except ValueError as exc:  # null bytes
            return str(exc), 1
        return None
    if suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            return f"invalid JSON: {exc.msg}", exc.lineno
        except RecursionError:  # nested past ~990 levels: valid JSON the decoder cannot check
            return None
        return None
    return None


def syntax_error_after(path: Path, shown: str, before: str, after: str) -> str | None:
    """The error text when ``after`` breaks the syntax that ``before`` had, else None."""
    suffix = path.suffix.lower()
    if suffix not in (".py", ".json") or _problem(suffix, before) is not None:
        return None
    found = _problem(suffix, after)
    if found is None:
        return None
    message, line = found
    lines = after.split("\n")
    start, end = max(1, line - _CONTEXT), min(len(lines), line + _CONTEXT)
    region = "\n".join(f"{n:>4}  {lines[n - 1]}" for n in range(start, end + 1))
    return (
        f"Not applied: after this change {shown} would no longer parse ({message} at line {line}), "
        f"so nothing was written. Lines {start}-{end} would have been:\n{region}\n"
        "Fix the change (keep one statement per line, with the file's indentation; keep brackets "
        "and commas balanced) and retry."
    )
