"""File globs as regular expressions, shared by the ``find`` tool and TTSR rule scopes. Pure."""

from __future__ import annotations

import re


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """Compile a glob (``*``, ``?``, ``[...]``, ``**``, ``{a,b}``) to a full-match regex on ``/`` paths.

    ``*`` and ``?`` stay within one path segment, ``**/`` spans zero or more directories,
    ``[!…]`` negates a class and an unclosed ``{`` is closed at the end.
    """
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif char == "{":
            depth += 1
            out.append("(?:")
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
        elif char == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(char))
        i += 1
    out.extend(")" * depth)
    return re.compile("".join(out) + r"\Z")
