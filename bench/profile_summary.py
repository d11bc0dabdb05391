"""Summarise py-spy collapsed stacks (``--format raw``): where the samples are, by function and by file.

Run: ``python bench/profile_summary.py FILE... [--top N] [--match TEXT]``. "self" counts samples whose
innermost frame is the function; "total" counts samples with the function anywhere on the stack.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:]*)(?::\d+)?\)$")


def _key(frame: str) -> tuple[str, str]:
    found = _FRAME.match(frame.strip())
    if not found:
        return frame.strip(), "?"
    path = found["file"]
    for marker in ("site-packages/", "src/", "lib/python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return found["func"], path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default="", help="only stacks containing this text")
    options = parser.parse_args()
    total = 0
    self_funcs: Counter[tuple[str, str]] = Counter()
    all_funcs: Counter[tuple[str, str]] = Counter()
    files: Counter[str] = Counter()
    for name in options.files:
        for line in Path(name).read_text().splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack or options.match not in stack:
                continue
            count = int(count_text)
            frames = [_key(f) for f in stack.split(";")]
            total += count
            self_funcs[frames[-1]] += count
            files[frames[-1][1]] += count
            for key in set(frames):
                all_funcs[key] += count
    print(f"{total} samples")
    for title, counter in (("self, by function", self_funcs), ("total, by function", all_funcs)):
        print(f"\n-- {title}")
        for (func, path), count in counter.most_common(options.top):
            print(f"{100 * count / total:5.1f}%  {func}  ({path})")
    print("\n-- self, by file")
    for path, count in files.most_common(options.top):
        print(f"{100 * count / total:5.1f}%  {path}")


if __name__ == "__main__":
    main()
