"""The protocol table names its types; the names must resolve and the fieldless list must be right.

The server does not import :mod:`xcsh.rpc.commands` at start-up (docs/performance.md, "Fifth
session: start-up"), so the table names each request ``TypedDict`` and lists the commands
that need no validation; these tests keep the names and the list in step with the classes.
"""

from __future__ import annotations

from typing import get_type_hints

import pytest

from xcsh.rpc import commands
from xcsh.rpc.protocol import _FIELDLESS, ANSWERS, SPECS, answer_types, check
from xcsh.rpc.validation import Invalid


def test_the_fieldless_list_is_exactly_the_commands_whose_request_has_only_type_and_id() -> None:
    computed = {name for name, spec in SPECS.items() if set(get_type_hints(spec.request)) <= {"type", "id"}}
    assert computed == set(_FIELDLESS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_command_names_its_own_request_type(name: str) -> None:
    request = SPECS[name].request
    assert request is getattr(commands, SPECS[name].request_name)
    assert get_type_hints(request)["type"].__args__ == (name,)


def test_the_host_answer_frames_resolve_to_their_types() -> None:
    resolved = answer_types()
    assert set(resolved) == set(ANSWERS)
    for kind, frame_type in resolved.items():
        assert get_type_hints(frame_type)["type"].__args__ == (kind,)


def test_a_fieldless_command_keeps_only_type_and_id_and_others_are_validated() -> None:
    assert check(SPECS["get_state"], {"type": "get_state", "id": 1, "extra": True}) == {
        "type": "get_state",
        "id": 1,
    }
    failed = check(SPECS["set_steering_mode"], {"type": "set_steering_mode", "mode": "sometimes"})
    assert isinstance(failed, Invalid)
    assert check(SPECS["set_steering_mode"], {"type": "set_steering_mode", "mode": "all"}) == {
        "type": "set_steering_mode",
        "mode": "all",
    }
