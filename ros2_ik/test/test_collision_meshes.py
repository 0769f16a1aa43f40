"""Mesh URI resolution, missing meshes (error or skip), and the allowed-directories gate."""
import logging
import os
import shutil

import coal
import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core.collision import (
    MeshNotFoundError,
    MeshResolver,
    PathNotAllowed,
    build_robot_geometry,
    check_allowed_path,
)
from ros2_ik.core.collision.meshes import environment_share_dirs
from ros2_ik.core.errors import InvalidArgument, RobotModelError

ERD_PANDA = "package://example-robot-data/robots/panda_description/meshes/collision/link1.stl"


def mesh_urdf(uri):
    return f"""<robot name="m">
  <link name="base"/>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="arm">
    <collision><geometry><mesh filename="{uri}"/></geometry></collision>
    <collision><geometry><sphere radius="0.1"/></geometry></collision>
  </link>
</robot>"""


@pytest.fixture
def panda_stl():
    try:
        return MeshResolver().resolve(ERD_PANDA)
    except MeshNotFoundError:
        pytest.skip("example-robot-data is not installed")


def test_package_uri_resolves_in_environment_share(panda_stl):
    assert os.path.isfile(panda_stl)
    assert any(panda_stl.startswith(share) for share in environment_share_dirs())


def test_package_uri_resolves_in_search_dirs(tmp_path, panda_stl):
    (tmp_path / "my_robot" / "meshes").mkdir(parents=True)
    shutil.copy(panda_stl, tmp_path / "my_robot" / "meshes" / "arm.stl")
    resolver = MeshResolver(search_dirs=[str(tmp_path)], use_environment_share=False)
    assert resolver.resolve("package://my_robot/meshes/arm.stl") == str(
        tmp_path / "my_robot" / "meshes" / "arm.stl")


def test_package_uri_resolves_through_the_ament_index(tmp_path, panda_stl, monkeypatch):
    pytest.importorskip("ament_index_python")
    index = tmp_path / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "my_robot").write_text("")
    (tmp_path / "share" / "my_robot").mkdir()
    shutil.copy(panda_stl, tmp_path / "share" / "my_robot" / "arm.stl")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    resolver = MeshResolver(use_environment_share=False)
    assert resolver.resolve("package://my_robot/arm.stl") == str(
        tmp_path / "share" / "my_robot" / "arm.stl")


def test_file_uri_and_absolute_path(panda_stl):
    resolver = MeshResolver(use_environment_share=False)
    assert resolver.resolve("file://" + panda_stl) == panda_stl
    assert resolver.resolve(panda_stl) == panda_stl


def test_missing_mesh_error_names_uri_and_paths(tmp_path):
    model = pin.buildModelFromXML(mesh_urdf("package://no_such_pkg/meshes/arm.stl"))
    resolver = MeshResolver(search_dirs=[str(tmp_path)])
    with pytest.raises(MeshNotFoundError) as caught:
        build_robot_geometry(model, mesh_urdf("package://no_such_pkg/meshes/arm.stl"),
                             resolver)
    message = str(caught.value)
    assert "package://no_such_pkg/meshes/arm.stl" in message
    assert str(tmp_path / "no_such_pkg" / "meshes" / "arm.stl") in message
    assert isinstance(caught.value, RobotModelError)


def test_missing_mesh_skipped_with_warning(caplog):
    urdf = mesh_urdf("package://no_such_pkg/meshes/arm.stl")
    model = pin.buildModelFromXML(urdf)
    with caplog.at_level(logging.WARNING):
        geom = build_robot_geometry(model, urdf, MeshResolver(), skip_missing_meshes=True)
    assert geom.ngeoms == 1  # the sphere stays, the mesh is gone
    assert "no_such_pkg" in caplog.text and "arm" in caplog.text


@pytest.mark.parametrize("bad, reason", [
    ('<geometry><box size="0.1 0.1"/></geometry>', "3 expected"),
    ('<origin xyz="0 0 nan"/><geometry><sphere radius="0.1"/></geometry>', "nan"),
])
def test_unreadable_collision_refused_naming_link_and_reason(bad, reason):
    """urdfdom drops a <collision> it cannot read (and the link's later ones), on stderr only.

    Checking against the rest would miss that part of the robot: refused, like a missing mesh.
    """
    urdf = mesh_urdf("unused").replace(
        '<collision><geometry><mesh filename="unused"/></geometry></collision>',
        f"<collision>{bad}</collision>")
    model = pin.buildModelFromXML(urdf)  # the kinematics do not need it: accepted
    with pytest.raises(RobotModelError) as caught:
        build_robot_geometry(model, urdf)
    message = str(caught.value)
    assert "'arm' (0 of 2)" in message and reason in message


def test_every_collision_read_is_accepted():
    """Several <collision> per link, on links joined by fixed joints too: all read, no error."""
    urdf = mesh_urdf("unused").replace(
        '<collision><geometry><mesh filename="unused"/></geometry></collision>',
        '<collision><origin xyz="0 0 0.2"/><geometry><box size="0.1 0.1 0.1"/></geometry>'
        "</collision>").replace("</robot>", (
            '<joint name="f" type="fixed"><parent link="arm"/><child link="hand"/></joint>'
            '<link name="hand"><collision><geometry><cylinder radius="0.1" length="0.2"/>'
            "</geometry></collision></link></robot>"))
    geom = build_robot_geometry(pin.buildModelFromXML(urdf), urdf)
    assert geom.ngeoms == 3


def test_meshes_become_convex_hulls(panda_stl):
    urdf = mesh_urdf("file://" + panda_stl)
    model = pin.buildModelFromXML(urdf)
    geom = build_robot_geometry(model, urdf)
    assert type(geom.geometryObjects[0].geometry).__name__ in ("ConvexBase", "Convex")


def test_allowed_path_accepts_files_inside(tmp_path):
    inside = tmp_path / "meshes" / "part.stl"
    inside.parent.mkdir()
    inside.write_text("solid x\nendsolid x\n")
    assert check_allowed_path(str(inside), [str(tmp_path)]) == os.path.realpath(inside)


@pytest.mark.parametrize("make_path", [
    lambda allowed, outside: str(outside / "part.stl"),
    lambda allowed, outside: str(allowed / ".." / "outside" / "part.stl"),
    lambda allowed, outside: "file://" + str(outside / "part.stl"),
])
def test_allowed_path_rejects_outside_and_dotdot(tmp_path, make_path):
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    with pytest.raises(PathNotAllowed) as caught:
        check_allowed_path(make_path(allowed, outside), [str(allowed)])
    assert isinstance(caught.value, InvalidArgument)
    assert str(allowed) in str(caught.value)


def test_allowed_path_rejects_symlink_escape_and_empty_list(tmp_path):
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (outside / "secret.stl").write_text("x")
    (allowed / "link.stl").symlink_to(outside / "secret.stl")
    with pytest.raises(PathNotAllowed):
        check_allowed_path(str(allowed / "link.stl"), [str(allowed)])
    with pytest.raises(PathNotAllowed):
        check_allowed_path(str(allowed / "x.stl"), [])
    with pytest.raises(PathNotAllowed):  # a sibling sharing the prefix is not inside
        check_allowed_path(str(tmp_path / "allowed_evil" / "x.stl"), [str(allowed)])


def test_a_flat_robot_mesh_becomes_a_thin_plate(tmp_path):
    """A flat collision mesh (one quad) crashed qhull in coal; it is a 1 mm plate now."""
    quad = tmp_path / "quad.stl"
    facets = [((0, 0, 0), (0.2, 0, 0), (0, 0.1, 0)), ((0.2, 0, 0), (0.2, 0.1, 0), (0, 0.1, 0))]
    quad.write_text("solid quad\n" + "".join(
        "facet normal 0 0 1\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in f)
        + "endloop\nendfacet\n" for f in facets) + "endsolid quad\n")
    urdf = mesh_urdf(str(quad))
    geometry = build_robot_geometry(pin.buildModelFromXML(urdf), urdf,
                                    MeshResolver(search_dirs=[str(tmp_path)]))
    hull = next(g.geometry for g in geometry.geometryObjects
                if not isinstance(g.geometry, coal.Sphere))
    points = hull.points()
    extent = np.ptp(np.asarray(points), axis=0)
    np.testing.assert_allclose(extent, [0.2, 0.1, 1e-3], atol=1e-9)
