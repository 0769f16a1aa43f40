"""Every invalid constructor argument raises the right error, naming the argument."""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from test_constraints_fixtures import planar_2r, tiny

from ros2_ik.core.constraints import (
    AngleBetweenVectorsConstraint,
    GazeTargetConstraint,
    JointBoundsConstraint,
    LockedJointConstraint,
    OrientationConstraint,
    PointToLineDistanceConstraint,
    PointToPointDistanceConstraint,
    PolyhedronConstraint,
    PositionConstraint,
)
from ros2_ik.core.errors import InvalidArgument, InvalidFrame, InvalidGoal, InvalidJoint

I3 = np.eye(3)
Z3 = [0.0, 0.0, 0.0]
NAN = math.nan
INF = math.inf


def _position(**kw):
    args = dict(frame_A="universe", p_AQ_lower=[-1] * 3, p_AQ_upper=[1] * 3, frame_B="tip",
                p_BQ=Z3)
    args.update(kw)
    return PositionConstraint(planar_2r(), **args)


def _orientation(**kw):
    args = dict(frame_Abar="universe", R_AbarA=I3, frame_Bbar="tip", R_BbarB=I3,
                theta_bound=0.1)
    args.update(kw)
    return OrientationConstraint(planar_2r(), **args)


def _gaze(**kw):
    args = dict(frame_A="universe", p_AS=Z3, n_A=[1, 0, 0], frame_B="tip", p_BT=Z3,
                cone_half_angle=0.3)
    args.update(kw)
    return GazeTargetConstraint(planar_2r(), **args)


def _angle(**kw):
    args = dict(frame_A="universe", a_A=[1, 0, 0], frame_B="tip", b_B=[0, 1, 0],
                angle_lower=0.1, angle_upper=0.5)
    args.update(kw)
    return AngleBetweenVectorsConstraint(planar_2r(), **args)


def _p2p(**kw):
    args = dict(frame1="tip", p_B1P1=Z3, frame2="universe", p_B2P2=Z3, distance_lower=0.1,
                distance_upper=0.5)
    args.update(kw)
    return PointToPointDistanceConstraint(planar_2r(), **args)


def _p2l(**kw):
    args = dict(frame_point="tip", p_B1P=Z3, frame_line="universe", p_B2Q=Z3, n_B2=[1, 0, 0],
                distance_lower=0.0, distance_upper=0.5)
    args.update(kw)
    return PointToLineDistanceConstraint(planar_2r(), **args)


def _poly(**kw):
    args = dict(frame_F="universe", frame_G="tip", p_GP=np.zeros((3, 2)), A=np.ones((4, 6)),
                b=np.ones(4))
    args.update(kw)
    return PolyhedronConstraint(planar_2r(), **args)


NOT_A_ROTATION = np.diag([1.0, 1.0, 2.0])
REFLECTION = np.diag([1.0, 1.0, -1.0])

BAD_ARGUMENTS = [
    (_position, dict(p_AQ_lower=[0, 0, NAN]), "p_AQ_lower"),
    (_position, dict(p_AQ_lower=[0, 2, 0]), "p_AQ_lower"),
    (_position, dict(p_AQ_lower=[INF, 0, 0], p_AQ_upper=[INF] * 3), "p_AQ_lower"),
    (_position, dict(p_AQ_upper=[-INF, 1, 1]), "p_AQ_upper"),
    (_position, dict(p_AQ_upper=[1, 1]), "p_AQ_upper"),
    (_position, dict(p_BQ=[0, INF, 0]), "p_BQ"),
    (_position, dict(p_BQ="abc"), "p_BQ"),
    (_position, dict(X_AbarA=np.eye(3)), "X_AbarA"),
    (_position, dict(X_AbarA=np.diag([1.0, 1.0, 2.0, 1.0])), "X_AbarA"),
    (_position, dict(name=""), "name"),
    (_orientation, dict(R_AbarA=NOT_A_ROTATION), "R_AbarA"),
    (_orientation, dict(R_BbarB=REFLECTION), "R_BbarB"),
    (_orientation, dict(theta_bound=-0.1), "theta_bound"),
    (_orientation, dict(theta_bound=3.2), "theta_bound"),
    (_orientation, dict(theta_bound=NAN), "theta_bound"),
    (_gaze, dict(n_A=[0, 0, 0]), "n_A"),
    (_gaze, dict(n_A=[1e-12, 0, 0]), "n_A"),
    (_gaze, dict(cone_half_angle=-0.01), "cone_half_angle"),
    (_gaze, dict(cone_half_angle=2.0), "cone_half_angle"),
    (_gaze, dict(p_AS=[NAN, 0, 0]), "p_AS"),
    (_gaze, dict(p_BT=[0, 0]), "p_BT"),
    (_angle, dict(a_A=Z3), "a_A"),
    (_angle, dict(b_B=Z3), "b_B"),
    (_angle, dict(angle_lower=-0.1), "angle_lower"),
    (_angle, dict(angle_upper=3.5), "angle_upper"),
    (_angle, dict(angle_lower=0.6, angle_upper=0.5), "angle_lower"),
    (_angle, dict(angle_upper=INF), "angle_upper"),
    (_p2p, dict(distance_lower=-0.1), "distance_lower"),
    (_p2p, dict(distance_lower=0.6), "distance_lower"),
    (_p2p, dict(distance_upper=NAN), "distance_upper"),
    (_p2p, dict(distance_lower=INF, distance_upper=INF), "distance_lower"),
    (_p2p, dict(p_B1P1=[0, 0, NAN]), "p_B1P1"),
    (_p2l, dict(n_B2=Z3), "n_B2"),
    (_p2l, dict(distance_upper=-1.0), "distance_upper"),
    (_p2l, dict(p_B2Q=[1, 2, 3, 4]), "p_B2Q"),
    (_poly, dict(p_GP=np.zeros((2, 3))), "p_GP"),
    (_poly, dict(p_GP=np.zeros(3)), "p_GP"),
    (_poly, dict(p_GP=np.zeros((3, 0))), "p_GP"),
    (_poly, dict(A=np.ones((4, 5))), "A"),
    (_poly, dict(A=np.ones(6)), "A"),
    (_poly, dict(A=np.full((4, 6), NAN)), "A"),
    (_poly, dict(b=np.ones(3)), "b"),
    (_poly, dict(b=[1, 1, 1, INF]), "b"),
]


@pytest.mark.parametrize(
    "factory,kwargs,arg", BAD_ARGUMENTS,
    ids=[f"{f.__name__}-{a}-{i}" for i, (f, _, a) in enumerate(BAD_ARGUMENTS)])
def test_invalid_argument_raises_invalid_goal_naming_it(factory, kwargs, arg):
    with pytest.raises(InvalidGoal, match=arg):
        factory(**kwargs)


def test_invalid_goal_is_an_invalid_argument_and_a_value_error():
    with pytest.raises(InvalidArgument):
        _gaze(n_A=Z3)
    with pytest.raises(ValueError):
        _gaze(n_A=Z3)


@pytest.mark.parametrize("factory,arg", [
    (_position, "frame_A"), (_position, "frame_B"), (_orientation, "frame_Abar"),
    (_orientation, "frame_Bbar"), (_gaze, "frame_A"), (_gaze, "frame_B"),
    (_angle, "frame_A"), (_angle, "frame_B"), (_p2p, "frame1"), (_p2p, "frame2"),
    (_p2l, "frame_point"), (_p2l, "frame_line"), (_poly, "frame_F"), (_poly, "frame_G")])
def test_unknown_frame_lists_the_valid_frames(factory, arg):
    with pytest.raises(InvalidFrame) as error:
        factory(**{arg: "no_such_link"})
    message = str(error.value)
    assert "no_such_link" in message
    for frame in ("tip", "link1"):                # what a user names: links, frames
        assert frame in error.value.valid
    for frame in ("universe", "joint2"):             # the root and joint frames: not listed
        assert frame not in error.value.valid
    assert error.value.name == "no_such_link"


def test_boundary_values_are_accepted():
    _orientation(theta_bound=0.0), _orientation(theta_bound=math.pi)
    _gaze(cone_half_angle=0.0), _gaze(cone_half_angle=math.pi / 2)
    _angle(angle_lower=0.0, angle_upper=math.pi), _angle(angle_lower=0.3, angle_upper=0.3)
    _p2p(distance_lower=0.0, distance_upper=INF), _p2l(distance_lower=0.2, distance_upper=0.2)
    _position(p_AQ_lower=[-INF] * 3, p_AQ_upper=[INF] * 3)


def test_huge_finite_directions_are_their_direction():
    """A direction of 1e300 is finite and not zero: normalised without overflow.

    Its squared norm overflows: normalised by it, (1e300, 0, 0) became (0, 0, 0), and a
    support polygon with that normal raised ZeroDivisionError (whole-body fuzz).  A
    polyhedron row of that size kept a zero physical bound the same way.
    """
    model = planar_2r()
    data = model.createData()
    q = np.array([0.3, -0.4])
    pin.framesForwardKinematics(model, data, q)
    pin.computeJointJacobians(model, data, q)
    for huge, unit in (([1e300, 0, 0], [1, 0, 0]), ([0, -1e300, 1e300], [0, -1, 1])):
        a, b = _angle(a_A=huge), _angle(a_A=unit)
        np.testing.assert_allclose(a.measure(model, data, q), b.measure(model, data, q))
        g, h = _gaze(n_A=huge), _gaze(n_A=unit)
        np.testing.assert_allclose(g.measure(model, data, q), h.measure(model, data, q))
    A = np.ones((4, 6))
    big = _poly(A=A * 1e300, b=np.full(4, 1e300))
    np.testing.assert_allclose(big.measure(model, data, q),
                               _poly(A=A, b=np.ones(4)).measure(model, data, q))


def test_bounds_and_targets_near_the_float_range_are_measured_not_raised():
    """``1e300 ** 2`` raises OverflowError (an INTERNAL_ERROR from the action, found by
    the whole-body fuzz on a contact target); ``x * x`` and ``hypot`` do not."""
    from ros2_ik.core.constraints import FramePlacementConstraint
    model = planar_2r()
    data = model.createData()
    q = np.array([0.3, -0.4])
    pin.framesForwardKinematics(model, data, q)
    pin.computeJointJacobians(model, data, q)
    for far in (_p2p(distance_upper=1e300), _p2l(distance_upper=1e300)):
        assert far.measure(model, data, q).tolist() == [0.0]
    held = FramePlacementConstraint(model, "tip", pin.SE3(np.eye(3), np.array([1e300, 0, 0])))
    assert held.measure(model, data, q)[0] == pytest.approx(1e300)


def _massive_planar_2r() -> pin.Model:
    model = pin.Model(planar_2r())  # a copy: the fixture's model is shared
    model.inertias[1] = pin.Inertia.FromSphere(1.0, 0.1)
    return model


def test_support_polygon_normal_of_huge_components():
    from ros2_ik.core.constraints import ComInSupportPolygonConstraint
    model = _massive_planar_2r()
    square = [[x, y, 0.0] for x in (-1.0, 1.0) for y in (-1.0, 1.0)]
    huge = ComInSupportPolygonConstraint(model, square, normal=[0.0, 0.0, 1e300])
    unit = ComInSupportPolygonConstraint(model, square)
    np.testing.assert_allclose(huge.vertices, unit.vertices)


def test_centre_of_mass_terms_of_a_massless_model_name_the_term():
    """planar_2r has no <inertial>: its CoM is undefined (NaN), so every CoM term is refused."""
    from ros2_ik.core.constraints import CenterOfMassConstraint, \
        CenterOfMassDistanceConstraint, ComInSupportPolygonConstraint
    from ros2_ik.core.costs import CenterOfMassCost
    square = [[x, y, 0.0] for x in (-1.0, 1.0) for y in (-1.0, 1.0)]
    terms = {"com": lambda m: CenterOfMassConstraint(m, [-1] * 3, [1] * 3),
             "com_distance": lambda m: CenterOfMassDistanceConstraint(m, Z3, 0.0, 1.0),
             "support_polygon": lambda m: ComInSupportPolygonConstraint(m, square),
             "com_cost": lambda m: CenterOfMassCost(m, Z3)}
    for name, make in terms.items():
        with pytest.raises(InvalidGoal, match=f"{name}: the robot model has no mass"):
            make(planar_2r())
        make(_massive_planar_2r())  # one body with a mass: accepted


def test_joint_bounds_errors():
    model = tiny()
    with pytest.raises(InvalidJoint, match="j1.*j2.*j3.*j4"):
        JointBoundsConstraint(model, {"nope": (0, 1)})
    with pytest.raises(InvalidJoint):
        JointBoundsConstraint(model, {"universe": (0, 1)})
    cases = [({}, "non-empty"), ([("j1", (0, 1))], "mapping"),
             ({"j1": (0.5, 0.4)}, "lower bound of joint 'j1'"),
             ({"j1": (NAN, 0.4)}, "lower bound of joint 'j1'"),
             ({"j1": (0.0, INF)}, "upper bound of joint 'j1'"),
             ({"j1": 0.3}, "pair"),
             ({"j1": (2.6, 3.0)}, "URDF limits"),
             ({"j2": (-INF, 1.0)}, "lower bound of joint 'j2'")]
    for bounds, text in cases:
        with pytest.raises(InvalidGoal, match=text):
            JointBoundsConstraint(model, bounds)
    # A continuous joint's window lies anywhere on the circle, across +-pi too.
    assert JointBoundsConstraint(model, {"j2": (-1.0, 3.5)}).num_constraints == 1
    with pytest.raises(InvalidGoal, match="positions"):
        LockedJointConstraint(model, {})


def test_multi_dof_joints_are_rejected():
    model = pin.buildModelFromXML(
        "<robot name='r'><link name='a'/><link name='b'/><joint name='f' type='floating'>"
        "<parent link='a'/><child link='b'/></joint></robot>")
    with pytest.raises(InvalidGoal, match="'f' has 6 degrees of freedom"):
        JointBoundsConstraint(model, {"f": (0, 1)})
