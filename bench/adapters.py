"""Solver adapters for the benchmark: ours through solve(), and the references.

Every adapter is built once per arm (a :class:`bench_arms.BenchArm`: URDF text, base,
tip) and called as ``adapter(T_world_tip, seed) -> q`` (group vector or None).  Success is
decided outside, by the benchmark's own FK.  Our adapters keep the last ``IKResult`` as
``adapter.last_result`` (the benchmark records failures with it).
"""
from __future__ import annotations

import importlib.util
from typing import Callable, Dict, Optional

import numpy as np
import pinocchio as pin

from ros2_ik.core.pose import PoseTarget
from ros2_ik.core.result import IKStatus
from ros2_ik.core.solve import prepare, solve

BUDGET_S = 0.005
Adapter = Callable[[pin.SE3, np.ndarray], Optional[np.ndarray]]


def ours(name: str) -> Callable:
    """Return factory for one of our solvers (plugin ``name``), 5 ms budget, restarts."""
    def build(arm, group, rng_seed: int) -> Adapter:
        counter = [rng_seed]
        prepare(group, group.tip, solver=name)  # one-time work, as a node warms up

        def run(T: pin.SE3, seed: np.ndarray) -> Optional[np.ndarray]:
            counter[0] += 1
            result = solve(group, PoseTarget(group.tip, T), seed, solver=name,
                           timeout_s=BUDGET_S, random_seed=counter[0])
            run.last_result = result
            return np.array(result.q) if result.status is IKStatus.SUCCESS else None
        run.last_result = None
        return run
    return build


def base_placement(group) -> pin.SE3:
    """``T_world_base`` of the group's base frame (reference solvers work in it)."""
    return group.locked_placement(group.robot.frame_id(group.base))


def urdf_path_elements(group, base: str, tip: str):
    """Return [base link, joint, link, ..., tip link] from pinocchio's frame tree."""
    model = group.robot.model
    fid, path = model.getFrameId(tip), []
    while True:
        path.append(model.frames[fid].name)
        if model.frames[fid].name == base or fid == 0:
            break
        fid = model.frames[fid].parentFrame
    return path[::-1]


def trac_ik(arm, group, rng_seed: int, solve_type=None) -> Adapter:
    """TRAC-IK (C++, KDL + NLopt) through the pytracik wheel, 5 ms, Speed mode by default.

    ``solve_type``: a ``pytracik.SolveType`` (Distance: the solution nearest the seed).
    """
    import pytracik

    solver = pytracik.TRAC_IK(arm.base, arm.tip, arm.urdf, BUDGET_S, 1e-5,
                              solve_type if solve_type is not None
                              else pytracik.SolveType.Speed)
    n = pytracik.get_num_joints(solver)
    if n != group.n:
        raise RuntimeError(f"TRAC-IK chain has {n} joints, group has {group.n}")
    # pytracik 0.0.3 reads zeros for limits of joints that carry a <safety_controller>
    # (panda): hand it the URDF limits, the same ones our solvers use.
    big = 1e30
    pytracik.set_joint_limits(solver, np.clip(group.lower, -big, big).tolist(),
                              np.clip(group.upper, -big, big).tolist())
    T_base_world = base_placement(group).inverse()

    def run(T: pin.SE3, seed: np.ndarray) -> Optional[np.ndarray]:
        T = T_base_world * T                       # TRAC-IK works in the chain's base
        x, y, z, w = pin.Quaternion(T.rotation).coeffs()
        p = T.translation
        r = pytracik.ik(solver, seed, p[0], p[1], p[2], x, y, z, w)
        return np.array(r[1:]) if r[0] >= 0 else None
    return run


def clik_example(arm, group, rng_seed: int) -> Adapter:
    """Pinocchio's inverse-kinematics example (seed 003) as written, on the tip frame.

    eps 1e-4 on |log6|, IT_MAX 1000, DT 0.1, damping 1e-12, no limits, no restarts,
    no time budget (it runs to its own end).
    """
    model = group.reduced_model
    data = model.createData()
    fid = model.getFrameId(group.tip)
    eps, it_max, dt, damp = 1e-4, 1000, 1e-1, 1e-12

    def run(oMdes: pin.SE3, seed: np.ndarray) -> Optional[np.ndarray]:
        q = group.to_reduced_q(seed)
        for _ in range(it_max + 1):
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacement(model, data, fid)
            iMd = data.oMf[fid].actInv(oMdes)
            err = pin.log(iMd).vector
            if np.linalg.norm(err) < eps:
                return group.from_reduced_q(q)
            J = pin.computeFrameJacobian(model, data, q, fid)
            J = -np.dot(pin.Jlog6(iMd.inverse()), J)
            v = -J.T.dot(np.linalg.solve(J.dot(J.T) + damp * np.eye(6), err))
            q = pin.integrate(model, q, v * dt)
        return None
    return run


def ikpy_solver(arm, group, rng_seed: int) -> Adapter:
    """Return an ikpy 4 solver (scipy least squares): full orientation, one start, no budget."""
    import tempfile
    import warnings

    from ikpy.chain import Chain

    path = urdf_path_elements(group, arm.base, arm.tip)
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(arm.urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = Chain.from_urdf_file(f.name, base_elements=path)
    names = [link.name for link in chain.links]
    # ikpy names its links after the URDF joints: cut after the joint that carries the tip.
    cut = names.index(path[-2]) + 1
    active = [link.joint_type != "fixed" and link.name in group.joint_names
              for link in chain.links[:cut]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = Chain(chain.links[:cut], active_links_mask=active)
    idx = [i for i, a in enumerate(active) if a]
    if len(idx) != group.n:
        raise RuntimeError(f"ikpy chain has {len(idx)} active joints, group has {group.n}")
    T_base_world = base_placement(group).inverse()

    def run(T: pin.SE3, seed: np.ndarray) -> Optional[np.ndarray]:
        T = T_base_world * T
        init = np.zeros(len(chain.links))
        init[idx] = seed
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = chain.inverse_kinematics(T.translation, T.rotation, orientation_mode="all",
                                         initial_position=init)
        return np.asarray(q)[idx]
    return run


SOLVERS: Dict[str, Callable] = {
    "lm": ours("lm"), "dls": ours("dls"), "bfgs": ours("bfgs"), "sqp": ours("sqp"),
    "trac_ik": trac_ik, "pinocchio_clik": clik_example, "ikpy": ikpy_solver,
}

#: Packages a reference solver needs (checked before building it).
NEEDS = {"trac_ik": "pytracik", "ikpy": "ikpy"}


def missing_dependency(name: str) -> Optional[str]:
    """Why solver ``name`` cannot run here, or None."""
    module = NEEDS.get(name)
    if module and importlib.util.find_spec(module) is None:
        return f"{module} not installed (pip install -r bench/requirements-bench.txt)"
    return None
