"""A group for every chain of every URDF that example-robot-data ships (issue 38).

Root -> each leaf link, and the same chain with its last joint locked (a gripper locked
out of an arm). Each group must build (frames that share a name with a joint included);
its reduced model must place every frame as the full model does; its reach bound must hold
on FK placements (test_reach_bound.py); a pose IK problem made
from a random configuration must be solved (on a few chains of each URDF), checked by
full-model FK outside the solver.
A URDF pinocchio cannot use raises :class:`RobotModelError` naming the reason.
"""
from __future__ import annotations

import functools
import pathlib
from typing import List, Tuple

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, Robot, RobotModelError, robots, solve
from test_reach_bound import assert_bound_holds


#: Chains per URDF that also solve a pose (all chains are built and checked);
#: ``make fuzz`` solves on every chain.
SOLVES_PER_URDF = 4


@functools.lru_cache(maxsize=None)
def urdf_files() -> Tuple[pathlib.Path, ...]:
    """Every URDF below example-robot-data's ``robots`` folder."""
    return tuple(sorted(robots.data_dir().rglob("*.urdf")))


def leaf_links(model: pin.Model) -> List[str]:
    """BODY frames on joints that no other joint hangs from (the tips of the tree)."""
    parents = {model.parents[j] for j in range(1, model.njoints)}
    names = [f.name for f in model.frames if f.type == pin.FrameType.BODY
             and f.parentJoint > 0 and f.parentJoint not in parents]
    return list(dict.fromkeys(names))


def load(path: pathlib.Path):
    """Robot of ``path``, or the RobotModelError it raises."""
    try:
        return Robot.from_urdf(path.read_text())
    except RobotModelError as exc:
        return exc


def test_unusable_urdfs_say_why():
    reasons = [load(p) for p in urdf_files()]
    errors = [r for r in reasons if isinstance(r, RobotModelError)]
    assert len(errors) < len(reasons) / 4
    for exc in errors:
        assert "URDF" in str(exc) and len(str(exc)) > 20


def _same_placements(group, rng: np.random.Generator) -> None:
    """The reduced model places every frame where the full model does."""
    q = group.random_configuration(rng)
    full, red = group.robot.model, group.reduced_model
    d_full, d_red = full.createData(), red.createData()
    pin.framesForwardKinematics(full, d_full, group.to_full_q(q))
    pin.framesForwardKinematics(red, d_red, group.to_reduced_q(q))
    assert red.nframes == full.nframes
    for i in range(full.nframes):
        assert red.frames[i].name == full.frames[i].name
        assert np.allclose(d_red.oMf[i].homogeneous, d_full.oMf[i].homogeneous, atol=1e-9)


def _solves_own_pose(group, rng: np.random.Generator) -> None:
    """A pose made by FK of a random configuration is solved; checked by full-model FK."""
    q_star = group.random_configuration(rng)
    target = PoseTarget(group.tip, group.fk(q_star, group.tip))
    result = solve(group, target, group.mid_configuration(), timeout_s=0.5, random_seed=1)
    assert result.status.name == "SUCCESS", (group, result.message)
    T = group.fk(result.q, group.tip)
    assert np.linalg.norm(T.translation - target.T_ref_target.translation) <= 1.01e-4
    err = pin.log3(T.rotation.T @ target.T_ref_target.rotation)
    assert np.linalg.norm(err) <= 1.01e-3
    assert group.within_limits(result.q)


@pytest.mark.parametrize("path", urdf_files(), ids=lambda p: p.name)
def test_every_chain_builds_and_solves(path: pathlib.Path):
    robot = load(path)
    if isinstance(robot, RobotModelError):
        pytest.skip(f"pinocchio cannot use it: {robot}")
    rng = np.random.default_rng(0)
    model = robot.model
    leaves = leaf_links(model)
    solved_ones = set(leaves[::max(1, len(leaves) // SOLVES_PER_URDF)])
    for leaf in leaves:
        try:
            group = robot.group(tip=leaf)
        except Exception as exc:  # no movable joint up to this leaf, or a mimic joint
            assert "no movable joint" in str(exc) or (  # moved by its leader carries it
                "(URDF <mimic>), which the group moves" in str(exc)), (leaf, exc)
            continue
        _same_placements(group, rng)
        assert_bound_holds(group, leaf, rng, samples=10)  # the reach bound (issue 48)
        if leaf in solved_ones:
            _solves_own_pose(group, rng)
        # The same chain but its last joint locked (a gripper locked out of an arm).
        parent = model.frames[model.getFrameId(leaf)].parentJoint
        above = [f.name for f in model.frames if f.type == pin.FrameType.BODY
                 and f.parentJoint == model.parents[parent]]
        if group.n > 1 and above:
            _same_placements(robot.group(tip=above[0]), rng)


def test_an_object_attached_to_a_link_named_like_a_joint():
    """SO-100's link ``gripper`` shares its name with a joint: attaching to it works."""
    from ros2_ik.core.collision import CollisionChecker, PlanningScene, SceneObject, Sphere

    path = robots.data_dir() / "so_arm_description" / "urdf" / "so100.urdf"
    urdf = path.read_text()
    robot = Robot.from_urdf(urdf)
    scene = PlanningScene(valid_frames=robot.frame_names)
    checker = CollisionChecker.from_urdf(robot.model, urdf, scene=scene,
                                         skip_missing_meshes=True)
    scene.add(SceneObject("tool", [Sphere(0.01)], frame_id="gripper", attached=True))
    group = robot.group(tip="jaw")
    report = checker.min_distance(group.to_full_q(group.mid_configuration()))
    assert np.isfinite(report.distance_m)
