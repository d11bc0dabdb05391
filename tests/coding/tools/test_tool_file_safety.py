"""The tools that write files never destroy one: bad text is refused before the file is touched,
writes are atomic and all-or-nothing per call, modes, links, encodings and line endings survive."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from xcsh.agent.types import AgentToolResult
from xcsh.coding.tools import ToolError, ToolOptions, create_coding_tools
from xcsh.coding.tools.hashline import anchor


async def _run(cwd: Path, name: str, args: dict[str, Any], mode: str = "hashline") -> AgentToolResult:
    tools = create_coding_tools(cwd, [name], ToolOptions(edit_mode=mode))  # type: ignore[arg-type]
    tool = next(t for t in tools if t.name == name)
    return await tool.execute("c1", args, None, lambda _: None)


def _text(result: AgentToolResult) -> str:
    block = result["content"][0]
    assert block["type"] == "text"
    return block["text"]


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if "xcsh-tmp" in p.name or "xcsh-del" in p.name)


def _notebook(path: Path) -> None:
    cell = {"cell_type": "code", "execution_count": None, "id": "a1", "metadata": {}, "outputs": []}
    notebook = {"cells": [{**cell, "source": "x = 1"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))


async def test_a_lone_surrogate_is_refused_by_every_writing_tool_and_the_file_stays(tmp_path: Path) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_text("precious\n" * 200)
    before = keep.read_bytes()
    (tmp_path / "k.py").write_text("print(1)\n")
    _notebook(tmp_path / "n.ipynb")
    notebook_before = (tmp_path / "n.ipynb").read_bytes()
    one = anchor(1, "precious")
    calls: list[tuple[str, dict[str, Any], str, str]] = [
        ("write", {"path": "keep.txt", "content": "new text \ud83d end\n"}, "hashline", "content"),
        (
            "edit",
            {
                "edits": [
                    {"path": "keep.txt", "loc": {"range": {"pos": one, "end": one}}, "content": ["x \udc80"]}
                ]
            },
            "hashline",
            r"edits\[0\]\.content",
        ),
        (
            "edit",
            {"edits": [{"path": "keep.txt", "old_text": "precious", "new_text": "p \ud83d", "all": True}]},
            "replace",
            r"edits\[0\]\.new_text",
        ),
    ]
    for name, args, mode, where in calls:
        with pytest.raises(
            ToolError, match=rf"{where} contains an unpaired surrogate \(U\+D[0-9A-F]{{3}}\) at line 1"
        ):
            await _run(tmp_path, name, args, mode)
        assert keep.read_bytes() == before
    with pytest.raises(
        ToolError, match=r"content contains an unpaired surrogate \(U\+D83D\) at line 2, column 3"
    ):
        await _run(
            tmp_path,
            "notebook",
            {"action": "edit", "notebook_path": "n.ipynb", "cell_index": 0, "content": "a\nb \ud83d"},
        )
    assert (tmp_path / "n.ipynb").read_bytes() == notebook_before
    with pytest.raises(ToolError, match=r"ops\[0\]\.out contains an unpaired surrogate"):
        await _run(
            tmp_path, "ast_edit", {"ops": [{"pat": "print($A)", "out": "log($A, '\ud83d')"}], "path": "k.py"}
        )
    assert (tmp_path / "k.py").read_text() == "print(1)\n"
    assert _leftovers(tmp_path) == []


async def test_writing_through_a_symlink_keeps_the_link_and_every_writer_keeps_the_mode(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real.sh"
    real.write_text("echo 1\n")
    real.chmod(0o754)
    (tmp_path / "link.sh").symlink_to("real.sh")
    await _run(tmp_path, "write", {"path": "link.sh", "content": "echo 2\n"})
    assert (tmp_path / "link.sh").is_symlink() and real.read_text() == "echo 2\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o754
    await _run(
        tmp_path,
        "edit",
        {"edits": [{"path": "link.sh", "old_text": "echo 2", "new_text": "echo 3"}]},
        "replace",
    )
    line = anchor(1, "echo 3")
    await _run(
        tmp_path, "edit", {"edits": [{"path": "real.sh", "loc": {"append": line}, "content": ["echo 4"]}]}
    )
    assert (tmp_path / "link.sh").is_symlink() and real.read_text() == "echo 3\necho 4\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o754
    _notebook(tmp_path / "n.ipynb")
    (tmp_path / "n.ipynb").chmod(0o640)
    await _run(
        tmp_path, "notebook", {"action": "edit", "notebook_path": "n.ipynb", "cell_index": 0, "content": "y"}
    )
    assert stat.S_IMODE((tmp_path / "n.ipynb").stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


_LIMITED = textwrap.dedent(
    """
    import asyncio, json, resource, sys
    from pathlib import Path
    from xcsh.coding.tools import ToolError, ToolOptions, create_coding_tools

    cwd = Path(sys.argv[1])
    calls = json.loads(sys.stdin.read())
    tools = {}
    for mode in ("hashline", "replace"):
        tools[mode] = {t.name: t for t in create_coding_tools(cwd, ["write", "edit"], ToolOptions(edit_mode=mode))}
    resource.setrlimit(resource.RLIMIT_FSIZE, (60000, 60000))  # files past 60 000 bytes: EFBIG

    async def main():
        out = []
        for mode, name, args in calls:
            try:
                await tools[mode][name].execute("c", args, None, lambda _: None)
                out.append("ok")
            except ToolError as exc:
                out.append(str(exc))
        print(json.dumps(out))

    asyncio.run(main())
    """
)


def test_a_write_that_hits_the_file_size_limit_leaves_every_file_of_the_call_whole(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("old content\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    (tmp_path / "c.txt").write_text("gamma\n")
    calls = [
        ["hashline", "write", {"path": "big.txt", "content": "y" * 100_000}],
        [
            "replace",
            "edit",
            {
                "edits": [
                    {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"},
                    {"path": "b.txt", "old_text": "beta", "new_text": "beta" + "y" * 70_000},
                ]
            },
        ],
        [
            "hashline",
            "edit",
            {
                "edits": [
                    {
                        "path": "c.txt",
                        "loc": {"range": {"pos": anchor(1, "gamma"), "end": anchor(1, "gamma")}},
                        "content": ["G"],
                    },
                    {"path": "new.txt", "loc": "append", "content": ["z" * 70_000]},
                ]
            },
        ],
    ]
    done = subprocess.run(
        [sys.executable, "-c", _LIMITED, str(tmp_path)],
        input=json.dumps(calls),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    errors = json.loads(done.stdout)
    assert (
        errors[0]
        == "Cannot write big.txt: the file would exceed the size limit for files. No file was changed."
    )
    assert (
        errors[1]
        == "Cannot write b.txt: the file would exceed the size limit for files. No file was changed."
    )
    assert (
        errors[2]
        == "Cannot write new.txt: the file would exceed the size limit for files. No file was changed."
    )
    assert (tmp_path / "big.txt").read_text() == "old content\n"
    assert (tmp_path / "a.txt").read_text() == "alpha\n"
    assert (tmp_path / "b.txt").read_text() == "beta\n"
    assert (tmp_path / "c.txt").read_text() == "gamma\n"
    assert not (tmp_path / "new.txt").exists()
    assert _leftovers(tmp_path) == []


async def test_a_failing_move_leaves_the_other_files_of_the_call_untouched(tmp_path: Path) -> None:
    (tmp_path / "f1.txt").write_text("hello\n")
    (tmp_path / "f2.txt").write_text("two\n")
    (tmp_path / "plain").write_text("a file, not a directory\n")
    edits = [
        {
            "path": "f1.txt",
            "loc": {"range": {"pos": anchor(1, "hello"), "end": anchor(1, "hello")}},
            "content": ["CHANGED"],
        },
        {"path": "f2.txt", "move": "plain/sub.txt"},
    ]
    with pytest.raises(
        ToolError,
        match=r"Cannot write plain/sub\.txt: a parent path is not a directory\. No file was changed\.",
    ):
        await _run(tmp_path, "edit", {"edits": edits})
    assert (tmp_path / "f1.txt").read_text() == "hello\n"
    assert (tmp_path / "f2.txt").read_text() == "two\n"
    assert _leftovers(tmp_path) == []


async def test_a_delete_staged_before_a_failing_write_is_put_back(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    (tmp_path / "f2.txt").write_text("two\n")
    (tmp_path / "plain").write_text("a file\n")
    edits = [{"path": "x.txt", "delete": True}, {"path": "f2.txt", "move": "plain/sub.txt"}]
    with pytest.raises(ToolError, match=r"a parent path is not a directory\. No file was changed\."):
        await _run(tmp_path, "edit", {"edits": edits})
    assert (tmp_path / "x.txt").read_text() == "x\n" and (tmp_path / "f2.txt").read_text() == "two\n"
    assert _leftovers(tmp_path) == []


async def test_bytes_that_are_not_utf8_survive_an_edit_of_other_lines(tmp_path: Path) -> None:
    path = tmp_path / "lat.py"
    path.write_bytes(b"# caf\xe9 cr\xe8me\nx = 2\n")
    read = _text(await _run(tmp_path, "read", {"path": "lat.py"}))
    first, second = read.split("\n")
    assert first.endswith(":# caf\ufffd cr\ufffdme")
    line1 = first.split(":")[0]
    line2 = anchor(2, "x = 2")
    assert second == f"{line2}:x = 2"
    result = await _run(
        tmp_path,
        "edit",
        {"edits": [{"path": "lat.py", "loc": {"range": {"pos": line2, "end": line2}}, "content": ["x = 3"]}]},
    )
    assert path.read_bytes() == b"# caf\xe9 cr\xe8me\nx = 3\n"
    assert "\ufffd" in result["details"]["diff"] or "x = 3" in result["details"]["diff"]
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # no lone surrogate reaches the result
    # the anchor read showed for the line with those bytes works too
    await _run(
        tmp_path, "edit", {"edits": [{"path": "lat.py", "loc": {"append": line1}, "content": ["y = 1"]}]}
    )
    assert path.read_bytes() == b"# caf\xe9 cr\xe8me\ny = 1\nx = 3\n"
    await _run(
        tmp_path, "edit", {"edits": [{"path": "lat.py", "old_text": "x = 3", "new_text": "x = 4"}]}, "replace"
    )
    assert path.read_bytes() == b"# caf\xe9 cr\xe8me\ny = 1\nx = 4\n"
    result = await _run(
        tmp_path,
        "ast_edit",
        {"ops": [{"pat": "x = $A", "out": "z = $A"}], "path": "lat.py", "lang": "python"},
    )
    assert "Skipped (not UTF-8, left unchanged; use bash to edit them): lat.py" in _text(result)
    assert path.read_bytes() == b"# caf\xe9 cr\xe8me\ny = 1\nx = 4\n"
    # what the model is shown of those bytes is U+FFFD, never a lone surrogate
    with pytest.raises(ToolError) as info:
        await _run(
            tmp_path,
            "edit",
            {"edits": [{"path": "lat.py", "old_text": "nowhere", "new_text": "x"}]},
            "replace",
        )
    assert "# caf\ufffd cr\ufffdme" in str(info.value)
    str(info.value).encode("utf-8")
    result = await _run(
        tmp_path,
        "edit",
        {
            "edits": [
                {"path": "lat.py", "loc": {"range": {"pos": line1, "end": line1}}, "content": ["# cafe"]}
            ]
        },
    )
    assert "- 1   :# caf\ufffd cr\ufffdme" in _text(result)
    json.dumps(result, ensure_ascii=False).encode("utf-8")
    assert path.read_bytes() == b"# cafe\ny = 1\nx = 4\n"


async def test_move_never_replaces_a_file_refuses_directories_and_keeps_the_mode(tmp_path: Path) -> None:
    (tmp_path / "src.txt").write_text("source\n")
    (tmp_path / "dst.txt").write_text("precious\n")
    (tmp_path / "dir").mkdir()
    with pytest.raises(ToolError, match=r"dst\.txt already exists; move never replaces a file"):
        await _run(tmp_path, "edit", {"edits": [{"path": "src.txt", "move": "dst.txt"}]})
    assert (tmp_path / "dst.txt").read_text() == "precious\n" and (tmp_path / "src.txt").exists()
    with pytest.raises(
        ToolError, match=r"dir is a directory; give the file's full new path \(e\.g\. dir/src\.txt\)"
    ):
        await _run(tmp_path, "edit", {"edits": [{"path": "src.txt", "move": "dir"}]})
    script = tmp_path / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    line = anchor(1, "echo 1")
    edits = [
        {"path": "run.sh", "loc": {"append": line}, "content": ["echo 2"]},
        {"path": "run.sh", "move": "bin/run.sh"},
    ]
    result = await _run(tmp_path, "edit", {"edits": edits})
    moved = tmp_path / "bin/run.sh"
    assert not script.exists() and moved.read_text() == "echo 1\necho 2\n"
    assert stat.S_IMODE(moved.stat().st_mode) == 0o755
    assert _text(result).startswith("Moved run.sh to bin/run.sh")


async def test_one_file_named_through_a_link_and_its_target_is_edited_once_with_both_edits(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text("one\ntwo\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    edits = [
        {"path": "AGENTS.md", "loc": {"append": anchor(1, "one")}, "content": ["after one"]},
        {"path": "CLAUDE.md", "loc": {"append": anchor(2, "two")}, "content": ["after two"]},
    ]
    result = await _run(tmp_path, "edit", {"edits": edits})
    assert (tmp_path / "AGENTS.md").read_text() == "one\nafter one\ntwo\nafter two\n"
    assert (tmp_path / "CLAUDE.md").is_symlink()
    assert _text(result).count("Updated") == 1
    replace = [
        {"path": "AGENTS.md", "old_text": "after one", "new_text": "AFTER ONE"},
        {"path": "CLAUDE.md", "old_text": "after two", "new_text": "AFTER TWO"},
    ]
    await _run(tmp_path, "edit", {"edits": replace}, "replace")
    assert (tmp_path / "AGENTS.md").read_text() == "one\nAFTER ONE\ntwo\nAFTER TWO\n"


async def test_mixed_line_endings_are_kept_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_bytes(b"a\nb\r\nc\n")
    await _run(
        tmp_path,
        "edit",
        {
            "edits": [
                {
                    "path": "m.txt",
                    "loc": {"range": {"pos": anchor(1, "a"), "end": anchor(1, "a")}},
                    "content": ["A"],
                }
            ]
        },
    )
    assert path.read_bytes() == b"A\nb\r\nc\n"
    await _run(
        tmp_path, "edit", {"edits": [{"path": "m.txt", "old_text": "b\nc", "new_text": "B\nC"}]}, "replace"
    )
    assert path.read_bytes() == b"A\nB\r\nC\n"
    (tmp_path / "all.txt").write_bytes(b"x\r\ny\r\n")
    await _run(tmp_path, "edit", {"edits": [{"path": "all.txt", "loc": "append", "content": ["z"]}]})
    assert (tmp_path / "all.txt").read_bytes() == b"x\r\ny\r\nz\r\n"


async def test_a_bom_file_s_first_line_reads_with_the_anchor_edit_accepts(tmp_path: Path) -> None:
    path = tmp_path / "b.txt"
    path.write_bytes("\ufefffirst\nsecond\n".encode())
    read = _text(await _run(tmp_path, "read", {"path": "b.txt"}))
    assert read.split("\n")[0] == f"{anchor(1, 'first')}:first"
    one = anchor(1, "first")
    await _run(
        tmp_path,
        "edit",
        {"edits": [{"path": "b.txt", "loc": {"range": {"pos": one, "end": one}}, "content": ["FIRST"]}]},
    )
    assert path.read_bytes() == "\ufeffFIRST\nsecond\n".encode()
    await _run(
        tmp_path,
        "edit",
        {"edits": [{"path": "b.txt", "old_text": "\ufeffFIRST", "new_text": "1st"}]},
        "replace",
    )
    assert path.read_bytes() == "\ufeff1st\nsecond\n".encode()


async def test_a_line_longer_than_the_page_is_read_in_pieces_and_shown_with_its_anchor(
    tmp_path: Path,
) -> None:
    long_line = "value = [" + "1, " * 40_000 + "]  "  # ~120 KB, trailing spaces the anchor ignores
    path = tmp_path / "big.py"
    path.write_text(long_line + "\r\nx = 1\n")
    text = _text(await _run(tmp_path, "read", {"path": "big.py"}))
    tag = anchor(1, long_line)
    head, notice = text.split("\n\n")
    assert head.startswith(f"{tag}:value = [1, 1, ") and len(head.encode()) <= 51_200 + len(tag) + 1
    assert notice == "[Line 1 is 117.2KB; showing its first 50.0KB. Use bash (e.g. cut -c) to see the rest]"
    result = await _run(
        tmp_path,
        "edit",
        {
            "edits": [
                {"path": "big.py", "loc": {"range": {"pos": tag, "end": tag}}, "content": ["value = []"]}
            ]
        },
    )
    assert path.read_bytes() == b"value = []\nx = 1\n" and "Updated big.py" in _text(result)
    # a long line of no letter or digit is hashed with its line number as the seed, as edit does
    (tmp_path / "rule.txt").write_text("x\n" + "=" * 120_000 + "\n")
    ruled = _text(await _run(tmp_path, "read", {"path": "rule.txt", "sel": "L2"}))
    assert ruled.startswith(f"{anchor(2, '=' * 120_000)}:====")


async def test_a_file_with_a_long_non_ascii_name_can_be_written_and_edited(tmp_path: Path) -> None:
    name = "文" * 80 + ".txt"  # 244 bytes: a valid name, but 80 characters of it are 240 bytes
    (tmp_path / name).write_text("one\n")
    result = await _run(tmp_path, "write", {"path": name, "content": "two\n"})
    assert not result.get("isError"), _text(result)
    assert (tmp_path / name).read_text() == "two\n" and _leftovers(tmp_path) == []


WRITE_READ_ONLY = """
import sys
from pathlib import Path
from xcsh.coding.tools import ToolError
from xcsh.coding.tools.file_write import write_file
try:
    write_file(Path(sys.argv[1]), b"overwritten\\n", "ro.txt")
except ToolError as exc:
    print(exc)
"""


def test_a_read_only_file_is_never_replaced_although_its_folder_is_writable() -> None:
    """Replacing a file whole needs only its folder's permission; a ``chmod a-w`` file keeps its
    promise all the same. Root may write anything, so as root this runs as ``nobody``."""
    import shutil
    import tempfile

    from coding.tools.as_user import run_unprivileged

    root = Path(tempfile.mkdtemp(prefix="xcsh-ro-"))  # pytest's base folder is 0700
    try:
        root.chmod(0o777)
        target = root / "ro.txt"
        target.write_text("kept\n")
        target.chmod(0o444)
        done = run_unprivileged(WRITE_READ_ONLY, str(target))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Permission denied: ro.txt. No file was changed."
        assert target.read_text() == "kept\n" and sorted(p.name for p in root.iterdir()) == ["ro.txt"]
    finally:
        shutil.rmtree(root, ignore_errors=True)
