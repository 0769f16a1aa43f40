"""Compile every numba kernel now, or load it from numba's on-disk cache.

``make build`` runs it once after colcon (``python -m ros2_ik.core.runtime.warm_up``), so the
first compilation on a machine (~45-60 s) happens there rather than in ik_node's start-up,
where a client such as ``make demo`` would wait for it, or in each test worker at once.
With the cache filled it takes ~2 s: the test session does it too, before any timed test.
"""


def warm_up() -> None:
    """Compile or load the attempts, the libraries' ranking, the servo's terms, the 6R form."""
    from ros2_ik.core.closed_form import branches, six_r
    from ros2_ik.core.model import robots
    from ros2_ik.core.servo import Servo
    from ros2_ik.core.solvers import chain_kernel, constraint_kernel, polish_kernel, seed_library

    chain_kernel.warm_up()
    six_r.warm_up()
    branches.warm_up()
    constraint_kernel.warm_up()
    polish_kernel.warm_up()
    group = robots.load_group("panda")[1]
    seed_library.prepare(group, group.tip)
    Servo(group, group.tip).warm_up(group.mid_configuration(), 0.004)


if __name__ == "__main__":
    warm_up()
