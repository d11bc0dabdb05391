"""Guards for small models' ``edit`` and ``write``: keep the tests and the existing functions.

Used by the ``small-model`` feature (``xcsh.coding.small_model``) before an ``edit`` or
``write`` of a model with the small profile runs; each returns the text the model reads
instead of a result (nothing is written), or None when the call may run.

- **Tests stay** (``test_file_problem``): asked to make failing tests pass, the 1.5B model
  edited the test file instead of the code it tests (the task benchmark's ``fix-two-bugs``
  and ``fix-method``, although the prompt said not to). A change to an existing test file
  (``test_*.py``, ``*_test.py``, or under a ``tests``/``test`` directory; not one the model
  created in this session) is refused when the user's prompt speaks of tests passing or
  failing, or says not to change them, unless it asks to change tests (``add a test``,
  ``update the tests``). The error names the modules the test file imports, to fix instead.
- **Functions stay** (``definition_problem``): asked to add a function, the model replaced
  an existing one with it (``old_text`` the existing ``def`` line, ``new_text`` only the new
  function), or copied an existing one a second time. A change to a ``.py`` file that parsed
  before is refused when it removes a top-level function or class, or a method, that the
  user's prompt does not name (a rename names the old name), or defines one that existed
  once a second time. The error shows, ready to copy, how to add code after the file's
  last lines.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

_TEST_DIRS = {"tests", "test"}
_PASS_OR_FAIL = re.compile(r"\b(pass(es|ing|ed)?|fail(s|ing|ed|ure|ures)?)\b", re.IGNORECASE)
_FORBIDS = re.compile(
    r"\b(do not|don't|never|without)\s+(change|changing|edit|editing|modify|modifying|touch|touching)\b[^.]*\btests?\b",
    re.IGNORECASE,
)
_ASKS_FOR_TESTS = re.compile(
    r"\b(add|write|create|change|update|edit|extend|modify|rename|remove|delete|fix|adjust)\s+"
    r"(?:(?:a|an|the|new|more|failing|broken|existing|unit|its|this|that|these|those|one|two|some)\s+){0,3}"
    r"tests?\b",
    re.IGNORECASE,
)


def is_test_file(path: Path) -> bool:
    """Whether ``path`` looks like a test file by its name or directory."""
    name = path.name
    if path.suffix != ".py":
        return False
    return (
        name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or bool(_TEST_DIRS & set(path.parts[:-1]))
    )


def keeps_tests(prompt: str) -> bool:
    """Whether the prompt's task is to make tests pass (or forbids changing them) and asks no test change."""
    if _FORBIDS.search(prompt):
        return True
    return bool(_PASS_OR_FAIL.search(prompt)) and not _ASKS_FOR_TESTS.search(prompt)


def _kept_test(cwd: Path, path: Path, shown: str, prompt: str) -> tuple[str, str] | None:
    """``_imports_text`` for an existing test file the prompt keeps unchanged, else None."""
    if not is_test_file(path) or not path.is_file() or not keeps_tests(prompt):
        return None
    return _imports_text(cwd, path, shown)


def test_file_problem(cwd: Path, path: Path, shown: str, prompt: str) -> str | None:
    """The refusal for changing the existing test file ``path`` when the prompt keeps tests, else None."""
    kept = _kept_test(cwd, path, shown, prompt)
    if kept is None:
        return None
    where, target = kept
    return (
        f"Not applied: {shown} is a test file, and the task is to make the tests pass, so the tests are "
        f"right and the code they test is wrong. Do not change {shown}.\n"
        + where
        + f"Read {target}, fix the code there (edit with old_text copied from what you read), "
        "then run the test again."
    )


def test_read_note(cwd: Path, path: Path, shown: str, prompt: str) -> str | None:
    """A note for the result of reading the test file ``path`` when the prompt keeps tests, else None."""
    kept = _kept_test(cwd, path, shown, prompt)
    if kept is None:
        return None
    where, target = kept
    return (
        f"\n\nNote: {shown} is a test file. The task is to make it pass without changing it, so the "
        f"code to fix or add is in the code it tests.\n{where}Read {target} next and make the change there."
    )


def _imports_text(cwd: Path, path: Path, shown: str) -> tuple[str, str]:
    """("<test> imports … from <module>.\\n" or "", the module files to read or "the code under test")."""
    imported = _local_imports(cwd, path)
    if not imported:
        return "", "the code under test"
    where = "; ".join(
        f"{', '.join(names) + ' from ' if names else ''}{module}" for module, names in imported.items()
    )
    return f"{shown} imports {where}.\n", " and ".join(imported)


def _local_imports(cwd: Path, test: Path) -> dict[str, list[str]]:
    """Project files the test imports (shown relative to ``cwd``) → the names it takes from each."""
    try:
        tree = ast.parse(test.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return {}
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            module, names = node.module, [a.name for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                _add(found, cwd, test, alias.name, [])
            continue
        else:
            continue
        _add(found, cwd, test, module, names)
    return found


def _add(found: dict[str, list[str]], cwd: Path, test: Path, module: str, names: list[str]) -> None:
    relative = Path(*module.split("."))
    for base in (test.parent, cwd):
        for candidate in (base / relative.with_suffix(".py"), base / relative / "__init__.py"):
            if candidate.is_file() and candidate != test:
                try:
                    shown = candidate.relative_to(cwd).as_posix()
                except ValueError:
                    shown = str(candidate)
                found.setdefault(shown, []).extend(n for n in names if n not in found.get(shown, []))
                return


def _definitions(text: str) -> Counter[str] | None:
    """Top-level functions and classes and the methods of top-level classes (``Class.method``), counted."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    names: Counter[str] = Counter()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] += 1
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names[f"{node.name}.{item.name}"] += 1
    return names


def definition_problem(shown: str, before: str, after: str, prompt: str, added: str = "") -> str | None:
    """The refusal when ``after`` drops or duplicates a definition of ``before`` (a ``.py`` file), else None.

    ``added`` is the model's new text (an edit's ``new_text``), used in the ready-to-copy shape.
    """
    old, new = _definitions(before), _definitions(after)
    if old is None or new is None:
        return None
    removed = [n for n in old if not new[n] and not _named(n, prompt)]
    doubled = [n for n in new if new[n] > 1 and new[n] > old[n] and old[n]]
    if doubled:
        listed = ", ".join(f"{n}()" for n in doubled)
        return (
            f"Not applied: {shown} already defines {listed}, and after this change it would define "
            f"{'it' if len(doubled) == 1 else 'them'} twice. Do not copy existing code into new_text: "
            "put only the new code there.\n" + _how_to_add(before, added, doubled)
        )
    if not removed:
        return None
    listed = ", ".join(f"{n}()" for n in removed)
    return (
        f"Not applied: this change would remove {listed} from {shown} (old_text contains "
        f"{'its' if len(removed) == 1 else 'their'} definition and new_text does not define "
        f"{'it' if len(removed) == 1 else 'them'} again). The task does not ask to remove {listed}: keep "
        f"{'it' if len(removed) == 1 else 'them'} and add the new code after the existing code.\n"
        + _how_to_add(before, added, [])
    )


def _named(name: str, prompt: str) -> bool:
    return any(re.search(rf"\b{re.escape(part)}\b", prompt) for part in name.split(".")[-1:])


def _how_to_add(before: str, added: str, doubled: list[str]) -> str:
    """The edit that appends ``added`` (its new definitions only) after the file's last lines."""
    lines = before.rstrip("\n").split("\n")
    anchor = ""
    for count in range(1, min(len(lines), 4) + 1):
        anchor = "\n".join(lines[-count:])
        if anchor.strip() and before.count(anchor) == 1:
            break
    new_code = _new_definitions(added, doubled)
    if new_code is None:
        return (
            "To add a function, use as old_text the file's last lines, and as new_text those same lines, "
            "two empty lines, and the whole new function (its def line and its body):\n"
            f'"old_text": {json.dumps(anchor)}'
        )
    return (
        "To add it, use as old_text the file's last lines and as new_text those lines followed by the "
        "new code, ready to copy:\n"
        f'"old_text": {json.dumps(anchor)}, "new_text": {json.dumps(anchor + chr(10) * 3 + new_code)}'
    )


def _new_definitions(added: str, doubled: list[str]) -> str | None:
    """The top-level definitions of ``added`` that are not in ``doubled``, or None when it holds none."""
    try:
        tree = ast.parse(added)
    except (SyntaxError, ValueError):
        return None
    lines = added.split("\n")
    parts = [
        "\n".join(lines[min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.name not in doubled
    ]
    return "\n\n\n".join(parts) if parts else None
