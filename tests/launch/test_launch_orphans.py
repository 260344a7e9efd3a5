"""No runtime outlives its launcher, whatever killed whom.

``setsid specguard launch ... &`` then ``kill -9 -PGID``: a CI teardown or an OOM kill of a
session leader takes the launcher's whole process group at once. The runtime (in its own
session) must stop anyway: the kernel sends it SIGTERM when the launcher dies
(``specguard/launch/parent_death.py``), and the watchdog, in a session of its own, survives the
group kill to escalate. Real processes throughout: the CLI in a subprocess, its runtime, the kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from specguard.launch.probe import free_port
from tests.launch.conftest import (
    assert_no_process_left,
    launch_env,
    process_gone,
    watchdog_of,
)
from tests.launch.test_launch_fake_sglang import args
from tests.launch.test_launch_faults import health_ok, port_closed

START_TIMEOUT = 600  # a 2-core machine shared with other work: loading torch alone can take a minute


def test_kill_of_the_launchers_whole_group_leaves_nothing_serving(tiny_root: Path, launcher_factory) -> None:
    port = free_port()
    env = launch_env({"SPECGUARD_CACHE_DIR": str(tiny_root)})
    launcher = launcher_factory(["--preset", "tiny-cpu", "--port", str(port), "--health-interval", "0", "--no-smoke"], env,
                                new_session=True)
    launcher.wait_for("serving at", timeout=START_TIMEOUT)
    assert health_ok(port)
    watchdog = watchdog_of(launcher.process.pid)
    assert watchdog is not None
    assert os.getpgid(launcher.process.pid) == launcher.process.pid  # it leads its group, as under setsid
    os.killpg(launcher.process.pid, signal.SIGKILL)  # kill -9 -PGID: the launcher and every process of its group
    assert launcher.wait(timeout=30) == -signal.SIGKILL
    assert port_closed(port, timeout=60), f"port {port} still serving after the launcher's group was killed"
    assert_no_process_left(launcher.runtime_pgid, timeout=60)
    assert process_gone(watchdog, timeout=60), "the watchdog outlived the runtime it guards"


def test_the_runtime_stops_when_the_launcher_and_its_watchdog_die_together(launcher_factory) -> None:
    """Nothing left to stop it from outside: the runtime (a stand-in SGLang, so any runtime) must notice alone."""
    port = free_port()
    launcher = launcher_factory(args(port, "--no-smoke"), launch_env(fake_sglang=True))
    launcher.wait_for("serving at", timeout=120)
    watchdog = watchdog_of(launcher.process.pid)
    assert watchdog is not None and health_ok(port)
    os.kill(watchdog, signal.SIGKILL)
    assert process_gone(watchdog)
    launcher.process.kill()
    assert launcher.wait(timeout=30) == -signal.SIGKILL
    assert port_closed(port, timeout=60), f"port {port} still serving with no launcher and no watchdog"
    assert_no_process_left(launcher.runtime_pgid, timeout=60)


def test_a_command_whose_launcher_is_already_gone_never_starts() -> None:
    """The race parent_death closes: a launcher dead before the kernel was asked is seen by its pid."""
    someone_else = os.getppid()  # the child's parent is this process, not this process's parent
    result = subprocess.run(
        [sys.executable, "-m", "specguard.launch.parent_death", str(someone_else), sys.executable, "-c", "print('started')"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert "started" not in result.stdout
    assert "the launcher exited before the runtime started" in result.stderr


def test_a_command_started_through_parent_death_runs_as_itself() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "specguard.launch.parent_death", str(os.getpid()), sys.executable, "-c",
         "import os; print(os.getppid())"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == os.getpid()  # exec'd in place: the same process, the same parent
