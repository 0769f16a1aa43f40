"""Validation of constructor arguments: every failure names the argument.

All raise :class:`~ros2_ik.core.errors.InvalidGoal` (an ``InvalidArgument``): the
parameters of a constraint or cost are part of the goal a user states.
"""
from __future__ import annotations

import functools
import math
from typing import Optional, Tuple

import numpy as np
import pinocchio as pin

from ..errors import InvalidGoal
from ..runtime.per_object import PerObject

#: Vectors shorter than this (in their own unit) count as zero vectors.
ZERO_VECTOR_NORM = 1e-9
#: Tolerance on ``R^T R = I`` and ``det R = 1`` for rotation matrices.
ROTATION_TOLERANCE = 1e-6
_EYE3 = np.eye(3)
_EYE3.setflags(write=False)


def read_only(array: np.ndarray) -> np.ndarray:
    """Return ``array`` marked read-only (arrays a term hands out are immutable)."""
    array.setflags(write=False)
    return array


def lazy_array(source: str, shape: Optional[tuple] = None) -> functools.cached_property:
    """Return a read-only array attribute made from the floats in ``source`` when first read.

    Terms keep the floats they parsed (what the compiled solver reads); the arrays the
    Python rows use are made only when those run (each array costs a constructor).
    """
    def array(self) -> np.ndarray:
        values = np.array(getattr(self, source))
        return read_only(values if shape is None else values.reshape(shape).copy())

    array.__doc__ = f"``{source}`` as a read-only array (made when first read)."
    return functools.cached_property(array)


def array_of_shape(value, shape, arg: str, allow_inf: bool = False) -> np.ndarray:
    """Return ``value`` as a float array of exactly ``shape``; reject NaN (and inf)."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidGoal(f"{arg} must be a numeric array of shape {shape}: {exc}") from None
    if array.shape != tuple(shape):
        raise InvalidGoal(f"{arg} must have shape {tuple(shape)}, got {array.shape}")
    # No NaN, no inf: one sum (of floats for a few entries: cheaper than numpy's).
    if math.isfinite(sum(array.ravel().tolist()) if array.size <= 16 else float(array.sum())):
        return array
    if np.isnan(array).any():
        raise InvalidGoal(f"{arg} contains NaN: {array.tolist()}")
    if not allow_inf and np.isinf(array).any():
        raise InvalidGoal(f"{arg} must be finite, got {array.tolist()}")
    return array


def vector3(value, arg: str) -> np.ndarray:
    """Return a finite 3-vector (a position in [m] or a direction), read-only."""
    return read_only(array_of_shape(value, (3,), arg))


def unit_vector3(value, arg: str) -> np.ndarray:
    """Return a finite, non-zero 3-vector, normalised."""
    vector = array_of_shape(value, (3,), arg)
    norm = math.hypot(*vector.tolist())  # no overflow: (1e300, 0, 0) has norm 1e300
    if norm < ZERO_VECTOR_NORM:
        raise InvalidGoal(f"{arg} must be a non-zero vector, got {vector.tolist()}")
    return read_only(vector / norm)


_F64 = np.dtype(np.float64)


def _plain3(value) -> Optional[list]:
    """``value`` as three floats when it plainly is a 3-vector, else None (check it fully).

    A float64 array of shape (3,), or a list or tuple of three numbers: what the checks on
    an array would read, without making one.
    """
    if type(value) is np.ndarray:
        return value.tolist() if value.shape == (3,) and value.dtype is _F64 else None
    if type(value) in (list, tuple) and len(value) == 3:
        try:
            return [float(value[0]), float(value[1]), float(value[2])]
        except (TypeError, ValueError):
            return None
    return None


def vector_lists(values, args, units=()) -> tuple:
    """:func:`vector3` of each of ``values`` (:func:`unit_vector3` of those at ``units``).

    As lists of three floats: what constraints keep (their arrays are made when first
    read).  The usual case (finite 3-vectors, the unit ones non-zero) without an array;
    anything else through the checks one by one, whose errors name the argument
    (``args``).
    """
    flat = [_plain3(v) for v in values]
    if all(flat) and math.isfinite(sum(x + y + z for x, y, z in flat)):
        for k in units:
            x, y, z = flat[k]
            norm = math.hypot(x, y, z)  # as unit_vector3
            if norm < ZERO_VECTOR_NORM:
                break
            flat[k] = [x / norm, y / norm, z / norm]
        else:
            return tuple(flat)
    return tuple((unit_vector3(v, a) if k in units else vector3(v, a)).tolist()
                 for k, (v, a) in enumerate(zip(values, args)))


def scalar(value, arg: str, allow_inf: bool = False) -> float:
    """Return a real number (not NaN; finite unless ``allow_inf``)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidGoal(f"{arg} must be a real number, got {value!r}") from None
    if math.isnan(number) or (not allow_inf and math.isinf(number)):
        raise InvalidGoal(f"{arg} must be a finite number, got {number}")
    return number


def non_negative(value, arg: str, allow_inf: bool = False) -> float:
    """Return a number ``>= 0``."""
    number = scalar(value, arg, allow_inf)
    if number < 0.0:
        raise InvalidGoal(f"{arg} must be >= 0, got {number}")
    return number


def angle(value, arg: str, upper: float = math.pi, upper_text: str = "pi") -> float:
    """Return an angle in [rad] inside ``[0, upper]``."""
    number = scalar(value, arg)
    if not 0.0 <= number <= upper:
        raise InvalidGoal(f"{arg} must be in [0, {upper_text}] rad, got {number}")
    return number


def ordered(lower: float, upper: float, lower_arg: str, upper_arg: str) -> None:
    """Raise unless ``lower <= upper``."""
    if lower > upper:
        raise InvalidGoal(f"{lower_arg} ({lower}) must be <= {upper_arg} ({upper})")


def box_bounds(lower, upper, lower_arg: str, upper_arg: str):
    """Two 3-vectors with ``lower <= upper``; ``-inf`` / ``+inf`` allowed for free axes."""
    lo = array_of_shape(lower, (3,), lower_arg, allow_inf=True)
    hi = array_of_shape(upper, (3,), upper_arg, allow_inf=True)
    lo_list, hi_list = lo.tolist(), hi.tolist()  # floats: cheaper than numpy here
    if math.inf in lo_list:
        raise InvalidGoal(f"{lower_arg} cannot be +inf, got {lo_list}")
    if -math.inf in hi_list:
        raise InvalidGoal(f"{upper_arg} cannot be -inf, got {hi_list}")
    if any(a > b for a, b in zip(lo_list, hi_list)):
        raise InvalidGoal(f"{lower_arg} {lo_list} must be <= {upper_arg} {hi_list} elementwise")
    return read_only(lo), read_only(hi)


def box_and_point(lower, upper, point, lower_arg: str, upper_arg: str, point_arg: str):
    """:func:`box_bounds` of ``lower``, ``upper`` and :func:`vector3` of ``point``, as lists.

    Lists of floats, what ``PositionConstraint`` keeps (its arrays are made when first
    read: a compiled solver reads the lists).  The usual case (three 3-vectors, the box
    ordered, free axes allowed) without an array; anything else through the two checks,
    whose errors name the argument.
    """
    lo, hi, p = _plain3(lower), _plain3(upper), _plain3(point)
    if lo and hi and p and math.isfinite(p[0] + p[1] + p[2]) and lo[0] <= hi[0] \
            and lo[1] <= hi[1] and lo[2] <= hi[2] and math.inf not in lo \
            and -math.inf not in hi:  # written out: cheaper; False with a NaN
        return lo, hi, p
    lo, hi = box_bounds(lower, upper, lower_arg, upper_arg)
    return lo.tolist(), hi.tolist(), vector3(point, point_arg).tolist()


def rotation(value, arg: str) -> np.ndarray:
    """Return a 3x3 rotation matrix (orthonormal, det +1 within ``ROTATION_TOLERANCE``)."""
    return read_only(np.array(rotation_list(value, arg)).reshape(3, 3))


def rotation_list(value, arg: str) -> list:
    """:func:`rotation` of ``value`` as nine floats, row by row (no array for an array)."""
    flat = None
    if type(value) is np.ndarray and value.shape == (3, 3) and value.dtype is _F64:
        flat = value.ravel().tolist()
        if not math.isfinite(sum(flat)):
            flat = None
    if flat is None:
        flat = array_of_shape(value, (3, 3), arg).ravel().tolist()  # its errors name arg
    a, b, c, d, e, f, g, h, i = flat  # floats: cheaper than numpy
    gram = (a * a + d * d + g * g - 1.0, b * b + e * e + h * h - 1.0,  # R^T R - I
            c * c + f * f + i * i - 1.0, a * b + d * e + g * h, a * c + d * f + g * i,
            b * c + e * f + h * i)
    if not max(map(abs, gram)) <= ROTATION_TOLERANCE:
        raise InvalidGoal(f"{arg} must be an orthonormal 3x3 rotation matrix")
    if abs(a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) - 1.0) \
            > ROTATION_TOLERANCE:
        raise InvalidGoal(f"{arg} must have determinant +1 (a proper rotation, no reflection)")
    return flat


def transform(value: Optional[object], arg: str) -> Optional[pin.SE3]:
    """Return a ``pin.SE3`` from a ``pin.SE3`` or a 4x4 homogeneous matrix; None for the identity.

    ``None`` stands for the identity too (no ``pin.SE3`` is built for it).
    """
    if value is None:
        return None
    if isinstance(value, pin.SE3):
        value = value.homogeneous
    matrix = array_of_shape(value, (4, 4), arg)
    if np.abs(matrix[3] - [0.0, 0.0, 0.0, 1.0]).max() > ROTATION_TOLERANCE:
        raise InvalidGoal(f"{arg} must be homogeneous: last row [0, 0, 0, 1]")
    X = pin.SE3(rotation(matrix[:3, :3], f"{arg} rotation"), matrix[:3, 3].copy())
    return None if X.isIdentity() else X


def psd_matrix3(value, arg: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the symmetric part of a 3x3 matrix, which must be positive semidefinite.

    Also its eigenvalues (3,) and eigenvectors (columns, 3x3): ``numpy.linalg.eigh``'s,
    computed for the test anyway; for a diagonal matrix (the usual weights) its diagonal
    and the identity, not sorted (``V diag(l) V^T`` is the matrix all the same).
    """
    matrix = array_of_shape(value, (3, 3), arg)
    (a, b, c), (d, e, f), (g, h, i) = matrix.tolist()
    if b == c == d == f == g == h == 0.0 and min(a, e, i) >= 0.0:  # diagonal: C = I diag I
        return read_only(matrix), np.array([a, e, i]), _EYE3
    symmetric = 0.5 * (matrix + matrix.T)
    scale = max(1.0, float(np.abs(symmetric).max()))
    from scipy.linalg.lapack import dsyev  # not at import: scipy.linalg is ~0.1 s
    eigenvalues, vectors, info = dsyev(symmetric)  # LAPACK's, as eigh, without its wrapper
    if info != 0:  # not converged (not met on finite input): numpy's driver decides
        eigenvalues, vectors = np.linalg.eigh(symmetric)
    if eigenvalues[0] < -1e-12 * scale:  # ascending
        raise InvalidGoal(f"{arg} must be positive semidefinite, got {matrix.tolist()}")
    return read_only(symmetric), eigenvalues, vectors


def term_name(name: Optional[str], default: str) -> str:
    """Return the user's name for a term (a non-empty string), or the default."""
    if name is None:
        return default
    if not isinstance(name, str) or not name:
        raise InvalidGoal(f"name must be a non-empty string, got {name!r}")
    return name


def matrix(value, arg: str, rows: Optional[int] = None, cols: Optional[int] = None):
    """Return a finite 2-D float array with >= 1 row and column (and the given sizes)."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidGoal(f"{arg} must be a numeric 2-D array: {exc}") from None
    expected = f"({'k' if rows is None else rows}, {'N' if cols is None else cols})"
    if (array.ndim != 2 or min(array.shape) < 1 or rows not in (None, array.shape[0])
            or cols not in (None, array.shape[1])):
        raise InvalidGoal(f"{arg} must have shape {expected}, got {array.shape}")
    return array_of_shape(array, array.shape, arg)


def matrix_lists(value, arg: str, cols: int) -> list:
    """:func:`matrix` of ``value`` with ``cols`` columns, as a list of rows of floats.

    The usual case (a finite float64 array of that shape) without another array;
    anything else through :func:`matrix`, whose errors name the argument.
    """
    if type(value) is np.ndarray and value.dtype is _F64 and value.ndim == 2 \
            and value.shape[0] and value.shape[1] == cols:
        rows = value.tolist()
        if math.isfinite(sum(map(sum, rows))):  # False with a NaN or an inf
            return rows
    return matrix(value, arg, cols=cols).tolist()


#: Per model: whether a body has a mass > 0 (:func:`has_mass`).
_MASSIVE: PerObject = PerObject()


def has_mass(model: pin.Model, term: str) -> None:
    """Raise InvalidGoal naming ``term`` when no body of ``model`` has a mass > 0 [kg].

    The centre of mass of such a model is undefined (pinocchio's is NaN): a URDF without
    ``<inertial>`` elements, or whose ``<inertial>`` urdfdom could not read (it then drops
    them, saying so only on stderr).  Read once per model.
    """
    massive = _MASSIVE.get(model)
    if massive is None:
        massive = _MASSIVE[model] = any(inertia.mass > 0.0 for inertia in model.inertias)
    if not massive:
        raise InvalidGoal(
            f"{term}: the robot model has no mass (no link's <inertial> has a mass > 0), so "
            "its centre of mass is undefined; give the URDF's links their <inertial>")
