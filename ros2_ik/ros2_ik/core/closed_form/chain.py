"""Detect a closed form from a group's kinematics, and hold its solver.

At the group's zero configuration (locked joints at their values) the chain to a frame
is read in the world frame as EAIK's product-of-exponentials form: the joint axes ``H``
(n, 3), the offsets ``P`` (n + 1, 3) from the world origin to the first joint, between
consecutive joints and from the last joint to the frame [m], and the frame's orientation
``R`` (3, 3).  Every joint offset, base placement and tool offset is in these figures, so
a target ``T_world_frame`` goes to the solver as it is and its angles are the group's.

A chain has a closed form when its joints are six (or five) revolute ones (continuous
included) in one serial chain to the frame and EAIK knows a decomposition of it
(spherical wrist, three parallel axes, and its other families; with five joints, e.g.
three parallel axes between two others).  Our kernel (:mod:`.six_r`) then solves a
six-joint chain when it is one of its families, EAIK otherwise.  A self-test checks that
the solver reproduces pinocchio's forward kinematics and finds known configurations
again.  A five-joint chain reaches a five-dimensional set of poses: a full pose off it
has no exact solution, which the closed form's least-squares rows prove (:mod:`.branches`).
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional, Tuple

import numpy as np
import pinocchio as pin

from ros2_ik.core.closed_form import six_r
from ros2_ik.core.model.joint_values import motion_subspace
from ros2_ik.core.runtime import compiled
from ros2_ik.core.runtime.per_object import PerObjectAndKey

#: Joint counts a closed form takes, each joint a rotation.
JOINTS = (5, 6)
#: Largest disagreement [m or rad-as-matrix-entry] of the self-test's forward kinematics
#: and the largest distance of a known configuration to a branch found [rad].
SELF_TEST_TOLERANCE = 1e-7
#: Configurations of the self-test (fixed: the detection is deterministic).
SELF_TEST_SAMPLES = 8
#: Largest ``|h_i x h_j|`` of two unit joint axes :func:`codirected` turns alike.  Any
#: turn is exact (a joint turned is the same joint); this only decides which ones EAIK
#: sees as it needs them.
PARALLEL_TOLERANCE = 1e-6
#: A row EAIK flags least-squares whose forward kinematics meets the target within this
#: (largest entry of the 4x4 difference, [m] or rotation entry) is an exact solution.
#: EAIK flags the tangent cases of its subproblems so: on the SO-100/101 arms and
#: Alexander's legs, 8-14 % of random poses had the configuration they came from among
#: the flagged rows, 5e-7 or closer to the pose; the rows of a pose out of a branch's
#: reach miss it by 3e-5 or more on every arm here.
EXACT_RESIDUAL = 1e-6


def eaik_rows(robot, T_h: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """EAIK ``robot``'s rows of 4x4 ``T_h``: angles (m, n) [rad] and least-squares flags.

    A flagged row that meets ``T_h`` within :data:`EXACT_RESIDUAL` by EAIK's own forward
    kinematics is exact (its flag cleared): a tangent case, not a pose out of reach.
    """
    Q, ls = _arrays(robot.calculate_IK(T_h))
    return Q, exact_flags(robot, T_h, Q, ls)


def _arrays(solution) -> Tuple[np.ndarray, np.ndarray]:
    """Rows (m, n) and flags (m,) of an EAIK solution, C-ordered and writable.

    EAIK's own are read-only (its rows in Fortran order): another compiled version of
    :func:`.branches.representatives` than the one :func:`ros2_ik.core.solve.prepare`
    loads, loaded inside the first such solve's budget (~15 ms).
    """
    return np.array(solution.Q, dtype=float, order="C"), np.array(solution.is_LS, dtype=bool)


def exact_flags(robot, T_h: np.ndarray, Q: np.ndarray, is_LS) -> np.ndarray:
    """Return EAIK's least-squares flags ``is_LS`` of rows ``Q``, cleared where one meets ``T_h``.

    See :func:`eaik_rows`; one forward kinematics per flagged row.
    """
    ls = np.array(is_LS, dtype=bool)
    for i in np.flatnonzero(ls).tolist():
        if np.abs(robot.fwdkin(Q[i]) - T_h).max() <= EXACT_RESIDUAL:
            ls[i] = False
    return ls


class ClosedForm:
    """The closed-form solver of one group's chain to one frame (see the module docstring).

    ``family``: EAIK's name of the decomposition (e.g. ``6R-SPHERICAL_WRIST``);
    ``kernel``: ``(family, G)`` of our compiled subproblem kernel (:mod:`.six_r`) when the
    chain is one of its families, else None (EAIK solves); ``tangents``: EAIK's flagged
    rows that meet the target count as exact (:func:`exact_flags`), as the proofs and
    ``num_solutions`` need; False for the 7R sweep's forms (:mod:`.sweep`: it proves
    nothing, and its choice of joint counts rows, not their cost).
    """

    __slots__ = ("family", "n", "kernel", "tangents", "_robot")

    def __init__(self, robot, family: str, n: int, kernel=None, tangents: bool = True):
        """Wrap EAIK ``robot`` and our ``kernel`` (internal: use :func:`of`)."""
        self._robot, self.family, self.n, self.kernel = robot, family, n, kernel
        self.tangents = tangents

    def solve(self, T_world_frame_h: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """Every branch of 4x4 ``T_world_frame_h``: angles (m, n) [rad] and least-squares flags.

        A row whose flag is False is an exact solution (angles in ``(-pi, pi]``); True: the
        pose is out of reach of that branch and the row only minimises EAIK's subproblem
        residuals (EAIK's rows whenever the kernel finds no exact one, flags as EAIK gives
        them: the kernel's verdict stands, and the proof of :mod:`.branches` measures how
        far they miss).
        """
        if self.kernel is not None:
            # a copy: a read-only target (a PoseTarget's matrix) is another numba signature
            Q, ls, missed = self._kernel(np.array(T_world_frame_h, dtype=float)[None])
            if not missed:
                return Q[0], ls[0]
            return self.missed(T_world_frame_h)
        return self.eaik(T_world_frame_h)

    def missed(self, T_world_frame_h: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """:meth:`solve`'s rows of a pose our kernel finds no exact row for.

        EAIK's rows, flags as EAIK gives them (the kernel's verdict stands: the proof of
        :mod:`.branches` measures how far they miss).
        """
        return self.eaik(T_world_frame_h, tangents=False)

    def eaik(self, T_world_frame_h: np.ndarray, tangents: Optional[bool] = None
             ) -> Tuple[np.ndarray, np.ndarray]:
        """Return EAIK's branches of 4x4 ``T_world_frame_h`` as :meth:`solve` returns them.

        ``tangents``: clear the flags of rows that meet the pose (:func:`exact_flags`);
        None: :attr:`tangents`.
        """
        if self._tangents(tangents):
            return eaik_rows(self._robot, T_world_frame_h)
        return _arrays(self._robot.calculate_IK(T_world_frame_h))

    def solve_many(self, T_world_frame_h: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """:meth:`solve` of each of ``T_world_frame_h`` (N, 4, 4) in one call.

        Returns the angles (N, m, n) [rad] and the least-squares flags (N, m), ``m`` the
        most branches of a target; a target with fewer has its last rows padded (zeros,
        flagged least-squares).
        """
        count = len(T_world_frame_h)
        if not count:
            return np.zeros((0, 0, self.n)), np.zeros((0, 0), dtype=bool)
        T = np.ascontiguousarray(T_world_frame_h, dtype=float)
        if self.kernel is None:
            return self.eaik_many(T)
        Q, ls, missed = self._kernel(T)
        if missed:  # EAIK's least-squares rows, as solve() gives them
            missed = np.flatnonzero(ls.all(axis=1))
            rows, flags = self.eaik_many(T[missed], tangents=False)
            width = min(rows.shape[1], six_r.BRANCHES)
            Q[missed], ls[missed] = 0.0, True
            Q[missed, :width], ls[missed, :width] = rows[:, :width], flags[:, :width]
        return Q, ls

    def eaik_many(self, T: np.ndarray, tangents: Optional[bool] = None
                  ) -> Tuple[np.ndarray, np.ndarray]:
        """Return EAIK's rows of each of ``T`` (N, 4, 4), padded as :meth:`solve_many` pads.

        ``tangents`` as :meth:`eaik`'s.
        """
        solutions = self._robot.calculate_IK_batched(T, 1)
        flags = [solution.is_LS for solution in solutions]
        if self._tangents(tangents):
            flags = [exact_flags(self._robot, target, solution.Q, ls)
                     for target, solution, ls in zip(T, solutions, flags)]
        return _padded([solution.Q for solution in solutions], flags, self.n)

    def _tangents(self, tangents: Optional[bool]) -> bool:
        """Whether flagged rows that meet the pose count as exact: ``tangents``, else ours."""
        return self.tangents if tangents is None else tangents

    def _kernel(self, T: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
        """:func:`.six_r.solve_6r` of ``T`` (N, 4, 4): ``Q`` (N, 8, 6), ``ls`` (N, 8), misses."""
        Q = np.empty((len(T), six_r.BRANCHES, self.n))
        ls = np.empty((len(T), six_r.BRANCHES), dtype=bool)
        return Q, ls, six_r.solve_6r(self.kernel[0], self.kernel[1], T, Q, ls)

    def forward(self, q: np.ndarray) -> np.ndarray:
        """Return EAIK's ``T_world_frame`` (4, 4) at angles ``q`` [rad] (the self-test's)."""
        return self._robot.fwdkin(q)


def _padded(rows: list, flags: list, n: int) -> Tuple[np.ndarray, np.ndarray]:
    """Return EAIK's per-target rows as ``(Q (N, m, n), ls (N, m))``, short ones padded (LS)."""
    count = len(rows)
    rows = [np.reshape(r, (-1, n)) for r in rows]  # EAIK's empty answer is (0, 0)
    counts = np.fromiter(map(len, rows), dtype=np.intp, count=count)
    width = int(counts.max())
    if int(counts.min()) == width:
        return np.array(rows).reshape(count, width, n), np.array(flags, dtype=bool)
    Q = np.zeros((count, width, n))
    ls = np.ones((count, width), dtype=bool)
    which = np.repeat(np.arange(count), counts)
    row = np.arange(len(which)) - np.repeat(np.cumsum(counts) - counts, counts)
    Q[which, row] = np.concatenate(rows)
    ls[which, row] = np.concatenate([np.asarray(f, dtype=bool) for f in flags])
    return Q, ls


class Detection(NamedTuple):
    """Whether a chain has a solver (a closed form, a sweep): it, or None and why not."""

    found: Optional[object]
    reason: str


class Detector:
    """``detect(group, frame_id) -> Detection`` once per group and frame id, then lookups.

    A group held elsewhere (:meth:`Group.held_at`) whose changed joints move neither its
    joints nor the frame has the same chain: it uses its source's detection
    (:meth:`Group.chain_owner`).  One whose changed joints carry the chain as one body (a
    torso lift, a rail: :meth:`Group.shape_owner`) has the same chain elsewhere: it uses
    its source's solver, placed where the chain now is (:class:`Placed`), and detects
    nothing (a 7R sweep's detection took ~0.3 s per new rail position).
    """

    __slots__ = ("_detections", "_placed")

    def __init__(self, detect):
        """Cache ``detect``'s answers per group and frame id (:class:`PerObjectAndKey`)."""
        self._detections = PerObjectAndKey(detect)
        self._placed = PerObjectAndKey(self._place)

    def of(self, group, frame_id: int):
        """Return the solver found for ``group``'s chain to ``frame_id``, or None."""
        owner = group.shape_owner(frame_id)
        found = self._detections(owner, frame_id).found
        if found is None or owner is group or owner is group.chain_owner(frame_id):
            return found
        return self._placed(group, frame_id)

    def reason(self, group, frame_id: int) -> str:
        """Why ``group``'s chain to ``frame_id`` has none ('' when it has one)."""
        return self._detections(group.shape_owner(frame_id), frame_id).reason

    def _place(self, group, frame_id: int) -> "Placed":
        """Return the shape owner's solver, placed by ``group``'s :meth:`Group.source_motion`."""
        found = self._detections(group.shape_owner(frame_id), frame_id).found
        return Placed(found, group.source_motion())


class Placed:
    """A chain's solver (a :class:`ClosedForm` or a 7R sweep) on the chain moved by ``D``.

    A group held with the joints that carry its chain elsewhere (:meth:`Detector.of`)
    has its frames at ``D * T_world_frame`` (world; :meth:`Group.source_motion`), the
    joint angles unchanged: a target ``T`` of it is the source's target ``D^-1 T``.
    Serves what the solvers ask of a closed form (:meth:`solve`, :meth:`solve_many`) and
    of a sweep (:attr:`cheap`; :func:`.sweep.along` solves ``local(T)`` on :attr:`form`).
    """

    __slots__ = ("form", "_D_inv")
    #: No compiled kernel of its own to call in one pass (:func:`.branches.branches`): the
    #: moved target goes through :meth:`solve` (the source's kernel there).
    kernel = None

    def __init__(self, form, D: pin.SE3):
        """Serve ``form`` (the source's) on the chain moved by ``D``."""
        self.form, self._D_inv = form, D.inverse().homogeneous

    def local(self, T_world_frame_h: np.ndarray) -> np.ndarray:
        """Return the source's targets ``D^-1 T`` of ``T_world_frame_h``: (4, 4) or (N, 4, 4)."""
        return self._D_inv @ T_world_frame_h

    @property
    def family(self) -> str:
        """Name the source's decomposition (for messages)."""
        return self.form.family

    @property
    def cheap(self) -> bool:
        """Tell whether lm runs the source's sweep too (a sweep only: ``Sweep.cheap``)."""
        return self.form.cheap

    def solve(self, T_world_frame_h: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """:meth:`ClosedForm.solve` of the moved chain."""
        return self.form.solve(self.local(np.asarray(T_world_frame_h, dtype=float)))

    def solve_many(self, T_world_frame_h: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """:meth:`ClosedForm.solve_many` of the moved chain."""
        return self.form.solve_many(self.local(np.asarray(T_world_frame_h, dtype=float)))


def of(group, frame_id: int) -> Optional[ClosedForm]:
    """Return the closed form of ``group``'s chain to frame ``frame_id`` (full model), or None.

    Detected once per group and frame (:func:`detect`), then a lookup.
    """
    return _DETECTOR.of(group, frame_id)


def reason(group, frame_id: int) -> str:
    """Why ``group``'s chain to ``frame_id`` has no closed form ('' when it has one)."""
    return _DETECTOR.reason(group, frame_id)


#: Per group and frame id: its Detection (``detect`` is defined below).
_DETECTOR = Detector(lambda group, fid: detect(group, fid))


def preflight(group, frame_id: int, joints: Tuple[int, ...], what: str,
              slide_end: bool = False):
    """``(axes, '')`` when ``group``'s chain to ``frame_id`` may have ``what``, or ``(None, why)``.

    It may when it has one of ``joints`` joint counts, each joint a rotation (``axes``:
    :func:`_axes`; with ``slide_end``, one prismatic joint at an end of the chain may
    slide instead: its axis is its direction), the frame hangs on every group joint and
    eaik is installed.
    """
    model = group.robot.model
    if group.n not in joints:
        return None, f"{group.n} joints ({what} takes {' or '.join(map(str, joints))})"
    if group.coupled:
        return None, "the chain moves mimic joints with their leaders (URDF <mimic>)"
    axes = _axes(model, group.joint_ids, slide_end)
    if isinstance(axes, str):
        return None, axes
    chain = list(model.supports[model.frames[frame_id].parentJoint])
    if any(j not in chain for j in group.joint_ids):
        return None, f"frame '{model.frames[frame_id].name}' does not hang on every group joint"
    try:
        import eaik.pybindings.EAIK  # noqa: F401
    except ImportError:
        return None, "eaik is not installed (pip install --no-deps eaik==1.2.2)"
    return axes, ""


def detect(group, frame_id: int) -> Detection:
    """Read the chain (module docstring), build EAIK's solver and self-test it."""
    axes, why = preflight(group, frame_id, JOINTS, "a closed form here")
    if axes is None:
        return Detection(None, why)
    H, P, R = _product_of_exponentials(group, frame_id, axes)
    robot = eaik_robot(H, P, R)
    if not robot.has_known_decomposition():
        return Detection(None, f"no known decomposition ({robot.get_kinematic_family()})")
    kernel = compiled_kernel(H, P, R) if group.n == six_r.JOINTS else None
    closed_form = ClosedForm(robot, robot.get_kinematic_family(), group.n, kernel)
    failure = _self_test(group, frame_id, closed_form)
    if failure:
        return Detection(None, failure)
    return Detection(closed_form, "")


def eaik_robot(H: np.ndarray, P: np.ndarray, R: np.ndarray,
               signs: Optional[np.ndarray] = None):
    """Return EAIK's solver of the chain ``(H, P, R)`` (module docstring), in its own angles.

    EAIK is given the chain with its axes turned by ``signs`` (n,) of +-1, by default
    :func:`codirected`'s (parallel axes pointing alike); where that turned any, its rows
    and angles are turned back (:class:`CoDirected`).
    """
    import eaik.pybindings.EAIK as eaik
    if signs is None:
        signs = codirected(H)
    return turned_back(eaik.Robot((H * signs[:, None]).T, P.T, R, [], True), signs)


def turned_back(robot, signs: np.ndarray):
    """Serve EAIK's ``robot`` of a chain given turned by ``signs`` (n,) in the chain's angles.

    ``robot`` itself when no joint is turned, else :class:`CoDirected`.
    """
    return robot if (signs > 0).all() else CoDirected(robot, signs)


def codirected(H: np.ndarray) -> np.ndarray:
    """Signs (n,) that turn each axis of ``H`` (n, 3) to point as the first one parallel to it.

    A joint turned (axis ``-h``, angle ``-q``) leaves the chain as it is.  EAIK's solution
    of three parallel axes needs them to point alike: with one of them the other way (a
    URDF's ``axis xyz="0 -1 0"``) every row it calls exact missed the pose.
    """
    signs = np.ones(len(H))
    for i in range(1, len(H)):
        for j in range(i):
            if np.linalg.norm(np.cross(H[i], H[j])) <= PARALLEL_TOLERANCE:
                signs[i] = signs[j] if H[i] @ H[j] > 0.0 else -signs[j]
                break
    return signs


class Rows(NamedTuple):
    """An EAIK solution's rows (m, n) [rad] and least-squares flags (m,)."""

    Q: np.ndarray
    is_LS: np.ndarray


class CoDirected:
    """EAIK's solver of a chain given to it with some axes turned (:func:`eaik_robot`).

    Serves what :class:`ClosedForm` and the self-test ask of EAIK's robot, in the chain's
    own angles: the turned joints' angles change sign on the way in (:meth:`fwdkin`) and
    their columns on the way out, the rows kept as EAIK gives them (Fortran order,
    read-only: the compiled branch code's argument type).
    """

    __slots__ = ("_robot", "_signs")

    def __init__(self, robot, signs: np.ndarray):
        """Wrap EAIK ``robot`` of the chain turned by ``signs`` (n,) of +-1."""
        self._robot, self._signs = robot, signs

    def has_known_decomposition(self) -> bool:
        """Tell whether EAIK decomposes the chain."""
        return self._robot.has_known_decomposition()

    def get_kinematic_family(self) -> str:
        """Name the chain's decomposition (EAIK's name)."""
        return self._robot.get_kinematic_family()

    def fwdkin(self, q: np.ndarray) -> np.ndarray:
        """``T_world_frame`` (4, 4) at angles ``q`` (n,) [rad]."""
        return self._robot.fwdkin(np.asarray(q, dtype=float) * self._signs)

    def calculate_IK(self, T_h: np.ndarray) -> Rows:
        """Every row of 4x4 ``T_h`` (EAIK's ``calculate_IK``), in the chain's angles."""
        return self._rows(self._robot.calculate_IK(T_h))

    def calculate_IK_batched(self, T: np.ndarray, threads: int) -> list:
        """:meth:`calculate_IK` of each of ``T`` (N, 4, 4)."""
        return [self._rows(s) for s in self._robot.calculate_IK_batched(T, threads)]

    def _rows(self, solution) -> Rows:
        Q = solution.Q
        if Q.size:
            Q = np.asfortranarray(Q * self._signs)
            Q.setflags(write=False)
        return Rows(Q, solution.is_LS)


def compiled_kernel(H: np.ndarray, P: np.ndarray, R: np.ndarray):
    """Return ``(family, G)`` of :mod:`.six_r` for a 6R chain, or None.

    ``H`` (6, 3), ``P`` (7, 3), ``R`` (3, 3) as the module docstring reads them; None when
    the chain is not one of the kernel's families or numba is absent.  Pass the result
    as ``ClosedForm(..., kernel=)`` (or to :func:`.six_r.solve_6r`): numba is loaded and
    the kernel's stale caches dropped here.
    """
    found = six_r.geometry(H, P, R)
    if found is None or not compiled.available():
        return None
    from ros2_ik.core.kinematics import jit  # loads numba: the kernel compiles
    jit.drop_stale_cache(six_r.SOURCES)
    return found


def _axes(model: pin.Model, joint_ids, slide_end: bool = False) -> object:
    """Each joint's axis (3,) in its own frame, or a reason (str) when one is no rotation.

    With ``slide_end``: one joint at either end of ``joint_ids`` may be a translation
    along its axis (a prismatic joint; its axis is its direction).
    """
    axes, slides = [], 0
    for i, j in enumerate(joint_ids):
        joint = model.joints[j]
        if joint.nv != 1 or joint.nq not in (1, 2):
            return f"joint '{model.names[j]}' is not a one-axis joint"
        S = motion_subspace(joint)
        end = i in (0, len(joint_ids) - 1)
        if slide_end and end and slides == 0 and np.abs(S[3:]).max() == 0.0 \
                and abs(np.linalg.norm(S[:3]) - 1.0) <= 1e-9:
            slides += 1
            axes.append(S[:3])
            continue
        if np.abs(S[:3]).max() > 1e-12 or abs(np.linalg.norm(S[3:]) - 1.0) > 1e-9:
            where = " (a prismatic joint may only be the first or the last, and only one)" \
                if slide_end else ""
            return f"joint '{model.names[j]}' is not a rotation about its origin{where}"
        axes.append(S[3:])
    return axes


def _product_of_exponentials(group, frame_id: int, axes) -> Tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """``(H, P, R)`` of the chain at the group's zero configuration, in the world frame."""
    model = group.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, group.to_full_q(np.zeros(group.n)))
    H, P, previous = [], [], np.zeros(3)
    for j, axis in zip(group.joint_ids, axes):
        placement = data.oMi[j]
        H.append(placement.rotation @ axis)
        P.append(placement.translation - previous)
        previous = placement.translation.copy()
    tip = data.oMf[frame_id]
    P.append(tip.translation - previous)
    return np.array(H), np.array(P), np.array(tip.rotation)


def _self_test(group, frame_id: int, closed_form: ClosedForm) -> str:
    """'' when EAIK's FK agrees with pinocchio's and its IK finds each sample again."""
    model = group.robot.model
    data = model.createData()
    rng = np.random.default_rng(0)
    for _ in range(SELF_TEST_SAMPLES):
        q = rng.uniform(-math.pi, math.pi, group.n)
        pin.framesForwardKinematics(model, data, group.to_full_q(q))
        T = data.oMf[frame_id].homogeneous
        if np.abs(closed_form.forward(q) - T).max() > SELF_TEST_TOLERANCE:
            return "the closed form's forward kinematics disagree with the model's"
        Q, ls = closed_form.solve(T)
        exact = np.asarray(Q)[~np.asarray(ls, dtype=bool)]
        if not len(exact):
            return "the closed form found no branch of a reachable pose"
        gap = np.abs(np.remainder(exact - q + math.pi, 2 * math.pi) - math.pi).max(axis=1)
        if gap.min() > SELF_TEST_TOLERANCE * 1e3:
            return "the closed form missed a known configuration"
    return ""
