"""What a benchmark's figures were measured on (the one ``machine()`` of every bench script)."""
from __future__ import annotations

import os
import platform
from pathlib import Path


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine() -> dict:
    """Return the CPU, core count, versions and 1/5/15-min load averages at the call."""
    import numpy as np
    import pinocchio as pin

    return {"cpu": _cpu(), "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "pinocchio": pin.__version__,
            "platform": platform.platform(), "load_average": list(os.getloadavg()),
            "rmw": os.environ.get("RMW_IMPLEMENTATION", ""),
            "note": "cores may be shared with other work during the run"}


def pyplot():
    """Return ``matplotlib.pyplot`` on the Agg backend, or None (said) without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return None
    return plt


def median_bars(path: Path, rows: list, keys: list, names: list, ylabel: str,
                inch_per_row: float) -> None:
    """Draw grouped bars, one group per row, log scale, into the PNG at ``path``.

    ``keys``: ``(key, label)`` pairs, a bar each of ``row[key]`` (nan where absent);
    ``names``: the groups' tick labels.  Nothing without matplotlib (said).
    """
    plt = pyplot()
    if plt is None:
        return
    import numpy as np

    width = 0.8 / len(keys)
    fig, ax = plt.subplots(figsize=(max(6, inch_per_row * len(rows)), 4))
    x = np.arange(len(rows))
    for i, (key, label) in enumerate(keys):
        ax.bar(x + width * i, [r.get(key, np.nan) for r in rows], width, label=label)
    ax.set_xticks(x + 0.5 * width * (len(keys) - 1), names, rotation=60, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
