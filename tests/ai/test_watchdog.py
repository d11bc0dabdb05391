"""The process-group watchdog, with real processes: an owner process guards groups and is SIGKILLed.

The owner is a small Python program (``OWNER``) that starts ``sleep`` processes in their own
sessions, guards them with :mod:`xcsh.ai.watchdog` and reports their pids on stdout; the
tests kill it and wait, bounded, for the groups to be gone (pidfds, ``xcsh.testing.processes``). The watchdog script is also fed
directly to check what it accepts.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from xcsh.ai import watchdog
from xcsh.testing.processes import alive, session_members, wait_gone

WITHIN_S = 15.0

OWNER = r"""
import os, subprocess, sys, time
from xcsh.ai import watchdog

def group():
    return subprocess.Popen(["sleep", "1000"], start_new_session=True).pid

steps = sys.argv[1:]
pids = []
for step in steps:
    if step == "guard":
        pids.append(group())
        watchdog.guard(pids[-1])
    elif step == "guard-timeout":  # `timeout` moves itself and its command to a group of their own
        # the command reports its pid once it runs, so after `timeout` has changed its group
        shell = subprocess.Popen(
            ["bash", "-c", "timeout 1000 bash -c 'echo $$; exec sleep 1000' & wait"],
            start_new_session=True, stdout=subprocess.PIPE, text=True,
        )
        escaped = int(shell.stdout.readline())
        watchdog.guard(shell.pid)
        pids += [shell.pid, escaped]
    elif step == "release-alive":  # the leader "ended" but the group still has a process
        watchdog.release(pids[-1])
    elif step == "fork":  # a Python-level fork (multiprocessing's default) that lives on
        child = os.fork()
        if child == 0:
            sys.stdin.close()
            time.sleep(1000)
            os._exit(0)
        pids.append(child)
    elif step == "kill-watchdog":
        dead = watchdog.watchdog_pid()
        os.kill(dead, 9)
        os.waitpid(dead, 0)
print(" ".join(map(str, pids)), watchdog.watchdog_pid(), flush=True)
sys.stdin.read()  # until the test kills us
"""


@pytest.fixture
def owner() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def start_owner(started: list[subprocess.Popen[str]], *steps: str) -> tuple[subprocess.Popen[str], list[int]]:
    """Run the owner with ``steps``; its guarded pids followed by its watchdog's pid."""
    process = subprocess.Popen(
        [sys.executable, "-c", OWNER, *steps],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], WITHIN_S)
    assert ready, "the owner did not report its pids"
    line = process.stdout.readline()  # the owner writes the whole line at once
    return process, [int(x) for x in line.split()]


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def test_every_guarded_group_ends_when_the_owner_is_sigkilled_and_the_watchdog_exits(
    owner: list[subprocess.Popen[str]],
) -> None:
    process, (*groups, dog) = start_owner(owner, "guard", "guard", "release-alive")
    try:
        assert all(alive(g) for g in groups) and alive(dog)
        assert os.getsid(dog) == dog != os.getsid(process.pid)  # its own session
        process.kill()
        assert wait_gone([*groups, dog], WITHIN_S) == []
    finally:
        kill_all(groups)


@pytest.mark.skipif(shutil.which("pkill") is None, reason="sessions are reached with pkill -s")
def test_a_process_that_left_the_group_for_another_in_the_same_session_ends_too(
    owner: list[subprocess.Popen[str]],
) -> None:
    process, (shell, escaped, dog) = start_owner(owner, "guard-timeout")
    try:
        assert os.getpgid(escaped) != shell and os.getsid(escaped) == shell
        process.kill()
        assert wait_gone([shell, escaped, dog], WITHIN_S) == []
        assert session_members(shell) == []  # the sleep `timeout` started too
    finally:
        subprocess.run(["pkill", "-KILL", "-s", str(shell)], check=False)


def test_a_watchdog_that_died_is_replaced_and_the_new_one_guards_every_group(
    owner: list[subprocess.Popen[str]],
) -> None:
    process, (first, second, dog) = start_owner(owner, "guard", "kill-watchdog", "guard")
    try:
        assert alive(dog) and alive(first) and alive(second)
        process.kill()
        assert wait_gone([first, second, dog], WITHIN_S) == []
    finally:
        kill_all([first, second])


def test_a_forked_child_of_the_owner_does_not_hold_the_watchdog_s_pipe_open(
    owner: list[subprocess.Popen[str]],
) -> None:
    process, (group, forked, dog) = start_owner(owner, "guard", "fork")
    try:
        process.kill()
        assert wait_gone([group, dog], WITHIN_S) == []
        assert alive(forked)  # not ours to end: it is in the owner's group, not a guarded one
    finally:
        kill_all([group])
        os.kill(forked, signal.SIGKILL)


def test_a_closed_owner_pipe_ends_a_group_that_ignores_sigterm_with_sigkill(tmp_path: Path) -> None:
    stubborn = subprocess.Popen(
        ["bash", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert stubborn.stdout is not None and stubborn.stdout.readline() == "ready\n"
        dog = subprocess.Popen(
            watchdog.command(os.getpid()), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd=tmp_path
        )
        assert dog.stdin is not None
        dog.stdin.write(f"+{stubborn.pid}\n".encode())
        dog.stdin.close()
        assert dog.wait(timeout=WITHIN_S) == 0
        assert stubborn.wait(timeout=WITHIN_S) == -signal.SIGKILL
    finally:
        kill_all([stubborn.pid])
        stubborn.wait()


def test_the_script_forgets_unregistered_groups_and_ignores_lines_that_are_not_group_ids(
    tmp_path: Path,
) -> None:
    keep = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        marker = tmp_path / "touched"
        lines = [
            f"+{keep.pid}",
            f"-{keep.pid}",  # unregistered again: must survive the EOF
            "+0",
            "+1",
            "+01",
            "+-5",
            "+abc",
            f"+{keep.pid}+1",
            f"+$(touch {marker})",
            f"+x[$(touch {marker})]",
            "",
            "garbage",
        ]
        done = subprocess.run(
            watchdog.command(os.getpid()),
            input="\n".join(lines) + "\n",
            text=True,
            capture_output=True,
            timeout=WITHIN_S,
            cwd=tmp_path,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert alive(keep.pid) and not marker.exists()
    finally:
        keep.kill()
        keep.wait()


def test_a_released_group_stays_guarded_while_it_has_processes_and_is_forgotten_once_empty() -> None:
    leader = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        watchdog.guard(leader.pid)
        watchdog.release(leader.pid)  # as after a shell whose `server &` still runs
        assert leader.pid in watchdog.guarded()
        leader.kill()
        leader.wait()
        assert watchdog.wait_unguarded(leader.pid, watchdog.PRUNE_INTERVAL_S * 5)  # the pruning thread
    finally:
        if leader.poll() is None:
            leader.kill()
            leader.wait()


def test_a_group_never_released_is_forgotten_by_the_pruning_thread_once_empty() -> None:
    leader = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        watchdog.guard(leader.pid)  # its owner never gets to release it (an error, a cancellation)
        leader.kill()
        leader.wait()
        assert watchdog.wait_unguarded(leader.pid, watchdog.PRUNE_INTERVAL_S * 5)
    finally:
        if leader.poll() is None:
            leader.kill()
            leader.wait()


def test_a_group_whose_leader_is_an_unreaped_zombie_stays_guarded_until_the_zombie_is_reaped() -> None:
    # the zombie holds the id, so no other process can be given it: signalling it stays safe
    leader = subprocess.Popen(["true"], start_new_session=True)
    try:
        watchdog.guard(leader.pid)
        assert wait_gone([leader.pid], WITHIN_S) == []  # exited, not reaped (a pidfd, no waitpid)
        assert leader.pid not in watchdog.prune()
        watchdog.release(leader.pid)
        assert leader.pid in watchdog.guarded()
        leader.wait()
        watchdog.prune()  # (the pruning thread may have been quicker)
        assert leader.pid not in watchdog.guarded()
    finally:
        leader.wait()


def test_a_group_with_a_live_leader_is_never_pruned() -> None:
    leader = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    try:
        watchdog.guard(leader.pid)
        assert leader.pid not in watchdog.prune()
        assert leader.pid in watchdog.guarded()
    finally:
        leader.kill()
        leader.wait()
        watchdog.release(leader.pid)


NO_FREE_FD_OWNER = r"""
import logging, os, resource, subprocess, sys
from xcsh.ai import watchdog
logging.basicConfig(level=logging.WARNING)
first = subprocess.Popen(["sleep", "1000"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid
second = subprocess.Popen(["sleep", "1000"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid
resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
while True:
    try:
        held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        break
watchdog.guard(first)  # no descriptor left for the watchdog's pipe
unguarded = watchdog.watchdog_pid()
for fd in held:
    os.close(fd)
watchdog.guard(second)
print(first, second, unguarded, watchdog.watchdog_pid(), flush=True)
sys.stdin.read()
"""


def test_guard_with_no_free_file_descriptor_warns_and_a_later_watchdog_guards_that_group_too(
    owner: list[subprocess.Popen[str]],
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", NO_FREE_FD_OWNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    owner.append(process)
    assert process.stdout is not None and process.stderr is not None
    ready, _, _ = select.select([process.stdout], [], [], WITHIN_S)
    assert ready, "the owner did not report its pids"
    line = process.stdout.readline().split()
    assert line, f"guard raised: {process.stderr.read()[-2000:]}"
    first, second, unguarded, dog = line
    groups = [int(first), int(second)]
    try:
        assert unguarded == "None"  # no watchdog could start …
        process.kill()
        assert wait_gone([*groups, int(dog)], WITHIN_S) == []  # … the later one took both groups
        assert "could not start the process watchdog" in process.stderr.read()
    finally:
        kill_all(groups)


def test_an_empty_group_is_forgotten_at_release_and_our_own_group_is_refused() -> None:
    leader = subprocess.Popen(["true"], start_new_session=True)
    watchdog.guard(leader.pid)
    leader.wait()
    watchdog.release(leader.pid)
    assert leader.pid not in watchdog.guarded()
    with pytest.raises(ValueError):
        watchdog.guard(os.getpgrp())
    with pytest.raises(ValueError):
        watchdog.guard(1)
