"""The node's own DDS transport: UDPv4 under Fast DDS, unless the user configured one.

Fast DDS's shared-memory (SHM) transport checks a peer's port when it opens it.  When the
peer's listener has not reported yet (a process still starting on a busy machine), the
opening thread sleeps ``healthy_check_timeout_ms / 3``: 333 ms by default
(eProsima/Fast-DDS#6535).  Under ``make load`` that thread was at times the node's
receiving one: when client processes started, the node went 333 ms without a joint_states
message or a request (the servo halts on stale joint_states).  With every process on UDPv4
no such stall came in 8 runs, against 8 of 17 runs on shared memory (README, "Latency, load
and threads").

So :func:`choose_transport`, called before ``rclpy.init``, sets
``FASTDDS_BUILTIN_TRANSPORTS=UDPv4`` in the node's own process when nothing says otherwise.
Other processes keep their transports: every Fast DDS participant also has UDPv4, so they
reach the node over loopback.  The user keeps control:

- ``FASTDDS_BUILTIN_TRANSPORTS`` set (``DEFAULT`` brings SHM back), a Fast DDS XML profile
  (``FASTDDS_DEFAULT_PROFILES_FILE``, ``FASTRTPS_DEFAULT_PROFILES_FILE`` or a
  ``DEFAULT_FASTDDS_PROFILES.xml`` in the working directory), or another RMW: left alone;
- ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (or ``ROS_LOCALHOST_ONLY=1``): rmw_fastrtps
  then installs SHM and UDPv4 itself, which no variable changes; the note says so.
"""
from __future__ import annotations

import os
from typing import MutableMapping, Optional

#: The variable Fast DDS (>= 2.13) reads for its built-in transports.
TRANSPORTS_VARIABLE = "FASTDDS_BUILTIN_TRANSPORTS"
_PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")
_PROFILE_FILES = ("DEFAULT_FASTDDS_PROFILES.xml", "DEFAULT_FASTRTPS_PROFILES.xml")


def choose_transport(environ: Optional[MutableMapping[str, str]] = None,
                     cwd: Optional[str] = None) -> Optional[str]:
    """Set UDPv4-only Fast DDS transports in ``environ`` when the user configured none.

    Call before ``rclpy.init``.  ``environ``: default ``os.environ``; ``cwd``: where Fast
    DDS looks for a default profile file (default: the working directory).  Returns what
    was decided, for the node's log (None: the user's own configuration, kept silently).
    """
    env = os.environ if environ is None else environ
    rmw = env.get("RMW_IMPLEMENTATION", "")
    if rmw and not rmw.startswith("rmw_fastrtps"):
        return None
    if env.get(TRANSPORTS_VARIABLE) or any(env.get(v) for v in _PROFILE_VARIABLES):
        return None
    folder = os.getcwd() if cwd is None else cwd
    if any(os.path.exists(os.path.join(folder, f)) for f in _PROFILE_FILES):
        return None
    if _localhost_only(env):
        return ("DDS transport: shared memory + UDPv4 (rmw_fastrtps sets them for "
                "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST); a process starting may hold up "
                "joint_states and requests for up to 333 ms (eProsima/Fast-DDS#6535)")
    env[TRANSPORTS_VARIABLE] = "UDPv4"
    return (f"DDS transport: UDPv4 only ({TRANSPORTS_VARIABLE}=UDPv4, no shared memory: a "
            f"process starting would hold up joint_states and requests for 333 ms, "
            f"eProsima/Fast-DDS#6535); set {TRANSPORTS_VARIABLE}=DEFAULT to keep it")


def _localhost_only(env: MutableMapping[str, str]) -> bool:
    discovery_range = env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "").upper()
    if discovery_range:
        return discovery_range == "LOCALHOST"
    return env.get("ROS_LOCALHOST_ONLY", "") == "1"
