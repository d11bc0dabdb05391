"""A shell command's process group is always cleaned up: after errors, cancellations, a full fd table.

``run_shell_process`` is driven directly (no session): the command's group must end up killed
(if still running), its pipe closed and the group unregistered — from ``live_groups`` at once,
from the watchdog once it is empty — whatever interrupts the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xcsh.ai import watchdog
from xcsh.coding.bash.process import live_groups, run_shell_process, shell_environment
from xcsh.testing.processes import wait_gone

WITHIN_S = 10.0


async def test_a_second_cancellation_during_the_clean_up_still_kills_and_unregisters_the_group(
    tmp_path: Path,
) -> None:
    started = asyncio.Event()
    pids: list[int] = []

    def on_output(text: str) -> None:
        pids.extend(int(word) for word in text.split())
        started.set()

    run = asyncio.create_task(
        run_shell_process(
            ["bash", "-c", "echo $$; exec sleep 1000"],
            cwd=tmp_path,
            env=shell_environment(),
            timeout_s=None,
            on_output=on_output,
        )
    )
    async with asyncio.timeout(WITHIN_S):
        await started.wait()
    (pgid,) = pids
    try:
        run.cancel()
        await asyncio.sleep(0)  # one loop turn: the run is now awaiting its clean-up …
        run.cancel()  # … which this second cancellation interrupts
        with pytest.raises(asyncio.CancelledError):
            await run
        assert pgid not in live_groups()
        assert await asyncio.to_thread(wait_gone, [pgid], WITHIN_S) == []
        assert await asyncio.to_thread(watchdog.wait_unguarded, pgid, watchdog.PRUNE_INTERVAL_S * 5)
    finally:
        try:
            os.killpg(pgid, 9)
        except ProcessLookupError:
            pass


FD_BUDGETS = r"""
import asyncio, json, os, resource, sys
from pathlib import Path
from xcsh.coding.bash.process import BashLaunchError, live_groups, run_shell_process, shell_environment

async def main():
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    env = shell_environment()
    before = set(os.listdir("/proc/self/fd"))
    outcomes = []
    for free in range(12):
        held = []
        while True:
            try:
                held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        for _ in range(min(free, len(held))):
            os.close(held.pop())
        try:
            done = await run_shell_process(
                ["bash", "-c", "echo hi"], cwd=Path(sys.argv[1]), env=env, timeout_s=30
            )
            outcomes.append("ran" if done.exit_code == 0 else f"exit {done.exit_code}")
        except BashLaunchError:
            outcomes.append("launch error")
        except BaseException as exc:
            outcomes.append(f"raised {exc!r}")
        finally:
            for fd in held:
                os.close(fd)
    leaked = set(os.listdir("/proc/self/fd")) - before
    print(json.dumps({"outcomes": outcomes, "leaked": len(leaked), "groups": sorted(live_groups())}))

asyncio.run(main())
"""


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_with_few_free_file_descriptors_a_command_runs_or_is_a_launch_error_and_leaks_nothing(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FD_BUDGETS, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert set(report["outcomes"]) == {"launch error", "ran"}, report  # nothing else raised
    assert report["leaked"] <= 1  # the watchdog's pipe, once it could start
    assert report["groups"] == []
