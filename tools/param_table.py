"""Print the parameter table of the docs from the one schema (ros2_ik/node/parameters.py).

    python tools/param_table.py            # print the table
    python tools/param_table.py --write    # replace it between the params markers
                                           # (docs/parameters.md) and regenerate
                                           # config/ros2_ik.yaml
test_readme.py fails when the table and the schema disagree.
"""
import pathlib
import sys

import doc_sections
from param_yaml import render  # the one generator of config/ros2_ik.yaml
from ros2_ik.node.parameters import SCHEMA

CONFIG = pathlib.Path(__file__).resolve().parents[1] / "ros2_ik" / "config" / "ros2_ik.yaml"


def table() -> str:
    rows = ["| parameter | default | live | description (unit) |",
            "|---|---|---|---|"]
    for spec in SCHEMA:
        default = spec.default if spec.default not in ([""], "") else "''"
        live = "no (start-up)" if spec.read_only else "yes"
        rows.append(f"| `{spec.name}` | `{default}` | {live} | "
                    f"{spec.description.replace('|', '/')} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if "--write" in sys.argv:
        doc_sections.write("params", table())
        CONFIG.write_text(render())
    else:
        print(table())
