"""LazyPattern: compiled on its first use, then the same answers as the compiled pattern."""

from __future__ import annotations

import re

from xcsh.ai.patterns import LazyPattern


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_re_does() -> None:
    lazy = LazyPattern(r"(\w+)-(\d+)", re.IGNORECASE)
    assert lazy._compiled is None  # importing a module that defines one compiles nothing
    text = "Task-12 and phase-3"
    compiled = re.compile(r"(\w+)-(\d+)", re.IGNORECASE)
    found = lazy.search(text)
    assert found is not None and found.groups() == ("Task", "12")
    assert lazy.pattern is lazy.pattern  # compiled once
    assert [m.groups() for m in lazy.finditer(text)] == [m.groups() for m in compiled.finditer(text)]
    assert lazy.match(text, 5) is None and compiled.match(text, 5) is None
    assert (lazy.fullmatch("phase-3") or compiled).group(2) == "3"
    assert lazy.sub(r"\2", text) == compiled.sub(r"\2", text)
    assert lazy.sub(lambda m: m.group(1).upper(), text, 1) == "TASK and phase-3"
