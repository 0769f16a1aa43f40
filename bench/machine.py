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
