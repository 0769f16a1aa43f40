"""Datasets (core/maps/dataset.py): rows checked by independent FK, memory flat in N, bad input."""
import tracemalloc

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import errors, robots
from ros2_ik.core.maps.batch import GroupSpec, STATUS_CODES
from ros2_ik.core.maps.dataset import load, write_dataset
from ros2_ik.core.result import IKStatus

PANDA = GroupSpec(arm="panda")


def base_fk(group, q):
    """``T_base_tip`` from the group's own (pinocchio, full model) FK."""
    return group.fk(group.mid_configuration(), group.base).inverse() * group.fk(q, group.tip)


def test_fk_rows_are_poses_of_their_configurations(tmp_path):
    out = write_dataset(PANDA, tmp_path / "d.npz", 500, "fk", seed=3, chunk=128)
    data = load(out)
    _, group = robots.load_group("panda")
    assert data["q"].shape == (500, 7) and data["T"].shape == (500, 4, 4)
    assert tuple(data["joint_names"]) == group.joint_names
    assert all(group.within_limits(q) for q in data["q"])
    for q, T in zip(data["q"][::50], data["T"][::50]):
        np.testing.assert_allclose(T, base_fk(group, q).homogeneous, atol=1e-12)
    again = load(write_dataset(PANDA, tmp_path / "e.npz", 500, "fk", seed=3, chunk=77))
    np.testing.assert_array_equal(again["q"], data["q"])  # deterministic, chunking aside
    assert [p.name for p in tmp_path.iterdir()] and not list(tmp_path.glob(".dataset-*"))


def test_ik_rows_reach_their_targets(tmp_path):
    # 0.5 s a solve: the test is about the rows, not speed (a loaded machine stalls 5 ms)
    data = load(write_dataset(PANDA, tmp_path / "ik.npz", 60, "ik", seed=1, chunk=25,
                              timeout_s=0.5))
    _, group = robots.load_group("panda")
    ok = data["status"] == STATUS_CODES.index(IKStatus.SUCCESS)
    assert ok.mean() == 1.0  # FK targets: reachable by construction
    for q, T in zip(data["q"], data["T"]):
        got = base_fk(group, q)
        assert np.linalg.norm(got.translation - T[:3, 3]) <= 1e-4
        assert np.linalg.norm(pin.log3(T[:3, :3].T @ got.rotation)) <= 1e-3


def test_memory_stays_flat_in_the_row_count(tmp_path):
    peaks = []
    for count in (20_000, 80_000):
        tracemalloc.start()
        write_dataset(PANDA, tmp_path / f"m{count}.npz", count, "fk", chunk=5_000)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # 4x the rows (80,000 rows are 15 MB of arrays): the peak grows by far less than that
    assert peaks[1] < 1.5 * peaks[0] + 2e6, peaks


def test_bad_input_names_the_field(tmp_path):
    for kwargs, field in (({"count": 0}, "count"), ({"count": 10, "mode": "xyz"}, "mode"),
                          ({"count": 10, "chunk": 0}, "chunk")):
        with pytest.raises(errors.InvalidArgument, match=field):
            write_dataset(PANDA, tmp_path / "d.npz", **kwargs)
    with pytest.raises(errors.InvalidArgument, match="out"):
        write_dataset(PANDA, tmp_path / "missing" / "d.npz", 10)
    with pytest.raises(errors.InvalidArgument, match="out"):
        write_dataset(PANDA, tmp_path / "d.csv", 10)
    with pytest.raises(errors.InvalidArgument, match="arm"):
        write_dataset(GroupSpec(arm="nope"), tmp_path / "d.npz", 10)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(errors.InvalidArgument, match="not readable"):
        load(tmp_path / "bad.npz")
    assert not (tmp_path / "d.npz").exists()


def test_reach_cli_writes_a_dataset(tmp_path, capsys):
    from ros2_ik import reach

    out = tmp_path / "cli.npz"
    assert reach.main(["--dataset", "40", "--dataset-mode", "fk", "--out", str(out)]) == 0
    assert load(out)["q"].shape == (40, 7)
    assert reach.main(["--dataset", "40", "--out", str(tmp_path / "no" / "x.npz")]) == 2
    assert "out:" in capsys.readouterr().err
