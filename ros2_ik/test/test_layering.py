"""The core runs without ROS: no module under ros2_ik/core imports rclpy or *_msgs."""
import ast
import pathlib

CORE = pathlib.Path(__file__).resolve().parents[1] / "ros2_ik" / "core"
# ament_index_python is allowed: a guarded, optional lookup of package:// meshes.
FORBIDDEN_PREFIXES = ("rclpy", "rosidl", "launch")


def imported_modules(path: pathlib.Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def is_ros(module: str) -> bool:
    top = module.split(".")[0]
    return top.startswith(FORBIDDEN_PREFIXES) or top.endswith(("_msgs", "_srvs",
                                                               "_interfaces"))


def test_core_has_modules():
    assert len(list(CORE.rglob("*.py"))) > 5


def test_core_imports_no_ros():
    offenders = [f"{path.relative_to(CORE)}: {module}"
                 for path in CORE.rglob("*.py")
                 for module in imported_modules(path) if is_ros(module)]
    assert offenders == []


def test_checker_catches_a_ros_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import rclpy\nfrom sensor_msgs.msg import JointState\n")
    assert [m for m in imported_modules(bad) if is_ros(m)] == ["rclpy", "sensor_msgs.msg"]
