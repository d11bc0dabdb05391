"""The typed client has a method for every command of the schema, async and sync, with the request's fields."""

from __future__ import annotations

import inspect
import re
import typing

import pytest

from xcsh.rpc.client import RpcClient
from xcsh.rpc.frame_log import FrameLog
from xcsh.rpc.protocol import SPECS
from xcsh.rpc.schema import protocol_schema
from xcsh.rpc.sync_client import SyncRpcClient
from xcsh.rpc.typeschema import fields

COMMANDS = sorted(protocol_schema()["x-commands"])


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.mark.parametrize("client_class", [RpcClient, SyncRpcClient])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_of_the_schema_has_a_client_method_taking_its_fields(
    client_class: type, command: str
) -> None:
    method = getattr(client_class, command, None)
    assert callable(method), f"{client_class.__name__} has no method for {command}"
    parameters = set(inspect.signature(method).parameters) - {"self", "timeout"}
    wanted = {_snake(f) for f in fields(SPECS[command].request)} - {"type", "id"}
    assert parameters == wanted, command
    assert inspect.iscoroutinefunction(method) == (client_class is RpcClient)


@pytest.mark.parametrize("command", COMMANDS)
def test_client_methods_of_commands_with_data_declare_a_typed_result(command: str) -> None:
    hints = typing.get_type_hints(getattr(RpcClient, command))
    sync_hints = typing.get_type_hints(getattr(SyncRpcClient, command))
    assert hints["return"] == sync_hints["return"]
    assert hints["return"] is not typing.Any


def test_the_frame_log_keeps_a_bounded_history_with_absolute_positions() -> None:
    log = FrameLog(max_frames=3, max_bytes=None)
    frames = [{"type": "e", "n": n} for n in range(5)]
    for frame in frames:
        log.append(frame)
    assert len(log) == 5 and log.first == 2
    assert list(log) == frames[2:]
    assert log[0:] == frames[2:] and log[3:] == frames[3:] and log[-1] == frames[4]
    assert log.index(frames[3]) == 3
    with pytest.raises(IndexError):
        log[1]


def test_the_frame_log_drops_old_frames_past_its_byte_budget() -> None:
    log = FrameLog(max_frames=None, max_bytes=100)
    for n in range(10):
        log.append({"n": n}, size=40)
    assert [f["n"] for f in log] == [8, 9]
    one = FrameLog(max_frames=None, max_bytes=10)
    one.append({"big": True}, size=1000)
    assert list(one) == [{"big": True}]  # the newest frame is always kept
