"""Map core exceptions and statuses to ``IKErrorCode`` values (only the node knows them)."""
from __future__ import annotations

from typing import Tuple, Type, Union

from ros2_ik.core import errors
from ros2_ik.core.result import IKStatus
from ros2_ik_interfaces.msg import IKErrorCode

# Most specific first: InvalidSeed is an InvalidArgument.
_EXCEPTION_CODES: Tuple[Tuple[Type[BaseException], int], ...] = (
    (errors.InvalidFrame, IKErrorCode.FRAME_NOT_FOUND),
    (errors.InvalidGroup, IKErrorCode.INVALID_GROUP),
    (errors.InvalidGeometry, IKErrorCode.INVALID_GOAL),
    (errors.UnknownSolver, IKErrorCode.INVALID_SOLVER),
    (errors.InvalidSeed, IKErrorCode.INVALID_SEED),
    (errors.InvalidJoint, IKErrorCode.INVALID_SEED),
    (errors.RobotModelError, IKErrorCode.NO_ROBOT_MODEL),
    (errors.InvalidGoal, IKErrorCode.INVALID_GOAL),
    (errors.InvalidArgument, IKErrorCode.INVALID_GOAL),
)

_STATUS_CODES = {
    "SUCCESS": IKErrorCode.SUCCESS,
    "NO_SOLUTION": IKErrorCode.NO_SOLUTION,
    "TIMED_OUT": IKErrorCode.TIMED_OUT,
    "CANCELLED": IKErrorCode.CANCELLED,
    "JUMP_TOO_LARGE": IKErrorCode.JUMP_TOO_LARGE,
    "IN_COLLISION": IKErrorCode.IN_COLLISION,
}
# The members too: ``status.name`` costs an enum property lookup on every reply.
_STATUS_CODES.update({s: _STATUS_CODES.get(s.name, IKErrorCode.NO_SOLUTION)
                      for s in IKStatus})

CODE_NAMES = {
    getattr(IKErrorCode, name): name
    for name in dir(IKErrorCode)
    if name.isupper() and isinstance(getattr(IKErrorCode, name), int)
}


class RequestError(Exception):
    """Bad request detected by the node itself, with the code to answer."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def code_for_exception(exc: BaseException) -> int:
    """Return the error code of a core error or a :class:`RequestError`."""
    if isinstance(exc, RequestError):
        return exc.code
    for kind, code in _EXCEPTION_CODES:
        if isinstance(exc, kind):
            return code
    return IKErrorCode.INTERNAL_ERROR


def code_for_status(status: Union[IKStatus, str]) -> int:
    """Return the error code of a core ``IKStatus`` (the member or its name)."""
    return _STATUS_CODES.get(status, IKErrorCode.NO_SOLUTION)


def error_reply(reply, code: int, message: str):
    """Return ``reply`` set to error ``code``, its message the code's name and ``message``.

    ``reply``: a ComputeIK or ComputeIKPath response, a ConstrainedIK result (e.g.
    "NO_ROBOT_MODEL: no robot_description received yet").
    """
    reply.error_code.val = code
    reply.message = f"{CODE_NAMES.get(code, code)}: {message}"
    return reply
