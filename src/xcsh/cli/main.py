"""Process entry point (placeholder until the CLI lands)."""

from __future__ import annotations

import sys

from xcsh import __version__


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--version" in args:
        sys.stdout.write(f"{__version__}\n")
        return 0
    sys.stderr.write("xcsh: not implemented yet\n")
    return 1
