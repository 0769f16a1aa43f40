"""What every fuzzed answer must be (tests' helper for the in-process fuzz tests).

Not a test module.  :func:`counted` counts an answer's code and fails on a crash (an
unknown code or INTERNAL_ERROR) or a non-success without a message; :func:`sendable`
fails an answer that DDS could not carry (a field out of its type's range: the client
would get no reply); :func:`lie` counts and fails a SUCCESS that the test's own check
refutes; :func:`drawn` draws a field sensible or broken.  ``bench/fuzz.py`` reads the
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


def sendable(stats: Counter, reply, what) -> None:
    """AssertionError (counted as a crash) when ``reply`` does not serialize."""
    from rclpy.serialization import serialize_message
    try:
        serialize_message(reply)
    except Exception as exc:  # noqa: BLE001 - any failure: the reply would not be sent
        stats["crash"] += 1
        raise AssertionError(f"reply not sendable: {type(exc).__name__}: {exc}; "
                             f"input={what!r}") from exc


def lie(stats: Counter, why: str, what) -> None:
    """AssertionError (counted as a false SUCCESS) when ``why`` says what a SUCCESS misses."""
    if why:
        stats["false_success"] += 1
        raise AssertionError(f"false SUCCESS: {why}; input={what!r}")


def drawn(draw, good, broken: bool, bad):
    """Draw from ``bad`` when the field is ``broken``, else from ``good`` (strategies)."""
    return draw(bad) if broken else draw(good)


def examples(variable: str, default: int):
    """Hypothesis settings: ``default`` examples, or the environment's ``variable``."""
    import os
    return settings(max_examples=int(os.environ.get(variable, str(default))), deadline=None,
                    database=None, suppress_health_check=list(HealthCheck))
