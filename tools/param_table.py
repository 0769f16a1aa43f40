"""Print the README's parameter table from the one schema (ros2_ik/node/parameters.py).

    python tools/param_table.py            # print the table
    python tools/param_table.py --write    # replace it in README.md and regenerate
                                           # config/ros2_ik.yaml
test_readme.py fails when README.md and the schema disagree.
"""
import pathlib
import sys

from param_yaml import render  # the one generator of config/ros2_ik.yaml
from ros2_ik.node.parameters import SCHEMA

BEGIN, END = "<!-- params:begin -->", "<!-- params:end -->"
README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
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


def with_table(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    if "--write" in sys.argv:
        README.write_text(with_table(README.read_text()))
        CONFIG.write_text(render())
    else:
        print(table())
