"""Capability maps (core/maps/capability.py) and the ``reach`` CLI on a tiny grid."""
import json
from dataclasses import asdict

import numpy as np
import pytest

from ros2_ik import reach
from ros2_ik.core import errors, robots
from ros2_ik.core.maps.batch import GroupSpec
from ros2_ik.core.maps.capability import (MapSettings, build_map, fibonacci_directions,
                                          orientations, voxel_centers)

PANDA = GroupSpec(arm="panda")
TINY = MapSettings(resolution_m=0.25, radius_m=0.3, center_m=(0.3, 0.0, 0.4), directions=3,
                   rolls=2, timeout_s=0.005, batch_seed=0, chunk_voxels=3, samples=50_000)


class _Stop(Exception):
    pass


def test_orientations_are_rotations_with_spread_approach_axes():
    R = orientations(6, 3)
    assert R.shape == (18, 3, 3)
    np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape),
                               atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0)
    d = fibonacci_directions(100)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0)
    assert np.linalg.norm(d.mean(axis=0)) < 0.05  # evenly spread: mean near 0


def test_map_solutions_reach_their_targets(tmp_path):
    out = tmp_path / "map.npz"
    arrays = build_map(PANDA, out, TINY)
    _, group = robots.load_group("panda")
    saved = np.load(out)
    np.testing.assert_array_equal(saved["reach_index"], arrays["reach_index"])
    assert 0 < arrays["reach_index"].mean() < 1
    method = arrays["method"]
    assert method.shape == arrays["solved"].shape and set(np.unique(method)) <= {0, 1, 2}
    assert not arrays["solved"][method == 0].any()  # cells no sample came near: not solved
    for v, row_q, row_ok in zip(arrays["voxels"], arrays["q"], arrays["solved"]):
        for R, q, ok in zip(arrays["rotations"], row_q, row_ok):
            assert ok == np.isfinite(q).all()
            if ok:
                T = group.fk(q.astype(float), group.tip)
                assert np.linalg.norm(T.translation - v) < 1e-4 + 1e-5  # float32 q
    assert not (tmp_path / "map.npz.partial").exists()


def test_interrupted_map_resumes_without_recomputing(tmp_path):
    out = tmp_path / "map.npz"
    calls = []

    def stop_after_first(done, total):
        calls.append(done)
        raise _Stop

    with pytest.raises(_Stop):
        build_map(PANDA, out, TINY, progress=stop_after_first)
    partial = np.load(tmp_path / "map.npz.partial" / "chunk_00000000.npz")
    assert not out.exists() and len(partial["solved"]) == 3
    resumed, told = [], []
    arrays = build_map(PANDA, out, TINY, progress=lambda d, t: resumed.append(d),
                       resumed=lambda folder, done, total: told.append((done, total)))
    assert resumed[0] == 6 and 3 not in resumed  # the first chunk was not recomputed
    assert told == [(3, len(arrays["voxels"]))]
    np.testing.assert_array_equal(arrays["solved"][:3], partial["solved"])


def test_every_finished_chunk_is_saved(tmp_path):
    """Stopped after the second chunk: both are on disk, the resume starts after them."""
    out = tmp_path / "map.npz"

    def stop_after_second(done, total):
        if done == 6:
            raise _Stop

    with pytest.raises(_Stop):
        build_map(PANDA, out, TINY, progress=stop_after_second)
    resumed = []
    build_map(PANDA, out, TINY, progress=lambda d, t: resumed.append(d))
    assert resumed[0] > 6 and 6 not in resumed  # chunks 1 and 2 were not recomputed


def test_corrupt_or_mismatched_resume_file_is_a_clear_error(tmp_path):
    out = tmp_path / "map.npz"
    partial = tmp_path / "map.npz.partial"
    partial.mkdir()
    (partial / "settings.json").write_text("{not json")
    with pytest.raises(errors.InvalidArgument, match="corrupt"):
        build_map(PANDA, out, TINY)
    (partial / "settings.json").write_text('{"resolution_m": 1.0}')
    with pytest.raises(errors.InvalidArgument, match="other settings"):
        build_map(PANDA, out, TINY)
    (partial / "settings.json").write_text(json.dumps(asdict(TINY)))
    (partial / "chunk_00000000.npz").write_bytes(b"not a zip")
    with pytest.raises(errors.InvalidArgument, match="chunk_00000000.npz: corrupt"):
        build_map(PANDA, out, TINY)
    assert not out.exists()


def test_bad_grid_and_paths(tmp_path):
    with pytest.raises(errors.InvalidArgument, match="resolution_m"):
        voxel_centers((0, 0, 0), 1.0, 0.0)
    with pytest.raises(errors.InvalidArgument, match="radius_m"):
        voxel_centers((0, 0, 0), -1.0, 0.1)
    with pytest.raises(errors.InvalidArgument, match="out"):
        build_map(PANDA, tmp_path / "missing_dir" / "m.npz", TINY)


@pytest.mark.parametrize("argv, field", [
    (["--arm", "nope"], "arm"), (["--directions", "0"], "directions"),
    (["--resolution", "-1"], "resolution"), (["--timeout-ms", "0"], "timeout-ms")])
def test_cli_bad_input_exits_2(tmp_path, capsys, argv, field):
    assert reach.main(argv + ["--out", str(tmp_path / "m.npz"), "--radius", "0.3"]) == 2
    assert field in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


TINY_ARGS = ["--resolution", "0.25", "--radius", "0.3", "--center", "0.3", "0", "0.4",
             "--directions", "3", "--rolls", "2", "--timeout-ms", "5", "--chunk-voxels", "3",
             "--samples", "50000"]


def test_cli_ctrl_c_is_one_line_and_the_next_run_resumes(tmp_path, capsys, monkeypatch):
    out = str(tmp_path / "m.npz")

    def interrupted_after_first_chunk():
        def update(done, total):
            raise KeyboardInterrupt
        return update, None
    monkeypatch.setattr(reach, "_progress", interrupted_after_first_chunk)
    assert reach.main(TINY_ARGS + ["--out", out]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "interrupted" in err and "resume" in err
    monkeypatch.setattr(reach, "_progress", lambda: (None, None))
    assert reach.main(TINY_ARGS + ["--out", out]) == 0
    err = capsys.readouterr().err
    assert f"resuming {out}.partial: 3 of " in err, err


def test_cli_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit) as done:
        reach.main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for default in ("voxel pitch [m] (default: 0.05)", "(default: 64)",
                    "(default: reach_map.npz)", "(default: panda)"):
        assert default in text, text


def test_cli_writes_npz_png_and_a_progress_bar(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib is an extra: make extras")
    out = tmp_path / "m.npz"
    assert reach.main(["--resolution", "0.3", "--radius", "0.3", "--center", "0.3", "0", "0.4",
                       "--directions", "2", "--rolls", "1", "--samples", "20000",
                       "--out", str(out)]) == 0
    assert np.load(out)["voxels"].shape[1] == 3
    assert out.with_suffix(".png").stat().st_size > 1000
    bar = capsys.readouterr().err  # tqdm: voxels done, rate
    assert "voxel" in bar and "/s" in bar


SCENE = """ros2_ik_scene: 1
objects:
  - name: block
    frame_id: panda_link0
    pose: {position: [0.55, 0.0, 0.4]}
    shapes:
      - {type: box, size: [0.2, 0.3, 0.3]}
"""


def test_collision_aware_map_keeps_clear_of_the_scene(tmp_path):
    """Cells inside the block become unreachable; every solved cell is clear (own checker)."""
    from ros2_ik.core.collision import CollisionChecker, PlanningScene, load_scene_yaml
    scene_file = tmp_path / "scene.yaml"
    scene_file.write_text(SCENE)
    settings = MapSettings(**{**TINY.__dict__, "scene_file": str(scene_file),
                              "clearance_m": 0.01})
    free = build_map(PANDA, tmp_path / "free.npz", TINY)
    aware = build_map(PANDA, tmp_path / "aware.npz", settings, workers=2)
    robot, group = robots.load_group("panda")
    scene = PlanningScene.for_model(robot.model)
    scene.add_all(load_scene_yaml(str(scene_file)))
    checker = CollisionChecker.from_urdf(robot.model, robots.urdf_text("panda"),
                                         robots.srdf_text("panda"), scene)
    for q, ok in zip(aware["q"].reshape(-1, 7), aware["solved"].ravel()):
        if ok:
            report = checker.min_distance(group.to_full_q(q.astype(float)))
            assert report.distance_m >= 0.01 - 1e-4
    assert aware["solved"].sum() < free["solved"].sum()  # the block removes cells


def test_bad_scene_file_is_named(tmp_path):
    settings = MapSettings(**{**TINY.__dict__, "scene_file": str(tmp_path / "none.yaml")})
    with pytest.raises(errors.InvalidArgument, match="scene_file"):
        build_map(PANDA, tmp_path / "m.npz", settings)
    (tmp_path / "bad.yaml").write_text("objects: [1, 2")
    settings = MapSettings(**{**TINY.__dict__, "scene_file": str(tmp_path / "bad.yaml")})
    with pytest.raises(errors.InvalidArgument, match="scene_file"):
        build_map(PANDA, tmp_path / "m.npz", settings)
    assert not (tmp_path / "m.npz").exists()


JOINT_LIMITS_YAML = """# MoveIt's config/joint_limits.yaml, as the setup assistant writes it
default_velocity_scaling_factor: 0.1
joint_limits:
  panda_joint1:
    has_position_limits: true
    min_position: !degrees -20.0
    max_position: 0.35
    has_velocity_limits: true
    max_velocity: 2.0
    has_acceleration_limits: false
    max_acceleration: 0
"""


def test_cli_maps_a_urdf_file_within_its_joint_limits_yaml(tmp_path, capsys):
    """--urdf / --base / --tip: the user's robot; --joint-limits: MoveIt's bounds kept."""
    urdf, limits = tmp_path / "robot.urdf", tmp_path / "joint_limits.yaml"
    urdf.write_text(robots.urdf_text("panda"))
    limits.write_text(JOINT_LIMITS_YAML)
    out = tmp_path / "m.npz"
    assert reach.main(TINY_ARGS + ["--urdf", str(urdf), "--base", "panda_link0",
                                   "--tip", "panda_hand", "--joint-limits", str(limits),
                                   "--out", str(out)]) == 0, capsys.readouterr().err
    q = np.load(out)["q"].reshape(-1, 7)
    q = q[np.isfinite(q).all(axis=1)]
    assert len(q) > 0  # float32: the bounds within its rounding
    assert np.all(q[:, 0] >= np.radians(-20.0) - 1e-6) and np.all(q[:, 0] <= 0.35 + 1e-6)
    rows = tmp_path / "rows.npz"
    assert reach.main(["--dataset", "50", "--urdf", str(urdf), "--base", "panda_link0",
                       "--tip", "panda_hand", "--joint-limits", str(limits),
                       "--out", str(rows)]) == 0
    data = np.load(rows)
    assert np.all(data["q"][:, 0] >= np.radians(-20.0)) and np.all(data["q"][:, 0] <= 0.35)


@pytest.mark.parametrize("text, says", [
    ("joint_limits: [1, 2]", "no 'joint_limits' mapping"),
    ("joint_limits: {panda_joint1: {max_position: [}", "is not YAML"),
    ("joint_limits: {panda_joint1: 3}", "expected its keys"),
    ("joint_limits: {panda_joint1: {max_position: wide}}", "max_position must be a finite"),
])
def test_cli_bad_joint_limits_file_exits_2(tmp_path, capsys, text, says):
    limits = tmp_path / "joint_limits.yaml"
    limits.write_text(text)
    assert reach.main(["--joint-limits", str(limits), "--out", str(tmp_path / "m.npz"),
                       "--radius", "0.3"]) == 2
    assert says in capsys.readouterr().err
    assert reach.main(["--joint-limits", str(tmp_path / "none.yaml"), "--radius", "0.3",
                       "--out", str(tmp_path / "m.npz")]) == 2
    assert "--joint-limits: cannot read" in capsys.readouterr().err
