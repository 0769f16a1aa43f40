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


def module_level_nodes(tree):
    """Statements run at import: the module body and its if/try blocks, not function bodies."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            todo.extend(node.body + node.orelse + getattr(node, "finalbody", []))


def core_import_graph():
    """Module name -> the core modules it imports at module level (type-checking too).

    Imports inside functions (an optional engine loaded on demand) are not a circle.
    """
    graph = {}
    for path in CORE.rglob("*.py"):
        parts = path.relative_to(CORE.parent).with_suffix("").parts
        name = ".".join(("ros2_ik",) + tuple(p for p in parts if p != "__init__"))
        deps = set()
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in module_level_nodes(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module.startswith("ros2_ik.core"):
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("ros2_ik.core"))
        graph[name] = deps
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


def test_core_modules_import_no_cycle_between_two_modules():
    """No pair of core modules imports each other (e.g. group <-> robot), even for types."""
    graph = core_import_graph()
    assert "ros2_ik.core.model.group" in graph and "ros2_ik.core.model.robot" in graph
    pairs = sorted({tuple(sorted((a, b))) for a, deps in graph.items() for b in deps
                    if a in graph.get(b, ()) and not b.startswith(a + ".")
                    and not a.startswith(b + ".")})
    assert pairs == []
