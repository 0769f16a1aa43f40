"""ament_python package ros2_ik: the IK node and its ROS-free solver core."""
from glob import glob

from setuptools import find_packages, setup

package_name = "ros2_ik"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="ros2_ik developers",
    maintainer_email="ros2-ik@example.org",
    description="Inverse kinematics node for ROS 2 on pinocchio and coal.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "ik_node = ros2_ik.node.main:main",
            "ik_demo = ros2_ik.node.demo:main",
            "reach = ros2_ik.reach:main",
            "fake_controller = ros2_ik.node.fake_controller:main",
        ],
        # Solver plugins: third-party packages register under the same group.
        "ros2_ik.solvers": [
            "lm = ros2_ik.core.solvers.lm:LevenbergMarquardt",
            "dls = ros2_ik.core.solvers.dls:DampedLeastSquares",
            "bfgs = ros2_ik.core.solvers.bfgs:BFGSProjection",
            "sqp = ros2_ik.core.solvers.sqp:SQP",
            "analytic = ros2_ik.core.solvers.analytic:Analytic",
        ],
    },
)
