"""The listing cache: a listing with kept counts answers exactly what reading every file whole answers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xcsh.coding.sessions.context import message_text
from xcsh.coding.sessions.entries import is_valid_header, new_header, parse_line
from xcsh.coding.sessions.info_cache import CHECK_BYTES, InfoCache
from xcsh.coding.sessions.listing import SessionInfo, list_all_sessions, list_sessions, read_session_info


def whole_read(path: Path) -> tuple[Any, ...] | None:
    """The listing facts of ``path`` computed the plain way: the whole file, every line parsed."""
    lines = path.read_bytes().split(b"\n")
    header = parse_line(lines[0])
    if header is None or not is_valid_header(header):
        return None
    count, first, summary = 0, "", None
    for raw in lines[1:]:
        entry = parse_line(raw)
        if entry is None:
            continue
        if entry.get("type") == "compaction" and isinstance(entry.get("shortSummary"), str):
            summary = entry["shortSummary"]
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict):
            count += 1
            if not first and message.get("role") == "user":
                first = message_text(message)
    title = header.get("title")
    return (
        str(header["id"]),
        title if isinstance(title, str) else summary,
        count,
        first or "(no messages)",
    )


def facts(info: SessionInfo | None) -> tuple[Any, ...] | None:
    if info is None:
        return None
    return (info.id, info.title, info.message_count, info.first_message)


def line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode() + b"\n"


def user(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "u",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


AWKWARD_LINES: list[bytes] = [
    line(user("")),  # a first user message without text: the next one is the first message
    line({"type": "custom", "id": "c", "data": {"type": "message", "message": {"role": "user"}}}),
    line({"type": "message", "id": "s", "message": "not an object"}),
    line({"type": "custom_message", "id": "m", "content": 'says "type":"message" inside'}),
    line(user('first "real" one with "type":"message" and \\"escapes\\"')),
    line({"type": "message", "id": "a", "message": {"role": "assistant", "content": []}}),
    line({"type": "compaction", "id": "k", "summary": "s", "shortSummary": "older summary"}),
    b"not json at all\n",
    b"\n",
    b"[1, 2, 3]\n",
    b'{"type": "message", "id": "n", "message": {"role": "user", "x": NaN}}\n',
    line({"type": "compaction", "id": "k2", "summary": "s", "shortSummary": 7}),
    line({"type": "compaction", "id": "k3", "summary": "s", "shortSummary": "newest summary"}),
    line({"type": "message", "id": "t", "message": {"role": "toolResult", "content": "x" * 9000}}),
    b"\xff\xfe invalid utf-8\n",
]


def session_file(directory: Path, body: bytes = b"", *, title: str | None = None) -> Path:
    header: dict[str, Any] = dict(new_header(str(directory)))
    if title is not None:
        header["title"] = title
    path = directory / f"{header['id']}.jsonl"
    path.write_bytes(line(header) + body)
    return path


def listed(directory: Path, cache: Path | None) -> list[tuple[Any, ...] | None]:
    return [facts(info) for info in list_sessions(directory, cache_file=cache)]


def expected(directory: Path) -> list[tuple[Any, ...] | None]:
    infos = list_sessions(directory)  # the order; the facts come from the plain reading
    return [whole_read(info.path) for info in infos]


def test_a_cached_listing_equals_reading_every_file_whole(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    cache = tmp_path / "agent" / "cache" / "session-info.msgpack"
    session_file(sessions, b"".join(AWKWARD_LINES))
    session_file(sessions, b"".join(AWKWARD_LINES[3:]), title="named")
    session_file(sessions, b"")
    (sessions / "not-a-session.jsonl").write_bytes(b"garbage\n")
    assert listed(sessions, cache) == expected(sessions)  # counted, then kept
    assert cache.is_file()
    assert listed(sessions, cache) == expected(sessions)  # from the kept counts
    # the awkward lines are read as json.loads reads them (NaN included): 5 and 4 messages
    assert sorted((f[2], f[1], f[3]) for f in listed(sessions, cache) if f is not None) == [
        (0, None, "(no messages)"),
        (4, "named", 'first "real" one with "type":"message" and \\"escapes\\"'),
        (5, "newest summary", 'first "real" one with "type":"message" and \\"escapes\\"'),
    ]


def test_the_kept_counts_are_what_a_listing_of_an_unchanged_file_uses(tmp_path: Path) -> None:
    cache = tmp_path / "cache.msgpack"
    path = session_file(tmp_path, line(user("hello")) + line(user("again")))
    assert facts(read_session_info(path)) == whole_read(path)
    listed(tmp_path, cache)
    st = path.stat()
    # the one change the key cannot see: the same bytes count, inode and timestamp
    path.write_bytes(path.read_bytes().replace(b'"again"', b'"AGAIN"'))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert listed(tmp_path, cache)[0] == whole_read(path)  # the texts read agree either way
    body = path.read_bytes().replace(b'{"type": "message", "id": "u"', b'{"type": "messagX", "id": "u"', 1)
    path.write_bytes(body)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert whole_read(path)[2] == 1  # type: ignore[index]
    assert listed(tmp_path, cache)[0][2] == 2  # type: ignore[index]  # the kept count: the file was not read


def test_appended_lines_are_counted_and_a_line_being_written_is_read_as_a_whole_read_would(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache.msgpack"
    path = session_file(tmp_path, line(user("")))
    assert listed(tmp_path, cache) == [whole_read(path)]
    whole = line(user("second")) + line(
        {"type": "compaction", "id": "k", "summary": "s", "shortSummary": "sum"}
    )
    with path.open("ab") as handle:
        handle.write(whole[:-5])  # a line being written: not valid JSON yet
    assert listed(tmp_path, cache) == [whole_read(path)]
    with path.open("ab") as handle:
        handle.write(whole[-5:-1])  # complete JSON, newline not yet written: counted, not kept
    assert listed(tmp_path, cache) == [whole_read(path)]
    assert whole_read(path)[1] == "sum"  # type: ignore[index]
    with path.open("ab") as handle:
        handle.write(b"\n" + line(user("third")))
    assert listed(tmp_path, cache) == [whole_read(path)] == [(whole_read(path)[0], "sum", 3, "second")]  # type: ignore[index]


def test_a_file_rewritten_in_place_or_replaced_is_counted_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache.msgpack"
    filler = line(
        {"type": "message", "id": "t", "message": {"role": "toolResult", "content": "y" * CHECK_BYTES}}
    )
    path = session_file(tmp_path, line(user("a")) + filler + line(user("b")))
    listed(tmp_path, cache)
    inode = path.stat().st_ino
    # rewritten in place (same inode), an early entry dropped, and longer than before
    text = path.read_bytes().split(b"\n")
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(b"\n".join([text[0], *text[2:]]) + line(user("c")) + line(user("d")) * 40)
    assert path.stat().st_ino == inode
    assert listed(tmp_path, cache) == [whole_read(path)]
    # replaced (new inode), fewer bytes
    replacement = tmp_path / "new.tmp"
    replacement.write_bytes(text[0] + b"\n" + line(user("only")))
    os.replace(replacement, path)
    assert listed(tmp_path, cache) == [whole_read(path)] == [(whole_read(path)[0], None, 1, "only")]  # type: ignore[index]


def test_a_changed_header_is_always_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache.msgpack"
    path = session_file(tmp_path, line(user("hi")))
    listed(tmp_path, cache)
    lines = path.read_bytes().split(b"\n", 1)
    header = json.loads(lines[0])
    header["title"] = "renamed"
    with path.open("r+b") as handle:  # in place, same inode, longer
        handle.truncate(0)
        handle.write(line(header) + lines[1])
    assert listed(tmp_path, cache) == [whole_read(path)]
    assert listed(tmp_path, cache)[0][1] == "renamed"  # type: ignore[index]


def test_a_corrupt_or_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    sessions = tmp_path / "s"
    sessions.mkdir()
    session_file(sessions, b"".join(AWKWARD_LINES))
    cache = tmp_path / "cache.msgpack"
    for junk in (b"", b"\x93\x01", b"\xc1garbage", b"\x92\x01\x81\xa1x\x93\x01\x02\x03"):
        cache.write_bytes(junk)
        assert listed(sessions, cache) == expected(sessions)
    assert listed(sessions, cache) == expected(sessions)
    blocked = tmp_path / "file-not-dir"
    blocked.write_bytes(b"")
    assert listed(sessions, blocked / "cache.msgpack") == expected(sessions)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(st.sampled_from(AWKWARD_LINES), max_size=14),
    cuts=st.lists(st.integers(min_value=1, max_value=3000), min_size=1, max_size=8),
    read_bytes=st.integers(min_value=1, max_value=400),
)
def test_listing_after_every_chunk_of_appends_equals_a_whole_read(
    tmp_path_factory: Any, lines: list[bytes], cuts: list[int], read_bytes: int
) -> None:
    directory = tmp_path_factory.mktemp("prop")
    cache = directory / "cache" / "c.msgpack"
    sessions = directory / "s"
    sessions.mkdir()
    path = session_file(sessions)
    body = b"".join(lines)
    position = 0
    for cut in [*cuts, len(body)]:
        chunk = body[position : position + cut]
        position += len(chunk)
        with path.open("ab") as handle:
            handle.write(chunk)
        assert listed(sessions, cache) == [whole_read(path)]
        # the same, the file read a few bytes at a time (lines longer than a read)
        small_reads = InfoCache(directory / "small.msgpack", read_bytes=read_bytes)
        assert facts(read_session_info(path, small_reads)) == whole_read(path)
        small_reads.flush()


def test_a_deleted_session_leaves_the_cache_at_the_next_listing_of_its_folder(tmp_path: Path) -> None:
    cache = tmp_path / "cache.msgpack"
    project, other = tmp_path / "p", tmp_path / "q"
    project.mkdir()
    other.mkdir()
    gone = session_file(project, line(user("secret first words")))
    session_file(project, line(user("kept words")))
    elsewhere = session_file(other, line(user("other project words")))
    listed(project, cache)
    listed(other, cache)
    assert b"secret first words" in cache.read_bytes()
    gone.unlink()
    assert len(listed(project, cache)) == 1
    stored = cache.read_bytes()
    assert b"secret first words" not in stored
    assert b"kept words" in stored and b"other project words" in stored  # another folder's entry stays
    elsewhere.write_bytes(b"no longer a session\n")
    assert list_sessions(tmp_path, cache_file=cache) == []  # not recursive: nothing directly there
    assert b"other project words" in cache.read_bytes()
    assert [facts(i) for i in list_all_sessions(tmp_path, cache_file=cache)] == [
        whole_read(project / n.name) for n in project.iterdir()
    ]
    assert b"other project words" not in cache.read_bytes()


def test_a_file_whose_facts_cannot_be_stored_leaves_the_other_files_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache.msgpack"
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    # written escaped, as a session line holding a lone surrogate is
    session_file(sessions, json.dumps(user("a lone \ud800 surrogate from a host")).encode() + b"\n")
    session_file(sessions, line(user("plain words")))
    odd = tmp_path / os.fsdecode(b"caf\xe9")  # not UTF-8: the path holds a surrogate escape
    odd.mkdir()
    header = json.dumps(dict(new_header(str(odd))))
    (odd / "s.jsonl").write_bytes(header.encode() + b"\n" + line(user("in an odd folder")))
    assert listed(sessions, cache) == expected(sessions)
    assert listed(odd, cache) == expected(odd)
    stored = cache.read_bytes()
    assert b"plain words" in stored
    assert b"lone" not in stored and b"odd folder" not in stored
    assert listed(sessions, cache) == expected(sessions)  # and again, from what was kept


def test_a_listing_of_all_projects_skips_sub_agent_sessions_and_drops_their_kept_counts(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache.msgpack"
    project = tmp_path / "p"
    project.mkdir()
    parent = session_file(project, line(user("parent words")))
    artifacts = project / parent.stem
    artifacts.mkdir()
    child = session_file(artifacts, line(user("child words")))
    kept = InfoCache(cache)  # a cache written when listings still went into artifacts
    read_session_info(child, kept)
    kept.flush()
    assert b"child words" in cache.read_bytes()
    assert [i.path for i in list_all_sessions(tmp_path, cache_file=cache)] == [parent]
    stored = cache.read_bytes()
    assert b"parent words" in stored and b"child words" not in stored
