#!/usr/bin/env python3
"""Core-only example: IK for a Panda from URDF text, no ROS needed.

Run it with ``python examples/core_example.py``.
"""
import numpy as np
import pinocchio as pin

from ros2_ik.core import IKStatus, PoseTarget, Robot, prepare, solve, verify_pose
from ros2_ik.core import robots  # example-robot-data files on disk (no download)


def main() -> None:
    robot = Robot.from_urdf(robots.urdf_text("panda"))
    group = robot.group(base="panda_link0", tip="panda_hand")
    print("group joints:", group.joint_names)
    # One-time work (compiled kernels, the hand's seed library): now, not inside the
    # first solve, so that every timeout_s below holds from the first solve on.
    for name in ("lm", "dls", "bfgs", "sqp"):  # each solver loads its own
        prepare(group, "panda_hand", solver=name)

    # A target: the hand 10 cm higher and 10 cm to the side of where it is at the
    # mid-limits posture, same orientation, expressed in the base frame.
    seed = group.mid_configuration()
    T_base_hand = group.fk(seed, "panda_hand")
    T_target = pin.SE3(T_base_hand.rotation, T_base_hand.translation + [0.0, 0.1, 0.1])
    target = PoseTarget(frame="panda_hand", T_ref_target=T_target,
                        reference_frame="panda_link0",
                        position_tolerance_m=1e-4, orientation_tolerance_rad=1e-3)

    result = solve(group, target, seed, solver="lm", timeout_s=0.005, random_seed=42)
    print(f"{result.status.name}: {result.position_error_m:.2e} m, "
          f"{result.orientation_error_rad:.2e} rad in {result.solve_time_s * 1e3:.2f} ms "
          f"({result.restarts} restarts, {result.iterations} iterations)")
    print("q =", np.round(result.q, 4))
    ok, pos, ori, reason = verify_pose(group, target, result.q)
    print("independent check:", ok, reason or "")

    # Several distinct solutions, ranked by distance to the seed.
    many = solve(group, target, seed, timeout_s=0.05, num_solutions=4, random_seed=1)
    for k, sol in enumerate(many.solutions):
        print(f"solution {k}: distance to seed {sol.distance_to_seed:.3f} rad")

    # Position only, with the other solvers.
    for name in ("dls", "bfgs", "sqp"):
        r = solve(group, PoseTarget("panda_hand", T_target, reference_frame="panda_link0",
                                    position_only=True), seed, solver=name, timeout_s=0.05,
                  random_seed=0)
        print(f"{name:5s} position only: {r.status.name} {r.position_error_m:.1e} m")
    assert result.status is IKStatus.SUCCESS


if __name__ == "__main__":
    main()
