"""Session file migrations (session-format §7) and load-time sanitising.

Every function is pure: it takes the parsed objects of a file (header first) and
returns new lists, copying only the objects it changes.
"""

from __future__ import annotations

from typing import Any

from xcsh.coding.sessions.entries import CURRENT_SESSION_VERSION, generate_entry_id

FileObject = dict[str, Any]


def file_version(objects: list[FileObject]) -> int:
    """The version of a parsed file (a header without ``version`` is version 1)."""
    for obj in objects:
        if obj.get("type") == "session":
            version = obj.get("version")
            return version if isinstance(version, int) and not isinstance(version, bool) else 1
    return 1


def migrate_v1_to_v2(objects: list[FileObject]) -> list[FileObject]:
    """Give every entry an id and link ``parentId`` linearly in file order.

    A compaction's ``firstKeptEntryIndex`` (an index into the file's objects,
    header included) becomes ``firstKeptEntryId``.
    """
    ids: set[str] = set()
    previous: str | None = None
    result: list[FileObject] = []
    for obj in objects:
        if obj.get("type") == "session":
            result.append({**obj, "version": 2})
            continue
        entry = dict(obj)
        entry_id = generate_entry_id(ids)
        ids.add(entry_id)
        entry["id"] = entry_id
        entry["parentId"] = previous
        previous = entry_id
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry.pop("firstKeptEntryIndex")
            if isinstance(index, int) and 0 <= index < len(result):
                target = result[index]
                if target.get("type") != "session":
                    entry["firstKeptEntryId"] = target["id"]
        result.append(entry)
    return result


def migrate_v2_to_v3(objects: list[FileObject]) -> list[FileObject]:
    """Rename the legacy ``hookMessage`` role of message entries to ``custom``."""
    result: list[FileObject] = []
    for obj in objects:
        if obj.get("type") == "session":
            result.append({**obj, "version": 3})
        elif (
            obj.get("type") == "message"
            and isinstance(obj.get("message"), dict)
            and obj["message"].get("role") == "hookMessage"
        ):
            result.append({**obj, "message": {**obj["message"], "role": "custom"}})
        else:
            result.append(obj)
    return result


def migrate_to_current(objects: list[FileObject]) -> tuple[list[FileObject], bool]:
    """Apply every needed migration; returns the objects and whether anything was migrated."""
    version = file_version(objects)
    if version >= CURRENT_SESSION_VERSION:
        return objects, False
    if version < 2:
        objects = migrate_v1_to_v2(objects)
    if version < 3:
        objects = migrate_v2_to_v3(objects)
    return objects, True


def strip_responses_replay_metadata(entry: FileObject) -> FileObject:
    """Drop OpenAI-Responses replay metadata from a loaded assistant message entry.

    The native history payload and thinking signatures belong to the provider
    connection that produced them; replaying them after a reload is rejected.
    Entries without such metadata are returned unchanged (same object).
    """
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict) or message.get("role") != "assistant":
        return entry
    payload = message.get("providerPayload")
    if not isinstance(payload, dict) or payload.get("type") != "openaiResponsesHistory":
        return entry
    new_message = {k: v for k, v in message.items() if k != "providerPayload"}
    content = message.get("content")
    if isinstance(content, list):
        new_message["content"] = [
            {k: v for k, v in block.items() if k != "thinkingSignature"}
            if isinstance(block, dict) and block.get("type") == "thinking"
            else block
            for block in content
        ]
    return {**entry, "message": new_message}
