"""A command that is done ends its process even when a task it left behind will not take
its cancellation (a library swallowing it): Ctrl-C must stop `grace serve`/`grace dev`."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio
    from bot.cli.main import _ending_within

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue  # swallows every cancellation

    async def command() -> int:
        asyncio.get_running_loop().create_task(stubborn(), name="stubborn-task")
        await asyncio.sleep(0)
        return 3

    print("exit", asyncio.run(_ending_within(command(), 0.5)))
    """
)


def test_a_task_that_will_not_stop_cannot_keep_the_process_alive() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3, done.stderr
    assert "1 task(s) did not stop within 0.5 s" in done.stderr
    assert "stubborn-task" in done.stderr


def test_tasks_that_take_their_cancellation_end_as_before() -> None:
    script = SCRIPT.replace("continue  # swallows every cancellation", "raise")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "exit 3"
    assert "did not stop" not in done.stderr
