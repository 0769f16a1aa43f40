"""Test processes claim DDS domains of their own (conftest.claim_domain)."""
import importlib.util
import os
from pathlib import Path


def _conftest():
    spec = importlib.util.spec_from_file_location(
        "ros2_ik_test_conftest", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_claimed_domain_is_not_claimed_again_until_released():
    """Two claims from one start get two domains; a released one is free again."""
    conftest = _conftest()
    start = 37
    first = conftest.claim_domain(start)
    second = conftest.claim_domain(start)
    try:
        assert first != second
        assert 10 <= first < 10 + conftest.DOMAINS and 10 <= second < 10 + conftest.DOMAINS
        assert int(os.environ[conftest.DOMAIN_CHOSEN]) not in (first, second)  # ours: held
    finally:
        for handle in conftest._CLAIMED:
            handle.close()
    again = conftest.claim_domain(first - 10)
    conftest._CLAIMED.pop().close()
    assert again == first
