"""README.md and docs/*.md work as written: every code block runs or names what exists.

Python blocks run; YAML blocks parse; in shell blocks, ``make`` targets exist in the
Makefile, ``ros2 run`` / ``ros2 launch`` name installed executables, launch files and
declared arguments, and the YAML of ``ros2 service call``, ``ros2 action send_goal`` and
``ros2 topic pub`` fills its message type field by field.  The parameter table matches
the schema, and the README's service call is sent to the node over DDS.
"""
import ast
import importlib
import os
import pathlib
import re
import shlex
import sys

import numpy as np
import pinocchio as pin
import pytest
import yaml
from panda_node import T_frame, pose_errors

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from doc_sections import markers, pages, relative, section  # noqa: E402

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)
BLOCKS = [(page, n, lang, body) for page in pages()
          for n, (lang, body) in enumerate(FENCE.findall(page.read_text()))]


def blocks(*langs: str) -> list:
    """pytest params (page:index) of the blocks in one of ``langs``."""
    return [pytest.param(page, body, id=f"{page.relative_to(ROOT)}:{n}")
            for page, n, lang, body in BLOCKS if lang in langs]


def commands(body: str) -> list:
    """The commands of a shell block as word lists (quotes may span lines)."""
    found, pending = [], ""
    for line in body.replace("\\\n", " ").split("\n"):
        pending += line + "\n"
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        pending, command = "", []
        for word in words + ["&&"]:
            if word in ("&&", "||", ";", "|"):
                found += [command] if command else []
                command = []
            else:
                command.append(word)
    assert not pending, f"unclosed quote in {body!r}"
    return found


def ros2_commands(verb: str) -> list:
    """pytest params of every ``ros2 <verb> ...`` command of the shell blocks.

    ``ros2 run`` and ``ros2 launch`` of other packages (MoveIt's, a driver's) are not ours
    to check and are left out.
    """
    return [pytest.param(words, id=f"{page.relative_to(ROOT)}:{n}:{words[2]}")
            for page, n, lang, body in BLOCKS if lang == "bash"
            for words in commands(body) if words[:2] == ["ros2", verb]
            and (verb not in ("run", "launch") or words[2] == "ros2_ik")]


def interface(name: str, kind: str):
    """Import ``pkg/kind/Name``; skip when the package is not installed (moveit_msgs)."""
    package, folder, type_name = name.split("/")
    assert folder == kind, f"{name}: expected a {kind} type"
    try:
        module = importlib.import_module(f"{package}.{kind}")
    except ImportError:
        if package in ("ros2_ik_interfaces", "std_srvs", "geometry_msgs", "std_msgs"):
            raise
        pytest.skip(f"{package} is not installed")
    return getattr(module, type_name)


def filled(message, values):
    """Set ``message``'s fields from YAML text or a dict, as ``ros2 ... call/pub`` do.

    An unknown field raises AttributeError; a list of dicts becomes a list of messages of
    the field's element type; numbers go into float fields as floats.
    """
    values = (yaml.safe_load(values) or {}) if isinstance(values, str) else values
    types = message.get_fields_and_field_types()
    for key, value in values.items():
        if key not in types:
            raise AttributeError(f"{type(message).__name__} has no field {key!r}: {types}")
        floats = "double" in types[key] or "float" in types[key]
        if isinstance(value, dict):
            filled(getattr(message, key), value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            package, name = re.search(r"(\w+)/(\w+)", types[key]).groups()
            element = getattr(importlib.import_module(f"{package}.msg"), name)
            setattr(message, key, [filled(element(), v) for v in value])
        elif isinstance(value, list) and floats:
            setattr(message, key, [float(v) for v in value])
        else:
            setattr(message, key, float(value) if floats else value)
    return message


def test_every_page_is_checked():
    names = {page.relative_to(ROOT).as_posix() for page, *_ in BLOCKS}
    assert "README.md" in names and "docs/reference.md" in names
    assert len(blocks("python")) >= 2 and len(ros2_commands("service")) >= 3


@pytest.mark.parametrize("page, body", blocks("python"))
def test_python_block_runs(page, body):
    exec(compile(body, str(page), "exec"), {})  # noqa: S102 - our own docs


@pytest.mark.parametrize("page, body", blocks("yaml"))
def test_yaml_block_parses(page, body):
    assert isinstance(yaml.safe_load(body), dict)


@pytest.mark.parametrize("page, body", blocks("bash"))
def test_make_targets_exist(page, body):
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    for words in commands(body):
        if words[0] == "make":
            assert set(w for w in words[1:] if "=" not in w) <= targets, words


@pytest.mark.parametrize("words", ros2_commands("run"))
def test_ros2_run_executables_exist(words):
    setup = (ROOT / "ros2_ik" / "setup.py").read_text()
    assert re.search(rf'"{words[3]} = ', setup), words


@pytest.mark.parametrize("words", ros2_commands("launch"))
def test_ros2_launch_arguments_are_declared(words):
    from test_launch_files import declared_arguments
    path = ROOT / "ros2_ik" / "launch" / words[3]
    assert path.is_file(), words
    given = {w.split(":=")[0] for w in words[4:] if ":=" in w}
    assert given <= declared_arguments(ast.parse(path.read_text())), words


@pytest.mark.parametrize("words", ros2_commands("service"))
def test_service_call_fills_its_request(words):
    assert words[2] == "call", words
    filled(interface(words[4], "srv").Request(), words[5] if len(words) > 5 else "")


@pytest.mark.parametrize("words", ros2_commands("action"))
def test_action_goal_fills_its_goal(words):
    args = [w for w in words[2:] if not w.startswith("-")]
    assert args[0] == "send_goal", words
    filled(interface(args[2], "action").Goal(), args[3])


@pytest.mark.parametrize("words", ros2_commands("topic"))
def test_topic_pub_fills_its_message(words):
    if words[2] != "pub":
        return
    args = [w for w in words[3:] if not w.startswith("-")]
    args = args[1:] if args[0].isdigit() else args  # the value of -r
    filled(interface(args[1], "msg")(), args[2])


#: Sections a generator writes (tools/bench_readme.py, param_table.py, bench/load.py) or a
#: test reads.
SECTIONS = ("params", "bench", "constrained", "constrained-other", "servo", "batch", "load",
            "service-call", "setup", "analytic")


@pytest.mark.parametrize("name", SECTIONS)
def test_each_section_is_on_exactly_one_page(name):
    begin, end = markers(name)
    holders = [page.name for page in pages() if begin in page.read_text()]
    assert len(holders) == 1, (name, holders)
    text = section(name)
    assert end not in text and begin not in text and text.strip()


def test_generated_links_are_relative_to_their_page():
    body = "see [x](bench/results/x.md), [top](#top) and [web](https://example.org/a)"
    assert relative(body, ROOT / "docs" / "benchmarks.md") == \
        "see [x](../bench/results/x.md), [top](#top) and [web](https://example.org/a)"
    assert relative(body, ROOT / "README.md") == body


def test_parameter_table_matches_schema():
    pytest.importorskip("rclpy")
    from param_table import table
    assert section("params").strip() == table().strip()


def test_python_api_block_solves():
    block = re.search(r"## The Python API.*?```python\n(.*?)```",
                      (ROOT / "README.md").read_text(), re.S).group(1)
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - our own README
    result, arm, target = scope["result"], scope["arm"], scope["T_base_target"]
    assert result.status.name == "SUCCESS"
    T = arm.fk(np.asarray(result.q), "panda_hand")
    assert np.linalg.norm(T.translation - target.translation) <= 1e-4


def test_constrained_example_holds_its_constraints():
    block = FENCE.search((ROOT / "docs" / "python_api.md").read_text()).group(2)
    scope = {}
    exec(compile(block, "python_api.md", "exec"), scope)  # noqa: S102 - our own docs
    result, arm = scope["result"], scope["arm"]
    assert result.status.name == "SUCCESS"
    T = arm.fk(np.asarray(result.q), "panda_hand")  # in panda_link0, by pinocchio
    assert np.all(T.translation >= [0.45 - 1e-4, -0.05 - 1e-4, 0.30 - 1e-4])
    assert np.all(T.translation <= [0.55 + 1e-4, 0.05 + 1e-4, 0.40 + 1e-4])
    R_down = np.diag([1.0, -1.0, -1.0])
    assert np.linalg.norm(pin.log3(R_down.T @ T.rotation)) <= 0.05 + 1e-4


def test_service_call_example_succeeds(ros_context):
    from ament_index_python.packages import get_package_share_directory
    from ros2_ik.core import robots
    from ros2_ik.node.harness import Client, NodeProcess
    from ros2_ik_interfaces.srv import ComputeIK

    words = shlex.split(section("service-call").split("```bash", 1)[1].split("```")[0])
    assert words[:5] == ["ros2", "service", "call", "/compute_ik",
                         "ros2_ik_interfaces/srv/ComputeIK"]
    request = filled(ComputeIK.Request(), words[5])
    config = os.path.join(get_package_share_directory("ros2_ik"), "config", "panda.yaml")
    node = NodeProcess(extra_args=["--params-file", config])
    client = Client("readme_test")
    try:
        urdf = robots.urdf_text("panda")
        client.publish_description(urdf, robots.srdf_text("panda"))
        client.wait_for_service()
        res = client.wait_for_model(request)
    finally:
        client.close()
        node.stop()
    assert res.error_code.val == 1, res.message
    T = T_frame(pin.buildModelFromXML(urdf), res.solution.name, res.solution.position,
                "panda_hand", "panda_link0")
    p, o = request.target.pose.position, request.target.pose.orientation
    T_target = pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))
    position_error, orientation_error = pose_errors(T, T_target)
    assert position_error <= 1e-4
    assert orientation_error <= 1e-3
