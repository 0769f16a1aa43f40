"""What every fuzzed answer must be (tests' helper for the in-process fuzz tests).

Not a test module.  :func:`counted` counts an answer's code and fails on a crash (an
unknown code or INTERNAL_ERROR) or a non-success without a message; :func:`lie` counts
and fails a SUCCESS that the test's own check refutes.  ``bench/fuzz.py`` reads the
counts (``stats``: a ``Counter``).
"""
from collections import Counter

from hypothesis import HealthCheck, settings

from ros2_ik.node.error_codes import CODE_NAMES
from ros2_ik_interfaces.msg import IKErrorCode


def counted(stats: Counter, code: int, message: str, what) -> None:
    """Count ``code``; AssertionError on INTERNAL_ERROR, an unknown code or no message."""
    stats[CODE_NAMES.get(code, str(code))] += 1
    if code == IKErrorCode.INTERNAL_ERROR or code not in CODE_NAMES:
        stats["crash"] += 1
        raise AssertionError(f"code {code}: {message}; input={what!r}")
    assert code == IKErrorCode.SUCCESS or message.strip(), f"code {code}, no message"


def lie(stats: Counter, why: str, what) -> None:
    """AssertionError (counted as a false SUCCESS) when ``why`` says what a SUCCESS misses."""
    if why:
        stats["false_success"] += 1
        raise AssertionError(f"false SUCCESS: {why}; input={what!r}")


def examples(variable: str, default: int):
    """Hypothesis settings: ``default`` examples, or the environment's ``variable``."""
    import os
    return settings(max_examples=int(os.environ.get(variable, str(default))), deadline=None,
                    database=None, suppress_health_check=list(HealthCheck))
