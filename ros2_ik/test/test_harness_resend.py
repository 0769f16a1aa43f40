"""call_resending: a request whose response is lost is sent again; one never answered times out."""
import time

import pytest

pytest.importorskip("rclpy")
from rclpy.task import Future  # noqa: E402

from ros2_ik.node.harness import call_resending  # noqa: E402


class LosingClient:
    """A client whose first ``lost`` requests are never answered (a dropped response)."""

    srv_name = "/lossy"

    def __init__(self, lost: int):
        self.lost, self.sent = lost, []

    def call_async(self, request):
        self.sent.append(request)
        future = Future()
        if len(self.sent) > self.lost:
            future.set_result(("answer", request))
        return future


def test_a_lost_response_is_requested_again():
    client = LosingClient(lost=2)
    start = time.monotonic()
    assert call_resending(client, "q", lambda t: time.sleep(t), 5.0, 0.1) == ("answer", "q")
    assert client.sent == ["q", "q", "q"]
    assert time.monotonic() - start < 2.0


def test_an_unanswered_service_times_out_naming_it():
    client = LosingClient(lost=10**6)
    with pytest.raises(TimeoutError, match="/lossy"):
        call_resending(client, "q", lambda t: time.sleep(t), 0.5, 0.1)
    assert 3 <= len(client.sent) <= 8
