"""Write config/ros2_ik.yaml (every ik_node parameter with its default) from the schema.

    python tools/param_yaml.py            # print it
    python tools/param_yaml.py --write    # replace ros2_ik/config/ros2_ik.yaml
test_parameters.py fails when the file and ros2_ik/node/parameters.py disagree.
"""
import pathlib
import sys

import yaml

from ros2_ik.node.parameters import SCHEMA

PATH = pathlib.Path(__file__).resolve().parents[1] / "ros2_ik" / "config" / "ros2_ik.yaml"
HEADER = """\
# Every ik_node parameter with its default. Generated from ros2_ik/node/parameters.py by
# tools/param_yaml.py; test_parameters.py fails when the two disagree.
# Descriptions: `ros2 param describe /ik_node <name>`.
/**:
  ros__parameters:
"""


def scalar(value) -> str:
    """One YAML value on one line (lists in flow style)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return text[:-3].strip() if text.endswith("...") else text


def render() -> str:
    """Return the whole file: the header, then each parameter's description and default."""
    lines = [HEADER.rstrip("\n")]
    for spec in SCHEMA:
        lines.append(f"    # {spec.description}")
        lines.append(f"    {spec.name}: {scalar(spec.default)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if "--write" in sys.argv:
        PATH.write_text(render())
    else:
        sys.stdout.write(render())
