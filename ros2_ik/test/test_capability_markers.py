"""A saved capability map on ``~/capability_map`` (MarkerArray), over real DDS."""
import numpy as np
import pytest

pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from ros2_ik.core import errors  # noqa: E402
from ros2_ik.core.maps.batch import GroupSpec  # noqa: E402
from ros2_ik.core.maps.capability import MapSettings, build_map, load_map  # noqa: E402
from ros2_ik.node.capability_markers import LATCHED, markers  # noqa: E402
from ros2_ik.node.harness import call_resending, wait_for  # noqa: E402
from panda_node import start, stop  # noqa: E402

SMALL = MapSettings(resolution_m=0.2, radius_m=0.6, center_m=(0.0, 0.0, 0.333), directions=3,
                    rolls=2, timeout_s=0.005, batch_seed=0, chunk_voxels=50, samples=50_000)


@pytest.fixture(scope="module")
def map_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("map") / "panda_map.npz"
    build_map(GroupSpec(arm="panda"), path, SMALL)
    return path


def test_markers_hold_the_reachable_voxels(map_file):
    arrays = load_map(map_file)
    msg = markers(arrays, Time())
    (marker,) = msg.markers
    reachable = arrays["reach_index"] > 0
    assert 0 < reachable.sum() < len(reachable)
    assert marker.type == Marker.CUBE_LIST and marker.header.frame_id == "panda_link0"
    assert len(marker.points) == len(marker.colors) == reachable.sum()
    got = np.array([[p.x, p.y, p.z] for p in marker.points])
    np.testing.assert_allclose(got, arrays["voxels"][reachable])
    assert marker.scale.x == pytest.approx(0.9 * SMALL.resolution_m)


def test_load_map_names_what_is_wrong(tmp_path):
    with pytest.raises(errors.InvalidArgument, match="no such file"):
        load_map(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"junk")
    with pytest.raises(errors.InvalidArgument, match="not a map"):
        load_map(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(errors.InvalidArgument, match="not a map"):
        load_map(tmp_path / "other.npz")


def test_node_publishes_the_map_and_reloads_on_a_parameter_change(ros_context, map_file,
                                                                  tmp_path):
    node, client = start("capmap", f"capability_map_file:={map_file}")
    try:
        got = []
        client.node.create_subscription(MarkerArray, "/capmap/ik_node/capability_map",
                                        got.append, LATCHED)  # joins after the publish
        wait_for(lambda: got, 10, "the latched capability map", client.spin)
        expected = int((load_map(map_file)["reach_index"] > 0).sum())
        assert len(got[-1].markers[0].points) == expected
        # a bad file: logged, nothing published, the node keeps serving
        setter = client.node.create_client(SetParameters, "/capmap/ik_node/set_parameters")
        assert setter.wait_for_service(timeout_sec=10)

        def set_file(path):
            req = SetParameters.Request(parameters=[Parameter(
                name="capability_map_file", value=ParameterValue(
                    type=ParameterType.PARAMETER_STRING, string_value=str(path)))])
            assert call_resending(setter, req, client.spin).results[0].successful
        (tmp_path / "bad.npz").write_bytes(b"not a map")
        count = len(got)
        set_file(tmp_path / "bad.npz")
        set_file(map_file)  # back to the good one: published again
        wait_for(lambda: len(got) > count, 10, "the reloaded map", client.spin)
        assert len(got[-1].markers[0].points) == expected
    finally:
        stop(node, client)
