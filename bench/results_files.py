"""How a bench script leaves its results: ``<stem>.json``, ``<stem>.md`` and ``<stem>.png``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional

#: Where the benchmarks leave their results (``bench/results/``): the documentation's tables
#: are generated from the files there.
RESULTS = Path(__file__).resolve().parent / "results"


def write_json(out: Path, stem: str, data: Any, *, newline: bool = False, **dumps: Any) -> None:
    """Make the folder of ``out/<stem>.json`` (and its parents) and write ``data`` there.

    ``stem`` may hold folders of its own, or be absolute (``--out /tmp/run/name``).  The
    text is ``json.dumps(data, indent=1, **dumps)``, followed by a newline when ``newline``.
    """
    path = out / f"{stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    dumps.setdefault("indent", 1)
    path.write_text(json.dumps(data, **dumps) + ("\n" if newline else ""))


def write(out: Path, stem: str, data: Any, markdown: str,
          plot: Optional[Callable[[Path], None]] = None, *, echo: bool = False,
          newline: bool = False, **dumps: Any) -> None:
    """Write ``out/<stem>.json``, ``out/<stem>.md`` and, given ``plot``, ``out/<stem>.png``.

    ``data`` goes to the JSON by ``write_json`` (``dumps`` e.g. ``default=float``), ``markdown``
    to the .md as it is; ``plot(path)`` draws the PNG at ``path``.  ``echo`` prints
    ``markdown`` after the files are written.
    """
    write_json(out, stem, data, newline=newline, **dumps)
    (out / f"{stem}.md").write_text(markdown)
    if plot is not None:
        plot(out / f"{stem}.png")
    if echo:
        print(markdown)
