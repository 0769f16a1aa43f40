"""How a bench script leaves its results: ``<stem>.json``, ``<stem>.md`` and ``<stem>.png``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Optional


def write(out: Path, stem: str, data: Any, markdown: str,
          plot: Optional[Callable[[Path], None]] = None, *, echo: bool = False,
          newline: bool = False, **dumps: Any) -> None:
    """Write ``out/<stem>.json``, ``out/<stem>.md`` and, given ``plot``, ``out/<stem>.png``.

    Makes the folder ``out`` (and its parents) first.  ``data`` goes to the JSON as
    ``json.dumps(data, indent=1, **dumps)`` (``dumps`` e.g. ``default=float``), followed by a
    newline when ``newline``; ``markdown`` goes to the .md as it is.  ``plot(path)`` draws the
    PNG at ``path``.  ``echo`` prints ``markdown`` after the files are written.
    """
    out.mkdir(parents=True, exist_ok=True)
    dumps.setdefault("indent", 1)
    (out / f"{stem}.json").write_text(json.dumps(data, **dumps) + ("\n" if newline else ""))
    (out / f"{stem}.md").write_text(markdown)
    if plot is not None:
        plot(out / f"{stem}.png")
    if echo:
        print(markdown)
