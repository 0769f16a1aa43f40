"""ik_node ends with its parent: no orphan commanding controllers after a launch died.

A launch that fails or is killed must not leave ik_node running (re-parented to PID 1,
still answering and publishing to controllers).  Two guards, both ending in SIGTERM to
ourselves, which rclpy's own signal handler turns into a clean shutdown (the node then logs
its shutdown line):

* Linux ``prctl(PR_SET_PDEATHSIG, SIGTERM)``: the kernel signals us when the thread that
  started us exits (immediate, but tied to that thread);
* a watchdog thread that compares ``os.getppid()`` with the parent at start-up every
  ``PARENT_POLL_S`` [s] (any parent, any platform with getppid).

A node started by PID 1 itself (a container's entry point) has no parent to follow.

And its teardown is bounded (:func:`limit_teardown`): Fast DDS 3.2 can deadlock deleting a
participant while another participant leaves.  A ``make load`` worker hung so: rmw's
``destroy_participant`` spinning in ``DomainParticipant::set_listener`` with the GIL held,
its receive threads blocked in discovery callbacks of a participant that was leaving.  A
launch stops every node at once, which is when that happens; the node would then wait for
the launch's SIGKILL.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import faulthandler
import os
import signal
import threading
from typing import Optional

#: How often the watchdog looks at the parent [s].
PARENT_POLL_S = 0.5
#: Longest teardown (executor, node, DDS participant) [s] before the process exits anyway.
TEARDOWN_LIMIT_S = 5.0
_PR_SET_PDEATHSIG = 1


def exit_with_parent(poll_s: float = PARENT_POLL_S) -> Optional[threading.Thread]:
    """Arrange SIGTERM to this process when its parent dies; returns the watchdog thread."""
    parent = os.getppid()
    if parent <= 1:
        return None
    _set_parent_death_signal()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
        return None
    watchdog = threading.Thread(target=_watch, args=(parent, poll_s),
                                name="parent-watchdog", daemon=True)
    watchdog.start()
    return watchdog


def _set_parent_death_signal() -> bool:
    """Ask Linux for SIGTERM on the parent's exit; False where prctl is not available."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, poll_s: float) -> None:
    stop = threading.Event()
    while not stop.wait(poll_s):
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def limit_teardown(limit_s: float = 0.0) -> None:
    """Exit with code 1 (every thread's stack on stderr) if the process still runs in ``limit_s``.

    Call when the teardown starts (default :data:`TEARDOWN_LIMIT_S`); a normal exit ends
    the timer.  faulthandler's timer is a C thread that needs no GIL, so it fires even when
    the teardown is stuck in C++ holding it.
    """
    faulthandler.dump_traceback_later(limit_s or TEARDOWN_LIMIT_S, exit=True)
