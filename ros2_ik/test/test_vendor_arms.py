"""Pose IK on every vendor arm of ``shared/real_urdfs`` (issue 48), read where it is.

The folder lies outside the repository (``bench/vendor_arms.py`` says where it is looked
for; ``ROS2_IK_REAL_URDFS`` names it); nothing from it is copied here.  For every
manifest entry: the group builds from its base to its tip, the reach bound holds on FK
placements, and pose targets made by FK of random configurations are solved, each answer
checked on a pinocchio model built from the URDF text alone.  Skipped, with the reason,
when the folder is absent.
"""
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from ros2_ik.core import PoseTarget, solve

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import vendor_arms  # noqa: E402
from test_reach_bound import assert_bound_holds  # noqa: E402

#: Poses per arm (38 arms: the whole file in well under a minute on two cores).
POSES = 5
ARMS = vendor_arms.arms()


def _independent_fk(urdf: str, names, values, frame: str) -> pin.SE3:
    """``T_world_frame`` from a model of the URDF text alone, joints not named at neutral."""
    model = pin.buildModelFromXML(urdf)
    data = model.createData()
    q = pin.neutral(model)
    for name, value in zip(names, values):
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:
            q[joint.idx_q:joint.idx_q + 2] = np.cos(value), np.sin(value)
        else:
            q[joint.idx_q] = value
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame, pin.BODY)]


def test_the_folder_is_found_or_the_skip_says_why():
    if vendor_arms.folder() is None:
        pytest.skip(vendor_arms.absent_reason())
    assert len(ARMS) == 38 and all(arm.path.is_file() for arm in ARMS)


@pytest.mark.parametrize("arm", ARMS, ids=lambda a: a.name)
def test_pose_ik_on_the_vendor_arm(arm):
    group = vendor_arms.load_group(arm)
    assert group.n == arm.dof, (group, arm.dof)
    urdf = arm.path.read_text()
    rng = np.random.default_rng(48)
    assert_bound_holds(group, arm.tip, rng, samples=50)
    for _ in range(POSES):
        q_star = group.random_configuration(rng)
        T = group.fk(q_star, arm.tip)
        result = solve(group, PoseTarget(arm.tip, T), group.mid_configuration(),
                       timeout_s=0.5, random_seed=1)
        assert result.status.name == "SUCCESS", (arm.name, result.message)
        assert group.within_limits(result.q)
        reached = _independent_fk(urdf, list(group.locked) + list(group.joint_names),
                                  list(group.locked.values()) + result.q.tolist(), arm.tip)
        assert np.linalg.norm(reached.translation - T.translation) <= 1.01e-4
        assert np.linalg.norm(pin.log3(reached.rotation.T @ T.rotation)) <= 1.01e-3
