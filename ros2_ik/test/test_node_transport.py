"""The node's DDS transport (node/transport.py): UDPv4 under Fast DDS unless configured.

Why: Fast DDS's shared-memory port check sleeps 333 ms in the receiving node when a
process starts (eProsima/Fast-DDS#6535); see the module.  The choice is pure environment
logic (tested here on dicts); the node test checks that a node started with ROS's default
discovery range takes it, says so, and still answers a client that uses shared memory.
"""
from __future__ import annotations

import pytest

from ros2_ik.node.transport import TRANSPORTS_VARIABLE, choose_transport


@pytest.mark.parametrize("env", [{}, {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"},
                                 {"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"},
                                 {"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"},
                                 {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET",
                                  "ROS_LOCALHOST_ONLY": "1"}])
def test_udp_only_when_nothing_is_configured(env, tmp_path):
    note = choose_transport(env, cwd=str(tmp_path))
    assert env[TRANSPORTS_VARIABLE] == "UDPv4"
    assert "UDPv4 only" in note and "DEFAULT" in note


@pytest.mark.parametrize("env", [{TRANSPORTS_VARIABLE: "DEFAULT"},
                                 {"FASTDDS_DEFAULT_PROFILES_FILE": "/x/profiles.xml"},
                                 {"FASTRTPS_DEFAULT_PROFILES_FILE": "/x/profiles.xml"},
                                 {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
                                 {"RMW_IMPLEMENTATION": "rmw_zenoh_cpp"}])
def test_the_users_configuration_is_kept_silently(env, tmp_path):
    before = dict(env)
    assert choose_transport(env, cwd=str(tmp_path)) is None
    assert env == before


def test_a_default_profile_file_in_the_working_directory_is_kept(tmp_path):
    (tmp_path / "DEFAULT_FASTDDS_PROFILES.xml").write_text("<profiles/>")
    env: dict = {}
    assert choose_transport(env, cwd=str(tmp_path)) is None
    assert env == {}


@pytest.mark.parametrize("env", [{"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"},
                                 {"ROS_AUTOMATIC_DISCOVERY_RANGE": "localhost"},
                                 {"ROS_LOCALHOST_ONLY": "1"}])
def test_localhost_discovery_keeps_shared_memory_and_says_what_it_risks(env, tmp_path):
    before = dict(env)
    note = choose_transport(env, cwd=str(tmp_path))
    assert env == before  # rmw_fastrtps installs SHM + UDPv4 itself on LOCALHOST
    assert "333 ms" in note and "LOCALHOST" in note


def test_a_node_on_the_default_discovery_range_runs_udp_and_answers(ros_context):
    from panda_node import ARM, description, start, stop, T_frame
    from ros2_ik_interfaces.msg import IKErrorCode
    from ros2_ik_interfaces.srv import ComputeIK
    node, client = start("transport_udp", env={"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET"})
    try:
        assert "DDS transport: UDPv4 only" in node.output()
        request = ComputeIK.Request()
        request.target.header.frame_id = "panda_link0"
        request.target.pose.position.x, request.target.pose.position.z = 0.4, 0.5
        request.target.pose.orientation.x, request.target.pose.orientation.w = 1.0, 0.0
        request.position_only = True
        response = client.call(request)
        assert response.error_code.val == IKErrorCode.SUCCESS, response.message
        assert list(response.solution.name) == ARM
        T = T_frame(description()[2], response.solution.name, response.solution.position,
                    "panda_hand", "panda_link0")  # our own FK of the values sent
        assert abs(T.translation[0] - 0.4) < 1e-3 and abs(T.translation[2] - 0.5) < 1e-3
        assert abs(T.translation[1]) < 1e-3
    finally:
        stop(node, client)
